"""get_device_tensors, then to_torch of parts: each rank reads only the parts it holds (no rank
meets another), then every rank reads every part (the parts another rank holds are gathered: the
k-th such read of each rank meets the k-th of the others, each giving every shard it holds), as
examples/tensor_parallel_mlp.py reads them."""

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
for i, part in enumerate(parts):  # only the parts this rank holds, on the device and read back first
    if mesh.is_local(part.storage.coords[0]):
        assert np.array_equal(ttnn.to_torch(part).numpy(), x[i : i + 1]), i
        assert np.array_equal(ttnn.to_torch(ttnn.from_device(part)).numpy(), x[i : i + 1]), i
for i, part in enumerate(parts):  # every part
    assert np.array_equal(ttnn.to_torch(part).numpy(), x[i : i + 1]), i
print(f"OK rank {mesh.context.rank}", flush=True)
