"""Weights loaded through ttnn.as_tensor's cache, then a memory report.  Run with `meshnn run`; it
needs torch, as TTNN code does (the README's first command installs it: pip install -e '.[torch]').

The first run converts (tilize, bfloat8_b packing, sharding) and writes the cache file; later
runs reload the converted bytes.  Pass a directory as the first argument (default: a temporary one).
"""

import pathlib
import sys
import tempfile

import torch
import ttnn

cache = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="meshnn-cache-"))
mesh_device = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
torch.manual_seed(0)
weights = {f"layer{i}.w": torch.randn(512, 1024) for i in range(3)}

loaded = {}
for name, value in weights.items():
    loaded[name] = ttnn.as_tensor(
        value,
        dtype=ttnn.bfloat8_b,
        layout=ttnn.TILE_LAYOUT,
        device=mesh_device,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=1),
        cache_file_name=str(cache / name),
    )
files = sorted(p.name for p in cache.iterdir())
print(f"{len(loaded)} weights on the mesh; cache files: {files}")
print(ttnn.memory_report(mesh_device))
ttnn.close_mesh_device(mesh_device)
