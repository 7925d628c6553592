"""``ttnn.experimental.nlp_create_qkv_heads`` of a width-sharded input reads the fused columns a KV
group at a time (``[its q heads | k | v]`` a shard, or q's groups and a KV input's ``[k | v]``), as
tt-metal's sharded program does, and shards its outputs a head a core ``[32, head_dim]``; bytes
move exactly.  The interleaved input keeps q's, k's and v's heads one after another."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

X = ttnn.experimental
B, D, HQ, HKV = 32, 64, 8, 2  # 32 users a row (decode), 4 q heads a KV group


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield m
    m.close()


def _sharded(mesh, x, width):
    grid = ttnn.num_cores_to_corerangeset(HKV, mesh.compute_with_storage_grid_size(), True)
    spec = ttnn.ShardSpec(grid, [B, width], ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)
    return ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=config)


OUT = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1)


def _heads(x, count):  # [1, 1, B, count * D] -> [1, count, B, D]
    return x.reshape(1, B, count, D).transpose(1, 2)


def test_fused_groups(mesh):
    q, k, v = torch.randn(1, 1, B, HKV, HQ // HKV * D), torch.randn(1, 1, B, HKV, D), torch.randn(1, 1, B, HKV, D)
    fused = torch.cat([q, k, v], -1).flatten(-2, -1).bfloat16()
    outs = X.nlp_create_qkv_heads(
        _sharded(mesh, fused, (HQ // HKV + 2) * D), num_heads=HQ, num_kv_heads=HKV, transpose_k_heads=False,
        memory_config=OUT,
    )  # fmt: skip
    wants = (_heads(q.flatten(-2, -1), HQ), _heads(k.flatten(-2, -1), HKV), _heads(v.flatten(-2, -1), HKV))
    for got, want, count in zip(outs, wants, (HQ, HKV, HKV), strict=True):
        assert torch.equal(ttnn.to_torch(got), want.bfloat16())
        spec = got.memory_config().shard_spec
        assert spec.shape == (32, D) and spec.grid.num_cores() == count


def test_separate_kv_groups(mesh):
    q, k, v = torch.randn(1, 1, B, HKV, HQ // HKV * D), torch.randn(1, 1, B, HKV, D), torch.randn(1, 1, B, HKV, D)
    q_in = _sharded(mesh, q.flatten(-2, -1).bfloat16(), HQ // HKV * D)
    kv_in = _sharded(mesh, torch.cat([k, v], -1).flatten(-2, -1).bfloat16(), 2 * D)
    outs = X.nlp_create_qkv_heads(
        q_in, kv_in, num_heads=HQ, num_kv_heads=HKV, transpose_k_heads=False, memory_config=OUT
    )
    wants = (_heads(q.flatten(-2, -1), HQ), _heads(k.flatten(-2, -1), HKV), _heads(v.flatten(-2, -1), HKV))
    for got, want in zip(outs, wants, strict=True):
        assert torch.equal(ttnn.to_torch(got), want.bfloat16())


def test_sharded_refusals(mesh):
    fused = torch.randn(1, 1, B, HKV * (HQ // HKV + 2) * D).bfloat16()
    x = _sharded(mesh, fused, (HQ // HKV + 2) * D)
    with pytest.raises(ttnn.MeshnnValueError, match="Transpose K heads must be false"):
        X.nlp_create_qkv_heads(x, num_heads=HQ, num_kv_heads=HKV, transpose_k_heads=True, memory_config=OUT)
    with pytest.raises(ttnn.MeshnnValueError, match="Output memory config must be sharded"):
        X.nlp_create_qkv_heads(x, num_heads=HQ, num_kv_heads=HKV, transpose_k_heads=False)
