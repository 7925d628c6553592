"""Rank 1 fails (raises, or is killed) after the mesh is open; the others are waiting in a collective."""

import os
import signal
import sys

import meshnn as ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
if mesh.context.rank == 1:
    if sys.argv[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise ValueError("a deliberate failure on rank 1")
mesh.context.barrier()  # never completes: rank 1 is gone
print("UNREACHABLE")
