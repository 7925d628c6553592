"""Rank 0 exits with status 3 before it opens any mesh (before MPI_Init); the other ranks open a
2x4 mesh and wait in it for rank 0.  Under `meshnn run` the job must end within seconds."""

import os

import numpy as np

import meshnn as ttnn

if int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0"))) == 0:
    raise SystemExit(3)
mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
x = ttnn.from_torch(np.ones((1, 1, 32, 32), dtype=np.float32), device=mesh, layout=ttnn.TILE_LAYOUT)
ttnn.all_gather(x, dim=3)
print("UNREACHABLE", flush=True)
