"""DeepSeek-V3 prefill's routed-expert FFN ops against numpy.

``routed_expert_ffn`` (a composite of ttnn ops, on Wormhole and Blackhole) equals the chain of those
ops exactly and the float64 SwiGLU within bfloat16's rounding.  ``unified_routed_expert_ffn`` (a
P150) computes only the count's tile rows, leaves the rest as allocated, writes into a shared buffer
from the expert's region offset, and equals a float32 numpy evaluation of its steps with the
intermediate rounded through the host's bfloat8_b conversion; ``unified_routed_expert_moe`` is
extract + the unified FFN per local expert into a zeroed buffer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

DRAM, TILE_L = ttnn.DRAM_MEMORY_CONFIG, ttnn.TILE_LAYOUT
ds = None
K, N = 64, 96  # emb, hidden


def dev(mesh, values, dtype, layout=TILE_L):
    return ttnn.from_torch(torch.tensor(values), dtype=dtype, layout=layout, device=mesh, memory_config=DRAM)


def host(t) -> np.ndarray:
    return ttnn.to_torch(t).float().numpy()


def swiglu64(x, wg, wu, wd) -> np.ndarray:
    x, wg, wu, wd = (a.astype(np.float64) for a in (x, wg, wu, wd))
    g = x @ wg
    return ((g / (1 + np.exp(-g))) * (x @ wu)) @ wd


@pytest.mark.parametrize("system", ["n150", "p150"])
def test_routed_expert_ffn_is_ttnns_chain_of_ops(system):
    global ds
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system=system)
    ds = ttnn.experimental.deepseek_prefill
    try:
        rng = np.random.default_rng(0)
        x, wg, wu, wd = (rng.standard_normal(s).astype(np.float32) * 0.5 for s in ((64, K), (K, N), (K, N), (N, K)))
        tx, tg, tu, td = (dev(mesh, a, ttnn.bfloat16) for a in (x, wg, wu, wd))
        got = ds.routed_expert_ffn(tx, tg, tu, td)
        g = ttnn.matmul(tx, tg, activation="silu")
        chain = ttnn.matmul(ttnn.multiply(g, ttnn.matmul(tx, tu)), td)
        np.testing.assert_array_equal(host(got), host(chain))
        ref = swiglu64(host(tx), host(tg), host(tu), host(td))
        assert np.abs(host(got) - ref).max() <= 0.03 * np.abs(ref).max()
        out = ttnn.zeros_like(got)
        address = out.buffer_address()
        into = ds.routed_expert_ffn(tx, tg, tu, td, output=out)
        assert into.buffer_address() == address  # the final matmul wrote into the given tensor
        np.testing.assert_array_equal(host(out), host(got))
        with pytest.raises(ttnn.MeshnnValueError, match="x must be BFLOAT16 or BFLOAT8_B"):
            ds.routed_expert_ffn(dev(mesh, x, ttnn.float32), tg, tu, td)
    finally:
        ttnn.close_mesh_device(mesh)


@pytest.fixture(scope="module")
def p150():
    global ds
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    ds = ttnn.experimental.deepseek_prefill
    yield mesh
    ttnn.close_mesh_device(mesh)


def index(mesh, values):
    return ttnn.from_torch(torch.tensor(values, dtype=torch.int32), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT,
                           device=mesh, memory_config=DRAM)  # fmt: skip


def weights(mesh, seed):
    rng = np.random.default_rng(seed)
    ws = [rng.standard_normal(s).astype(np.float32) * 0.2 for s in ((K, N), (K, N), (N, K))]
    return [dev(mesh, w, ttnn.bfloat8_b) for w in ws]


def steps(x, tg, tu, td) -> np.ndarray:
    """The kernel's steps in float32, the activated rows rounded by the host's bfloat8_b conversion."""
    g, u = x @ host(tg), x @ host(tu)
    h = g / (np.float32(1) + np.exp(-g)) * u
    h = ttnn.to_torch(ttnn.from_torch(torch.tensor(h), dtype=ttnn.bfloat8_b, layout=TILE_L)).float().numpy()
    y = h @ host(td)
    return ttnn.to_torch(ttnn.from_torch(torch.tensor(y), dtype=ttnn.bfloat8_b, layout=TILE_L)).float().numpy()


def test_unified_ffn_computes_the_counts_rows_only(p150):
    rng = np.random.default_rng(1)
    tx = dev(p150, rng.standard_normal((128, K)).astype(np.float32), ttnn.bfloat8_b)
    tg, tu, td = weights(p150, 2)
    counts, ids = index(p150, [7, 40]), index(p150, [1])
    out = ds.unified_routed_expert_ffn(tx, tg, tu, td, counts, ids, 0)
    got = host(out)
    want = steps(host(tx)[:64], tg, tu, td)  # 40 tokens: two tile rows
    np.testing.assert_array_equal(got[:64], want)
    assert not got[64:].any()  # not written (a new buffer's allocation)
    ref = swiglu64(host(tx)[:64], host(tg), host(tu), host(td))
    assert np.corrcoef(got[:64].ravel(), ref.ravel())[0, 1] > 0.999


def test_unified_ffn_writes_the_region_of_a_shared_buffer(p150):
    rng = np.random.default_rng(3)
    tx = dev(p150, rng.standard_normal((64, K)).astype(np.float32), ttnn.bfloat8_b)
    tg, tu, td = weights(p150, 4)
    shared = dev(p150, np.full((256, K), 2.0, np.float32), ttnn.bfloat8_b)
    counts, ids, starts = index(p150, [64, 33]), index(p150, [1]), index(p150, [0, 128])
    ds.unified_routed_expert_ffn(tx, tg, tu, td, counts, ids, 0, output=shared, expert_region_offsets=starts)
    got = host(shared)
    np.testing.assert_array_equal(got[128:192], steps(host(tx), tg, tu, td))
    assert (got[:128] == 2).all() and (got[192:] == 2).all()
    with pytest.raises(ttnn.MeshnnValueError, match="run past the output"):
        ds.unified_routed_expert_ffn(tx, tg, tu, td, counts, ids, 0, output=shared,
                                     expert_region_offsets=index(p150, [0, 224]))  # fmt: skip
        ttnn.synchronize_device(p150)
    with pytest.raises(ttnn.MeshnnValueError, match="requires optional_output"):
        ds.unified_routed_expert_ffn(tx, tg, tu, td, counts, ids, 0, expert_region_offsets=starts)


def test_unified_moe_is_extract_and_the_ffn_per_expert(p150):
    rng = np.random.default_rng(5)
    buffer = dev(p150, rng.standard_normal((256, K)).astype(np.float32), ttnn.bfloat8_b)
    experts = [weights(p150, 10 + e) for e in range(2)]
    starts, counts, ids = index(p150, [0, 64, 160]), index(p150, [50, 70, 32]), index(p150, [2, 0])
    out = ds.unified_routed_expert_moe(buffer, starts, counts, ids, *[[w[i] for w in experts] for i in range(3)],
                                       max_dispatched_tokens_per_expert=96)  # fmt: skip
    got, x = host(out), host(buffer)
    want = np.zeros_like(got)
    want[160:192] = steps(x[160:192], *experts[0])  # local 0 is global 2: 32 tokens from row 160
    want[0:64] = steps(x[0:64], *experts[1])  # local 1 is global 0: 50 tokens (two tile rows) from row 0
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ttnn.MeshnnValueError, match="same length"):
        ds.unified_routed_expert_moe(buffer, starts, counts, ids, [experts[0][0]], [], [], 96)
