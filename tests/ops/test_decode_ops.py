"""Decode-mode ops against numpy (issue 23): decode SDPA (GQA, ragged positions as a list or a
tensor, a skipped user, sliding window, attention sink, a mask), paged decode SDPA over a shuffled
page table (the same result as unpaged, bit for bit), chunked SDPA, rotary_embedding_llama in
prefill and decode mode (and fused_qk = two decode calls), nlp_create_qkv_heads_decode /
nlp_concat_heads_decode (exact moves, tt-metal's shard grids), topk, sampling, argmax into an
output tensor.  Float results are held to a bfloat16 bound derived from the output's rounding
(and a negative check shows the bound can fail)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

U, HQ, HK, S, D = 4, 8, 2, 128, 64
BF16_EPS = 2.0**-8  # half a bfloat16 ulp, relative


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield m
    m.close()


def dev(mesh, t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, mc=None):
    return ttnn.from_torch(t, dtype=dtype, layout=layout, device=mesh, memory_config=mc)


def ints(mesh, values):
    return dev(mesh, torch.tensor(values, dtype=torch.int32), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)


def host(t) -> np.ndarray:
    return ttnn.to_torch(ttnn.get_device_tensors(t)[0]).float().numpy()


def per_user(count: int, rows: int = 32, width: int = D, start: int = 0):
    """Height-sharded one ``rows x width`` shard per user, on cores ``start ..`` of an 8-wide grid."""
    ranges, index = [], start
    while index < start + count:
        y, x = divmod(index, 8)
        stop = min(start + count, (y + 1) * 8)
        ranges.append(ttnn.CoreRange(ttnn.CoreCoord(x, y), ttnn.CoreCoord(x + stop - index - 1, y)))
        index = stop
    return ttnn.create_sharded_memory_config(
        (rows, width), ttnn.CoreRangeSet(ranges), ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
    )


def attention_reference(q, k, v, keep, sink=None, mask=None, scale=None):
    """float64 decode attention: q (U, HQ, D), k/v (U, HK, S, D), keep (U, S) -> (U, HQ, D)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    group = q.shape[1] // k.shape[1]
    scores = np.einsum("uhd,uhsd->uhs", q, np.repeat(k, group, axis=1)) * (scale or 1 / np.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores + mask
    scores = np.where(keep[:, None, :], scores, -np.inf)
    top = scores.max(-1, keepdims=True)
    if sink is not None:
        top = np.maximum(top, sink[None, :, None])
    with np.errstate(invalid="ignore"):  # (a skipped user's row is all -inf: NaN, not compared)
        weights = np.exp(scores - top)
        total = weights.sum(-1, keepdims=True) + (0 if sink is None else np.exp(sink[None, :, None] - top))
        return np.einsum("uhs,uhsd->uhd", weights / total, np.repeat(v, group, axis=1))


def within_bf16(got, want) -> bool:
    return bool(np.all(np.abs(got - want) <= BF16_EPS * np.abs(want) + 1e-3))


@pytest.fixture(scope="module")
def qkv(mesh):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(shape, generator=gen) for shape in ((1, U, HQ, D), (U, HK, S, D), (U, HK, S, D)))
    q, k, v = (t.bfloat16().float() for t in (q, k, v))
    return q, k, v, dev(mesh, q, mc=per_user(U)), dev(mesh, k), dev(mesh, v)


def test_decode_sdpa_gqa_with_ragged_positions(mesh, qkv):
    q, k, v, tq, tk, tv = qkv
    pos = [0, 17, -1, 127]  # user 2 is skipped: its output rows are zero
    keep = np.arange(S)[None] <= np.array(pos)[:, None]
    want = attention_reference(q[0], k, v, keep)
    for kwargs in ({"cur_pos": pos}, {"cur_pos_tensor": ints(mesh, pos)}):
        got = host(ttnn.transformer.scaled_dot_product_attention_decode(tq, tk, tv, **kwargs))[0]
        live = [0, 1, 3]
        assert within_bf16(got[live], want[live])
        assert not within_bf16(got[live] * (1 + 4 * BF16_EPS), want[live])  # the bound can fail
        assert np.all(got[2] == 0)


