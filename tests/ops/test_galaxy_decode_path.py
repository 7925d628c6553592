"""What tt-metal's Llama-70B Galaxy decode path (models/demos/llama3_70b_galaxy, 2025-11) needed
beyond its fused collectives: ``ttnn.matmul``'s 1-D program config ``untilize_out`` (a ROW_MAJOR
product, bfloat16 or float32 only), ``rotary_embedding_llama_fused_qk`` on ROW_MAJOR q / k (each
user's 8 x 128 heads "wrapped" to one tile, cos / sin ROW_MAJOR with a row per head),
``SDPAProgramConfig(sub_core_grids=)``, ``paged_fused_update_cache`` of row-major k / v.  Values
against numpy with bfloat16's rounding bound.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from tests.ops.test_decode_ops import dev, host, per_user, rotate_pairs, trans_mat, within_bf16
from tests.ops.test_kv_cache import host as cache_host

C = ttnn.CoreCoord


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield m
    m.close()


def ring_config(untilize_out):
    return ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=(4, 1), in0_block_w=2, out_subblock_h=1, out_subblock_w=1, per_core_M=1,
        per_core_N=1, fuse_batch=True, fused_activation=None, mcast_in0=True, untilize_out=untilize_out,
    )  # fmt: skip


def test_matmul_untilize_out_gives_the_product_row_major(mesh):
    gen = torch.Generator().manual_seed(5)
    a = torch.randn(1, 1, 32, 256, generator=gen).bfloat16().float()
    b = torch.randn(256, 128, generator=gen).bfloat16().float()
    ta, tb = dev(mesh, a), dev(mesh, b)
    tiled = ttnn.matmul(ta, tb, program_config=ring_config(False), dtype=ttnn.bfloat16)
    flat = ttnn.matmul(ta, tb, program_config=ring_config(True), dtype=ttnn.bfloat16)
    assert tiled.layout == ttnn.TILE_LAYOUT and flat.layout == ttnn.ROW_MAJOR_LAYOUT
    np.testing.assert_array_equal(host(flat), host(tiled))  # the same values, only the layout differs
    assert within_bf16(host(flat)[0, 0], (a[0, 0].double() @ b.double()).numpy())
    # ttnn.linear does not read the flag; the fused ops never untilize
    assert ttnn.linear(ta, tb, program_config=ring_config(True)).layout == ttnn.TILE_LAYOUT
    with pytest.raises(ttnn.MeshnnValueError, match="Unsupported data type"):
        ttnn.matmul(ta, tb, program_config=ring_config(True), dtype=ttnn.bfloat8_b)


def test_fused_qk_rotates_row_major_wrapped_heads(mesh):
    """8 users of 8 heads x 128 (one wrapped tile each), cos / sin with one row per head."""
    users, heads, d = 8, 8, 128
    gen = torch.Generator().manual_seed(6)
    q, k = (torch.randn(1, users, heads, d, generator=gen).bfloat16().float() for _ in range(2))
    cos, sin = (torch.randn(1, 2 * users, 1, d, generator=gen).bfloat16().float().repeat(1, 1, heads, 1)
                for _ in range(2))  # fmt: skip
    rm = ttnn.ROW_MAJOR_LAYOUT
    tq = dev(mesh, q, layout=rm, mc=per_user(users, heads, d))
    tk = dev(mesh, k, layout=rm, mc=per_user(users, heads, d, start=users))
    tc, ts = (dev(mesh, t, layout=rm, mc=per_user(2 * users, heads, d)) for t in (cos, sin))
    tm = dev(mesh, trans_mat(2 * users), mc=per_user(2 * users, 32, 32))
    fq, fk = ttnn.experimental.rotary_embedding_llama_fused_qk(tq, tk, tc, ts, tm)
    assert fq.layout == rm and fk.layout == rm and fq.memory_config() == tq.memory_config()
    for got, x, half in ((fq, q, slice(0, users)), (fk, k, slice(users, 2 * users))):
        c, s, x = cos[:, half].numpy(), sin[:, half].numpy(), x.numpy()
        assert within_bf16(host(got), x * c + rotate_pairs(x) * s)
    with pytest.raises(ttnn.MeshnnValueError, match="cos_cache must be in layout ROW_MAJOR"):
        ttnn.experimental.rotary_embedding_llama_fused_qk(tq, tk, dev(mesh, cos, mc=per_user(2 * users, 32, d)),
                                                          ts, tm)  # fmt: skip
    wide = dev(mesh, torch.zeros(1, users, 16, d), layout=rm, mc=per_user(users, 16, d, start=2 * users))
    with pytest.raises(ttnn.MeshnnValueError, match="wrapped to tile size"):
        ttnn.experimental.rotary_embedding_llama_fused_qk(wide, tk, tc, ts, tm)


def test_sdpa_program_config_takes_sub_core_grids():
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(C(1, 0), C(3, 9))])
    config = ttnn.SDPAProgramConfig(
        compute_with_storage_grid_size=(8, 4), sub_core_grids=cores, q_chunk_size=0, k_chunk_size=0
    )
    assert config.sub_core_grids == cores and config.is_decode_form
    assert ttnn.SDPAProgramConfig((8, 4), 32, 32).sub_core_grids is None  # the positional form unchanged
    with pytest.raises(ttnn.MeshnnTypeError, match="sub_core_grids"):
        ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 4), sub_core_grids=[(1, 0)])


def test_fused_cache_update_takes_row_major_llama70b_heads(mesh):
    """llama_rs_create_heads' row-major k / v (8 users, 8 padded heads of 128, one KV head used)."""
    users, heads, d, seq = 8, 8, 128, 64
    gen = torch.Generator().manual_seed(7)
    keys, values = (dev(mesh, torch.zeros(users, 1, seq, d)) for _ in range(2))
    k, v = (torch.randn(1, users, heads, d, generator=gen).bfloat16().float() for _ in range(2))
    rm = ttnn.ROW_MAJOR_LAYOUT
    tk = dev(mesh, k, layout=rm, mc=per_user(users, heads, d))
    tv = dev(mesh, v, layout=rm, mc=per_user(users, heads, d, start=users))
    pos = dev(mesh, torch.arange(3, 3 + users, dtype=torch.int32), ttnn.int32, rm)
    ttnn.experimental.paged_fused_update_cache(keys, tk, values, tv, update_idxs_tensor=pos)
    for cache, src in ((keys, k), (values, v)):
        want = torch.zeros(users, 1, seq, d)
        for u in range(users):
            want[u, 0, u + 3] = src[0, u, 0]
        assert torch.equal(cache_host(cache), want)
    with pytest.raises(ttnn.MeshnnValueError, match="both tiled or both row-major"):
        ttnn.experimental.paged_fused_update_cache(
            keys, tk, values, dev(mesh, v, mc=per_user(users, 32, d, start=users)), update_idxs_tensor=pos
        )
