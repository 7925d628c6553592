"""``ttnn.experimental.padded_slice``: a 4-D slice flattened to [1, 1, rows, shard width] in a
height-sharded row-major config, channels zero-padded, values exact; steps and interleaved output
configs refused."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield m
    m.close()


def _height(rows, width, cores=4):
    grid = ttnn.num_cores_to_corerangeset(cores, ttnn.CoreCoord(8, 8), True)
    shard = ttnn.ShardSpec(grid, [rows // cores, width], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, shard)


@pytest.mark.parametrize("layout", [ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT])
def test_slice_flattened_and_zero_padded(mesh, layout):
    x = torch.randn(2, 8, 6, 20)
    t = ttnn.from_torch(x, dtype=ttnn.float32, layout=layout, device=mesh)
    out = ttnn.experimental.padded_slice(t, [0, 2, 0, 0], [2, 6, 6, 20], memory_config=_height(48, 32))
    assert list(out.shape) == [1, 1, 48, 32] and out.layout == ttnn.ROW_MAJOR_LAYOUT
    want = torch.nn.functional.pad(x[:, 2:6].reshape(1, 1, 48, 20), (0, 12))
    assert torch.equal(ttnn.to_torch(out), want)


def test_steps_and_interleaved_configs_are_refused(mesh):
    t = ttnn.from_torch(torch.randn(1, 4, 4, 32), dtype=ttnn.bfloat16, device=mesh)
    with pytest.raises(ttnn.MeshnnValueError, match="padded_slice_step"):
        ttnn.experimental.padded_slice(t, [0, 0, 0, 0], [1, 4, 4, 32], [1, 2, 1, 1], memory_config=_height(16, 32))
    with pytest.raises(ttnn.MeshnnValueError, match="memory_config"):
        ttnn.experimental.padded_slice(t, [0, 0, 0, 0], [1, 4, 4, 32], memory_config=ttnn.DRAM_MEMORY_CONFIG)
