"""The binary element-wise ops added for issue 35 against float64 numpy, on a 1x1 (n150) and a 2x4
(t3k) mesh, inputs sharded on dim 0.

Bounds (see reference.py): a float32 computation correctly rounded or good to a few u = 2**-24,
plus the rounding into the output dtype (bfloat16: 2**-8 |v|).  Integer ops (bitwise, shifts,
gcd, lcm) and the comparisons are exact.  Each family checks that a plausible wrong answer (the
sign rule of fmod for remainder, Python's floor for trunc, an arithmetic shift for a logical one)
lies outside its bound.
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
SHAPE = (8, 32, 64)  # one batch slice per device of a 2x4 mesh


@pytest.fixture
def rng():
    return np.random.default_rng(35)


def _on(mesh, values, dtype=F32):
    return to_mesh(mesh, values, dtype, TILE, SHARD)


def _out(mesh, tensor):
    return results(mesh, tensor, SHARD)[0]


# name: (float64 reference, u of the float32 computation)
DIVISION = {
    "div_no_nan": (lambda a, b: np.where(b == 0, 0.0, a / np.where(b == 0, 1, b)), 1),
    "floor_div": (lambda a, b: np.floor(a / b), 1),
    "remainder": (np.mod, 2),
    "fmod": (np.fmod, 2),
}


@pytest.mark.parametrize("dtype", [F32, BF16])
@pytest.mark.parametrize("name", list(DIVISION))
def test_division_family(mesh, name, dtype, rng):
    reference, ulps = DIVISION[name]
    x = rng.uniform(-50, 50, SHAPE).astype(np.float32)
    y = (rng.uniform(0.5, 7, SHAPE) * rng.choice([-1, 1], SHAPE)).astype(np.float32)
    if name == "div_no_nan":
        y[:, 0, :8] = 0  # a zero divisor gives 0
    xq, yq = quantized(x, dtype), quantized(y, dtype)
    out = getattr(ttnn, name)(_on(mesh, x, dtype), _on(mesh, y, dtype))
    assert out.dtype is dtype and tuple(out.shape) == (8 // mesh.get_num_devices(), 32, 64)
    ref = reference(xq, yq)
    # floor and the remainders jump where a / b is an integer: the quotient's float32 rounding may land
    # either side, so compare away from those points (the jump is the whole divisor there)
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = xq / yq
        smooth = (yq != 0) & (np.abs(quotient - np.round(quotient)) > 1e-4 * np.maximum(1, np.abs(quotient)))
    bound = output_bound(ref, float32_error(ref, ulps) + 8 * 2**-24 * np.abs(xq), dtype)
    got = _out(mesh, out)
    assert_within(got[smooth], ref[smooth], bound[smooth], f"{name} {dtype}")
    if name == "div_no_nan":
        exact_equal(got[yq == 0], np.zeros(int((yq == 0).sum())), "div_no_nan where b is 0")
    if name == "remainder":  # the sign of the divisor, not of the dividend (fmod's)
        assert exceeds(np.fmod(xq, yq)[smooth], ref[smooth], bound[smooth])
        assert np.all((got[smooth] == 0) | (np.sign(got[smooth]) == np.sign(yq[smooth])))


def test_division_by_a_number(mesh, rng):
    x = rng.uniform(-50, 50, SHAPE).astype(np.float32)
    a = _on(mesh, x)
    exact_equal(_out(mesh, ttnn.div_no_nan(a, 0.0)), np.zeros(SHAPE), "div_no_nan by 0")
    got = _out(mesh, ttnn.floor_div(a, 0.0))
    assert np.all(np.isinf(got[x != 0])) and np.all(np.sign(got[x != 0]) == np.sign(x[x != 0]))
    ref = np.floor(x.astype(np.float64) / 3.0)
    assert_within(_out(mesh, ttnn.floor_div(a, 3.0)), ref, float32_error(ref, 1) + 1e-5, "floor_div by 3")


@pytest.mark.parametrize("round_mode", [None, "trunc", "floor"])
def test_div_round_modes_and_dtypes(mesh, round_mode, rng):
    x = rng.integers(-1000, 1000, SHAPE).astype(np.int32)
    y = rng.integers(1, 30, SHAPE).astype(np.int32) * rng.choice([-1, 1], SHAPE).astype(np.int32)
    a, b = (ttnn.Tensor(v, ttnn.int32, device=mesh, layout=TILE,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)) for v in (x, y))  # fmt: skip
    out = ttnn.div(a, b, round_mode=round_mode)
    quotient = x.astype(np.float64) / y
    if round_mode is None:  # an int32 quotient without rounding is its float32 value
        assert out.dtype is ttnn.float32
        assert_within(_out(mesh, out), quotient, float32_error(quotient, 1), "int32 div")
    else:
        assert out.dtype is ttnn.int32
        expected = np.trunc(quotient) if round_mode == "trunc" else np.floor(quotient)
        exact_equal(_out(mesh, out), expected, f"int32 div {round_mode}")
        if round_mode == "trunc":
            assert not np.array_equal(np.floor(quotient), expected)
    golden = ttnn.get_golden_function(ttnn.div)(torch.from_numpy(x), torch.from_numpy(y), round_mode)
    assert np.allclose(golden.numpy().astype(np.float64), _out(mesh, out), rtol=1e-6)


def test_div_bfloat16_zero_over_zero_is_inf_with_a_round_mode(meshes):
    mesh = meshes[(1, 1)]
    x = np.array([[0.0, 1.0, -1.0, 7.0]], np.float32)
    y = np.array([[0.0, 0.0, 0.0, 2.5]], np.float32)
    a, b = (ttnn.from_torch(torch.from_numpy(v), ttnn.bfloat16, layout=TILE, device=mesh) for v in (x, y))
    got = ttnn.to_numpy(ttnn.div(a, b, round_mode="trunc")).astype(np.float64)
    exact_equal(got, np.array([[np.inf, np.inf, -np.inf, 2.0]]), "bfloat16 legacy div")
    plain = ttnn.to_numpy(ttnn.div(ttnn.Tensor(x, F32, layout=TILE, device=mesh), ttnn.Tensor(y, F32, layout=TILE,
                          device=mesh), round_mode="trunc"))  # fmt: skip
    assert np.isnan(plain[0, 0]) and plain[0, 3] == 2.0  # float32 keeps IEEE's NaN


def test_addalpha_subalpha_and_isclose(mesh, rng):
    x = rng.uniform(-10, 10, SHAPE).astype(np.float32)
    y = rng.uniform(-10, 10, SHAPE).astype(np.float32)
    a, b = _on(mesh, x), _on(mesh, y)
    for op, sign in ((ttnn.addalpha, 1), (ttnn.subalpha, -1)):
        ref = x.astype(np.float64) + sign * 2.5 * y
        assert_within(_out(mesh, op(a, b, 2.5)), ref, float32_error(ref, 2) + 2**-24 * 2.5 * np.abs(y), op.__name__)
    z = x.copy()
    z[:, :, ::2] += 1e-3
    got = _out(mesh, ttnn.isclose(a, _on(mesh, z), rtol=0.0, atol=1e-4))
    exact_equal(got, np.isclose(x, z, rtol=0.0, atol=1e-4).astype(np.float64), "isclose")
    assert got[:, :, 1::2].all() and not got[:, :, ::2].any()


INTEGER = {
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "gcd": np.gcd,
    "lcm": np.lcm,
}


@pytest.mark.parametrize("name", list(INTEGER))
def test_integer_ops_are_exact(mesh, name, rng):
    x = rng.integers(-3000, 3000, SHAPE).astype(np.int32)
    y = rng.integers(-3000, 3000, SHAPE).astype(np.int32)
    a, b = (ttnn.Tensor(v, ttnn.int32, device=mesh, layout=TILE,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)) for v in (x, y))  # fmt: skip
    out = getattr(ttnn, name)(a, b)
    assert out.dtype is ttnn.int32
    exact_equal(_out(mesh, out), INTEGER[name](x.astype(np.int64), y.astype(np.int64)).astype(np.float64), name)
    golden = ttnn.get_golden_function(getattr(ttnn, name))(torch.from_numpy(x), torch.from_numpy(y))
    exact_equal(_out(mesh, out), golden.numpy().astype(np.float64), f"{name} golden")


def test_shifts_follow_torch(meshes):
    mesh = meshes[(1, 1)]
    x = np.array([[99, 3, -100, 1, 72, 0, -100, 22, 12, 1000, -8, 7]], np.int32)
    s = np.array([[1, 2, 31, 4, 5, 0, -20, 1, -3, 40, 2, 32]], np.int32)
    a, b = (ttnn.Tensor(v, ttnn.int32, device=mesh, layout=TILE) for v in (x, s))
    tx, ts = torch.from_numpy(x), torch.from_numpy(s)
    for op, golden in (
        (ttnn.bitwise_left_shift, torch.bitwise_left_shift),
        (ttnn.bitwise_right_shift, torch.bitwise_right_shift),
    ):
        exact_equal(ttnn.to_numpy(op(a, b)).astype(np.float64), golden(tx, ts).numpy().astype(np.float64), op.__name__)
    logical = ttnn.to_numpy(ttnn.logical_right_shift(a, 2)).astype(np.int64)
    exact_equal(logical, ((x.astype(np.int64) & 0xFFFFFFFF) >> 2).astype(np.int32).astype(np.int64), "logical >>")
    assert logical[0, 2] > 0 and (x[0, 2] >> 2) < 0  # not the arithmetic shift


def test_integer_ops_refuse_floats(meshes):
    mesh = meshes[(1, 1)]
    f = ttnn.Tensor(np.ones((32, 32), np.float32), F32, layout=TILE, device=mesh)
    with pytest.raises(ttnn.MeshnnTypeError, match="input_tensor_a"):
        ttnn.bitwise_and(f, f)
    with pytest.raises(ttnn.MeshnnTypeError, match="input_tensor"):
        ttnn.gcd(f, f)


def test_pow_prelu_outer_polyval(mesh, rng):
    x = rng.uniform(0.1, 3, SHAPE).astype(np.float32)
    a = _on(mesh, x)
    ref = x.astype(np.float64) ** 2.5
    assert_within(_out(mesh, ttnn.pow(a, 2.5)), ref, float32_error(ref, 8), "pow")
    assert_within(_out(mesh, ttnn.pow(2.0, a)), 2.0**x, float32_error(2.0**x, 8), "rpow")
    with pytest.raises(ttnn.MeshnnValueError, match="exponent"):
        ttnn.pow(a, -1.0)
    z = rng.uniform(-3, 3, SHAPE).astype(np.float32)
    exact_equal(_out(mesh, ttnn.prelu(_on(mesh, z), 0.25)), np.where(z < 0, 0.25 * z, z).astype(np.float64), "prelu")
    coeffs = [0.5, -1.0, 2.0]
    ref = (0.5 * x.astype(np.float64) - 1.0) * x + 2.0
    assert_within(_out(mesh, ttnn.polyval(a, coeffs)), ref, float32_error(ref, 4) + 4 * 2**-24 * x * x, "polyval")


def test_prelu_per_channel_and_outer(meshes, rng):
    mesh = meshes[(1, 1)]
    x = rng.uniform(-3, 3, (2, 3, 32, 32)).astype(np.float32)
    w = np.array([0.1, 0.2, 0.3], np.float32)
    a = ttnn.Tensor(x, F32, layout=TILE, device=mesh)
    out = ttnn.prelu(a, ttnn.Tensor(w, F32, layout=TILE, device=mesh))
    ref = np.where(x < 0, x * w.reshape(1, 3, 1, 1), x)
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, float32_error(ref, 1), "prelu per channel")
    u, v = rng.uniform(-1, 1, (1, 1, 40, 1)).astype(np.float32), rng.uniform(-1, 1, (1, 1, 1, 24)).astype(np.float32)
    got = ttnn.outer(ttnn.Tensor(u, F32, layout=TILE, device=mesh), ttnn.Tensor(v, F32, layout=TILE, device=mesh))
    assert tuple(got.shape) == (1, 1, 40, 24)
    ref = np.outer(u.ravel(), v.ravel()).astype(np.float64)
    assert_within(ttnn.to_numpy(got).reshape(40, 24).astype(np.float64), ref, float32_error(ref, 1), "outer")


def test_prim_binary_and_inplace_aliases(meshes, rng):
    mesh = meshes[(1, 1)]
    x, y = rng.uniform(-5, 5, (32, 64)).astype(np.float32), rng.uniform(-5, 5, (32, 64)).astype(np.float32)
    a, b = ttnn.Tensor(x, F32, layout=TILE, device=mesh), ttnn.Tensor(y, F32, layout=TILE, device=mesh)
    out = ttnn.prim.binary(a, b, ttnn.BinaryOpType.MUL)
    exact_equal(ttnn.to_numpy(out).astype(np.float64), (x * y).astype(np.float64), "prim.binary MUL")
    assert ttnn.sub_ is ttnn.subtract_ and ttnn.mul_ is ttnn.multiply_ and ttnn.div_ is ttnn.divide_
    assert ttnn.div is not ttnn.divide  # ttnn's div takes round_mode; divide does not
    ttnn.gt_(a, b)
    exact_equal(ttnn.to_numpy(a).astype(np.float64), (x > y).astype(np.float64), "gt_ in place")
    golden = ttnn.get_golden_function(ttnn.gt_)
    t = torch.from_numpy(x.copy()).bfloat16()
    assert golden(t, torch.from_numpy(y).bfloat16()).dtype == torch.bfloat16  # torch's in-place rule


def test_pearson_correlation_coefficient(meshes, rng):
    mesh = meshes[(1, 1)]
    x = rng.standard_normal((32, 32)).astype(np.float32)
    t = torch.from_numpy(x)
    assert ttnn.pearson_correlation_coefficient(t, ttnn.Tensor(x, F32, layout=TILE, device=mesh)) == 1.0
    noisy = t + 0.1 * torch.from_numpy(rng.standard_normal((32, 32)).astype(np.float32))
    r = ttnn.pearson_correlation_coefficient(t, noisy)
    assert abs(r - np.corrcoef(x.ravel(), noisy.numpy().ravel())[0, 1]) < 1e-12 and r < 0.999
    assert ttnn.pearson_correlation_coefficient(t, torch.zeros(32, 32)) == 0.0


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "out_shape"),
    [((1, 1, 1, 1), (5, 3, 32, 32), (5, 3, 1, 32)), ((5, 2, 64, 1), (1, 3, 1, 128), (5, 3, 64, 128))],
)
def test_a_given_output_of_another_shape_is_refused_before_the_broadcast_rule(meshes, a_shape, b_shape, out_shape):
    """tt-metal 2026's binary_ng, nothing sharded: the output's shape is checked first, against a's size
    where neither size is 1 ([5, 2, 64, 128] for the pair that does not broadcast); a matching output
    of a bad pair still meets the broadcast rule."""
    mesh = meshes[(1, 1)]

    def put(shape):
        return ttnn.from_torch(torch.zeros(shape), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)

    a, b = put(a_shape), put(b_shape)
    with pytest.raises(ValueError, match=r"Shape of Output tensor .+ provided does not match the broadcasted output"):
        ttnn.le(a, b, output_tensor=put(out_shape))
    if a_shape == (5, 2, 64, 1):
        with pytest.raises(ValueError, match="cannot be broadcast together"):
            ttnn.le(a, b, output_tensor=put((5, 2, 64, 128)))
