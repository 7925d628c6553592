"""``ttnn.experimental.split_query_key_value_and_split_heads`` (BERT-large's) against torch: the
interleaved program reads q's, k's and v's heads one after another, the block-sharded one each
shard column's heads of q, k and v (in either shard orientation), and both move bytes exactly (k
transposed); ttnn's batch, layout and grid checks refuse."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

OP = ttnn.experimental.split_query_key_value_and_split_heads
B, S, H, D = 8, 64, 16, 64


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield m
    m.close()


def _heads(x, groups):
    parts = x[:, 0].reshape(B, S, groups, 3, H // groups, D)
    q, k, v = (parts[:, :, :, i].reshape(B, S, H, D).transpose(1, 2) for i in range(3))
    return q, k.transpose(-1, -2), v


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b], ids=["bf16", "bfp8"])
def test_interleaved(mesh, dtype):
    x = torch.randn(B, 1, S, 3 * H * D)
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
    held = ttnn.to_torch(t)  # bfloat8_b: the values the device holds
    outs = OP(t, ttnn.CoreCoord(8, 8))
    for got, want in zip(outs, _heads(held, 1), strict=True):
        # q and v move whole tiles; k's transpose regroups block-float rows: the host's own rounding
        want = ttnn.to_torch(ttnn.from_torch(want.contiguous(), dtype=dtype, layout=ttnn.TILE_LAYOUT))
        assert got.dtype == dtype and torch.equal(ttnn.to_torch(got).float(), want.float())


@pytest.mark.parametrize("orientation", [ttnn.ShardOrientation.ROW_MAJOR, ttnn.ShardOrientation.COL_MAJOR])
def test_block_sharded(mesh, orientation):
    groups = 8
    x = torch.randn(B, 1, S, 3 * H * D).bfloat16()
    t = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT, device=mesh)
    end = (
        ttnn.CoreCoord(groups - 1, B - 1)
        if orientation == ttnn.ShardOrientation.ROW_MAJOR
        else ttnn.CoreCoord(B - 1, groups - 1)
    )
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), end)})
    spec = ttnn.ShardSpec(cores, (S, 3 * H * D // groups), orientation)
    sharded = ttnn.to_memory_config(
        t, ttnn.MemoryConfig(ttnn.TensorMemoryLayout.BLOCK_SHARDED, ttnn.BufferType.L1, spec)
    )
    out_config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1)
    q, k, v = OP(sharded, ttnn.CoreCoord(8, 8), memory_config=out_config, num_heads=H)
    assert q.memory_config().shard_spec.shape == (H // groups * S, D)
    assert k.memory_config().shard_spec.shape == (H // groups * D, S)
    for got, want in zip((q, k, v), _heads(x, groups), strict=True):
        assert torch.equal(ttnn.to_torch(got), want)


def test_refusals(mesh):
    small = ttnn.from_torch(torch.randn(2, 1, 32, 3 * H * D), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    with pytest.raises(ttnn.MeshnnValueError, match="batch size"):
        OP(small, ttnn.CoreCoord(8, 8))
    f32 = ttnn.from_torch(torch.randn(8, 1, 32, 3 * H * D), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)
    with pytest.raises(ttnn.MeshnnValueError, match="Unsupported data format"):
        OP(f32, ttnn.CoreCoord(8, 8))
    with pytest.raises(ttnn.MeshnnValueError, match="num_heads"):
        OP(small, ttnn.CoreCoord(8, 8), num_heads=0)
