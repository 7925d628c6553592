"""Run by test_mpi under ``mpiexec -n N python -m pytest -p meshnn.testing``: the test fails on
rank 1 only, while every other rank waits in an all_gather."""

import numpy as np
import pytest
import ttnn


@pytest.mark.parametrize("mesh_device", [(2, 2)], indirect=True)
def test_fails_on_rank_1(mesh_device):
    x = ttnn.from_torch(
        np.ones((4, 32, 32), np.float32),
        layout=ttnn.TILE_LAYOUT,
        device=mesh_device,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=0),
    )
    assert mesh_device.context.rank != 1, "a deliberate failure on rank 1"
    ttnn.all_gather(x, dim=0)
    print("UNREACHABLE")
