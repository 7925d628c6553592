"""ttnn.transformer / ttnn.experimental: scaled dot-product attention, rotary embedding and the head
moves, on meshes with the heads sharded over the devices (as tensor parallelism places them), and
the fused activations of the binary ops.

Values are compared with float64 references computed from the inputs as the device holds them
(``quantized``), within bounds derived in reference.py's way: the float32 compute error, then one
rounding into the output dtype.  Moves (split, concatenate) are exact.  The checks tt-metal makes
(SDPA's, rotary embedding's) raise before anything is allocated.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import meshnn as ttnn

from .reference import (
    BF16,
    BFP8,
    TILE,
    U,
    assert_within,
    exceeds,
    gamma,
    output_bound,
    quantized,
    rounding_error,
)
from .test_op_contract import snapshot

RM = ttnn.ROW_MAJOR_LAYOUT


def held(values: np.ndarray, dtype=BF16) -> np.ndarray:
    """``values`` as the device holds them in ``dtype`` (float64), from their float32 cast."""
    return quantized(np.asarray(values, np.float32), dtype)


def heads_on(mesh, values: np.ndarray, dtype=BF16, *, dim: int = 1, layout=TILE, memory_config=None) -> ttnn.Tensor:
    """``values`` sharded over the mesh on ``dim`` (the heads), or replicated for dim None."""
    mapper = ttnn.ReplicateTensorToMesh(mesh) if dim is None else ttnn.ShardTensorToMesh(mesh, dim=dim)
    return ttnn.from_torch(
        np.ascontiguousarray(values, np.float32),
        dtype=dtype,
        layout=layout,
        device=mesh,
        mesh_mapper=mapper,
        memory_config=memory_config,
    )


def gathered(mesh, tensor: ttnn.Tensor, dim: int = 1) -> np.ndarray:
    return ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=dim)).astype(np.float64)


# ------------------------------------------------------------------------------------- SDPA


def sdpa_reference(q, k, v, *, scale, causal=False, mask=None):
    """float64 attention with a bound on a correct float32 evaluation before the output rounding.

    First order: a score errs by at most gamma_(d+2) * scale * sum_t |q_t||k_t| plus a few u of the
    score and of the row maximum it is shifted by; exp adds a few u; softmax then moves each
    probability by at most twice the row's largest score error (relative), and the weighted sum of
    v adds gamma_(s_k+1) of sum_j p_j |v_j|.  The total is doubled for the second-order terms."""
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scores = q @ np.swapaxes(k, -1, -2) * scale
    magnitude = np.abs(q) @ np.swapaxes(np.abs(k), -1, -2) * scale
    if causal:
        scores = scores + np.triu(np.full(scores.shape[-2:], -np.inf), 1)
    if mask is not None:
        scores = scores + mask
    top = scores.max(-1, keepdims=True)
    p = np.exp(scores - top)
    p /= p.sum(-1, keepdims=True)
    ref = p @ v
    d, sk = q.shape[-1], k.shape[-2]
    finite = np.where(np.isfinite(scores), np.abs(scores), 0)
    delta = (gamma(d + 2) * magnitude + 4 * U * (finite + np.abs(top))).max(-1, keepdims=True) + 8 * U
    weighted = p @ np.abs(v)
    compute = 2 * (2 * delta + gamma(sk + 1) + 4 * U) * weighted
    return ref, compute


@pytest.mark.parametrize(("nqh", "nkv"), [(16, 16), (16, 8), (32, 8)], ids=["mha", "gqa2", "gqa4"])
def test_causal_sdpa_with_heads_over_the_mesh_is_within_the_bound(open_mesh, rng, nqh, nkv):
    mesh = open_mesh((2, 4))
    s, d = 64, 64
    q, k, v = (rng.standard_normal((1, h, s, d)) for h in (nqh, nkv, nkv))
    tq, tk, tv = (heads_on(mesh, x) for x in (q, k, v))
    out = ttnn.transformer.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    assert tuple(out.shape) == (1, nqh // 8, s, d) and out.dtype is BF16 and out.layout is TILE
    got = gathered(mesh, out)
    # each device holds nqh/8 q heads and nkv/8 kv heads: its q heads' groups are its own kv heads
    ref, compute = sdpa_reference(*(held(x, BF16) for x in (q, k, v)), scale=1 / math.sqrt(d), causal=True)
    bound = output_bound(ref, compute, BF16)
    assert_within(got, ref, bound, "causal sdpa")
    unmasked, _ = sdpa_reference(*(held(x, BF16) for x in (q, k, v)), scale=1 / math.sqrt(d))
    assert exceeds(unmasked, ref, bound), "the bound must catch attention without the causal mask"


def test_sdpa_with_a_mask_a_scale_and_bfloat8_b_inputs(open_mesh, rng):
    mesh = open_mesh((1, 8))
    s, sk, d = 32, 64, 32
    q = rng.standard_normal((2, 8, s, d))
    k, v = rng.standard_normal((2, 8, sk, d)), rng.standard_normal((2, 8, sk, d))
    mask = np.where(rng.random((2, 1, s, sk)) < 0.3, -1e9, 0.0)
    tq, tk, tv = (heads_on(mesh, x, BFP8) for x in (q, k, v))
    tmask = heads_on(mesh, mask, BF16, dim=None)
    out = ttnn.transformer.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask, is_causal=False, scale=0.3)
    assert out.dtype is BFP8 and tuple(out.shape) == (2, 1, s, d)
    got = gathered(mesh, out)
    ref, compute = sdpa_reference(*(held(x, BFP8) for x in (q, k, v)), scale=0.3, mask=held(mask, BF16))
    assert_within(got, ref, compute + rounding_error(np.abs(ref) + compute, BFP8), "masked sdpa")


def test_non_causal_sdpa_without_a_mask_attends_everywhere(open_mesh, rng):
    mesh = open_mesh((1, 1))
    q, k, v = (rng.standard_normal((1, 2, 32, 32)) for _ in range(3))
    out = ttnn.transformer.scaled_dot_product_attention(*(heads_on(mesh, x) for x in (q, k, v)), is_causal=False)
    ref, compute = sdpa_reference(*(held(x, BF16) for x in (q, k, v)), scale=1 / math.sqrt(32))
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, compute, BF16), "full attention")


def _sdpa_env(mesh, rng):
    x = rng.standard_normal((1, 8, 64, 64))
    t = {name: heads_on(mesh, x) for name in ("q", "k", "v")}
    t["k4"] = heads_on(mesh, rng.standard_normal((1, 24, 64, 64)))  # 3 kv heads a device for 1 q head
    t["short"] = heads_on(mesh, rng.standard_normal((1, 8, 32, 64)))
    t["mask"] = heads_on(mesh, np.zeros((1, 1, 64, 64)), dim=None)
    t["mask_heads"] = heads_on(mesh, np.zeros((1, 8, 64, 64)), dim=None)
    t["rm"] = heads_on(mesh, x, layout=RM)
    t["f32"] = heads_on(mesh, x, ttnn.float32)
    t["l1"] = heads_on(mesh, x, memory_config=ttnn.L1_MEMORY_CONFIG)
    t["mask_l1"] = heads_on(mesh, np.zeros((1, 1, 64, 64)), dim=None, memory_config=ttnn.L1_MEMORY_CONFIG)
    t["d48"] = heads_on(mesh, rng.standard_normal((1, 8, 64, 48)))
    return t


SDPA = ttnn.transformer.scaled_dot_product_attention
SDPA_BAD = {
    "causal and mask": (
        lambda t: SDPA(t["q"], t["k"], t["v"], attn_mask=t["mask"]),
        ttnn.MeshnnValueError,
        r"is_causal and attn_mask cannot both be given",
    ),
    "row-major": (lambda t: SDPA(t["rm"], t["k"], t["v"]), ttnn.MeshnnValueError, r"input_tensor_q .* TILE layout"),
    "float32": (lambda t: SDPA(t["q"], t["f32"], t["v"]), ttnn.MeshnnTypeError, r"input_tensor_k must be one of"),
    "mask in L1": (
        lambda t: SDPA(t["q"], t["k"], t["v"], attn_mask=t["mask_l1"], is_causal=False),
        ttnn.MeshnnValueError,
        r"attn_mask must be in DRAM",
    ),
    "heads": (lambda t: SDPA(t["q"], t["k4"], t["k4"]), ttnn.MeshnnValueError, r"q's 1 heads must be a multiple"),
    "causal lengths": (
        lambda t: SDPA(t["q"], t["short"], t["short"]),
        ttnn.MeshnnValueError,
        r"causal attention needs q and k of one sequence length, got 64 and 32",
    ),
    "k and v": (lambda t: SDPA(t["q"], t["k"], t["short"]), ttnn.MeshnnValueError, r"input_tensor_v \[1, 1, 32, 64\]"),
    "mask heads": (
        lambda t: SDPA(t["q"], t["k"], t["v"], attn_mask=t["mask_heads"], is_causal=False),
        ttnn.MeshnnValueError,
        r"attn_mask must be \[1, 1, 64, 64\]",
    ),
    "head padding": (lambda t: SDPA(t["d48"], t["d48"], t["d48"]), ttnn.MeshnnValueError, r"padded on the head"),
    "program config": (
        lambda t: SDPA(t["q"], t["k"], t["v"], program_config={"q_chunk_size": 64}),
        ttnn.MeshnnTypeError,
        r"program_config must be a ttnn.SDPAProgramConfig",
    ),
    "sliding window, not causal": (  # (causal: modelled, tests/ops/test_gpt_oss_findings.py)
        lambda t: SDPA(t["q"], t["k"], t["v"], is_causal=False, sliding_window_size=16),
        ttnn.NotImplementedByMeshnn,
        r"scaled_dot_product_attention\(sliding_window_size=..., is_causal=False\)",
    ),
}


@pytest.mark.parametrize("case", SDPA_BAD, ids=list(SDPA_BAD))
def test_sdpa_checks_its_inputs_before_allocating(open_mesh, rng, case):
    mesh = open_mesh((2, 4))
    tensors = _sdpa_env(mesh, rng)
    call, error, message = SDPA_BAD[case]
    before = snapshot(mesh)
    with pytest.raises(error, match=message):
        call(tensors)
    assert snapshot(mesh) == before


@pytest.mark.parametrize(
    "mask_shape", [(2, 4, 32, 64), (1, 4, 32, 64), (1, 1, 32, 64)], ids=["per head", "batch 1", "both 1"]
)
def test_sdpa_masks_per_head_or_broadcast(open_mesh, rng, mask_shape):
    """tt-metal's SDPA (2026-01 on) takes a mask of q's heads, or of one head broadcast; of q's batch or of one."""
    mesh = open_mesh((1, 1))
    q = rng.standard_normal((2, 4, 32, 32))
    k, v = rng.standard_normal((2, 2, 64, 32)), rng.standard_normal((2, 2, 64, 32))  # GQA: 2 q heads a kv head
    mask = 3 * rng.standard_normal(mask_shape)  # an additive bias of its own per head / batch
    tq, tk, tv = (heads_on(mesh, x, dim=None) for x in (q, k, v))
    out = SDPA(tq, tk, tv, attn_mask=heads_on(mesh, mask, dim=None), is_causal=False)
    got = ttnn.to_numpy(out).astype(np.float64)
    ref, compute = sdpa_reference(*(held(x, BF16) for x in (q, k, v)), scale=1 / math.sqrt(32), mask=held(mask, BF16))
    bound = output_bound(ref, compute, BF16)
    assert_within(got, ref, bound, f"mask {mask_shape}")
    other, _ = sdpa_reference(
        *(held(x, BF16) for x in (q, k, v)), scale=1 / math.sqrt(32), mask=held(mask[:1, :1], BF16)
    )
    if mask_shape != (1, 1, 32, 64):
        assert exceeds(other, ref, bound), "the bound must tell the mask's heads and batches apart"


