"""ttnn.experimental.wan_fused_rmsnorm_pre_allgather / _post_allgather (the nightly transformer
tests' distributed RMS norm) against float64 references.

The pre half's stats are a float32 sum of the squares of bfloat16 inputs rounded once into
bfloat16: within gamma_W of the sum plus half a bfloat16 ulp.  The post half is checked against a
float64 evaluation from the stats it was given (read back exactly) and ttnn's bfloat16 scalar
``1 / (W * D)``: a handful of float32 roundings on every term, then one rounding into bfloat16.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, TILE, U, assert_within, gamma, output_bound, quantized, rounding_error

PRE = ttnn.experimental.wan_fused_rmsnorm_pre_allgather
POST = ttnn.experimental.wan_fused_rmsnorm_post_allgather


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield m
    m.close()


def on(mesh, values: np.ndarray) -> ttnn.Tensor:
    t = torch.from_numpy(np.ascontiguousarray(values, np.float32))
    return ttnn.from_torch(t, dtype=BF16, layout=TILE, device=mesh)


def back(t: ttnn.Tensor) -> np.ndarray:
    return ttnn.to_torch(t).to(torch.float64).numpy()


def rotation_matrix() -> np.ndarray:
    """The tests' 32x32 transformation matrix: (y @ T)[2i] = -y[2i+1], (y @ T)[2i+1] = y[2i]."""
    mat = np.zeros((1, 1, 32, 32), np.float32)
    mat[..., np.arange(0, 32, 2), np.arange(1, 32, 2)] = 1
    mat[..., np.arange(1, 32, 2), np.arange(0, 32, 2)] = -1
    return mat


def test_pre_half_is_the_rows_sum_of_squares_in_column_zero(mesh):
    x = quantized(np.random.default_rng(1).uniform(-3, 3, (1, 1, 40, 96)).astype(np.float32), BF16).astype(np.float64)
    stats = PRE(on(mesh, x))
    assert tuple(stats.shape) == (1, 1, 40, 32) and stats.dtype == BF16 and stats.layout == TILE
    got = back(stats)
    ref = (x * x).sum(axis=-1)
    bound = gamma(96) * ref + rounding_error(ref * (1 + gamma(96)), BF16)
    assert_within(got[..., 0], ref, bound, "sum(x**2)")
    assert np.all(got[..., 1:] == 0), "the other columns of the stats tile are zero"


@pytest.mark.parametrize(("heads", "weighted", "rope"), [(1, False, False), (2, True, False), (2, True, True)])
def test_post_half_normalises_weights_rotates_and_splits_into_heads(mesh, heads, weighted, rope):
    rng = np.random.default_rng(heads + 2 * weighted + 4 * rope)
    parts, rows, width = 4, 64, 128  # four devices' parts of a 512-wide hidden dim; this is part 0
    x = quantized(rng.uniform(-4, 4, (1, 1, rows, width)).astype(np.float32), BF16).astype(np.float64)
    stats = quantized(rng.uniform(0, 3000, (1, 1, rows, parts * 32)).astype(np.float32), BF16)
    stats[..., 1:32] = 0  # part 0's own tile as the pre half writes it; the others arbitrary
    w = quantized(rng.uniform(-2, 2, (1, width)).astype(np.float32), BF16).astype(np.float64)
    head = width // heads
    cos = quantized(rng.uniform(-1, 1, (1, 1, rows, head)).astype(np.float32), BF16).astype(np.float64)
    sin = quantized(rng.uniform(-1, 1, (1, 1, rows, head)).astype(np.float32), BF16).astype(np.float64)
    kwargs = {"weight": on(mesh, w)} if weighted else {}
    if rope:
        kwargs.update(transformation_mat=on(mesh, rotation_matrix()), rope_cos=on(mesh, cos), rope_sin=on(mesh, sin))
    out = POST(on(mesh, x), on(mesh, stats), epsilon=1e-5, num_heads_per_device=heads, **kwargs)
    assert tuple(out.shape) == (1, heads, rows, head) and out.dtype == BF16
    scale = float(quantized(np.array([1 / (width * parts)], np.float32), BF16)[0])
    r = 1 / np.sqrt(stats.astype(np.float64).sum(axis=-1, keepdims=True) * scale + 1e-5)
    y = x * r * (w if weighted else 1)
    size = np.abs(y)
    if rope:  # GPT-J pairs: (a, b) -> (a cos - b sin, b cos + a sin), the caches per head
        c, s = np.tile(cos, (1, 1, 1, heads)), np.tile(sin, (1, 1, 1, heads))
        a, b = y[..., 0::2], y[..., 1::2]
        rotated = np.empty_like(y)
        rotated[..., 0::2], rotated[..., 1::2] = (
            a * c[..., 0::2] - b * s[..., 0::2],
            b * c[..., 1::2] + a * s[..., 1::2],
        )
        size = np.abs(y * c) + np.abs(np.roll(y, 1, axis=-1) * s) + np.abs(np.roll(y, -1, axis=-1) * s)
        y = rotated
    split = lambda v: v.reshape(1, rows, heads, head).transpose(0, 2, 1, 3)  # noqa: E731
    compute = (gamma(parts * 32) + 16 * U) * split(size)
    assert_within(back(out), split(y), output_bound(split(y), compute, BF16), "wan rmsnorm")


def test_pre_and_post_over_chunks_make_the_full_norm(mesh):
    """The nightly test's flow: the hidden dim in 4 parts, their stats concatenated, each part normalised."""
    rng = np.random.default_rng(7)
    x = quantized(rng.standard_normal((1, 1, 32, 256)).astype(np.float32) * 4 - 1, BF16).astype(np.float64)
    parts = [on(mesh, p) for p in np.split(x, 4, axis=-1)]
    gathered = ttnn.concat([PRE(p) for p in parts], -1)
    out = np.concatenate([back(POST(p, gathered)) for p in parts], axis=-1)
    ref = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5)
    # stats rounded to bfloat16 (4 of them, each 2^-8 relative) and the scalar 1/256 exact: the root
    # errs by about 2^-9 relative, and the output is rounded once more
    assert_within(out, ref, output_bound(ref, 2.0**-8 * np.abs(ref), BF16), "distributed rms norm")


def test_float32_stats_are_taken_as_tt_metal_takes_them_and_other_dtypes_refused(mesh):
    """The post half takes BFLOAT16 or FLOAT32 stats (tt_dit's distributed norm gathers float32 ones);
    float32 stats keep the sum of squares to float32, so the norm errs only by the output's rounding
    and the float32 sums."""
    rng = np.random.default_rng(11)
    x = quantized(rng.standard_normal((1, 1, 32, 256)).astype(np.float32) * 3, BF16).astype(np.float64)
    parts = [on(mesh, p) for p in np.split(x, 4, axis=-1)]
    gathered = ttnn.concat([PRE(p, dtype=ttnn.float32) for p in parts], -1)
    assert gathered.dtype == ttnn.float32
    out = np.concatenate([back(POST(p, gathered)) for p in parts], axis=-1)
    ref = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5)
    assert_within(out, ref, output_bound(ref, (gamma(256) + 8 * U) * np.abs(ref), BF16), "float32 stats")
    bf8 = ttnn.typecast(gathered, ttnn.bfloat8_b)
    with pytest.raises(ttnn.MeshnnTypeError, match="stats must be one of"):
        POST(parts[0], bf8)
