"""``ttnn.experimental.padded_slice`` (also ``ttnn.padded_slice``): a 4-D slice flattened to [1, 1,
rows, shard width] in a height-sharded row-major config, channels zero-padded or cut, values exact,
an output tensor written in place; steps and interleaved output configs refused (conv2d's cases:
tests/ops/test_conv_slices.py)."""

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


def test_both_names_are_one_op(mesh):
    """``ttnn.padded_slice`` is another name of tt-metal's ``ttnn.experimental.padded_slice``: the
    same function (one kernel, one set of checks)."""
    assert ttnn.padded_slice is ttnn.experimental.padded_slice


def test_integers_move_exactly_and_a_narrower_shard_cuts_the_channels(mesh):
    """Values are moved, not converted: int32 beyond float32's 24-bit mantissa survive; a HEIGHT
    shard narrower than the window's channels keeps the first shard-width channels (ttnn's output
    spec takes the shard width as the last dim)."""
    x = torch.arange(2**24, 2**24 + 4 * 4 * 40, dtype=torch.int32).reshape(1, 4, 4, 40) * 3
    t = ttnn.from_torch(x, dtype=ttnn.int32, device=mesh)
    out = ttnn.experimental.padded_slice(t, [0, 0, 0, 0], [1, 4, 4, 40], memory_config=_height(16, 32))
    assert list(out.shape) == [1, 1, 16, 32] and out.dtype == ttnn.int32
    assert torch.equal(ttnn.to_torch(out), x.reshape(1, 1, 16, 40)[..., :32])


def test_output_tensor_is_written_and_pad_value_is_recorded_unused(mesh):
    """``output_tensor`` of the output's spec receives the slice (the same tensor returned);
    ``pad_value`` is accepted and unused, as ttnn's binding leaves it: the padding is zeros."""
    x = torch.randn(1, 4, 4, 20)
    t = ttnn.from_torch(x, dtype=ttnn.float32, device=mesh)
    config = _height(16, 32)
    first = ttnn.experimental.padded_slice(t, [0, 0, 0, 0], [1, 4, 4, 20], memory_config=config, pad_value=7.0)
    want = torch.nn.functional.pad(x.reshape(1, 1, 16, 20), (0, 12))
    assert torch.equal(ttnn.to_torch(first), want)
    target = ttnn.experimental.padded_slice(t, [0, 1, 0, 0], [1, 2, 4, 20], memory_config=_height(4, 32, cores=1))
    back = ttnn.experimental.padded_slice(
        t, [0, 0, 0, 0], [1, 1, 4, 20], memory_config=_height(4, 32, cores=1), output_tensor=target
    )
    assert back is target or back.buffer_address() == target.buffer_address()
    assert torch.equal(ttnn.to_torch(target), torch.nn.functional.pad(x[:, :1].reshape(1, 1, 4, 20), (0, 12)))
    with pytest.raises(ttnn.MeshnnValueError, match="output_tensor"):
        ttnn.experimental.padded_slice(t, [0, 0, 0, 0], [1, 4, 4, 20], memory_config=config, output_tensor=target)
    with pytest.raises(ttnn.MeshnnTypeError, match="pad_value"):
        ttnn.experimental.padded_slice(t, [0, 0, 0, 0], [1, 4, 4, 20], memory_config=config, pad_value="zero")