def test_sdpa_operands_in_l1_give_the_dram_result(open_mesh, rng):
    """tt-metal's SDPA reads q, k and v from L1 interleaved buffers as from DRAM (its own check: interleaved);
    its ring-distributed form still wants DRAM."""
    mesh = open_mesh((1, 1))
    q, k, v = (rng.standard_normal((1, 2, 64, 32)) for _ in range(3))
    dram = SDPA(*(heads_on(mesh, x) for x in (q, k, v)))
    l1 = SDPA(*(heads_on(mesh, x, memory_config=ttnn.L1_MEMORY_CONFIG) for x in (q, k, v)))
    assert l1.memory_config() == ttnn.DRAM_MEMORY_CONFIG  # (ttnn's default output config, not q's)
    np.testing.assert_array_equal(ttnn.to_numpy(l1), ttnn.to_numpy(dram))
    x = heads_on(mesh, q, memory_config=ttnn.L1_MEMORY_CONFIG)
    with pytest.raises(ttnn.MeshnnValueError, match="must be in DRAM"):
        ttnn.transformer.ring_distributed_scaled_dot_product_attention(x, x, x, ring_size=2)


def test_sdpa_masks_need_not_fill_whole_chunks(open_mesh, rng):
    """tt-metal's SDPA (2026-01 on) takes a mask whose sequences are no multiple of the chunk sizes; the
    chunk sizes themselves stay whole tiles."""
    mesh = open_mesh((1, 1))
    q = rng.standard_normal((1, 1, 160, 32))
    mask = 3 * rng.standard_normal((1, 1, 160, 160))
    x = heads_on(mesh, q)
    config = ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 8), q_chunk_size=64, k_chunk_size=128)
    out = SDPA(x, x, x, attn_mask=heads_on(mesh, mask, dim=None), is_causal=False, program_config=config)
    ref, compute = sdpa_reference(*(held(q, BF16),) * 3, scale=1 / math.sqrt(32), mask=held(mask, BF16))
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, compute, BF16), "160 rows, chunks 64")
    with pytest.raises(ttnn.MeshnnValueError, match="multiple of 32"):
        ttnn.SDPAProgramConfig(q_chunk_size=48)


