"""Shard round trips on a mesh split across ranks: each rank keeps only its shards; to_torch with
a composer gathers the global tensor on every rank."""

import sys

import numpy as np
import torch

import meshnn as ttnn

rows, cols = (int(v) for v in sys.argv[1].split("x"))
mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), system="galaxy")
context = mesh.context
x = torch.from_numpy(np.random.default_rng(1).standard_normal((rows * 32, cols * 64)).astype(np.float32))
for dtype, layout in [(ttnn.float32, ttnn.ROW_MAJOR_LAYOUT), (ttnn.bfloat16, ttnn.TILE_LAYOUT)]:
    mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=(rows, cols), dims=(0, 1))
    host = ttnn.from_torch(x, dtype=dtype, layout=layout, mesh_mapper=mapper)
    local = host.host_buffer().local_shards()
    assert set(local) == set(mesh.local_coords()), "a rank must keep only its own shards"
    device = ttnn.to_device(host, mesh)
    composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=(rows, cols), dims=(0, 1))
    back = ttnn.to_torch(device, mesh_composer=composer)
    expected = x if dtype is ttnn.float32 else x.bfloat16()
    assert torch.equal(back, expected), f"round trip differs for {dtype}"
    direct = ttnn.to_torch(
        ttnn.from_torch(x, dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper), mesh_composer=composer
    )
    assert torch.equal(direct, expected)
assert ttnn.distributed_context_is_initialized()  # (a device opened: tt-metal's context exists)
assert ttnn.distributed_context_get_rank() == ttnn.Rank(context.rank)
assert int(ttnn.distributed_context_get_size()) == context.world_size
assert ttnn.distributed_context_allgather_int(10 * context.rank) == [10 * r for r in range(context.world_size)]
ttnn.distributed_context_barrier()
print(f"OK rank {context.rank}: round trips on {rows}x{cols}, holding {len(mesh.local_coords())} devices")
mesh.close()
