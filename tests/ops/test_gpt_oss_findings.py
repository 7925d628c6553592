"""What gpt-oss's own module tests (tt-metal 2026-06, ``models/demos/gpt_oss``) needed of meshnn's
existing ops, each checked against numpy / torch:

- a rank-0 int32 position (``torch.tensor(p)``, one user) has tt-metal's row-major padded shape
  ``[1]``, so ``paged_update_cache`` and decode SDPA count it as one user's position;
- ``scatter`` of a bfloat8_b TILE input with a bfloat16 source: ttnn makes both ROW_MAJOR first (a
  block float becomes bfloat16), so their dtypes agree and the result is bfloat16;
- (the decode attention sink's scale is held in ``test_decode_ops.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield m
    m.close()


def test_a_scalar_position_pads_to_one_row(mesh):
    t = ttnn.from_torch(torch.tensor(5, dtype=torch.int32), dtype=ttnn.int32, device=mesh)
    assert tuple(t.shape) == () and tuple(t.padded_shape) == (1,)
    assert int(ttnn.to_torch(ttnn.get_device_tensors(t)[0])) == 5


def test_one_user_decode_at_a_scalar_position(mesh):
    heads, d, seq, pos = 8, 64, 64, 5
    g = torch.Generator().manual_seed(7)
    k = torch.randn(1, 1, seq, d, generator=g).bfloat16().float()
    v = torch.randn(1, 1, seq, d, generator=g).bfloat16().float()
    new_k = torch.randn(1, 1, 1, d, generator=g).bfloat16().float()  # [1, users, heads, d]
    q = torch.randn(1, 1, heads, d, generator=g).bfloat16().float()
    tk, tv = (ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh) for x in (k, v))
    where = ttnn.from_torch(torch.tensor(pos, dtype=torch.int32), dtype=ttnn.int32, device=mesh)
    shard = ttnn.create_sharded_memory_config(
        (32, d),
        ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))]),
        ttnn.ShardStrategy.HEIGHT,
        use_height_and_width_as_shard_shape=True,
    )
    x = ttnn.from_torch(new_k, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=shard)
    ttnn.experimental.paged_update_cache(tk, x, update_idxs_tensor=where)
    cache = ttnn.to_torch(ttnn.get_device_tensors(tk)[0]).float()
    assert torch.equal(cache[0, 0, pos], new_k[0, 0, 0]) and torch.equal(cache[0, 0, :pos], k[0, 0, :pos])
    tq = ttnn.from_torch(q, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    out = ttnn.transformer.scaled_dot_product_attention_decode(tq, tk, tv, cur_pos_tensor=where)
    got = ttnn.to_torch(ttnn.get_device_tensors(out)[0]).float().numpy()[0, 0]
    keys = cache[0, 0, : pos + 1].double().numpy()
    scores = q[0, 0].double().numpy() @ keys.T / np.sqrt(d)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    want = (weights / weights.sum(-1, keepdims=True)) @ v[0, 0, : pos + 1].double().numpy()
    np.testing.assert_allclose(got, want, rtol=2.0**-7, atol=2.0**-7 * np.abs(want).max())


def test_scatter_of_a_block_float_input_with_a_bfloat16_source(mesh):
    g = torch.Generator().manual_seed(3)
    base = torch.randn(32, 64, generator=g)
    src = torch.randn(32, 4, generator=g).bfloat16()
    index = torch.stack([torch.randperm(64, generator=g)[:4] for _ in range(32)]).to(torch.int32)
    x = ttnn.from_torch(base, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh)
    i = ttnn.from_torch(index, dtype=ttnn.uint16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    s = ttnn.from_torch(src, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    out = ttnn.scatter(x, dim=1, index=i, src=s)
    assert out.dtype == ttnn.bfloat16 and out.layout == ttnn.TILE_LAYOUT
    stored = ttnn.to_torch(ttnn.get_device_tensors(x)[0]).float()  # bfloat8_b values: exact in bfloat16
    want = torch.scatter(stored, 1, index.long(), src.float())
    assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(out)[0]).float(), want)
    f32 = ttnn.from_torch(base, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    with pytest.raises(TypeError, match="src_dtype"):
        ttnn.scatter(f32, dim=1, index=i, src=s)


def test_sparse_matmul_takes_a_mask_of_its_batch_volume(mesh):
    """gpt-oss's prefill experts: ``[1, chunks, 32, K] x [1, E, K, N]`` with a ``[1, 1, chunks, E]``
    mask (tt-metal checks the mask's volume only): the products it marks, in (chunk, expert) order."""
    g = torch.Generator().manual_seed(11)
    a = torch.randn(1, 3, 32, 64, generator=g).bfloat16()
    b = torch.randn(1, 4, 64, 32, generator=g).bfloat16()
    mask = (torch.rand(1, 1, 3, 4, generator=g) < 0.5).float()
    mask[0, 0, 0, 0] = 1.0
    config = ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=ttnn.CoreCoord(2, 2), in0_block_w=1, out_subblock_h=1, out_subblock_w=1,
        per_core_M=1, per_core_N=1, fuse_batch=False, fused_activation=None, mcast_in0=True,
    )  # fmt: skip
    tile = {"dtype": ttnn.bfloat16, "layout": ttnn.TILE_LAYOUT, "device": mesh}
    out = ttnn.sparse_matmul(
        ttnn.from_torch(a, **tile),
        ttnn.from_torch(b, **tile),
        sparsity=ttnn.from_torch(mask, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh),
        program_config=config,
    )
    got = ttnn.to_torch(ttnn.get_device_tensors(out)[0]).float()
    assert tuple(got.shape) == (1, 3, 1, 4, 32, 32)
    for c, e in np.ndindex(3, 4):
        want = a[0, c].float() @ b[0, e].float()
        if mask[0, 0, c, e]:
            assert torch.allclose(got[0, c, 0, e], want, rtol=2.0**-7, atol=2.0**-7 * want.abs().max())
        else:
            assert not got[0, c, 0, e].any()
    flat = ttnn.sparse_matmul(  # the 4x8 decode's [1, E] mask (rank 2), one token
        ttnn.from_torch(a[:, :1], **tile),
        ttnn.from_torch(b, **tile),
        sparsity=ttnn.from_torch(mask[0, 0, :1], dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh),
        program_config=config,
    )
    got = ttnn.to_torch(ttnn.get_device_tensors(flat)[0]).float()
    assert tuple(got.shape) == (1, 1, 1, 4, 32, 32)
    for e in range(4):
        want = a[0, 0].float() @ b[0, e].float()
        if mask[0, 0, 0, e]:
            assert torch.allclose(got[0, 0, 0, e], want, rtol=2.0**-7, atol=2.0**-7 * want.abs().max())
        else:
            assert not got[0, 0, 0, e].any()
    down = ttnn.sparse_matmul(  # both sparse: [1, E, M, K] x [1, E, K, N], the same [1, E] mask
        ttnn.from_torch(b.transpose(-1, -2)[:, :, :32], **tile),
        ttnn.from_torch(a[:, :1].repeat(1, 4, 1, 1).transpose(-1, -2)[:, :, :, :32], **tile),
        sparsity=ttnn.from_torch(mask[0, 0, :1], dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh),
        is_input_a_sparse=True,
        program_config=config,
    )
    got = ttnn.to_torch(ttnn.get_device_tensors(down)[0]).float()
    assert tuple(got.shape) == (1, 4, 32, 32)
    for e in range(4):
        want = b[0, e].T[:32].float() @ a[0, 0].T[:, :32].float()
        if mask[0, 0, 0, e]:
            assert torch.allclose(got[0, e], want, rtol=2.0**-7, atol=2.0**-7 * want.abs().max())
        else:
            assert not got[0, e].any()
    with pytest.raises(ValueError, match="no supported mode"):
        ttnn.sparse_matmul(
            ttnn.from_torch(a, **tile),
            ttnn.from_torch(b, **tile),
            sparsity=ttnn.from_torch(mask[..., :3], dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh),
            program_config=config,
        )