def test_deallocated_inputs_are_refused_by_name(open_mesh, rng):
    mesh = open_mesh((2, 4))
    q = heads_on(mesh, rng.standard_normal((1, 8, 32, 32)))
    k = heads_on(mesh, rng.standard_normal((1, 8, 32, 32)))
    ttnn.deallocate(k)
    with pytest.raises(ttnn.DeallocatedError, match=r"scaled_dot_product_attention: input_tensor_k of shape"):
        SDPA(q, k, q)
    with pytest.raises(ttnn.DeallocatedError, match=r"rotary_embedding: cos_cache"):
        ttnn.experimental.rotary_embedding(q, k, k)


# ----------------------------------------------------------------------------------- rotary


def rope_tables(rows: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    angles = np.outer(np.arange(rows), 1.0 / 10000 ** (np.arange(d // 2) / (d // 2)))
    return np.concatenate([np.cos(angles)] * 2, -1), np.concatenate([np.sin(angles)] * 2, -1)


def rotary_reference(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], -1)
    ref = x * cos + rotated * sin
    return ref, 3 * U * (np.abs(x * cos) + np.abs(rotated * sin))  # two products and a sum in float32


@pytest.mark.parametrize("seq", [64, 40], ids=["whole-tiles", "padded"])
def test_rotary_embedding_over_sharded_heads(open_mesh, rng, seq):
    mesh = open_mesh((2, 4))
    d, cache_rows = 64, 96
    x = rng.standard_normal((1, 16, seq, d))
    cos, sin = rope_tables(cache_rows, d)
    tx = heads_on(mesh, x)
    tcos, tsin = (heads_on(mesh, t.reshape(1, 1, cache_rows, d), dim=None) for t in (cos, sin))
    out = ttnn.experimental.rotary_embedding(tx, tcos, tsin)
    rows = -(-seq // 32) * 32
    assert tuple(out.shape) == (1, 2, rows, d), "ttnn's output has the input's padded shape"
    got = gathered(mesh, out)
    qc, qs = held(cos, BF16)[:seq], held(sin, BF16)[:seq]
    ref, compute = rotary_reference(held(x, BF16), qc, qs)
    bound = output_bound(ref, compute, BF16)
    assert_within(got[:, :, :seq], ref, bound, "rotary")
    assert not got[:, :, seq:].any(), "the pad rows are zero"
    unrotated = held(x, BF16) * qc + held(x, BF16) * qs
    assert exceeds(unrotated, ref, bound)


def test_rotary_embedding_with_a_token_index_uses_one_row_of_the_caches(open_mesh, rng):
    mesh = open_mesh((1, 2))
    d = 128
    x = rng.standard_normal((1, 1, 32, d))  # decode: [seq 1, 1, batch, d]
    cos, sin = rope_tables(64, d)
    tx = heads_on(mesh, x, dim=None)
    tcos, tsin = (heads_on(mesh, t.reshape(1, 1, 64, d), dim=None) for t in (cos, sin))
    out = ttnn.experimental.rotary_embedding(tx, tcos, tsin, 37)
    for shard in ttnn.get_device_tensors(out):
        got = ttnn.to_numpy(shard).astype(np.float64)
        ref, compute = rotary_reference(held(x, BF16), held(cos, BF16)[37], held(sin, BF16)[37])
        assert_within(got, ref, output_bound(ref, compute, BF16), "rotary at token 37")


def test_rotary_embedding_checks_its_inputs_before_allocating(open_mesh, rng):
    mesh = open_mesh((2, 4))
    rotary = ttnn.experimental.rotary_embedding
    x = heads_on(mesh, rng.standard_normal((1, 8, 32, 64)))
    narrow = heads_on(mesh, rng.standard_normal((1, 8, 32, 32)))
    two_tokens = heads_on(mesh, rng.standard_normal((2, 8, 32, 64)))
    cos = heads_on(mesh, np.ones((1, 1, 32, 64)), dim=None)
    short = heads_on(mesh, np.ones((1, 1, 16, 64)), dim=None)
    wide = heads_on(mesh, np.ones((1, 1, 32, 128)), dim=None)
    cos_f32 = heads_on(mesh, np.ones((1, 1, 32, 64)), ttnn.float32, dim=None)
    cos_rm = heads_on(mesh, np.ones((1, 1, 32, 64)), dim=None, layout=RM)
    before = snapshot(mesh)
    for call, message in (
        (lambda: rotary(narrow, cos, cos), r"a multiple of 64\), got 32"),
        (lambda: rotary(x, cos, cos_f32), r"must match in shape and dtype"),
        (lambda: rotary(x, wide, wide), r"must be \[1, 1, s_cache, 64\], got \[1, 1, 32, 128\]"),
        (lambda: rotary(x, short, short), r"the caches' 16 rows do not cover input_tensor's sequence of 32"),
        (lambda: rotary(x, cos_rm, cos_rm), r"cos_cache \[1, 1, 32, 64\] must be in TILE layout"),
        (lambda: rotary(two_tokens, cos, cos, 3), r"with token_index the input is \[1, 1, batch, d\]"),
    ):
        with pytest.raises(ttnn.MeshnnValueError, match=message):
            call()
    assert snapshot(mesh) == before


# ------------------------------------------------------------------------------- head moves


@pytest.mark.parametrize("transpose_key", [True, False])
@pytest.mark.parametrize(("heads", "kv_heads"), [(4, None), (4, 2)], ids=["mha", "gqa"])
def test_split_heads_moves_every_value_exactly(open_mesh, rng, transpose_key, heads, kv_heads):
    mesh = open_mesh((2, 4))
    b, s, d = 2, 64, 32
    kv = heads if kv_heads is None else kv_heads
    fused = held(rng.standard_normal((b, s, 8 * (heads + 2 * kv) * d)), BF16)
    # column-parallel: device i holds its own [q heads | k heads | v heads] block of the width
    tensor = heads_on(mesh, fused, dim=2)
    q, k, v = ttnn.transformer.split_query_key_value_and_split_heads(
        tensor, num_heads=heads, num_kv_heads=kv_heads, transpose_key=transpose_key
    )
    assert tuple(k.shape) == ((b, kv, d, s) if transpose_key else (b, kv, s, d))
    for i, (tq, tk, tv) in enumerate(zip(*(ttnn.get_device_tensors(t) for t in (q, k, v)), strict=True)):
        block = fused[..., i * (heads + 2 * kv) * d : (i + 1) * (heads + 2 * kv) * d].reshape(b, s, -1, d)
        want_q = block[:, :, :heads].transpose(0, 2, 1, 3)
        want_k = block[:, :, heads : heads + kv].transpose(0, 2, 1, 3)
        want_v = block[:, :, heads + kv :].transpose(0, 2, 1, 3)
        np.testing.assert_array_equal(ttnn.to_numpy(tq), want_q)
        np.testing.assert_array_equal(ttnn.to_numpy(tk), want_k.swapaxes(-1, -2) if transpose_key else want_k)
        np.testing.assert_array_equal(ttnn.to_numpy(tv), want_v)


def test_split_heads_with_a_separate_kv_input_and_concatenate_heads_undoes_the_split(open_mesh, rng):
    mesh = open_mesh((1, 1))
    b, s, d, heads = 1, 32, 64, 2
    x = held(rng.standard_normal((b, s, heads * d)), BF16)
    kv = held(rng.standard_normal((b, s, 2 * heads * d)), BF16)
    q, k, v = ttnn.transformer.split_query_key_value_and_split_heads(
        heads_on(mesh, x, dim=None), heads_on(mesh, kv, dim=None), num_heads=heads, transpose_key=False
    )
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.transformer.concatenate_heads(q)), x)
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.experimental.concatenate_heads(k)), kv[..., : heads * d])
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.transformer.concatenate_heads(v)), kv[..., heads * d :])


