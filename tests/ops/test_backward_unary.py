"""The unary backward ops (``ttnn.exp_bw``, ``ttnn.gelu_bw``...) against torch autograd in float64.

Each op runs on inputs drawn from a domain where its derivative is finite, stored as bfloat16 or
float32; the reference is the op's own golden function (torch autograd, as ttnn attaches it) on
the same stored values in float64.  A correct result lies within the float32 compute error of the
derivative (``ulps`` units u = 2**-24 of the magnitudes involved, |reference| + |grad|: a few for a
chain of float32 operations, more where ttnn's composite uses rounded constants: ``selu_bw``'s
1.0507 and 1.67326, ``hardswish_bw``'s 0.3333 for 1/3) plus one rounding into the output dtype
(bfloat16: 2**-8 relative).  A deliberately wrong result (the derivative of another op) lies
beyond the bound.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, F32, TILE, assert_within, exceeds, float32_error, output_bound, quantized

# op: (low, high, params, ulps) -- the input domain, the op's parameters, the compute error in u
CASES: dict[str, tuple[float, float, dict, float]] = {
    "exp_bw": (-3, 3, {}, 8),
    "exp2_bw": (-3, 3, {}, 8),
    "expm1_bw": (-3, 3, {}, 8),
    "log_bw": (0.2, 4, {}, 8),
    "log10_bw": (0.2, 4, {}, 8),
    "log2_bw": (0.2, 4, {}, 8),
    "log1p_bw": (-0.5, 3, {}, 8),
    "sqrt_bw": (0.2, 4, {}, 8),
    "rsqrt_bw": (0.2, 4, {}, 16),
    "square_bw": (-3, 3, {}, 4),
    "sin_bw": (-3, 3, {}, 8),
    "cos_bw": (-3, 3, {}, 8),
    "tan_bw": (-1.2, 1.2, {}, 16),
    "asin_bw": (-0.9, 0.9, {}, 16),
    "acos_bw": (-0.9, 0.9, {}, 16),
    "atan_bw": (-3, 3, {}, 8),
    "sinh_bw": (-3, 3, {}, 8),
    "cosh_bw": (-3, 3, {}, 8),
    "tanh_bw": (-3, 3, {}, 64),
    "asinh_bw": (-3, 3, {}, 8),
    "acosh_bw": (1.2, 4, {}, 16),
    "atanh_bw": (-0.9, 0.9, {}, 16),
    "erf_bw": (-2, 2, {}, 8),
    "erfc_bw": (-2, 2, {}, 8),
    "erfinv_bw": (-0.9, 0.9, {}, 16),
    "deg2rad_bw": (-3, 3, {}, 4),
    "rad2deg_bw": (-3, 3, {}, 4),
    "digamma_bw": (0.5, 4, {}, 8),
    "polygamma_bw": (0.5, 4, {"n": 2}, 8),
    "lgamma_bw": (0.5, 4, {}, 8),
    "multigammaln_bw": (2.6, 5, {}, 16),
    "i0_bw": (-3, 3, {}, 8),
    "reciprocal_bw": (0.3, 3, {}, 8),
    "pow_bw": (0.2, 4, {"exponent": 2.5}, 16),
    "rpow_bw": (0.2, 4, {"exponent": 3.0}, 16),
    "neg_bw": (-3, 3, {}, 0),
    "sign_bw": (-3, 3, {}, 0),
    "floor_bw": (-3, 3, {}, 0),
    "ceil_bw": (-3, 3, {}, 0),
    "round_bw": (-3, 3, {}, 0),
    "trunc_bw": (-3, 3, {}, 0),
    "frac_bw": (-3, 3, {}, 0),
    "fill_zero_bw": (-3, 3, {}, 0),
    "fill_bw": (-3, 3, {}, 0),
    "div_no_nan_bw": (-3, 3, {"scalar": 2.5}, 4),
    "rdiv_bw": (0.3, 3, {"scalar": 2.0}, 8),
    "abs_bw": (-3, 3, {}, 0),
    "relu_bw": (-3, 3, {}, 0),
    "relu6_bw": (-2, 8, {}, 0),
    "sigmoid_bw": (-4, 4, {}, 16),
    "silu_bw": (-4, 4, {}, 16),
    "selu_bw": (-3, 3, {}, 64),
    "elu_bw": (-3, 3, {"alpha": 0.7}, 8),
    "celu_bw": (-3, 3, {"alpha": 1.3}, 8),
    "leaky_relu_bw": (-3, 3, {"negative_slope": 0.1}, 4),
    "hardshrink_bw": (-2, 2, {"lambd": 0.5}, 0),
    "softshrink_bw": (-2, 2, {"lambd": 0.5}, 0),
    "hardtanh_bw": (-2, 2, {}, 0),
    "threshold_bw": (-2, 3, {"min": 0.5, "max": 2.0}, 0),
    "softplus_bw": (-3, 3, {"beta": 2.0, "threshold": 3.0}, 16),
    "hardsigmoid_bw": (-5, 5, {}, 4),
    "hardswish_bw": (-5, 5, {}, 2000),
    "softsign_bw": (-3, 3, {}, 8),
    "tanhshrink_bw": (-3, 3, {}, 64),
    "log_sigmoid_bw": (-4, 4, {}, 16),
    "logit_bw": (0.1, 0.9, {}, 16),
    "logiteps_bw": (0.05, 0.95, {"eps": 0.2}, 16),
    "gelu_bw": (-3, 3, {}, 16),
    "clamp_bw": (-3, 3, {"min": -1.0, "max": 2.0}, 0),
    "clip_bw": (-3, 3, {"min": None, "max": 0.5}, 0),
}

SHAPE = (1, 2, 32, 48)
BREAKS = {"hardswish_bw": (-3.0, 3.0)}
"""Break points where ttnn's side differs from torch's (ttnn: ``x <= 3`` is on the linear piece):
kept out of the autograd comparison, checked on their own below."""


@pytest.fixture(scope="module")
def device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    mesh.close()


def _golden(name: str, g: np.ndarray, x: np.ndarray, params: dict) -> np.ndarray:
    """The op's golden function on float64 torch tensors (positional parameters in ttnn's order)."""
    grad = torch.from_numpy(g)
    inp = torch.from_numpy(x).requires_grad_(True)
    golden = ttnn.get_golden_function(getattr(ttnn, name))
    return golden(grad, inp, *params.values())[0].detach().numpy()


def _run(device, name: str, dtype, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    low, high, params, _ = CASES[name]
    x = quantized(rng.uniform(low, high, SHAPE).astype(np.float32), dtype)
    x[np.isin(x, BREAKS.get(name, ()))] = 0.5
    g = quantized(rng.uniform(-2, 2, SHAPE).astype(np.float32), dtype)
    on = lambda v: ttnn.from_torch(torch.from_numpy(v.astype(np.float32)), dtype=dtype, layout=TILE, device=device)  # noqa: E731
    out = getattr(ttnn, name)(on(g), on(x), **params)
    assert isinstance(out, list) and len(out) == 1
    return ttnn.to_numpy(out[0]).astype(np.float64), _golden(name, g, x, params), g


@pytest.mark.parametrize("dtype", [BF16, F32], ids=["bf16", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_unary_backward_matches_autograd(device, rng, name, dtype):
    out, ref, g = _run(device, name, dtype, rng)
    ulps = CASES[name][3]
    bound = output_bound(ref, float32_error(np.abs(ref) + np.abs(g), ulps), dtype)
    assert_within(out, ref, bound, name)
    if np.any(ref != 0):  # the bound is tight enough to tell a wrong derivative (its negation) apart
        assert exceeds(-ref, ref, bound) or np.all(np.abs(ref) < 1e-30)


def test_every_unary_backward_op_is_tested():
    from meshnn.ops.backward import unary_activations, unary_math

    names = set(unary_math.OPS) | {n for n in unary_activations.OPS if not n.startswith("experimental.")}
    assert names <= set(CASES), sorted(names - set(CASES))


def test_gelu_bw_tanh_approximation(device, rng):
    x = quantized(rng.uniform(-3, 3, SHAPE).astype(np.float32), BF16)
    g = quantized(rng.uniform(-2, 2, SHAPE).astype(np.float32), BF16)
    on = lambda v: ttnn.from_torch(torch.from_numpy(v.astype(np.float32)), dtype=BF16, layout=TILE, device=device)  # noqa: E731
    out = ttnn.to_numpy(ttnn.gelu_bw(on(g), on(x), approximate="tanh")[0]).astype(np.float64)
    inp = torch.from_numpy(x).requires_grad_(True)
    ref = ttnn.get_golden_function(ttnn.gelu_bw)(torch.from_numpy(g), inp, "tanh")[0].detach().numpy()
    assert_within(out, ref, output_bound(ref, float32_error(np.abs(ref) + np.abs(g), 32), BF16), "gelu tanh")
    exact = ttnn.to_numpy(ttnn.gelu_bw(on(g), on(x))[0]).astype(np.float64)
    assert np.any(exact != out), "the tanh approximation changes some gradients"


def test_experimental_gelu_bw_is_gelu_bw(device, rng):
    x = quantized(rng.uniform(-3, 3, SHAPE).astype(np.float32), BF16)
    g = quantized(rng.uniform(-2, 2, SHAPE).astype(np.float32), BF16)
    on = lambda v: ttnn.from_torch(torch.from_numpy(v.astype(np.float32)), dtype=BF16, layout=TILE, device=device)  # noqa: E731
    a = ttnn.to_numpy(ttnn.experimental.gelu_bw(on(g), on(x), approximate="tanh"))  # a tensor, not a list
    b = ttnn.to_numpy(ttnn.gelu_bw(on(g), on(x), approximate="tanh")[0])
    np.testing.assert_array_equal(a, b)
    assert ttnn.get_golden_function(ttnn.experimental.gelu_bw) is not None


def test_hardswish_bw_takes_ttnns_side_at_the_break_points(device):
    x = np.array([[-3.0, 3.0, -3.5, 3.5]], np.float32)
    g = np.full_like(x, 2.0)
    on = lambda v: ttnn.from_torch(torch.from_numpy(v), dtype=F32, layout=TILE, device=device)  # noqa: E731
    out = ttnn.to_numpy(ttnn.hardswish_bw(on(g), on(x))[0])
    third = np.float32(0.3333)
    np.testing.assert_array_equal(out, [[2.0 * (-3.0 * third + 0.5), 2.0 * (3.0 * third + 0.5), 0.0, 2.0]])
