"""``ttnn.mesh_partition`` against numpy: the device at index i along ``cluster_axis`` (row-major
over the whole mesh for None) keeps part i of N of its own shard along ``dim``, N the mesh's
extent there; a group of one returns the input itself; tt-metal's checks refuse before anything is
allocated.  Moved values: exact equality (bfloat16, bfloat8_b whole tiles, float32 ROW_MAJOR)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


def shards(t) -> list[np.ndarray]:
    return [ttnn.to_torch(d).float().numpy() for d in ttnn.get_device_tensors(t)]


@pytest.mark.parametrize(
    "axis, dim, dtype, layout",
    [
        (1, 1, ttnn.bfloat16, ttnn.TILE_LAYOUT),
        (0, -1, ttnn.bfloat8_b, ttnn.TILE_LAYOUT),
        (None, 1, ttnn.bfloat16, ttnn.TILE_LAYOUT),
        (1, 3, ttnn.float32, ttnn.ROW_MAJOR_LAYOUT),
    ],
)
def test_each_device_keeps_its_part_of_its_own_shard(open_mesh, axis, dim, dtype, layout):
    mesh = open_mesh((2, 4))
    x = torch.randn(2, 8, 64, 256, generator=torch.Generator().manual_seed(11))
    t = ttnn.from_torch(x, dtype=dtype, layout=layout, device=mesh, mesh_mapper=ttnn.ShardTensor2dMesh(
        mesh, mesh_shape=(2, 4), dims=(0, None)))  # fmt: skip
    before = shards(t)  # each device's own shard, as stored
    out = ttnn.mesh_partition(t, dim, axis)
    n = {None: 8, 0: 2, 1: 4}[axis]
    for k, got in enumerate(shards(out)):
        r, c = divmod(k, 4)
        i = {None: k, 0: r, 1: c}[axis]
        assert np.array_equal(got, np.split(before[k], n, axis=dim)[i])
    assert out.dtype == dtype and out.layout == layout


def test_a_group_of_one_returns_the_input_and_bad_arguments_are_refused(open_mesh):
    mesh = open_mesh((1, 8))
    t = ttnn.from_torch(torch.zeros(1, 1, 64, 256), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    assert ttnn.mesh_partition(t, 3, cluster_axis=0) is t
    view = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM)
    with pytest.raises(ttnn.MeshnnValueError, match="Only support cluster axis of None, 0 or 1"):
        ttnn.mesh_partition(t, 3, cluster_axis=2)
    with pytest.raises(ttnn.MeshnnValueError, match="must be divisible by cluster axis size 8"):
        ttnn.mesh_partition(t, 1, cluster_axis=1)
    with pytest.raises(ttnn.MeshnnValueError, match="should not create padding"):
        ttnn.mesh_partition(t, 2, cluster_axis=1)  # 64 rows / 8: 8-row parts of 32-row tiles
    with pytest.raises(ttnn.MeshnnValueError, match="dim must be less than the rank"):
        ttnn.mesh_partition(t, 4, cluster_axis=1)
    assert ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM) == view