@pytest.mark.parametrize("transpose_k_heads", [True, False])
def test_nlp_create_qkv_heads_and_nlp_concat_heads(open_mesh, rng, transpose_k_heads):
    """tt-metal's model code: [b, 1, s, (nh + 2 nkv) d] split into heads, and back."""
    mesh = open_mesh((2, 4))
    b, s, d, heads, kv = 1, 64, 64, 4, 1
    fused = held(rng.standard_normal((b, 1, s, 8 * (heads + 2 * kv) * d)))
    q, k, v = ttnn.experimental.nlp_create_qkv_heads(
        heads_on(mesh, fused, dim=3), num_heads=heads, num_kv_heads=kv, transpose_k_heads=transpose_k_heads
    )
    assert tuple(q.shape) == (b, heads, s, d)
    assert tuple(k.shape) == ((b, kv, d, s) if transpose_k_heads else (b, kv, s, d))
    for i, (tq, tk, tv) in enumerate(zip(*(ttnn.get_device_tensors(t) for t in (q, k, v)), strict=True)):
        block = fused[:, 0, :, i * (heads + 2 * kv) * d : (i + 1) * (heads + 2 * kv) * d].reshape(b, s, -1, d)
        want_k = block[:, :, heads : heads + kv].transpose(0, 2, 1, 3)
        np.testing.assert_array_equal(ttnn.to_numpy(tq), block[:, :, :heads].transpose(0, 2, 1, 3))
        np.testing.assert_array_equal(ttnn.to_numpy(tk), want_k.swapaxes(-1, -2) if transpose_k_heads else want_k)
        np.testing.assert_array_equal(ttnn.to_numpy(tv), block[:, :, heads + kv :].transpose(0, 2, 1, 3))
    back = ttnn.experimental.nlp_concat_heads(q)
    assert tuple(back.shape) == (b, 1, s, heads * d)
    for i, shard in enumerate(ttnn.get_device_tensors(back)):
        width = (heads + 2 * kv) * d
        np.testing.assert_array_equal(ttnn.to_numpy(shard), fused[..., i * width : i * width + heads * d])