def _sdpa_reference(q, k, v, window=None, sink=None):
    """float64 causal SDPA with a sliding window and a per-head sink logit (scaled as the scores)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = 1 / np.sqrt(q.shape[-1])
    scores = np.einsum("bhsd,bhtd->bhst", q, k) * scale
    i, j = np.arange(q.shape[2])[:, None], np.arange(k.shape[2])[None]
    keep = (j <= i) & ((j > i - window) if window else True)
    scores = np.where(keep, scores, -np.inf)
    top = scores.max(-1, keepdims=True)
    extra = 0.0
    if sink is not None:
        logit = sink.reshape(1, -1, 1, 1) * scale
        top = np.maximum(top, logit)
        extra = np.exp(logit - top)
    weights = np.exp(scores - top)
    return np.einsum("bhst,bhtd->bhsd", weights / (weights.sum(-1, keepdims=True) + extra), v)


def test_prefill_sdpa_with_a_sliding_window_and_a_sink(mesh):
    """gpt-oss's prefill attention: causal, ``sliding_window_size`` 128 on a 256-token prompt, a
    ``[1, nqh, 1, 1]`` sink (tt-metal's kernel scales it as the scores)."""
    g = torch.Generator().manual_seed(5)
    q = torch.randn(1, 4, 256, 64, generator=g).bfloat16()
    k = torch.randn(1, 2, 256, 64, generator=g).bfloat16()
    v = torch.randn(1, 2, 256, 64, generator=g).bfloat16()
    sink = (torch.randn(1, 4, 1, 1, generator=g) * 8).bfloat16()
    tile = {"dtype": ttnn.bfloat16, "layout": ttnn.TILE_LAYOUT, "device": mesh}
    tq, tk, tv, ts = (ttnn.from_torch(x, **tile) for x in (q, k, v, sink))
    sdpa = ttnn.transformer.scaled_dot_product_attention
    for window, with_sink in ((128, False), (None, True), (128, True)):
        out = sdpa(tq, tk, tv, is_causal=True, sliding_window_size=window, attention_sink=ts if with_sink else None)
        got = ttnn.to_torch(ttnn.get_device_tensors(out)[0]).float().numpy()
        want = _sdpa_reference(q.float(), k.float(), v.float(), window, sink.float().numpy() if with_sink else None)
        np.testing.assert_allclose(got, want, rtol=2.0**-7, atol=2.0**-7 * np.abs(want).max())
    plain = _sdpa_reference(q.float(), k.float(), v.float())
    assert not np.allclose(got, plain, rtol=2.0**-7, atol=2.0**-7 * np.abs(plain).max())  # both changed it
    with pytest.raises(ValueError, match="shape \\[1, 4, 1, 1\\]"):
        sdpa(tq, tk, tv, attention_sink=ttnn.from_torch(sink.reshape(1, 1, 4, 1), **tile))
    with pytest.raises(TypeError, match="sliding_window_size"):
        sdpa(tq, tk, tv, sliding_window_size=-1)


@pytest.mark.parametrize("system,shape,axis", [("t3k", (2, 4), 1), ("t3k", (1, 8), 1), ("galaxy", (4, 8), 0)])
def test_moe_routing_remap_splits_the_non_zero_weights_along_the_axis(system, shape, axis):
    """ttnn's own example (8 of 32 weights over 4 devices) and a random one: device c along the
    axis keeps the non-zero weights of rank c*n .. c*n+n-1, in expert order, bytes unchanged."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system)
    try:
        parallel = shape[axis]
        g = torch.Generator().manual_seed(parallel)
        experts = 32
        chosen = torch.randperm(experts, generator=g)[: 2 * parallel].sort().values
        w = torch.zeros(1, experts)
        w[0, chosen] = torch.rand(len(chosen), generator=g) + 0.5
        w = w.bfloat16()
        t = ttnn.from_torch(w, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
        out = ttnn.moe_routing_remap(t, 2 * parallel, parallel, axis)
        for index, device in enumerate(ttnn.get_device_tensors(out)):
            c = divmod(index, shape[1])[axis]
            want = torch.zeros_like(w)
            keep = chosen[2 * c : 2 * c + 2]
            want[0, keep] = w[0, keep]
            assert torch.equal(ttnn.to_torch(device), want)
        with pytest.raises(ValueError, match="non Zero"):
            ttnn.moe_routing_remap(t, experts + 1, parallel, axis)
        with pytest.raises(ValueError, match="cluster axis"):
            ttnn.moe_routing_remap(t, 2, parallel, 2)
    finally:
        mesh.close()


def test_moreh_full_takes_the_2026_device_keyword(mesh):
    """gpt-oss's fused decode zeroes its combine buffer with ``moreh_full(shape=, fill_value=,
    device=, layout=, dtype=, memory_config=)`` (the 2026 binding's name for the third argument)."""
    by_keyword = ttnn.moreh_full(shape=[2, 32, 64], fill_value=3, device=mesh, layout=ttnn.ROW_MAJOR_LAYOUT,
                                 dtype=ttnn.bfloat16, memory_config=ttnn.DRAM_MEMORY_CONFIG)  # fmt: skip
    positional = ttnn.moreh_full([2, 32, 64], 3, mesh, layout=ttnn.ROW_MAJOR_LAYOUT, dtype=ttnn.bfloat16)
    first = [ttnn.to_torch(ttnn.get_device_tensors(t)[0]) for t in (by_keyword, positional)]
    assert torch.equal(first[0], first[1])
    assert torch.equal(first[0], torch.full((2, 32, 64), 3.0, dtype=torch.bfloat16))
    with pytest.raises(ttnn.MeshnnTypeError, match="device once"):
        ttnn.moreh_full([2, 32], 1.0, mesh, device=mesh)
