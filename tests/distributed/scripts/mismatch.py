"""Ranks that reach the same kind of exchange with different tensors: every one must end the job
naming both ranks and both tensors, never hand a rank another tensor's data.

Modes (argv[1]): ``compose`` (even ranks read A then B with a composer, odd ranks B then A),
``gather`` (the same with all_gather), ``cross`` (rank 1 reads with a composer while the others
all_gather), ``sizes`` (rank 1 gathers a tensor twice as tall), ``dump`` (even ranks dump A, odd
ranks dump B), ``ok`` (every rank the same: the job ends normally).  Rank 0 prints the tensors'
addresses first (``TENSORS a=0x.. b=0x.. c=0x..``), then the wall clock just before the
exchanges (``STAMP t``)."""

import sys
import tempfile
import time

import numpy as np

import meshnn as ttnn

mode = sys.argv[1]
ranks = ttnn.get_context().world_size if ttnn.launched_under_mpi() else 1
mesh = ttnn.open_mesh_device(ttnn.MeshShape(max(ranks, 2), 2), system="galaxy")
rank = mesh.context.rank
shard = ttnn.ShardTensorToMesh(mesh, dim=0)
compose = ttnn.ConcatMeshToTensor(mesh, dim=0)
kw = {"dtype": ttnn.bfloat16, "layout": ttnn.TILE_LAYOUT, "device": mesh, "mesh_mapper": shard}
devices = mesh.get_num_devices()
a = ttnn.from_torch(np.full((devices, 32, 64), 1.0, np.float32), **kw)
b = ttnn.from_torch(np.full((devices, 32, 64), 2.0, np.float32), **kw)
c = ttnn.from_torch(np.full((devices, 64, 64), 3.0, np.float32), **kw)
if rank == 0:
    print(f"TENSORS a={a.buffer_address():#x} b={b.buffer_address():#x} c={c.buffer_address():#x}", flush=True)
first, second = (a, b) if rank % 2 == 0 or mode == "ok" else (b, a)
ttnn.synchronize_device(mesh)
if rank == 0:
    print(f"STAMP {time.time()}", flush=True)  # the exchanges start: the test times the job's end from here
if mode in ("compose", "ok"):
    values = [ttnn.to_torch(t, mesh_composer=compose).float() for t in (first, second)]
    assert values[0].eq(1).all() and values[1].eq(2).all(), "the data of another tensor"
elif mode == "gather":
    for t in (first, second):
        ttnn.to_torch(ttnn.all_gather(t, dim=0), mesh_composer=compose)
elif mode == "cross":
    if rank == 1:
        ttnn.to_torch(a, mesh_composer=compose)
    else:
        ttnn.to_torch(ttnn.all_gather(a, dim=0), mesh_composer=compose)
elif mode == "sizes":
    ttnn.all_gather(c if rank == 1 else a, dim=0)
    ttnn.synchronize_device(mesh)
elif mode == "dump":
    ttnn.dump_tensor(f"{tempfile.mkdtemp()}/x.tensorbin", first)
print("UNREACHABLE" if mode != "ok" else f"OK rank {rank}", flush=True)
