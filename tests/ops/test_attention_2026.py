"""tt-metal of 2026's attention ops: ``windowed_scaled_dot_product_attention`` (SDPA with the
block-diagonal mask of ``cu_window_seqlens``, its bounds read from the device tensor when the
kernel runs, tt-metal's checks of the bounds tensor) and MLA's prefill (``flash_mla_prefill`` with
values read from the keys' first ``head_dim_v`` columns or given per q head,
``chunked_flash_mla_prefill`` through a page table).  Each within the float64 reference's bound for
a correct float32 evaluation, the bound shown to catch the wrong attention."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, assert_within, exceeds, output_bound
from .test_transformer import gathered, heads_on, held, sdpa_reference


def _bounds(mesh, values, dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT):
    return ttnn.from_torch(torch.tensor(values, dtype=torch.int32), dtype=dtype, layout=layout, device=mesh)


def _mask(s: int, bounds: list[int]) -> np.ndarray:
    mask = np.full((s, s), -np.inf)
    for start, end in itertools.pairwise(bounds):
        mask[start:end, start:end] = 0.0
    return mask


@pytest.mark.parametrize("bounds", [[0, 64, 128], [0, 32, 96, 128], [0, 40, 100, 128]], ids=["w2", "w3", "uneven"])
def test_windowed_sdpa_attends_within_each_window(open_mesh, rng, bounds):
    mesh = open_mesh((1, 2))
    s, d = 128, 32
    q, k, v = (rng.standard_normal((1, h, s, d)) for h in (4, 2, 2))
    tq, tk, tv = (heads_on(mesh, x) for x in (q, k, v))
    replicated = ttnn.from_torch(
        torch.tensor(bounds, dtype=torch.int32),
        dtype=ttnn.int32,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )
    out = ttnn.transformer.windowed_scaled_dot_product_attention(tq, tk, tv, replicated)
    assert tuple(out.shape) == (1, 2, s, d) and out.dtype is BF16 and out.layout is ttnn.TILE_LAYOUT
    held_qkv = [held(x, BF16) for x in (q, k, v)]
    ref, compute = sdpa_reference(*held_qkv, scale=1 / math.sqrt(d), mask=_mask(s, bounds))
    bound = output_bound(ref, compute, BF16)
    assert_within(gathered(mesh, out), ref, bound, "windowed sdpa")
    full, _ = sdpa_reference(*held_qkv, scale=1 / math.sqrt(d))
    assert exceeds(full, ref, bound), "the bound must catch attention across windows"


def test_the_bounds_are_read_when_the_kernel_runs(open_mesh, rng):
    mesh = open_mesh((1, 1))
    s, d = 64, 32
    q, k, v = (rng.standard_normal((1, 1, s, d)) for _ in range(3))
    tq, tk, tv = (heads_on(mesh, x) for x in (q, k, v))
    bounds = _bounds(mesh, [0, 32, 64])
    first = ttnn.to_torch(ttnn.transformer.windowed_scaled_dot_product_attention(tq, tk, tv, bounds, scale=0.2))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.tensor([0, 16, 64], dtype=torch.int32), ttnn.uint32), bounds)
    second = ttnn.to_torch(ttnn.transformer.windowed_scaled_dot_product_attention(tq, tk, tv, bounds, scale=0.2))
    same = _bounds(mesh, [0, 16, 64])
    third = ttnn.to_torch(ttnn.transformer.windowed_scaled_dot_product_attention(tq, tk, tv, same, scale=0.2))
    assert torch.equal(second, third) and not torch.equal(first, second)


def test_the_bounds_tensor_is_checked(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = heads_on(mesh, rng.standard_normal((1, 1, 32, 32)))
    windowed = ttnn.transformer.windowed_scaled_dot_product_attention
    with pytest.raises(ttnn.MeshnnValueError, match="at least 2 elements"):
        windowed(x, x, x, _bounds(mesh, [0]))
    with pytest.raises(ttnn.MeshnnTypeError, match="uint32 or int32"):
        windowed(x, x, x, _bounds(mesh, [0, 32], ttnn.bfloat16))
    with pytest.raises(ttnn.MeshnnValueError, match="row-major"):
        windowed(x, x, x, _bounds(mesh, [0, 32], layout=ttnn.TILE_LAYOUT))
    with pytest.raises(ttnn.MeshnnValueError, match="1D tensor"):
        windowed(x, x, x, x)


def _mla_reference(q, k, v, scale, causal=True):
    """float64 attention of q ``[b, nqh, s, d]`` against keys ``[b, 1, s_k, d]`` and values
    ``[b, 1 or nqh, s_k, d_v]``, with :func:`sdpa_reference`'s bound (per q head)."""
    heads = q.shape[1]
    k = np.repeat(k, heads, axis=1)
    v = np.repeat(v, heads // v.shape[1], axis=1)
    padded = np.concatenate([v, np.zeros((*v.shape[:-1], k.shape[-1] - v.shape[-1]))], axis=-1)
    ref, compute = sdpa_reference(q, k, padded, scale=scale, causal=causal)
    return ref[..., : v.shape[-1]], compute[..., : v.shape[-1]]


@pytest.mark.parametrize("per_head_values", [False, True], ids=["latent", "embedding"])
def test_flash_mla_prefill_reads_the_values_from_the_keys_or_per_head(open_mesh, rng, per_head_values):
    mesh = open_mesh((1, 1))
    b, nqh, s, d, dv = 1, 4, 64, 96, 64
    q, k = rng.standard_normal((b, nqh, s, d)), rng.standard_normal((b, 1, s, d))
    tq, tk = heads_on(mesh, q), heads_on(mesh, k)
    if per_head_values:
        v = rng.standard_normal((b, nqh, s, 32))
        out = ttnn.transformer.flash_mla_prefill(tq, tk, heads_on(mesh, v), scale=0.1)
        ref, compute = _mla_reference(held(q), held(k), held(v), 0.1)
        wrong, _ = _mla_reference(held(q), held(k), held(v[:, :1]), 0.1)  # one head's values for all
    else:
        out = ttnn.transformer.flash_mla_prefill(tq, tk, head_dim_v=dv, scale=0.1)
        ref, compute = _mla_reference(held(q), held(k), held(k)[..., :dv], 0.1)
        wrong, _ = _mla_reference(held(q), held(k), held(k)[..., d - dv :], 0.1)  # the last columns instead
    assert tuple(out.shape) == ref.shape and out.dtype is BF16
    bound = output_bound(ref, compute, BF16)
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, bound, "flash_mla_prefill")
    assert exceeds(wrong, ref, bound), "the bound must catch the wrong values"


