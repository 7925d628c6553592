"""Launched by tt-run with a rank-bindings mapping of two overlays (tests/distributed/test_ttrun.py):
sub-context 0 has two ranks, sub-context 1 one.  Each rank opens its overlay's mesh; the run's
distributed context is its sub-context (ranks from 0 in each, barriers and gathers among its own
ranks), the world functions answer for the whole job, and within sub-context 0 a socket carries
a tensor from its rank 0 to its rank 1."""

import numpy as np
import torch

import meshnn as ttnn

mesh = ttnn.open_mesh_device()
world, local = int(ttnn.distributed_context_world_rank()), int(ttnn.distributed_context_get_rank())
sub = ttnn.distributed_context_subcontext_id()
assert int(ttnn.distributed_context_world_size()) == 3
assert ttnn.distributed_context_subcontext_count() == 2 and ttnn.distributed_context_subcontext_sizes() == [2, 1]
assert sub == (0 if world < 2 else 1), (world, sub)
assert int(ttnn.distributed_context_get_size()) == ttnn.distributed_context_subcontext_sizes()[sub]
assert int(ttnn.distributed_context_local_to_world_rank(sub, local)) == world
assert int(ttnn.distributed_context_local_to_world_rank(1, 0)) == 2
gathered = ttnn.distributed_context_allgather_int(100 * world)
assert gathered == ([0, 100] if sub == 0 else [200]), gathered  # only this sub-context's ranks
ttnn.distributed_context_barrier()
if sub == 0:
    core = ttnn.CoreCoord(0, 0)
    coords = ttnn.MeshCoordinateRange(mesh.shape)
    links = [ttnn.SocketConnection(ttnn.MeshCoreCoord(c, core), ttnn.MeshCoreCoord(c, core)) for c in coords]
    socket = ttnn.MeshSocket(mesh, ttnn.SocketConfig(links, ttnn.SocketMemoryConfig(ttnn.BufferType.L1, 4096), 0, 1))
    values = torch.arange(32 * 32, dtype=torch.float32).reshape(1, 1, 32, 32)
    sent = ttnn.from_torch(values, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
    if local == 0:
        ttnn.experimental.send_async(sent, socket)
    else:
        got = ttnn.allocate_tensor_on_device(sent.spec, mesh)
        ttnn.experimental.recv_async(got, socket)
        for part in ttnn.get_device_tensors(got):
            assert np.array_equal(ttnn.to_torch(part).numpy(), values.numpy()), "wrong bytes"
    ttnn.distributed_context_barrier()
print(f"OK rank {world}: sub-context {sub}, local rank {local}")
ttnn.close_mesh_device(mesh)