def test_nlp_head_ops_check_their_inputs_before_allocating(open_mesh, rng):
    mesh = open_mesh((1, 2))
    create = ttnn.experimental.nlp_create_qkv_heads
    x = heads_on(mesh, rng.standard_normal((1, 1, 32, 2 * 192)), dim=3)
    rm = heads_on(mesh, rng.standard_normal((1, 1, 32, 2 * 192)), dim=3, layout=RM)
    three = heads_on(mesh, rng.standard_normal((1, 32, 2 * 192)), dim=2)
    two = heads_on(mesh, rng.standard_normal((1, 2, 32, 2 * 192)), dim=3)
    before = snapshot(mesh)
    for call, error, message in (
        (lambda: create(rm, num_heads=1), ttnn.MeshnnValueError, r"input \[1, 1, 32, 192\] must be in TILE layout"),
        (lambda: create(three, num_heads=1), ttnn.MeshnnValueError, r"input must be \[batch, 1, sequence, width\]"),
        (lambda: create(two, num_heads=1), ttnn.MeshnnValueError, r"input must be \[batch, 1, sequence, width\]"),
        (lambda: create(x, num_heads=3), ttnn.MeshnnValueError, r"width 192 does not split into 3 \+ 2 x 3 heads"),
        (lambda: create(x, num_heads=1, kv_tied=True), ttnn.NotImplementedByMeshnn, r"kv_tied=True"),
        (lambda: ttnn.experimental.nlp_concat_heads(rm), ttnn.MeshnnValueError, r"TILE layout"),
    ):
        with pytest.raises(error, match=message):
            call()
    assert snapshot(mesh) == before