def test_chunked_flash_mla_prefill_through_a_page_table(open_mesh, rng):
    mesh = open_mesh((1, 1))
    nqh, s, d, dv, block = 4, 64, 64, 32, 32
    k = rng.standard_normal((1, 1, 2 * s, d))  # a prompt of 128: chunk 2 (positions 64..127) now
    q = rng.standard_normal((1, nqh, s, d))
    pages = np.array([[2, 0, 3, 1]])
    paged = np.zeros((4, 1, block, d))
    for j, p in enumerate(pages[0]):
        paged[p] = k[0, :, j * block : (j + 1) * block]
    table = ttnn.from_torch(torch.tensor(pages, dtype=torch.int32), ttnn.int32, device=mesh)
    config = ttnn.SDPAProgramConfig(q_chunk_size=32, k_chunk_size=32)
    out = ttnn.transformer.chunked_flash_mla_prefill(
        heads_on(mesh, q), heads_on(mesh, paged), dv, table, s, scale=0.2, program_config=config
    )
    kh = held(k)
    scores_mask = np.where(np.arange(2 * s)[None] <= s + np.arange(s)[:, None], 0.0, -np.inf)
    group_k = np.repeat(kh, nqh, axis=1)
    ref, compute = sdpa_reference(held(q), group_k, group_k, scale=0.2, mask=scores_mask)
    ref, compute = ref[..., :dv], compute[..., :dv]
    assert tuple(out.shape) == (1, nqh, s, dv)
    bound = output_bound(ref, compute, BF16)
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, bound, "chunked_flash_mla_prefill")
    full, _ = sdpa_reference(held(q), group_k, group_k, scale=0.2)
    assert exceeds(full[..., :dv], ref, bound), "the bound must catch attention past the chunk's positions"


def test_mla_arguments_are_checked(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = heads_on(mesh, rng.standard_normal((1, 2, 32, 64)))
    mla = ttnn.transformer.flash_mla_prefill
    with pytest.raises(ttnn.MeshnnValueError, match="exactly one"):
        mla(x, x)
    with pytest.raises(ttnn.MeshnnValueError, match="head_dim_v"):
        mla(x, x, 96)
    with pytest.raises(ttnn.MeshnnTypeError, match="head_dim_v"):
        mla(x, x, 32.0)
    with pytest.raises(ttnn.MeshnnValueError, match="input_tensor_v"):
        mla(x, x, heads_on(mesh, rng.standard_normal((1, 2, 64, 32))))


@pytest.mark.parametrize("paged", [False, True], ids=["contiguous", "paged"])
def test_mla_decode_reads_the_values_from_the_keys(open_mesh, rng, paged):
    mesh = open_mesh((1, 1))
    users, heads, seq, d, dv, block = 2, 8, 64, 96, 64, 32
    q = rng.standard_normal((1, users, heads, d))
    k = rng.standard_normal((users, 1, seq, d))
    pos = [40, 17]
    tq = heads_on(mesh, q)
    where = ttnn.from_torch(torch.tensor(pos, dtype=torch.int32), ttnn.int32, device=mesh)
    if paged:
        table = np.array([[3, 0], [1, 2]])
        blocks = np.zeros((4, 1, block, d))
        for u in range(users):
            for j in range(2):
                blocks[table[u, j]] = k[u, :, j * block : (j + 1) * block]
        tt_table = ttnn.from_torch(torch.tensor(table, dtype=torch.int32), ttnn.int32, device=mesh)
        out = ttnn.transformer.paged_flash_multi_latent_attention_decode(
            tq, heads_on(mesh, blocks), head_dim_v=dv, page_table_tensor=tt_table, cur_pos_tensor=where, scale=0.1
        )
    else:
        out = ttnn.transformer.flash_multi_latent_attention_decode(
            tq, heads_on(mesh, k), head_dim_v=dv, cur_pos_tensor=where, scale=0.1
        )
    assert tuple(out.shape) == (1, users, heads, dv)
    got = ttnn.to_numpy(out).astype(np.float64)[0]
    kh = held(k)
    for u, p in enumerate(pos):
        keys = kh[u : u + 1, :, : p + 1]  # [1, 1, p + 1, d]: the user's positions up to its own
        query = held(q)[0, u][None, :, None, :]  # [1, heads, 1, d]
        ref, compute = _mla_reference(query, keys, keys[..., :dv], 0.1, causal=False)
        ref, compute = ref[0, :, 0], compute[0, :, 0]
        assert_within(got[u], ref, output_bound(ref, compute, BF16), f"mla decode, user {u}")
    with pytest.raises(ttnn.MeshnnValueError, match="Head dimension of V must be equal to head_dim_v"):
        ttnn.transformer.flash_multi_latent_attention_decode(tq, heads_on(mesh, k), tq, dv, cur_pos_tensor=where)
