"""Weight caches and tensor files across ranks: ``python caches.py FOLDER write|read``.

``write`` (run on 2 ranks): as_tensor with a cache file and dump_tensor of a sharded tensor; the
files must hold every shard; a ``DumpTensorMode.LOCAL`` dump per rank loads back on that rank.
``read`` (run on 4 ranks, or as one process): the same as_tensor
must load the cache without converting again, and load_tensor must give every shard; both are
checked against numpy on every rank."""

import os
import sys

import numpy as np

import meshnn as ttnn

folder, step = sys.argv[1], sys.argv[2]
mesh = ttnn.open_mesh_device(ttnn.MeshShape(4, 2), system="galaxy")
rank = mesh.context.rank if ttnn.launched_under_mpi() else 0
x = np.random.default_rng(3).standard_normal((4 * 32, 2 * 64)).astype(np.float32)
converted = []


def weights():
    return ttnn.as_tensor(
        x,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=(4, 2), dims=(0, 1)),
        cache_file_name=os.path.join(folder, "w"),
        preprocess=lambda v: converted.append(1) or v,
    )


composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=(4, 2), dims=(0, 1))
expected = ttnn.to_torch(ttnn.from_torch(x, dtype=ttnn.bfloat16)).float().numpy()
w = weights()
assert np.array_equal(ttnn.to_torch(w, mesh_composer=composer).float().numpy(), expected)
if step == "write":
    assert converted == [1]
    ttnn.dump_tensor(os.path.join(folder, "t.tensorbin"), w)
    # LOCAL: no collective, each rank's own file holds the shards it holds, and loads back on it
    own = os.path.join(folder, f"local{rank}.tensorbin")
    ttnn.dump_tensor(own, w, mode=ttnn.DumpTensorMode.LOCAL)
    mine = ttnn.load_tensor(own, device=mesh)
    assert np.array_equal(ttnn.to_torch(mine, mesh_composer=composer).float().numpy(), expected)
    again = weights()
    assert converted == [1], "the second as_tensor must read the cache"
else:
    assert converted == [], f"rank {rank} converted again instead of reading the cache"
    loaded = ttnn.load_tensor(os.path.join(folder, "t.tensorbin"), device=mesh)
    assert np.array_equal(ttnn.to_torch(loaded, mesh_composer=composer).float().numpy(), expected)
    if not ttnn.launched_under_mpi():  # one process holds every shard: rank 0's LOCAL file lacks some
        for where in (mesh, None):
            try:
                ttnn.load_tensor(os.path.join(folder, "local0.tensorbin"), device=where)
            except ttnn.TensorFileError as error:
                assert "written by another MPI rank" in str(error) or "DumpTensorMode.LOCAL" in str(error), error
            else:
                raise AssertionError("a LOCAL file of rank 0 of 2 loaded in one process")
print(f"OK rank {rank}: {step}")
mesh.close()
