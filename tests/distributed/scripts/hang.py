"""Rank 1 goes wrong while every other rank runs an all_gather; the run must end within seconds.

Modes (argv[1]): ``bad_dim`` (rank 1's all_gather has a bad dim: it raises), ``exit0`` (rank 1
calls sys.exit(0)), ``thread`` (rank 1's worker thread raises), ``sleep`` (rank 1 sleeps far
longer than MESHNN_WAIT_TIMEOUT), ``mismatch`` (rank 1 calls all_reduce instead), ``ok`` (no
fault: the run ends normally).  The mesh has one row per rank on the simulated galaxy."""

import sys
import threading
import time

import numpy as np

import meshnn as ttnn

mode = sys.argv[1]
ranks = ttnn.get_context().world_size if ttnn.launched_under_mpi() else 1
mesh = ttnn.open_mesh_device(ttnn.MeshShape(max(ranks, 2), 2), system="galaxy")
x = ttnn.from_torch(
    np.ones((mesh.shape[0] * 2, 32, 64), np.float32),
    dtype=ttnn.bfloat16,
    layout=ttnn.TILE_LAYOUT,
    device=mesh,
    mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
)
print(f"READY rank {mesh.context.rank}", flush=True)
if mesh.context.rank == 1:
    if mode == "bad_dim":
        ttnn.all_gather(x, dim=9)
    elif mode == "exit0":
        sys.exit(0)
    elif mode == "thread":

        def work():
            raise ValueError("a deliberate failure in a worker thread of rank 1")

        worker = threading.Thread(target=work, name="worker")
        worker.start()
        worker.join()
        time.sleep(600)
    elif mode == "sleep":
        time.sleep(600)
    elif mode == "mismatch":
        ttnn.all_reduce(x)
gathered = ttnn.all_gather(x, dim=0)
print("UNREACHABLE" if mode != "ok" else f"OK rank {mesh.context.rank}", flush=True)