def test_decode_sdpa_window_sink_and_mask(mesh, qkv):
    q, k, v, tq, tk, tv = qkv
    pos = [40, 80, 100, 127]
    window = np.array(pos)[:, None]
    keep = (np.arange(S)[None] <= window) & (np.arange(S)[None] > window - 32)
    got = host(ttnn.transformer.scaled_dot_product_attention_decode(tq, tk, tv, cur_pos=pos, sliding_window_size=32))
    assert within_bf16(got[0], attention_reference(q[0], k, v, keep))
    sink = torch.randn(32, 32).bfloat16().float()
    decode = ttnn.transformer.scaled_dot_product_attention_decode
    got = host(decode(tq, tk, tv, cur_pos=pos, attention_sink=dev(mesh, sink)))
    keep = np.arange(S)[None] <= window
    scaled_sink = sink[:HQ, 0].numpy() / np.sqrt(q.shape[-1])  # the kernel scales the sink as the scores
    assert within_bf16(got[0], attention_reference(q[0], k, v, keep, sink=scaled_sink))
    assert not within_bf16(got[0], attention_reference(q[0], k, v, keep, sink=sink[:HQ, 0].numpy()))
    mask = torch.randn(U, 1, HQ, S).bfloat16().float()  # ttnn's layout: [users, 1, q heads, seq]
    got = host(decode(tq, tk, tv, is_causal=False, attn_mask=dev(mesh, mask)))
    assert within_bf16(got[0], attention_reference(q[0], k, v, np.ones((U, S), bool), mask=mask[:, 0].numpy()))
    one = mask[:1]  # a mask of batch 1: every user adds it
    got = host(decode(tq, tk, tv, is_causal=False, attn_mask=dev(mesh, one)))
    want = attention_reference(q[0], k, v, np.ones((U, S), bool), mask=one[:, 0].expand(U, HQ, S).numpy())
    assert within_bf16(got[0], want)
    assert not within_bf16(got[0], attention_reference(q[0], k, v, np.ones((U, S), bool), mask=mask[:, 0].numpy()))


def test_decode_sdpa_share_cache_reads_one_batch_for_every_user(mesh, qkv):
    q, k, v, tq, *_ = qkv
    pos = [40, 80, 100, 127]
    one_k, one_v = k[:1], v[:1]  # a cache of batch 1
    decode = ttnn.transformer.scaled_dot_product_attention_decode
    got = host(decode(tq, dev(mesh, one_k), dev(mesh, one_v), cur_pos=pos, share_cache=True))
    keep = np.arange(S)[None] <= np.array(pos)[:, None]
    want = attention_reference(q[0], one_k.expand(U, -1, -1, -1), one_v.expand(U, -1, -1, -1), keep)
    assert within_bf16(got[0], want)
    assert not within_bf16(got[0], attention_reference(q[0], k, v, keep))  # not each user's own batch
    entries = mesh.num_program_cache_entries()
    decode(tq, *qkv[4:], cur_pos=pos, share_cache=False)
    decode(tq, *qkv[4:], cur_pos=pos)
    assert mesh.num_program_cache_entries() == entries + 2  # None and False are programs apart
    with pytest.raises(ttnn.MeshnnValueError, match="Share cache expects K to have batch size of 1"):
        decode(tq, *qkv[4:], cur_pos=pos, share_cache=True)
    with pytest.raises(ttnn.MeshnnValueError, match=r"K tensor batch size \(1\) must equal B"):
        decode(tq, dev(mesh, one_k), dev(mesh, one_v), cur_pos=pos)
    with pytest.raises(ttnn.MeshnnTypeError, match="share_cache"):
        decode(tq, *qkv[4:], cur_pos=pos, share_cache="yes")


def test_mla_decode_with_a_values_tensor_reads_it(mesh, qkv):
    q, k, *_ = qkv
    dv = 32
    keys = k[:, :1]  # one latent head (U, 1, S, D)
    values = torch.randn(U, 1, S, dv).bfloat16().float()
    pos = [10, 64, 100, 127]
    tq = dev(mesh, q)
    mla = ttnn.transformer.flash_multi_latent_attention_decode
    got = host(mla(tq, dev(mesh, keys), dev(mesh, values), dv, cur_pos=pos))
    assert got.shape == (1, U, HQ, dv)
    keep = np.arange(S)[None] <= np.array(pos)[:, None]
    assert within_bf16(got[0], attention_reference(q[0], keys, values, keep))
    reused = host(mla(tq, dev(mesh, keys), None, dv, cur_pos=pos))  # no values tensor: the keys' columns
    assert within_bf16(reused[0], attention_reference(q[0], keys, keys[..., :dv], keep))
    assert not within_bf16(got[0], reused[0])


