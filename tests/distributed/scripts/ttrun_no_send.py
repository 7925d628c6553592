"""Launched by tt-run (tests/distributed/test_ttrun.py): rank 1 receives through a socket whose
sender, rank 0, never sends (it sleeps far past the wait timeout): the receive must name rank 0
and end the job, not hang."""

import time

import torch

import meshnn as ttnn

mesh = ttnn.open_mesh_device()
rank = int(ttnn.distributed_context_get_rank())
core = ttnn.CoreCoord(0, 0)
links = [
    ttnn.SocketConnection(ttnn.MeshCoreCoord(c, core), ttnn.MeshCoreCoord(c, core))
    for c in ttnn.MeshCoordinateRange(mesh.shape)
]
config = ttnn.SocketConfig(links, ttnn.SocketMemoryConfig(ttnn.BufferType.L1, 4096), 0, 1)
socket = ttnn.MeshSocket(mesh, config)
if rank == 1:
    spec = ttnn.from_torch(torch.zeros(1, 1, 32, 32 * mesh.get_num_devices()), device=mesh).spec
    received = ttnn.allocate_tensor_on_device(spec, mesh)
    ttnn.experimental.recv_async(received, socket)
    ttnn.to_torch(received)  # waits for the receive
else:
    time.sleep(60)
ttnn.distributed_context_barrier()
print(f"rank {rank} was not stopped")
