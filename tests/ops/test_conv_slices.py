"""conv2d's input slicing: ttnn.padded_slice (an NHWC window flattened into one sharded ROW_MAJOR
``[1, 1, N*H*W, C]`` matrix, the channels padded to the shard width) and ttnn.slice_write of a
sharded ``[1, 1, rows, C]`` input (the window's rows flattened, tile-padded for TILE inputs).
Both move values, so results are compared exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops.conv.parallel_config import create_sharded_memory_config_from_parallel_config

RM, TILE = ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT


@pytest.fixture(scope="module")
def device():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield m
    m.close()


def ints(shape, seed=0) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).integers(-10, 10, shape).astype(np.float32))


def config(shape, cores, scheme, tile_size=1) -> ttnn.MemoryConfig:
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(cores[0] - 1, cores[1] - 1))])
    parallel = ttnn.SlidingWindowParallelConfig(
        grid=grid, shard_scheme=scheme, shard_orientation=ttnn.ShardOrientation.ROW_MAJOR
    )
    return create_sharded_memory_config_from_parallel_config(shape, parallel, tile_size)


@pytest.mark.parametrize("layout", [RM, TILE])
def test_padded_slice_height_sharded_flattens_the_window_and_zero_pads_the_channels(device, layout):
    x = ints((2, 12, 10, 20))
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=layout, device=device)
    memory = config([1, 1, 2 * 4 * 10, 32], (8, 1), ttnn.TensorMemoryLayout.HEIGHT_SHARDED)
    out = ttnn.padded_slice(t, [0, 4, 0, 0], [2, 8, 10, 20], [1, 1, 1, 1], memory_config=memory)
    assert tuple(out.shape) == (1, 1, 80, 32) and out.layout == RM and out.dtype == ttnn.bfloat16
    assert out.memory_config() == memory
    want = torch.nn.functional.pad(x[:, 4:8], (0, 12)).reshape(1, 1, 80, 32)
    assert torch.equal(ttnn.to_torch(out).float(), want)


def test_padded_slice_block_sharded_pads_rows_to_the_shard_width_and_reads_bfloat8_as_bfloat16(device):
    x = ints((1, 8, 8, 40), seed=1)
    t = ttnn.from_torch(x, dtype=ttnn.bfloat8_b, layout=TILE, device=device)
    memory = config([1, 1, 32, 64], (2, 2), ttnn.TensorMemoryLayout.BLOCK_SHARDED)
    out = ttnn.padded_slice(t, [0, 0, 4, 0], [1, 8, 8, 40], [1, 1, 1, 1], memory_config=memory)
    assert tuple(out.shape) == (1, 1, 32, 40) and tuple(out.padded_shape) == (1, 1, 32, 64)
    assert out.dtype == ttnn.bfloat16  # small integers: exact in bfloat8_b blocks of like magnitude
    assert torch.equal(ttnn.to_torch(out).float(), x[:, :, 4:8].reshape(1, 1, 32, 40))
    padded = out.cpu().to_torch_with_padded_shape().float()
    assert torch.equal(padded[..., 40:], torch.zeros(1, 1, 32, 24))


@pytest.mark.parametrize("layout", [RM, TILE])
def test_slice_write_of_a_sharded_flat_input_fills_the_window(device, layout):
    """The conv2d output loop: each slice of rows comes back height-sharded as [1, 1, rows, C]; a
    TILE slice carries its window rounded up to whole tiles (width 20 -> 32 rows per (n, h))."""
    x = ints((2, 6, 20, 32), seed=2)
    out = ttnn.to_memory_config(
        ttnn.zeros([2, 6, 20, 32], device=device, layout=layout, dtype=ttnn.bfloat16), ttnn.DRAM_MEMORY_CONFIG
    )
    for h in range(0, 6, 3):
        piece = ttnn.from_torch(x[:, h : h + 3], dtype=ttnn.bfloat16, layout=layout, device=device)
        piece = ttnn.reshape(piece, piece.padded_shape)
        piece = ttnn.reshape(piece, [1, 1, -1, 32])
        rows = piece.shape[2]
        assert rows == 2 * 3 * (32 if layout == TILE else 20)
        memory = config([1, 1, rows, 32], (4, 1), ttnn.TensorMemoryLayout.HEIGHT_SHARDED, 32 if layout == TILE else 1)
        ttnn.slice_write(ttnn.to_memory_config(piece, memory), out, [0, h, 0, 0], [2, h + 3, 20, 32], [1, 1, 1, 1])
    assert torch.equal(ttnn.to_torch(out).float(), x)


def test_a_sharded_row_major_tensor_pads_its_width_to_the_shard_width(device):
    """ttnn's default alignment of a sharded ROW_MAJOR tensor (max_pool2d_with_indices' inputs of
    1 or 24 channels in 32-wide height shards): the padded width is the shard's, the values read
    back are the logical ones, and moving it to DRAM and back keeps them."""
    x = ints((1, 1, 64, 24), seed=4)
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))])
    spec = ttnn.ShardSpec(grid, (32, 32), ttnn.ShardOrientation.ROW_MAJOR)
    memory = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=RM, device=device, memory_config=memory)
    assert tuple(t.shape) == (1, 1, 64, 24) and tuple(t.padded_shape) == (1, 1, 64, 32)
    assert torch.equal(ttnn.to_torch(t).float(), x)
    assert torch.equal(ttnn.to_torch(ttnn.to_memory_config(t, ttnn.DRAM_MEMORY_CONFIG)).float(), x)
    back = ttnn.to_memory_config(ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=RM, device=device), memory)
    assert tuple(back.padded_shape) == (1, 1, 64, 32) and torch.equal(ttnn.to_torch(back).float(), x)