def test_paged_decode_sdpa_equals_unpaged_over_a_shuffled_page_table(mesh, qkv):
    _, k, v, tq, tk, tv = qkv
    block = 32
    per = S // block
    table = torch.randperm(U * per).reshape(U, per).int()
    pages = [torch.empty(U * per, HK, block, D) for _ in range(2)]
    for cache, paged in zip((k, v), pages, strict=True):
        for u in range(U):
            for j in range(per):
                paged[table[u, j]] = cache[u, :, j * block : (j + 1) * block]
    pos = [3, 64, 95, 127]
    unpaged = host(ttnn.transformer.scaled_dot_product_attention_decode(tq, tk, tv, cur_pos_tensor=ints(mesh, pos)))
    paged = ttnn.transformer.paged_scaled_dot_product_attention_decode(
        tq,
        dev(mesh, pages[0]),
        dev(mesh, pages[1]),
        page_table_tensor=ints(mesh, table.tolist()),
        cur_pos_tensor=ints(mesh, pos),
    )
    assert np.array_equal(host(paged), unpaged)


def test_chunked_sdpa_attends_the_earlier_chunks(mesh):
    gen = torch.Generator().manual_seed(2)
    block, blocks, start, s = 32, 8, 64, 64
    table = torch.randperm(blocks).reshape(1, blocks).int()
    keys, values = (torch.randn(1, HK, blocks * block, D, generator=gen).bfloat16().float() for _ in range(2))
    q = torch.randn(1, HQ, s, D, generator=gen).bfloat16().float()

    def paged(cache):
        out = torch.empty(blocks, HK, block, D)
        for j in range(blocks):
            out[table[0, j]] = cache[0, :, j * block : (j + 1) * block]
        return dev(mesh, out)

    got = host(
        ttnn.transformer.chunked_scaled_dot_product_attention(
            dev(mesh, q), paged(keys), paged(values), ints(mesh, table.tolist()), start
        )
    )[0]
    keep = np.arange(start + s)[None] <= start + np.arange(s)[:, None]  # (s, length)
    for i in (0, 31, 63):
        row = attention_reference(q[0, :, i][None], keys[:, :, : start + s], values[:, :, : start + s], keep[i][None])
        assert within_bf16(got[:, i], row[0])


def rotate_pairs(x: np.ndarray) -> np.ndarray:
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    return np.stack((-pairs[..., 1], pairs[..., 0]), -1).reshape(x.shape)


def trans_mat(cores: int = 1) -> torch.Tensor:
    mat = torch.zeros(1, 1, 32, 32)
    mat[..., torch.arange(0, 32, 2), torch.arange(1, 32, 2)] = 1
    mat[..., torch.arange(1, 32, 2), torch.arange(0, 32, 2)] = -1
    return mat.repeat(1, 1, cores, 1)


def test_rotary_embedding_llama_prefill_and_decode(mesh):
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(1, HQ, 64, D, generator=gen).bfloat16().float()
    cos, sin = (torch.randn(1, 1, 96, D, generator=gen).bfloat16().float() for _ in range(2))
    rotary = ttnn.experimental.rotary_embedding_llama
    got = host(rotary(dev(mesh, x), dev(mesh, cos), dev(mesh, sin), dev(mesh, trans_mat())))
    want = x.numpy() * cos[:, :, :64].numpy() + rotate_pairs(x.numpy()) * sin[:, :, :64].numpy()
    assert within_bf16(got, want)
    xd = torch.randn(1, U, HQ, D, generator=gen).bfloat16().float()
    cd, sd = (torch.randn(1, U, 1, D, generator=gen).bfloat16().float() for _ in range(2))
    rot = [dev(mesh, t, mc=per_user(U)) for t in (xd, cd, sd)]
    tm = dev(mesh, trans_mat(U), mc=per_user(U, 32, 32))
    got = host(ttnn.experimental.rotary_embedding_llama(*rot, tm, is_decode_mode=True))
    assert within_bf16(got, xd.numpy() * cd.numpy() + rotate_pairs(xd.numpy()) * sd.numpy())
    with pytest.raises(ttnn.MeshnnValueError, match="HEIGHT_SHARDED"):
        ttnn.experimental.rotary_embedding_llama(dev(mesh, xd), rot[1], rot[2], tm, is_decode_mode=True)


