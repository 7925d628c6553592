"""``ttnn.experimental.deepseek_prefill.per_token_cast_to_fp8`` / ``per_token_cast_back`` against
numpy, on a simulated Blackhole P150 (tt-metal runs them on Blackhole alone).

The packer's truncation (:func:`meshnn.formats.fp8_pack.truncated_e4m3`) is checked against the
format's 256 codes by brute force: each value goes to the largest-magnitude normal e4m3 value not
above it in magnitude.  The ops are compared exactly with a float32 reference of DeepEP's formula
in the kernel's steps; the e4m3 output's bytes are compared too."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.formats.fp8_pack import truncated_e4m3

DRAM, RM = ttnn.DRAM_MEMORY_CONFIG, ttnn.ROW_MAJOR_LAYOUT

CODES = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
GRID = np.unique(CODES[np.isfinite(CODES) & ((np.abs(CODES) >= 2.0**-6) | (CODES == 0))])


def truncation_reference(x: np.ndarray) -> np.ndarray:
    """The e4m3 value of each of ``x`` by search: the normal grid value of largest magnitude whose
    magnitude is at most ``|x|`` (448 above the grid, signed zero below its smallest normal)."""
    mags = GRID[GRID >= 0]
    idx = np.searchsorted(mags, np.abs(x), side="right") - 1
    return np.copysign(mags[np.clip(idx, 0, None)], x).astype(np.float32)


def test_truncation_matches_a_search_of_the_codes():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        (rng.standard_normal(200_000) * 10.0 ** rng.uniform(-4, 3, 200_000)).astype(np.float32),
        CODES[np.isfinite(CODES)], np.float32([500.0, -1e9, 448.0, 447.99, 2.0**-6, -(2.0**-7), 0.0, -0.0]),
    ])  # fmt: skip
    got = truncated_e4m3(x)
    np.testing.assert_array_equal(got, truncation_reference(x))
    assert np.array_equal(np.signbit(got[x == 0]), np.signbit(x[x == 0]))
    assert np.isnan(truncated_e4m3(np.float32([np.nan]))).all()
    # every result is on the grid: the host's nearest-even encoding of it is exact
    assert np.array_equal(got.astype(ml_dtypes.float8_e4m3fn).astype(np.float32), got)


@pytest.fixture(scope="module")
def p150():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    yield mesh
    ttnn.close_mesh_device(mesh)


def reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    blocks = x.reshape(*x.shape[:-1], -1, 128)
    scale = np.maximum(np.abs(blocks).max(-1), np.float32(1e-4)) * np.float32(1 / 448)
    q = truncation_reference(blocks * (np.float32(1) / scale)[..., None])
    return q.reshape(x.shape), scale


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32])
@pytest.mark.parametrize("shape", [(1, 256), (30, 1152), (2, 3, 5, 384)])
def test_cast_to_fp8_is_the_kernels_float32_steps(p150, dtype, shape):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 5).astype(np.float32)
    x[..., :128] *= 1e-6  # a block under the clamp: its scale is 1e-4 / 448
    tx = torch.tensor(x).to(torch.bfloat16 if dtype == ttnn.bfloat16 else torch.float32)
    t = ttnn.from_torch(tx, dtype=dtype, layout=RM, device=p150, memory_config=DRAM)
    e4m3, scale = ttnn.experimental.deepseek_prefill.per_token_cast_to_fp8(t)
    assert e4m3.dtype == ttnn.fp8_e4m3 and scale.dtype == ttnn.float32
    assert tuple(scale.shape) == (*shape[:-1], shape[-1] // 128) and e4m3.layout == RM
    want_q, want_s = reference(tx.float().numpy())
    np.testing.assert_array_equal(ttnn.to_torch(scale).numpy(), want_s)
    got = ttnn.to_torch(e4m3).float().numpy()
    np.testing.assert_array_equal(got, want_q)
    # the bytes: the host encoding of the reference values (exact, as they are on the grid)
    raw = np.asarray(ttnn.get_device_tensors(e4m3)[0].cpu().to_numpy(), np.float32)
    assert np.array_equal(raw.astype(ml_dtypes.float8_e4m3fn).view(np.uint8),
                          want_q.astype(ml_dtypes.float8_e4m3fn).view(np.uint8))  # fmt: skip


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32])
def test_cast_back_multiplies_each_block_by_its_scale(p150, dtype):
    rng = np.random.default_rng(3)
    q = np.clip(rng.standard_normal((33, 512)) * 40, -448, 448).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    q = np.where(np.abs(q) < 2.0**-6, np.float32(0), q)  # (the host flushes e4m3 subnormals: see elements.py)
    s = (rng.random((33, 4)) * 4 - 2).astype(np.float32)
    tq = ttnn.from_torch(torch.tensor(q), dtype=ttnn.fp8_e4m3, layout=RM, device=p150, memory_config=DRAM)
    ts = ttnn.from_torch(torch.tensor(s), dtype=ttnn.float32, layout=RM, device=p150, memory_config=DRAM)
    out = ttnn.experimental.deepseek_prefill.per_token_cast_back(tq, ts, output_dtype=dtype)
    want = (q.reshape(33, 4, 128) * s[..., None]).reshape(33, 512)
    if dtype == ttnn.bfloat16:
        want = torch.tensor(want).bfloat16().float().numpy()
    assert out.dtype == dtype and out.layout == RM
    np.testing.assert_array_equal(ttnn.to_torch(out).float().numpy(), want)
    default = ttnn.experimental.deepseek_prefill.per_token_cast_back(tq, ts)
    assert default.dtype == ttnn.bfloat16


def test_refused_off_blackhole_and_for_tt_metals_shapes(p150):
    wormhole = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        x = ttnn.from_torch(torch.zeros(2, 128), dtype=ttnn.bfloat16, layout=RM, device=wormhole, memory_config=DRAM)
        with pytest.raises(ttnn.MeshnnValueError, match="requires Blackhole hardware, got arch WORMHOLE_B0"):
            ttnn.experimental.deepseek_prefill.per_token_cast_to_fp8(x)
    finally:
        ttnn.close_mesh_device(wormhole)
    odd = ttnn.from_torch(torch.zeros(2, 192), dtype=ttnn.bfloat16, layout=RM, device=p150, memory_config=DRAM)
    with pytest.raises(ttnn.MeshnnValueError, match="H=192 must be a multiple of BLOCK_W=128"):
        ttnn.experimental.deepseek_prefill.per_token_cast_to_fp8(odd)
    q = ttnn.from_torch(torch.zeros(2, 256), dtype=ttnn.fp8_e4m3, layout=RM, device=p150, memory_config=DRAM)
    s = ttnn.from_torch(torch.zeros(2, 3), dtype=ttnn.float32, layout=RM, device=p150, memory_config=DRAM)
    with pytest.raises(ttnn.MeshnnValueError, match=r"last dim \(256\) must equal scale last dim \(3\)"):
        ttnn.experimental.deepseek_prefill.per_token_cast_back(q, s)
    with pytest.raises(ttnn.MeshnnValueError, match="output_dtype must be BFLOAT16 or FLOAT32"):
        ttnn.experimental.deepseek_prefill.per_token_cast_back(q, s, output_dtype=ttnn.uint32)