def test_head_moves_check_their_inputs_before_allocating(open_mesh, rng):
    mesh = open_mesh((2, 4))
    split = ttnn.transformer.split_query_key_value_and_split_heads
    x = heads_on(mesh, rng.standard_normal((1, 32, 8 * 96)), dim=2)
    kv = heads_on(mesh, rng.standard_normal((1, 32, 8 * 64)), dim=2)
    four = heads_on(mesh, rng.standard_normal((1, 8, 32, 32)))
    before = snapshot(mesh)
    for call, error, message in (
        (lambda: split(x, num_heads=5), ttnn.MeshnnValueError, r"width 96 does not split into 5 \+ 2 x 5 heads"),
        (lambda: split(x, num_heads=0), ttnn.MeshnnValueError, r"num_heads must be a positive int"),
        (lambda: split(x, kv, num_heads=3), ttnn.MeshnnValueError, r"kv_input_tensor must be \[1, 32, 192\]"),
        (lambda: split(four, num_heads=1), ttnn.MeshnnValueError, r"input_tensor must be \[batch, sequence, hidden\]"),
        (lambda: split(x, num_heads=1, transpose_key=1), ttnn.MeshnnTypeError, r"transpose_key must be a bool"),
        (lambda: ttnn.transformer.concatenate_heads(x), ttnn.MeshnnValueError, r"must be \[batch, num_heads"),
    ):
        with pytest.raises(error, match=message):
            call()
    assert snapshot(mesh) == before


