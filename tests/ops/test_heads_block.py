"""``ttnn.experimental.create_qkv_heads`` / ``create_qkv_heads_from_separate_tensors``: q, k, v of
block-sharded inputs equal torch's split of the same values exactly (a copy), shaped and
height-sharded as ttnn's device operations make them; bad head counts and layouts are refused."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield m
    m.close()


def _block(mesh, x, cores_h, cores_w, dtype=ttnn.float32):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(cores_w - 1, cores_h - 1))})
    shard = ttnn.ShardSpec(grid, [x.shape[2], x.shape[3] // cores_w], ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.BLOCK_SHARDED, ttnn.BufferType.L1, shard)
    return ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=config)


HEIGHT = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1)


@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize(("heads", "kv_heads", "cores_w"), [(4, 4, 4), (4, 2, 2)])
def test_grouped_split_is_torchs(mesh, transpose, heads, kv_heads, cores_w):
    b, s, d = 2, 64, 32
    q, k, v = torch.randn(b, 1, s, kv_heads, heads // kv_heads * d), *torch.randn(2, b, 1, s, kv_heads, d)
    fused = torch.cat([q, k, v], -1).flatten(-2)
    outs = ttnn.experimental.create_qkv_heads(
        _block(mesh, fused, b, cores_w),
        num_heads=heads,
        num_kv_heads=kv_heads,
        transpose_k_heads=transpose,
        memory_config=HEIGHT,
    )
    want_q = q.reshape(b, s, heads, d).transpose(1, 2)
    want_k = k.reshape(b, s, kv_heads, d).transpose(1, 2)
    want_v = v.reshape(b, s, kv_heads, d).transpose(1, 2)
    want_k = want_k.transpose(-1, -2) if transpose else want_k
    for got, want in zip(outs, (want_q, want_k, want_v), strict=True):
        assert torch.equal(ttnn.to_torch(got), want)
        assert got.memory_config().memory_layout == ttnn.TensorMemoryLayout.HEIGHT_SHARDED
        assert got.memory_config().shard_spec.shape[1] == want.shape[-1]


def test_separate_inputs_split_is_torchs(mesh):
    b, sq, skv, heads, kv_heads, d = 2, 64, 32, 4, 2, 32
    q, k, v = torch.randn(b, 1, sq, heads * d), *torch.randn(2, b, 1, skv, kv_heads, d)
    kv = torch.cat([k, v], -1).flatten(-2)
    got_q, got_k, got_v = ttnn.experimental.create_qkv_heads_from_separate_tensors(
        _block(mesh, q, b, 2), _block(mesh, kv, b, 2), num_heads=heads, num_kv_heads=kv_heads, memory_config=HEIGHT
    )
    assert torch.equal(ttnn.to_torch(got_q), q.reshape(b, sq, heads, d).transpose(1, 2))
    assert torch.equal(ttnn.to_torch(got_k), k.reshape(b, skv, kv_heads, d).permute(0, 2, 3, 1))
    assert torch.equal(ttnn.to_torch(got_v), v.reshape(b, skv, kv_heads, d).transpose(1, 2))
    assert list(got_k.memory_config().shard_spec.shape) == [b * kv_heads * d // 4, skv]


def test_refusals(mesh):
    fused = _block(mesh, torch.randn(2, 1, 64, 4 * 3 * 32), 2, 4)
    with pytest.raises(ttnn.MeshnnValueError, match="HEIGHT_SHARDED"):
        ttnn.experimental.create_qkv_heads(fused, num_heads=4)
    with pytest.raises(ttnn.MeshnnValueError, match="num_heads"):
        ttnn.experimental.create_qkv_heads(fused, num_heads=4, num_kv_heads=3, memory_config=HEIGHT)
    with pytest.raises(ttnn.MeshnnTypeError, match="num_kv_heads"):
        ttnn.experimental.create_qkv_heads(fused, num_heads=4, num_kv_heads=2.0, memory_config=HEIGHT)
