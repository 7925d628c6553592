"""Rank 0 opens a 2x4 mesh, the others a 4x2 one (argv[1] == "differ"), or every rank a 2x4 one
("same"); then an all_gather, whose data would mix the two layouts."""

import sys

import numpy as np

import meshnn as ttnn

rank = ttnn.get_context().rank
shape = (2, 4) if sys.argv[1] == "same" or rank == 0 else (4, 2)
mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system="galaxy")
x = ttnn.from_torch(
    np.ones((8, 32, 64), np.float32),
    dtype=ttnn.float32,
    layout=ttnn.TILE_LAYOUT,
    device=mesh,
    mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
)
ttnn.all_gather(x, dim=0)
ttnn.synchronize_device(mesh)
print(f"OK rank {rank}", flush=True)
