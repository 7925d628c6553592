"""Launched by tt-run (tests/distributed/test_ttrun.py): every rank opens its own mesh, the one its
rank binding names, and a tensor goes down the chain of ranks through sockets (each rank negates
it: exact in every format), then the last rank sends its result back to rank 0.

argv: the mesh shape each rank expects ("2x2"), the dtype ("float32", "bfloat16", "bfloat8_b")."""

import sys

import numpy as np
import torch

import meshnn as ttnn

rows, cols = (int(v) for v in sys.argv[1].split("x"))
dtype = getattr(ttnn, sys.argv[2])
mesh = ttnn.open_mesh_device()  # the bound mesh: no shape asked for
rank, size = int(ttnn.distributed_context_get_rank()), int(ttnn.distributed_context_get_size())
assert tuple(mesh.shape) == (rows, cols), f"rank {rank} opened {mesh.shape}, its binding says {rows}x{cols}"
assert mesh.local_coords() == list(ttnn.MeshCoordinateRange(mesh.shape)), "a bound rank owns its whole mesh"
assert size >= 2

core = ttnn.CoreCoord(0, 0)
links = [
    ttnn.SocketConnection(ttnn.MeshCoreCoord(c, core), ttnn.MeshCoreCoord(c, core))
    for c in ttnn.MeshCoordinateRange(mesh.shape)
]
memory = ttnn.SocketMemoryConfig(ttnn.BufferType.L1, 4096)
x = torch.from_numpy(np.random.default_rng(3).standard_normal((1, 1, rows * 64, cols * 96)).astype(np.float32))
mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=(rows, cols), dims=(2, 3))
composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=(rows, cols), dims=(2, 3))
start = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper)
exact = ttnn.to_torch(start, mesh_composer=composer)  # x in the format, read back on this rank's own mesh

if rank == 0:
    ttnn.experimental.send_async(start, ttnn.MeshSocket(mesh, ttnn.SocketConfig(links, memory, 0, 1)))
else:
    into = ttnn.allocate_tensor_on_device(start.spec, mesh)
    ttnn.experimental.recv_async(into, ttnn.MeshSocket(mesh, ttnn.SocketConfig(links, memory, rank - 1, rank)))
    out = ttnn.neg(into)
    got = ttnn.to_torch(out, mesh_composer=composer)
    assert torch.equal(got, exact * (-1) ** rank), f"rank {rank}: what came down the chain differs"
    peer = rank + 1 if rank < size - 1 else 0
    ttnn.experimental.send_async(out, ttnn.MeshSocket(mesh, ttnn.SocketConfig(links, memory, rank, peer)))
if rank == 0:  # the last rank's result, back
    back = ttnn.allocate_tensor_on_device(start.spec, mesh)
    ttnn.experimental.recv_async(back, ttnn.MeshSocket(mesh, ttnn.SocketConfig(links, memory, size - 1, 0)))
    got = ttnn.to_torch(back, mesh_composer=composer)
    assert torch.equal(got, exact * (-1) ** (size - 1)), "rank 0: the result sent back differs"
ttnn.distributed_context_barrier()
print(f"OK rank {rank}: own {rows}x{cols} mesh, {sys.argv[2]} down {size} ranks and back")
ttnn.close_mesh_device(mesh)
