"""Falcon-7B's decode attention ops against torch: ``attn_matmul`` / ``group_attn_matmul`` /
``attn_matmul_from_cache`` equal ``matmul(a.transpose(0, 2), b).transpose(0, 2)`` in float32 within
one bfloat16 rounding of the output (2^-8 of each value, plus float32 sums in another order), the
cache read taking its first ``num_tokens`` rounded up to 32; ``nlp_create_qkv_heads_falcon7b``
moves bytes exactly; the device operations' checks refuse before anything is allocated."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

X = ttnn.experimental
GRID = ttnn.CoreCoord(8, 7)


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield m
    m.close()


def _dev(mesh, t, **kw):
    return ttnn.from_torch(t, layout=ttnn.TILE_LAYOUT, device=mesh, **kw)


def _host(t):
    return ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(t.device(), dim=0))[: t.shape[0]].float()


def _close(got, ref):
    assert got.shape == ref.shape
    assert ((got - ref).abs() <= ref.abs() * 2**-8 + 1e-3).all(), (got - ref).abs().max()


def test_attn_matmul(mesh):
    a, b = torch.randn(1, 8, 32, 64).bfloat16(), torch.randn(32, 1, 64, 96).bfloat16()
    out = X.attn_matmul(_dev(mesh, a), _dev(mesh, b), compute_with_storage_grid_size=GRID)
    _close(_host(out), torch.matmul(a.float().transpose(0, 2), b.float()).transpose(0, 2))
    assert out.dtype == ttnn.bfloat16


def test_attn_matmul_dtype_and_output_tensor(mesh):
    a, b = torch.randn(1, 4, 32, 32).bfloat16(), torch.randn(32, 1, 32, 64).bfloat16()
    into = _dev(mesh, torch.zeros(1, 4, 32, 64), dtype=ttnn.float32)
    address = into.buffer_address()
    out = X.attn_matmul(
        _dev(mesh, a), _dev(mesh, b), compute_with_storage_grid_size=GRID, dtype=ttnn.float32, output_tensor=into
    )
    assert out.buffer_address() == address and out.dtype == ttnn.float32
    ref = torch.matmul(a.float().transpose(0, 2), b.float()).transpose(0, 2)
    assert ((_host(out) - ref).abs() <= ref.abs() * 2**-20 + 1e-5).all()


@pytest.mark.parametrize("tokens,rounded", [(1, 32), (40, 64), (64, 64)])
def test_attn_matmul_from_cache(mesh, tokens, rounded):
    cache = torch.randn(32, 1, 128, 64).bfloat16()
    pre = torch.randn(1, 8, 32, 64).bfloat16()
    scores = X.attn_matmul_from_cache(
        _dev(mesh, pre), _dev(mesh, cache), num_tokens=tokens, transpose_hw=True, compute_with_storage_grid_size=GRID
    )
    window = cache[:, :, :rounded].float()
    _close(_host(scores), torch.matmul(pre.float().transpose(0, 2), window.transpose(-1, -2)).transpose(0, 2))
    post = torch.randn(1, 8, 32, rounded).bfloat16()
    out = X.attn_matmul_from_cache(
        _dev(mesh, post), _dev(mesh, cache), num_tokens=tokens, transpose_hw=False, compute_with_storage_grid_size=GRID
    )
    _close(_host(out), torch.matmul(post.float().transpose(0, 2), window).transpose(0, 2))


def test_group_attn_matmul(mesh):
    a, b = torch.randn(1, 8, 32, 64).bfloat16(), torch.randn(32, 2, 64, 96).bfloat16()
    out = X.group_attn_matmul(_dev(mesh, a), _dev(mesh, b), compute_with_storage_grid_size=GRID)
    ref = torch.matmul(a.float().transpose(0, 2), b.float().repeat_interleave(4, dim=1)).transpose(0, 2)
    _close(_host(out), ref)
    sharded = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1)
    out = X.group_attn_matmul(_dev(mesh, a), _dev(mesh, b), compute_with_storage_grid_size=GRID, memory_config=sharded)
    spec = out.memory_config().shard_spec
    assert spec.shape == (32, 96) and spec.grid.num_cores() == 8  # a q head a core
    _close(_host(out), ref)


def test_nlp_create_qkv_heads_falcon7b(mesh):
    x = torch.randn(2, 1, 64, 4672).bfloat16()
    q, k, v = X.nlp_create_qkv_heads_falcon7b(_dev(mesh, x))
    assert [list(t.shape) for t in (q, k, v)] == [[2, 71, 64, 64], [2, 1, 64, 64], [2, 1, 64, 64]]
    assert torch.equal(_host(q), x[:, 0, :, :4544].reshape(2, 64, 71, 64).transpose(1, 2).float())
    assert torch.equal(_host(k), x[:, :, :, 4544:4608].float())
    assert torch.equal(_host(v), x[:, :, :, 4608:].float())


def test_refusals(mesh):
    a = _dev(mesh, torch.randn(1, 8, 32, 64))
    with pytest.raises(ttnn.MeshnnValueError, match="kv_heads must be 1"):
        X.attn_matmul(a, _dev(mesh, torch.randn(32, 2, 64, 64)), compute_with_storage_grid_size=GRID)
    with pytest.raises(ttnn.MeshnnValueError, match="users must match"):
        X.attn_matmul(a, _dev(mesh, torch.randn(16, 1, 64, 64)), compute_with_storage_grid_size=GRID)
    with pytest.raises(ttnn.MeshnnValueError, match="Dimension K"):
        X.attn_matmul(a, _dev(mesh, torch.randn(32, 1, 32, 64)), compute_with_storage_grid_size=GRID)
    with pytest.raises(ttnn.MeshnnValueError, match="cache length"):
        X.attn_matmul_from_cache(
            a, _dev(mesh, torch.randn(32, 1, 64, 64)), num_tokens=65, transpose_hw=True,
            compute_with_storage_grid_size=GRID,
        )  # fmt: skip
    with pytest.raises(ttnn.MeshnnValueError, match="too small"):
        X.group_attn_matmul(
            a, _dev(mesh, torch.randn(32, 1, 64, 64)), compute_with_storage_grid_size=ttnn.CoreCoord(4, 4)
        )
    with pytest.raises(ttnn.MeshnnValueError, match="Unsupported input shape"):
        X.nlp_create_qkv_heads_falcon7b(_dev(mesh, torch.randn(1, 1, 32, 4608)))


def test_attn_matmul_does_not_repeat_the_kv_head_per_q_head(mesh):
    """Falcon-7B's 71 q heads share one KV head: the product is one (71, K) x (K, N) matrix a user,
    never the KV head copied 71 times (float32 (B, 71, K, N): 297 MB here, 2.2 GiB at B 64, N 2048)."""
    import tracemalloc

    a, b = torch.randn(1, 71, 32, 64).bfloat16(), torch.randn(32, 1, 64, 512).bfloat16()
    x, w = _dev(mesh, a), _dev(mesh, b)
    ttnn.synchronize_device(mesh)
    tracemalloc.start()
    try:
        out = X.attn_matmul(x, w, compute_with_storage_grid_size=GRID)
        ttnn.synchronize_device(mesh)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, peak  # the inputs in float32 and the output: under 20 MB
    _close(_host(out), torch.matmul(a.float().transpose(0, 2), b.float()).transpose(0, 2))
