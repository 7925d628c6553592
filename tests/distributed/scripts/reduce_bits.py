"""all_reduce and reduce_scatter of float32 values on an 8x4 mesh, every cluster axis; rank 0
writes every device's result bytes to argv[1] (.npz).  Run on 1 process and on 2 and 4 ranks:
the files must be equal bit for bit (the members are added in one fixed order)."""

import sys

import numpy as np

import meshnn as ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(8, 4), system="galaxy")
rng = np.random.default_rng(11)  # the same on every rank
# values of very different sizes, so that the order of the additions shows in the low bits
x = (rng.standard_normal((8, 32, 4 * 256)) * np.exp(rng.uniform(-8, 8, (8, 32, 4 * 256)))).astype(np.float32)
mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=(8, 4), dims=(0, 2))
t = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=mapper)
results = {}
for axis in (None, 0, 1):
    for name, out in (
        ("all_reduce", ttnn.all_reduce(t, cluster_axis=axis)),
        ("reduce_scatter", ttnn.reduce_scatter(t, 2, cluster_axis=axis)),
    ):
        parts = ttnn.get_device_tensors(out)  # every part read on every rank (gathered)
        results[f"{name}_{axis}"] = np.stack([ttnn.to_torch(p).numpy() for p in parts]).view(np.uint32)
if mesh.context.rank == 0:
    np.savez(sys.argv[1], **results)
print(f"OK rank {mesh.context.rank}", flush=True)
