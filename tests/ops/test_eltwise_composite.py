"""The composite unary ops, the ternary ops, quantization and the losses added for issue 35 against
float64 numpy, on a 1x1 (n150) and a 2x4 (t3k) mesh.

Bounds (see reference.py): each op computes in float32 (a few u = 2**-24 of its magnitude, stated
per op) and rounds once into the output dtype (bfloat16: 2**-8 |v|).  Selections (clamp, tril,
where, prelu's sign test) are exact; quantization is exact against round-half-even of the float64
value.  Each family checks that a plausible wrong answer lies outside its bound.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import (
    BF16,
    F32,
    SHARD,
    TILE,
    assert_within,
    exact_equal,
    exceeds,
    float32_error,
    mesh_fixtures,
    output_bound,
    quantized,
    results,
    to_mesh,
)

meshes, mesh = mesh_fixtures([(1, 1), (2, 4)])
SHAPE = (8, 2, 32, 128)


@pytest.fixture
def rng():
    return np.random.default_rng(3535)


def _on(mesh, values, dtype=F32):
    return to_mesh(mesh, values, dtype, TILE, SHARD)


def _out(mesh, tensor):
    return results(mesh, tensor, SHARD)[0]


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _gelu(x):
    import math

    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


GATES = {"glu": _sigmoid, "reglu": lambda b: np.maximum(b, 0), "geglu": _gelu, "swiglu": lambda b: b * _sigmoid(b)}


@pytest.mark.parametrize("dtype", [F32, BF16])
@pytest.mark.parametrize("name", list(GATES))
def test_gated_linear_units_halve_the_last_dim(mesh, name, dtype, rng):
    x = rng.uniform(-4, 4, SHAPE).astype(np.float32)
    out = getattr(ttnn, name)(_on(mesh, x, dtype))
    n = mesh.get_num_devices()
    assert tuple(out.shape) == (8 // n, 2, 32, 64) and out.dtype is dtype
    xq = quantized(x, dtype)
    a, b = xq[..., :64], xq[..., 64:]
    ref = a * GATES[name](b)
    got = _out(mesh, out)
    assert_within(got, ref, output_bound(ref, float32_error(ref, 8), dtype), name)
    assert exceeds(b * GATES[name](a), ref, output_bound(ref, float32_error(ref, 8), dtype))  # halves swapped
    golden = ttnn.get_golden_function(getattr(ttnn, name))(torch.from_numpy(xq))
    assert np.allclose(golden.numpy(), ref, rtol=1e-6, atol=1e-6)


def test_gated_units_need_whole_tile_halves(meshes):
    t = ttnn.Tensor(np.ones((1, 1, 32, 96), np.float32), F32, layout=TILE, device=meshes[(1, 1)])
    with pytest.raises(ttnn.MeshnnValueError, match="64"):
        ttnn.glu(t)
    with pytest.raises(ttnn.MeshnnValueError, match="dim"):
        ttnn.swiglu(ttnn.Tensor(np.ones((1, 1, 64, 64), np.float32), F32, layout=TILE, device=meshes[(1, 1)]), 2)


def test_clamp_clip_with_numbers_and_tensors(mesh, rng):
    x = rng.uniform(-5, 5, SHAPE).astype(np.float32)
    low = rng.uniform(-3, 0, SHAPE).astype(np.float32)
    high = rng.uniform(0, 3, SHAPE).astype(np.float32)
    a = _on(mesh, x)
    exact_equal(_out(mesh, ttnn.clamp(a, -1.5, 2.0)), np.clip(x, -1.5, 2.0).astype(np.float64), "clamp numbers")
    exact_equal(_out(mesh, ttnn.clip(a, max=0.5)), np.minimum(x, 0.5).astype(np.float64), "clip max only")
    got = _out(mesh, ttnn.clamp(a, _on(mesh, low), _on(mesh, high)))
    exact_equal(got, np.minimum(np.maximum(x, low), high).astype(np.float64), "clamp tensors")
    with pytest.raises(ttnn.MeshnnValueError, match="Only one of 'min' or 'max' can be None"):
        ttnn.clamp(a)


def test_clamp_of_int32_keeps_or_leaves_int32(meshes, rng):
    mesh = meshes[(1, 1)]
    x = rng.integers(-100, 100, (32, 64)).astype(np.int32)
    t = ttnn.Tensor(x, ttnn.int32, layout=TILE, device=mesh)
    out = ttnn.clamp(t, -10, 20)
    assert out.dtype is ttnn.int32
    exact_equal(ttnn.to_numpy(out).astype(np.float64), np.clip(x, -10, 20).astype(np.float64), "int clamp")
    assert ttnn.clamp(t, -10.5, 20.5).dtype is ttnn.float32  # float bounds: ttnn typecasts the input


@pytest.mark.parametrize("diagonal", [-3, 0, 5])
def test_tril_triu(mesh, diagonal, rng):
    x = rng.uniform(-2, 2, SHAPE).astype(np.float32)
    a = _on(mesh, x)
    exact_equal(_out(mesh, ttnn.tril(a, diagonal=diagonal)), np.tril(x, diagonal).astype(np.float64), "tril")
    exact_equal(_out(mesh, ttnn.triu(a, diagonal=diagonal)), np.triu(x, diagonal).astype(np.float64), "triu")


def test_hw_statistics(mesh, rng):
    x = rng.uniform(-3, 3, SHAPE).astype(np.float32)
    a = _on(mesh, x)
    xd = x.astype(np.float64)
    var = xd.var(axis=(-2, -1), keepdims=True)
    n = 32 * 128
    assert tuple(ttnn.var_hw(a).shape)[-2:] == (1, 1)
    # a pairwise float32 sum of n non-negative squares errs by (log2 n + 2) u of its value
    ulps = 2 * (np.log2(n) + 2)
    bound = float32_error(var, ulps)
    assert_within(_out(mesh, ttnn.var_hw(a)), var, bound, "var_hw")
    assert exceeds(xd.var(axis=(-2, -1), keepdims=True, ddof=1), var, bound)  # the unbiased one differs
    assert_within(_out(mesh, ttnn.std_hw(a)), np.sqrt(var), float32_error(np.sqrt(var), ulps), "std_hw")
    normal = (xd - xd.mean(axis=(-2, -1), keepdims=True)) / np.sqrt(var)
    assert_within(_out(mesh, ttnn.normalize_hw(a)), normal, float32_error(normal, 4) + 1e-6, "normalize_hw")


def test_unary_chain_logical_not_and_rotate(meshes, rng):
    mesh = meshes[(1, 1)]
    x = rng.uniform(-2, 2, (32, 64)).astype(np.float32)
    a = ttnn.Tensor(x, F32, layout=TILE, device=mesh)
    chain = [ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU), ttnn.UnaryWithParam(ttnn.UnaryOpType.EXP)]
    ref = np.exp(np.maximum(x.astype(np.float64), 0))
    assert_within(ttnn.to_numpy(ttnn.unary_chain(a, chain)).astype(np.float64), ref, float32_error(ref, 4), "chain")
    pairs = x.reshape(32, 32, 2)
    rotated = np.stack([-pairs[..., 1], pairs[..., 0]], axis=-1).reshape(32, 64)
    exact_equal(ttnn.to_numpy(ttnn.alt_complex_rotate90(a)).astype(np.float64), rotated.astype(np.float64), "rot90")
    z = np.where(x > 0, x, 0).astype(np.float32)
    t = ttnn.Tensor(z, F32, layout=TILE, device=mesh)
    assert ttnn.logical_not_(t) is t
    exact_equal(ttnn.to_numpy(t).astype(np.float64), (z == 0).astype(np.float64), "logical_not_")


def test_keyword_only_parameters_as_ttnn_binds_them(meshes):
    t = ttnn.Tensor(np.ones((32, 32), np.float32), F32, layout=TILE, device=meshes[(1, 1)])
    for op, value in ((ttnn.selu, 1.0), (ttnn.hardtanh, -1.0), (ttnn.hardshrink, 0.5), (ttnn.celu, 1.0)):
        with pytest.raises(ttnn.MeshnnTypeError, match="positional"):
            op(t, value)
    ttnn.round(t, decimals=2)
    ttnn.hardtanh(t, min_val=-0.5, max_val=0.5)


def test_sigmoid_vector_mode_c_computes_the_left_faces_only(meshes, rng):
    x = rng.uniform(-4, 4, (64, 80)).astype(np.float32)
    t = ttnn.Tensor(x, F32, layout=TILE, device=meshes[(1, 1)])
    got = ttnn.to_numpy(ttnn.sigmoid(t, vector_mode=2)).astype(np.float64)
    left = (np.arange(80) % 32) < 16  # faces 0 and 2 of each tile
    ref = np.where(left, 1 / (1 + np.exp(-x.astype(np.float64))), x)
    assert_within(got, ref, float32_error(ref, 4), "sigmoid vector_mode=2")
    everywhere = ttnn.to_numpy(ttnn.sigmoid(t)).astype(np.float64)
    assert exceeds(everywhere, ref, float32_error(ref, 4))  # mode 4 computes the right faces too


def test_typecast_with_input_and_output_dtypes(meshes, rng):
    x = rng.uniform(-4, 4, (32, 64)).astype(np.float32)
    t = ttnn.Tensor(x, F32, layout=TILE, device=meshes[(1, 1)])
    out = ttnn.typecast(t, F32, BF16)  # ttnn's (input_dtype, output_dtype) form
    assert out.dtype is BF16
    exact_equal(ttnn.to_numpy(out).astype(np.float64), quantized(x, BF16), "typecast to bfloat16")
    with pytest.raises(ttnn.MeshnnValueError, match="input_dtype"):
        ttnn.typecast(t, BF16, F32)


def test_hardshrink_compares_bfloat16_at_its_precision(meshes):
    values = torch.tensor([[36.5, 36.25, 36.75, -36.5]], dtype=torch.bfloat16).repeat(32, 8)
    t = ttnn.from_torch(values, layout=TILE, device=meshes[(1, 1)])
    got = ttnn.to_torch(ttnn.hardshrink(t, lambd=36.49))
    assert torch.equal(got, torch.nn.functional.hardshrink(values, 36.49))  # 36.49 rounds to 36.5 first
    assert got[0, 0] == 0 and got[0, 2] == 36.75


# -------------------------------------------------------------------------------------- ternary


def test_where_with_numbers_and_tensors(mesh, rng):
    c = (rng.uniform(0, 1, SHAPE) > 0.5).astype(np.float32)
    x, y = rng.uniform(-5, 5, SHAPE).astype(np.float32), rng.uniform(-5, 5, SHAPE).astype(np.float32)
    p, a, b = _on(mesh, c), _on(mesh, x), _on(mesh, y)
    exact_equal(_out(mesh, ttnn.where(p, a, b)), np.where(c != 0, x, y).astype(np.float64), "where TTT")
    exact_equal(_out(mesh, ttnn.where(p, 2.5, b)), np.where(c != 0, 2.5, y).astype(np.float64), "where TST")
    exact_equal(_out(mesh, ttnn.where(p, a, -1.0)), np.where(c != 0, x, -1.0).astype(np.float64), "where TTS")
    exact_equal(_out(mesh, ttnn.experimental.where(p, a, b)), np.where(c != 0, x, y).astype(np.float64), "exp.where")
    out = ttnn.where(p, 1.0, 0.0)
    assert out.dtype is F32  # two numbers: the predicate's dtype


def test_arithmetic_ternary_ops(mesh, rng):
    x, y, z = (rng.uniform(1, 4, SHAPE).astype(np.float32) for _ in range(3))
    a, b, c = _on(mesh, x), _on(mesh, y), _on(mesh, z)
    xd, yd, zd = (v.astype(np.float64) for v in (x, y, z))
    cases = (
        ("addcmul", ttnn.addcmul(a, b, c, value=0.5), xd + 0.5 * yd * zd, 3),
        ("addcdiv", ttnn.addcdiv(a, b, c, value=0.5), xd + 0.5 * yd / zd, 3),
        ("lerp", ttnn.lerp(a, b, 0.25), xd + 0.25 * (yd - xd), 3),
        ("lerp tensor", ttnn.lerp(a, b, c), xd + zd * (yd - xd), 3),
        ("mac", ttnn.mac(a, b, c), xd * yd + zd, 2),
        ("mac numbers", ttnn.mac(a, 2.0, -1.0), 2 * xd - 1, 2),
    )
    for what, out, ref, ulps in cases:
        bound = float32_error(np.abs(ref) + 4 * np.abs(xd * yd), ulps)
        assert_within(_out(mesh, out), ref, bound, what)
    assert exceeds(xd + yd * zd, cases[0][2], float32_error(np.abs(cases[0][2]), 12))  # value ignored


def test_addcdiv_bfloat16_saturates_where_the_divisor_is_zero(meshes):
    mesh = meshes[(1, 1)]
    x = np.ones((32, 32), np.float32)
    d = np.ones((32, 32), np.float32)
    d[0, :4] = 0
    b = np.full((32, 32), 2.0, np.float32)
    b[0, 1] = -2
    tensors = [ttnn.Tensor(v, BF16, layout=TILE, device=mesh) for v in (x, b, d)]
    got = ttnn.to_numpy(ttnn.addcdiv(*tensors, value=1.0)).astype(np.float64)
    assert got[0, 0] == np.inf and got[0, 1] == -np.inf and got[1, 1] == 3.0


# --------------------------------------------------------------------------- quantization, losses


def test_quantize_dequantize_requantize(mesh, rng):
    x = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    scale, zero = 2.0 / 255, -3
    q = ttnn.quantize(_on(mesh, x), scale, zero)
    assert q.dtype is ttnn.int32
    expected = np.round(x.astype(np.float64) / scale) + zero
    exact_equal(_out(mesh, q), expected, "quantize")
    back = ttnn.dequantize(q, scale, zero, dtype=F32)
    ref = (expected - zero) * scale
    assert_within(_out(mesh, back), ref, float32_error(ref, 2), "dequantize")
    assert np.max(np.abs(_out(mesh, back) - x)) <= scale / 2 * (1 + 1e-6)
    re = ttnn.requantize(q, scale, zero, 2 * scale, 5)
    exact_equal(_out(mesh, re), np.round((expected - zero) / 2) + 5, "requantize")


def test_per_channel_quantization(meshes, rng):
    mesh = meshes[(1, 1)]
    x = rng.uniform(-1, 1, (4, 32, 64)).astype(np.float32)
    scales = np.array([0.01, 0.02, 0.03, 0.04], np.float32)
    zeros = np.array([0, 1, -1, 2], np.int32)
    s_t = ttnn.Tensor(scales, F32, layout=TILE, device=mesh)
    z_t = ttnn.Tensor(zeros, ttnn.int32, layout=TILE, device=mesh)
    q = ttnn.quantize(ttnn.Tensor(x, F32, layout=TILE, device=mesh), s_t, z_t, axis=0)
    expected = np.round(x / scales.reshape(4, 1, 1).astype(np.float64)) + zeros.reshape(4, 1, 1)
    exact_equal(ttnn.to_numpy(q).astype(np.float64), expected, "per-channel quantize")


def test_losses(mesh, rng):
    x, y = rng.uniform(-2, 2, SHAPE).astype(np.float32), rng.uniform(-2, 2, SHAPE).astype(np.float32)
    a, b = _on(mesh, x), _on(mesh, y)
    d = x.astype(np.float64) - y
    none = ttnn.mse_loss(a, b)
    assert_within(_out(mesh, none), d * d, float32_error(d * d, 3), "mse none")
    assert_within(_out(mesh, ttnn.l1_loss(a, b)), np.abs(d), float32_error(np.abs(d), 1), "l1 none")
    if mesh.get_num_devices() == 1:
        total = ttnn.to_numpy(ttnn.l1_loss(a, b, reduction=ttnn.LossReductionMode.SUM)).astype(np.float64)
        assert total.shape == () and abs(total - np.abs(d).sum()) <= 2 * d.size * 2**-24 * np.abs(d).sum()
        mean = ttnn.to_torch(ttnn.mse_loss(a, b, reduction=ttnn.LossReductionMode.MEAN))
        assert mean.shape == () and abs(float(mean) - (d * d).mean()) <= 2 * d.size * 2**-24 * (d * d).mean()
