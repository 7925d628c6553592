"""Rank 1 goes away while rank 0 computes far from any collective (argv[1]): ``kill`` (SIGKILL),
``exit1`` (``sys.exit(1)``); ``interrupt``: every rank computes until Ctrl-C.  argv[2] is a token
that names this job's processes to the test.  Rank 0 computes for 60 s: the job must end long
before."""

import os
import signal
import sys
import time

import numpy as np

import meshnn as ttnn

mode = sys.argv[1]
ranks = ttnn.get_context().world_size if ttnn.launched_under_mpi() else 1
mesh = ttnn.open_mesh_device(ttnn.MeshShape(max(ranks, 2), 4), system="galaxy")
x = ttnn.from_torch(
    np.ones((mesh.get_num_devices(), 256, 256), np.float32),
    dtype=ttnn.float32,
    layout=ttnn.TILE_LAYOUT,
    device=mesh,
    mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
)
ttnn.synchronize_device(mesh)
print(f"READY rank {mesh.context.rank}", flush=True)
if mesh.context.rank == 1 and mode != "interrupt":
    time.sleep(0.5)
    print(f"GOING {time.time()}", flush=True)  # the test times the job's end from here
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(1)
start = time.monotonic()
while time.monotonic() - start < 60:
    y = ttnn.matmul(x, x)
print("UNREACHABLE", flush=True)
