"""Every rank allocates the same sequence; the addresses must agree (checked by the debug mode too)."""

import sys

import numpy as np

import meshnn as ttnn

rows, cols = (int(v) for v in sys.argv[1].split("x"))
mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), system="galaxy")
context = mesh.context
rng = np.random.default_rng(0)  # the same on every rank: SPMD
addresses, kept = [], []
for i in range(40):
    shape = (int(rng.integers(1, 4)) * 32, int(rng.integers(1, 9)) * 32)
    config = ttnn.L1_MEMORY_CONFIG if i % 3 == 0 else ttnn.DRAM_MEMORY_CONFIG
    t = ttnn.allocate_tensor_on_device(ttnn.Shape(shape), ttnn.bfloat16, ttnn.TILE_LAYOUT, mesh, config)
    addresses.append(t.buffer_address())
    kept.append(t)
    if i % 4 == 3:
        ttnn.deallocate(kept.pop(int(rng.integers(0, len(kept)))))
everyone = context.allgather_object(addresses)
assert all(a == everyone[0] for a in everyone), "addresses differ across ranks"
local = mesh.local_coords()
assert len(local) == rows * cols // context.world_size
views = context.allgather_object(ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM).as_dict())
assert all(v == views[0] for v in views)
print(
    f"OK rank {context.rank} of {context.world_size}: {len(addresses)} addresses agree, "
    f"local rows {sorted({c[0] for c in local})}"
)
mesh.close()