def test_missing_transformer_names_say_what_is_missing():
    with pytest.raises(ttnn.NotImplementedByMeshnn, match=r"ttnn\.transformer\.sparse_scaled_dot_product"):
        ttnn.transformer.sparse_scaled_dot_product_attention  # noqa: B018
    with pytest.raises(ttnn.NotImplementedByMeshnn, match=r"ttnn\.experimental\.deepseek_prefill\.no_such_op"):
        ttnn.experimental.deepseek_prefill.no_such_op  # noqa: B018  (a namespace of its own, found)


# ------------------------------------------------------------------------- fused activations


def silu(x):
    return x / (1 + np.exp(-x))


def test_multiply_with_a_silu_on_a_rounds_once(open_mesh, rng):
    """tt-metal's Llama MLP: ttnn.mul(w1_out, w3_out, input_tensor_a_activations=[SILU])."""
    mesh = open_mesh((2, 4))
    a, b = rng.standard_normal((8, 32, 96)) * 3, rng.standard_normal((8, 32, 96))
    ta, tb = heads_on(mesh, a, dim=0), heads_on(mesh, b, dim=0)
    out = ttnn.multiply(ta, tb, input_tensor_a_activations=[ttnn.UnaryOpType.SILU])
    qa, qb = held(a, BF16), held(b, BF16)
    ref = silu(qa) * qb
    # silu in float32: negate, exp (a few u), add, divide: 8u of silu; the product 1u more
    bound = output_bound(ref, 10 * U * np.abs(ref) + 2.0**-140, BF16)
    got = gathered(mesh, out, dim=0)
    assert_within(got, ref, bound, "silu(a) * b")
    twice_rounded = held(held(silu(qa), BF16) * qb, BF16)
    assert not np.array_equal(got, twice_rounded) or np.array_equal(ref, twice_rounded), "one rounding, not two"
    assert exceeds(qa * qb, ref, bound), "the activation is applied"


def test_activations_on_b_and_on_the_result(open_mesh, rng):
    mesh = open_mesh((1, 2))
    a, b = rng.standard_normal((2, 32, 32)), rng.standard_normal((2, 32, 32))
    ta, tb = heads_on(mesh, a, dim=0), heads_on(mesh, b, dim=0)
    qa, qb = held(a, BF16), held(b, BF16)
    cases = {
        "relu(a + b)": (
            ttnn.add(ta, tb, activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU)]),
            np.maximum(qa + qb, 0),
        ),
        "a - exp(b)": (ttnn.subtract(ta, tb, input_tensor_b_activations=["exp"]), qa - np.exp(qb)),
        "square(abs(a) * b)": (
            ttnn.multiply(ta, tb, input_tensor_a_activations=[ttnn.UnaryOpType.ABS], activations=["square"]),
            np.square(np.abs(qa) * qb),
        ),
        "relu(a) * 2": (
            ttnn.multiply(ta, 2.0, input_tensor_a_activations=[ttnn.UnaryOpType.RELU]),
            2 * np.maximum(qa, 0),
        ),
    }
    for what, (out, ref) in cases.items():
        compute = 8 * U * (np.abs(ref) + np.abs(qa) + np.exp(np.abs(qb)))
        assert_within(gathered(mesh, out, dim=0), ref, output_bound(ref, compute, BF16), what)


def test_fast_gelu_parameter_and_bad_activations(open_mesh, rng):
    mesh = open_mesh((1, 1))
    a = heads_on(mesh, rng.standard_normal((32, 32)), dim=None)
    exact = ttnn.to_numpy(ttnn.add(a, 0.0, activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.GELU)]))
    fast = ttnn.to_numpy(ttnn.add(a, 0.0, activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.GELU, 1.0)]))
    np.testing.assert_array_equal(exact, ttnn.to_numpy(ttnn.gelu(a)))
    np.testing.assert_array_equal(fast, ttnn.to_numpy(ttnn.gelu(a, fast_and_approximate_mode=True)))
    ints = heads_on(mesh, np.arange(1024).reshape(32, 32), ttnn.int32, dim=None, layout=RM)
    before = snapshot(mesh)
    for call, error, message in (
        (lambda: ttnn.add(a, a, activations=["swish"]), ttnn.MeshnnTypeError, r"activations must hold"),
        (
            lambda: ttnn.add(a, a, activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.SILU, 2.0)]),
            ttnn.MeshnnValueError,
            r"UnaryOpType.SILU takes 0 parameter",
        ),
        (
            lambda: ttnn.add(ints, ints, input_tensor_a_activations=[ttnn.UnaryOpType.EXP]),
            ttnn.MeshnnTypeError,
            r"fused activations need floating-point operands",
        ),
    ):
        with pytest.raises(error, match=message):
            call()
    assert snapshot(mesh) == before
    with pytest.raises(ttnn.MeshnnTypeError, match=r"op_type must be a ttnn\.UnaryOpType"):
        ttnn.UnaryWithParam("relu")


