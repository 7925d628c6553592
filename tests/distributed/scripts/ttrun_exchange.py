"""Launched by tt-run (tests/distributed/test_ttrun.py): two ranks, each on its own mesh, send each
other a tensor of megabytes (past MPI's eager sends) and only then receive: a socket's send does
not wait for its receive, so the exchange completes.  argv[1] "never": rank 1 never receives, and
rank 0's send, still in flight at exit, names rank 1."""

import sys

import numpy as np
import torch

import meshnn as ttnn

mesh = ttnn.open_mesh_device()
rank = int(ttnn.distributed_context_get_rank())
peer = 1 - rank
core = ttnn.CoreCoord(0, 0)
links = [
    ttnn.SocketConnection(ttnn.MeshCoreCoord(c, core), ttnn.MeshCoreCoord(c, core))
    for c in ttnn.MeshCoordinateRange(mesh.shape)
]
memory = ttnn.SocketMemoryConfig(ttnn.BufferType.L1, 4096)
rows, cols = tuple(mesh.shape)
values = np.random.default_rng(rank).standard_normal((1, 1, rows * 512, cols * 1024)).astype(np.float32)
mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=(rows, cols), dims=(2, 3))
composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=(rows, cols), dims=(2, 3))
mine = ttnn.from_torch(torch.from_numpy(values), layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper)
out = ttnn.MeshSocket(mesh, ttnn.SocketConfig(links, memory, rank, peer))
back = ttnn.MeshSocket(mesh, ttnn.SocketConfig(links, memory, peer, rank))
ttnn.experimental.send_async(mine, out)
if sys.argv[1:] == ["never"]:
    print(f"rank {rank} sent", flush=True)
    sys.exit(0)  # no receive: the sends are still in flight at exit
theirs = ttnn.allocate_tensor_on_device(mine.spec, mesh)
ttnn.experimental.recv_async(theirs, back)
expected = np.random.default_rng(peer).standard_normal(values.shape).astype(np.float32)
assert np.array_equal(ttnn.to_torch(theirs, mesh_composer=composer).numpy(), expected), f"rank {rank}: wrong bytes"
ttnn.distributed_context_barrier()
print(f"OK rank {rank}: exchanged {values.nbytes >> 20} MiB each way")
ttnn.close_mesh_device(mesh)