def test_rotary_fused_qk_is_two_decode_rotations(mesh):
    gen = torch.Generator().manual_seed(4)
    q, k = torch.randn(1, U, HQ, D, generator=gen), torch.randn(1, U, HK, D, generator=gen)
    cos, sin = (torch.randn(1, 2 * U, 1, D, generator=gen) for _ in range(2))
    tq, tk = dev(mesh, q, mc=per_user(U)), dev(mesh, k, mc=per_user(U, start=U))
    tc, ts = dev(mesh, cos, mc=per_user(2 * U)), dev(mesh, sin, mc=per_user(2 * U))
    tm = dev(mesh, trans_mat(2 * U), mc=per_user(2 * U, 32, 32))
    fq, fk = ttnn.experimental.rotary_embedding_llama_fused_qk(tq, tk, tc, ts, tm)
    for got, x, half in ((fq, q, slice(0, U)), (fk, k, slice(U, 2 * U))):
        c, s = cos[:, half].bfloat16().float().numpy(), sin[:, half].bfloat16().float().numpy()
        x = x.bfloat16().float().numpy()
        assert within_bf16(host(got), x * c + rotate_pairs(x) * s)


def test_create_and_concat_heads_decode_move_values_exactly(mesh):
    x = torch.randn(1, 1, U, (HQ + 2 * HK) * D).bfloat16().float()
    q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(
        dev(mesh, x), num_heads=HQ, num_kv_heads=HK, overlap_qk_coregrid=False
    )
    split = x.reshape(1, U, HQ + 2 * HK, D).numpy()
    assert np.array_equal(host(q), split[:, :, :HQ])
    assert np.array_equal(host(k), split[:, :, HQ : HQ + HK])
    assert np.array_equal(host(v), split[:, :, HQ + HK :])
    assert q.memory_config().shard_spec.shape == (32, D) and q.memory_config().shard_spec.num_cores() == U
    first_k = k.memory_config().shard_spec.cores()[0]
    assert (first_k.x, first_k.y) == (U % 8, U // 8)  # k after q's users when the grids do not overlap
    cat = ttnn.experimental.nlp_concat_heads_decode(q, num_heads=HQ)
    assert list(cat.shape) == [1, 1, U, HQ * D]
    assert np.array_equal(host(cat), x[..., : HQ * D].numpy())
    assert cat.memory_config().memory_layout == ttnn.TensorMemoryLayout.WIDTH_SHARDED


def test_topk_sampling_and_argmax_into_an_output(mesh):
    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(1, 1, 32, 256, generator=gen).bfloat16().float()
    values, indices = ttnn.topk(dev(mesh, logits), 8)
    want_v, want_i = torch.topk(logits, 8)
    got_i = host(indices).astype(np.int64)
    assert np.array_equal(host(values), want_v.numpy())
    assert np.array_equal(np.take_along_axis(logits.numpy(), got_i, -1), want_v.numpy())  # (ties: lower index first)
    params = {
        "k": dev(mesh, torch.ones(32, dtype=torch.int32) * 8, ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT),
        "p": dev(mesh, torch.zeros(32), layout=ttnn.ROW_MAJOR_LAYOUT),
        "temp": dev(mesh, torch.ones(32), layout=ttnn.ROW_MAJOR_LAYOUT),
    }
    idx = dev(mesh, want_i.int(), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
    tokens = ttnn.sampling(values, idx, **params, seed=7)
    assert host(tokens).reshape(-1).tolist() == logits[0, 0].argmax(-1).tolist()  # p = 0: the top token
    out = dev(mesh, torch.zeros(1, 1, 32, 1, dtype=torch.int32), ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT)
    address = out.storage.mesh_buffer.address()
    rm = dev(mesh, logits, layout=ttnn.ROW_MAJOR_LAYOUT)
    assert ttnn.argmax(rm, dim=3, keepdim=True, use_multicore=True, output_tensor=out) is out
    assert host(out).reshape(-1).tolist() == logits[0, 0].argmax(-1).tolist()
    assert out.storage.mesh_buffer.address() == address


def test_all_gather_async_gathers_the_logical_rows_as_tt_metal_does(mesh):
    """A decode step gathers its users' rows over a mesh axis: tt-metal's output shape is the input's
    logical shape times the ring size (its all_gather_async since 2026-01; the padded shape before),
    so [1, 1, 8, w] gathers into [1, 1, 16, w] on two devices: each device's 8 rows, no padding rows."""
    x = torch.randn(2, 1, 8, 64).bfloat16().float()
    t = ttnn.from_torch(
        x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
    )
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))])
    sems = [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(2)]
    out = ttnn.experimental.all_gather_async(t, dim=2, multi_device_global_semaphore=sems)
    assert list(out.shape) == [1, 1, 16, 64]
    got = host(out)[0, 0]
    for d in range(2):
        assert np.array_equal(got[8 * d : 8 * (d + 1)], x[d, 0].numpy())
