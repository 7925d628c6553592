"""get_device_tensors, then to_torch of each part, on every rank (each rank reads every part, the
rank that holds it included), a composed read of a tensor held by one rank's rows only, and a
host tensor's parts."""

import numpy as np

import meshnn as ttnn

ranks = ttnn.get_context().world_size if ttnn.launched_under_mpi() else 1
mesh = ttnn.open_mesh_device(ttnn.MeshShape(max(ranks, 2), 2), system="galaxy")
devices = mesh.get_num_devices()
x = np.arange(devices * 32 * 32, dtype=np.float32).reshape(devices, 32, 32)
t = ttnn.from_torch(
    x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
)
parts = ttnn.get_device_tensors(t)
assert len(parts) == devices
for i, part in enumerate(parts):
    assert np.array_equal(ttnn.to_torch(part).numpy(), x[i : i + 1]), i
    assert np.array_equal(ttnn.to_torch(ttnn.from_device(part)).numpy(), x[i : i + 1]), i
first_row = ttnn.combine_device_tensors(parts[:2], shard_dim=0)  # rank 0's rows only
got = ttnn.to_torch(first_row, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).numpy()
assert np.array_equal(got, x[:2]), got.shape
print(f"OK rank {mesh.context.rank}", flush=True)
