"""The backward ops of ttnn's unary math functions (exp, log, pow, the trigonometric and hyperbolic
functions, erf, the gamma family, rounding...), one :class:`~meshnn.ops.backward.defs.GradDef`
each.  Each derivative is the textbook one in float32, with the values ttnn's composites give where
the derivative is not finite (``log_bw`` at 0: NaN for a zero gradient, else an infinity of the
gradient's sign; ``sqrt_bw`` at and below 0; ``acosh_bw``'s device NaN and infinity...).

May import: numpy, the element-wise special functions and the backward package.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.ops.backward import goldens
from meshnn.ops.backward.binding import Kind, a, k
from meshnn.ops.backward.defs import GradDef, table, unary
from meshnn.ops.complex import grads as complex_grads
from meshnn.ops.eltwise import special
from meshnn.ops.eltwise.unary_defs import one_rounding_mode
from meshnn.perf.desc import OpFamily

INF, NAN = np.float32(np.inf), np.float32(np.nan)
DEVICE_NAN, DEVICE_INF = np.float32(7.0040e19), np.float32(1.7014e38)
"""What a Wormhole / Blackhole device writes for NaN and infinity (tt-metal's hal values), which
ttnn's ``acosh_bw`` returns and its golden function expects."""


def _f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def _signed_inf(g: np.ndarray) -> np.ndarray:
    """-inf where the gradient is negative, else +inf (ttnn's ``where(ltz(grad), -inf, inf)``)."""
    return np.where(g < 0, -INF, INF)


def _at_pole(g: np.ndarray, x: np.ndarray, value: np.ndarray, pole: float = 0.0) -> np.ndarray:
    """``value``, but at ``x == pole``: NaN for a zero gradient, else an infinity of its sign."""
    return np.where(x == pole, np.where(g == 0, NAN, _signed_inf(g)), value)


def _log_base(ln: float):
    return lambda g, x: _at_pole(g, x, g / (x * np.float32(ln)))


def _sqrt(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.where(x <= 0, NAN, g / (2 * np.sqrt(x)))
    out = np.where((x == 0) & (g < 0), -INF, out)
    return np.where((x == 0) & (g > 0), INF, out)


def _rsqrt(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    r = 1 / np.sqrt(x)
    out = np.where(x == 0, INF, -0.5 * g * r * r * r)
    out = np.where(x < 0, NAN, out)
    return np.where((x == 0) & (g == 0), NAN, out)


def _reciprocal(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.where(x == 0, np.where(g == 0, NAN, -np.sign(g) * INF), -g / (x * x))


def _check_exponent(op: str, params: dict) -> None:
    if params["exponent"] < 0:
        raise MeshnnValueError(
            f"ttnn.{op}: negative exponents are not supported (exponent >= 0.0 is required, got "
            f"{params['exponent']}); use recip(pow(input, abs(exponent)))"
        )


def _pow(g: np.ndarray, x: np.ndarray, exponent: float) -> np.ndarray:
    if abs(exponent) < np.finfo(np.float32).eps * 10:
        return np.zeros_like(x)
    e = np.float32(exponent)
    return np.where(x <= 0, INF, g * e * np.power(x, e - 1))


def _rpow(g: np.ndarray, x: np.ndarray, exponent: float) -> np.ndarray:
    if exponent == 0:
        return np.zeros_like(x)
    e = np.float32(exponent)
    return np.where(x < 0, NAN, g * e * np.power(x, e - 1))


def _asin_like(sign: float):
    def derivative(g: np.ndarray, x: np.ndarray) -> np.ndarray:
        out = np.where((x < -1) | (x > 1), NAN, sign * g / np.sqrt(1 - x * x))
        return np.where((x == 1) | (x == -1), sign * np.sign(g) * INF, out)

    return derivative


def _acosh(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    sq = x * x
    out = g / np.sqrt(sq - 1)
    out = np.where((x <= 1) & (x >= -1), np.where(np.signbit(g), -DEVICE_INF, DEVICE_INF), out)
    return np.where((sq < 1) | ((x == 1) & (g == 0)), DEVICE_NAN, out)


def _atanh(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = g / (1 - x * x)
    out = np.where(g == 0, NAN, out)
    out = np.where((g == 0) & (x == 0), np.float32(0), out)
    out = np.where(((x == 1) | (x == -1)) & (g != 0), INF, out)
    return np.where((out == INF) & (g < 0), -INF, out)


def _hyperbolic(derivative, outer_sign: float):
    """sinh_bw / cosh_bw: beyond |x| > 88.5 an infinity of the gradient's sign (times
    ``outer_sign`` below -88.5), results past float32's range infinite."""

    def grad(g: np.ndarray, x: np.ndarray) -> np.ndarray:
        inf = np.sign(g) * INF
        out = np.where(x > 88.5, inf, np.where(x < -88.5, outer_sign * inf, g * derivative(x)))
        return np.where(out >= 3.4e38, INF, np.where(out <= -3.4e38, -INF, out))

    return grad


def _erfinv(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    y = special.erfinv(x)
    out = _f32(0.5 * math.sqrt(math.pi) * np.exp(y * y) * g)
    out = np.where((x < -1) | (x > 1), NAN, out)
    return np.where((x == 1) | (x == -1), np.sign(g) * INF, out)


def _digamma(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = g * _f32(special.polygamma(1, x))
    return np.where(x == 0, np.where(g == 0, NAN, np.sign(g) * INF), out)


def _polygamma(g: np.ndarray, x: np.ndarray, n: float) -> np.ndarray:
    order = int(n)
    flip = -1.0 if order in (2, 4, 6, 8, 10) else 1.0
    out = g * _f32(special.polygamma(order + 1, x))
    out = np.where((x <= 0) & (g == 0), NAN, out)
    out = np.where((x == 0) & (g > 0), -INF * flip, out)
    return np.where((x == 0) & (g < 0), INF * flip, out)


def _multigammaln(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    wide = np.asarray(x, np.float64)
    total = sum(special.digamma(wide - shift) for shift in (0.0, 0.5, 1.0, 1.5))
    return g * _f32(total)


def _rdiv(g: np.ndarray, x: np.ndarray, scalar: float, **modes: str | None) -> np.ndarray:
    if any(mode is not None for mode in modes.values()):
        return np.zeros_like(x)
    out = np.where(x != 0, -g * (np.float32(scalar) / (x * x)), NAN)
    if scalar != 0:
        side = np.float32(1 if scalar > 0 else -1)
        out = np.where((x == 0) & (g < 0), side * INF, out)
        out = np.where((x == 0) & (g > 0), -side * INF, out)
    return out


ROUNDING = (k("round_mode", Kind.STR), k("rounding_mode", Kind.STR))
"""A division gradient's rounding mode: ttnn 0.81's ``round_mode`` and newer ttnn's ``rounding_mode``
(2026's ``div_bw`` / ``rdiv_bw``), keyword-only; a rounded quotient's gradient is zero."""


def check_round_mode(op: str, params: dict) -> None:
    """ttnn's rounding modes of a division: None, 'trunc' or 'floor', by either name (both given
    must agree)."""
    for name in ("round_mode", "rounding_mode"):
        if params.get(name) not in (None, "trunc", "floor"):
            raise MeshnnValueError(f"ttnn.{op}: {name} must be None, 'trunc' or 'floor', got {params[name]!r}")
    one_rounding_mode(op, params.get("round_mode"), params.get("rounding_mode"))


def _zeros(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.zeros_like(x)


U = GradDef
ONE = {"family": OpFamily.UNARY, "modelled": True}
"""The perf family of an op that is one unary device operation on the incoming gradient."""

DEFS = (
    U("exp_bw", (unary(lambda g, x: g * np.exp(x), out=True),), goldens.unary("exp")),
    U("exp2_bw", (unary(lambda g, x: g * np.exp2(x) * np.float32(math.log(2))),), goldens.unary("exp2")),
    U("expm1_bw", (unary(lambda g, x: g * (np.expm1(x) + 1)),), goldens.unary("expm1")),
    U("log_bw", (unary(lambda g, x: _at_pole(g, x, g / x)),), goldens.unary("log")),
    U("log10_bw", (unary(_log_base(math.log(10))),), goldens.unary("log10")),
    U("log2_bw", (unary(_log_base(math.log(2))),), goldens.unary("log2")),
    U("log1p_bw", (unary(lambda g, x: _at_pole(g, x, g / (x + 1), -1.0)),), goldens.unary("log1p")),
    U("sqrt_bw", (unary(_sqrt, out=True),), goldens.unary("sqrt")),
    U("rsqrt_bw", (unary(_rsqrt, out=True),), goldens.unary("rsqrt")),
    U("square_bw", (unary(lambda g, x: 2 * g * x),), goldens.unary("square")),
    U("sin_bw", (unary(lambda g, x: g * np.cos(x)),), goldens.unary("sin")),
    U("cos_bw", (unary(lambda g, x: -g * np.sin(x)),), goldens.unary("cos")),
    U("tan_bw", (unary(lambda g, x: g * (1 + np.tan(x) ** 2)),), goldens.unary("tan")),
    U("asin_bw", (unary(_asin_like(1.0)),), goldens.unary("asin")),
    U("acos_bw", (unary(_asin_like(-1.0)),), goldens.unary("acos")),
    U("atan_bw", (unary(lambda g, x: g / (1 + x * x)),), goldens.unary("atan")),
    U("sinh_bw", (unary(_hyperbolic(np.cosh, 1.0)),), goldens.unary("sinh")),
    U("cosh_bw", (unary(_hyperbolic(np.sinh, -1.0)),), goldens.unary("cosh")),
    U("tanh_bw", (unary(lambda g, x: g * (1 - np.tanh(x) ** 2), out=True),), goldens.unary("tanh")),
    U("asinh_bw", (unary(lambda g, x: g / np.sqrt(x * x + 1)),), goldens.unary("asinh")),
    U("acosh_bw", (unary(_acosh),), goldens.device_special("acosh")),
    U("atanh_bw", (unary(_atanh),), goldens.unary("atanh")),
    U("erf_bw", (unary(lambda g, x: g * np.float32(2 / math.sqrt(math.pi)) * np.exp(-x * x)),), goldens.unary("erf")),
    U(
        "erfc_bw",
        (unary(lambda g, x: -g * np.float32(2 / math.sqrt(math.pi)) * np.exp(-x * x)),),
        goldens.unary("erfc"),
    ),
    U("erfinv_bw", (unary(_erfinv),), goldens.unary("erfinv")),
    U("deg2rad_bw", (unary(lambda g, x: g * np.float32(math.pi / 180)),), goldens.unary("deg2rad"), **ONE),
    U("rad2deg_bw", (unary(lambda g, x: g * np.float32(180 / math.pi)),), goldens.unary("rad2deg"), **ONE),
    U("digamma_bw", (unary(_digamma),), goldens.unary("digamma")),
    U("polygamma_bw", (unary(_polygamma, a("n", Kind.NUMBER)),), goldens.polygamma()),
    U("lgamma_bw", (unary(lambda g, x: g * _f32(special.digamma(x))),), goldens.unary("lgamma")),
    U("multigammaln_bw", (unary(_multigammaln),), goldens.mvlgamma()),
    U("i0_bw", (unary(lambda g, x: g * _f32(special.i1(x))),), goldens.unary("i0")),
    U(
        "reciprocal_bw",
        (unary(_reciprocal), complex_grads.RECIPROCAL),
        goldens.real_or_complex("reciprocal"),
        doc="``ttnn.reciprocal_bw``: the gradient of 1 / input (a ttnn.Tensor or a ttnn.ComplexTensor).",
    ),
    U(
        "abs_bw",
        (unary(lambda g, x: g * np.sign(x)), complex_grads.ABS),
        goldens.real_or_complex("abs"),
        doc="``ttnn.abs_bw``: the gradient of abs(input) (a ttnn.Tensor or a ttnn.ComplexTensor).",
    ),
    U("pow_bw", (unary(_pow, a("exponent", Kind.NUMBER), out=True, check=_check_exponent),), goldens.pow_golden()),
    U("rpow_bw", (unary(_rpow, a("exponent", Kind.NUMBER)),), goldens.functional("pow")),
    U("neg_bw", (unary(lambda g, x: -g, out=True),), goldens.unary("neg"), **ONE),
    U("sign_bw", (unary(_zeros),), goldens.unary("sign")),
    U("floor_bw", (unary(_zeros),), goldens.unary("floor")),
    U("ceil_bw", (unary(_zeros),), goldens.unary("ceil")),
    U("round_bw", (unary(_zeros),), goldens.unary("round")),
    U("trunc_bw", (unary(_zeros),), goldens.unary("trunc")),
    U("frac_bw", (unary(lambda g, x: g),), goldens.unary("frac")),
    U("fill_zero_bw", (unary(_zeros),), goldens.fill_zero()),
    U("fill_bw", (unary(_zeros, out=True),), goldens.fill()),
    U(
        "div_no_nan_bw",
        (unary(lambda g, x, scalar: g * np.float32(0 if scalar == 0 else 1 / scalar), a("scalar", Kind.NUMBER)),),
        goldens.div_no_nan(),
        **ONE,
    ),
    U(
        "rdiv_bw",
        (unary(_rdiv, a("scalar", Kind.NUMBER), *ROUNDING, check=check_round_mode),),
        goldens.rdiv(),
    ),
)

OPS = table(DEFS)
"""The public unary-math backward ops by name."""