def test_activations_on_a_scalar_operand_and_after_a_comparison(open_mesh, rng):
    mesh = open_mesh((1, 2))
    a = rng.standard_normal((2, 32, 32))
    ta = heads_on(mesh, a, dim=0)
    qa = held(a)
    # silu of the scalar 2.0 (a 0-d operand through the activation's scratch), times the tensor
    out = ttnn.multiply(2.0, ta, input_tensor_a_activations=[ttnn.UnaryOpType.SILU])
    ref = silu(2.0) * qa
    assert_within(gathered(mesh, out, dim=0), ref, output_bound(ref, 10 * U * np.abs(ref), BF16), "silu(2) * a")
    # a comparison's result is 0.0 / 1.0 in float32 before its activations (not numpy bools)
    for activation, function in (
        (ttnn.UnaryOpType.EXP, np.exp),
        (ttnn.UnaryOpType.SIGMOID, lambda x: 1 / (1 + np.exp(-x))),
    ):
        got = gathered(mesh, ttnn.gt(ta, 0.0, activations=[activation]), dim=0)
        ref = function((qa > 0).astype(np.float64))
        assert_within(got, ref, output_bound(ref, 8 * U * np.abs(ref), BF16), f"{activation}(a > 0)")


def test_numpy_numbers_are_accepted_and_missing_heads_refused(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = heads_on(mesh, rng.standard_normal((1, 32, 3 * 64)), dim=None)
    q, k, v = ttnn.transformer.split_query_key_value_and_split_heads(x, num_heads=np.int64(1), transpose_key=False)
    out = SDPA(q, k, v, scale=np.float32(0.1))
    ref, compute = sdpa_reference(*(ttnn.to_numpy(t).astype(np.float64) for t in (q, k, v)), scale=0.1, causal=True)
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, compute, BF16), "numpy scale")
    with pytest.raises(ttnn.MeshnnValueError, match=r"num_heads must be a positive int, got None"):
        ttnn.transformer.split_query_key_value_and_split_heads(x, num_heads=None)
    padded = heads_on(mesh, rng.standard_normal((1, 1, 32, 48)), dim=None)  # 48 wide: tiles pad it to 64
    cos = heads_on(mesh, np.ones((1, 1, 32, 48)), dim=None)
    with pytest.raises(ttnn.MeshnnValueError, match=r"a multiple of 64\), got 48"):
        ttnn.experimental.rotary_embedding(padded, cos, cos)


def test_nlp_create_qkv_heads_of_queries_only(open_mesh, rng):
    """tt-metal's nlp_create_qkv_heads takes num_kv_heads=0 for a fused input of queries alone
    (DeepSeek-V3's prefill MLA): the heads split exactly, K and V empty [b, 0, s, d]; with a
    separate KV input a zero count is still refused (ttnn would divide by it)."""
    mesh = open_mesh((1, 1))
    x = rng.standard_normal((1, 1, 64, 4 * 96)).astype(np.float32)
    t = heads_on(mesh, x, dim=None)
    q, k, v = ttnn.experimental.nlp_create_qkv_heads(t, num_heads=4, num_kv_heads=0, transpose_k_heads=False)
    held = ttnn.to_numpy(t)
    np.testing.assert_array_equal(ttnn.to_numpy(q), held.reshape(1, 64, 4, 96).transpose(0, 2, 1, 3))
    assert tuple(k.shape) == tuple(v.shape) == (1, 0, 64, 96)
    with pytest.raises(ttnn.MeshnnValueError, match=r"num_kv_heads must be a positive int, got 0"):
        ttnn.experimental.nlp_create_qkv_heads(t, t, num_heads=4, num_kv_heads=0, transpose_k_heads=False)
