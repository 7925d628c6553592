"""The unary math ops of ttnn, one :class:`~meshnn.ops.eltwise.unary_defs.UnaryDef` each:
exponentials and logarithms, powers and roots, trigonometric and hyperbolic functions, rounding,
special functions.  ``golden`` is the torch reference ttnn attaches.

May import: numpy, the element-wise numeric functions and the unary definitions.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.ops.eltwise.functions import erfc
from meshnn.ops.eltwise.special import digamma, erf, erfinv, i1, lgamma, multigammaln, polygamma
from meshnn.ops.eltwise.unary_defs import APPROX, ROUND_MODE, ROUNDING_MODE, UnaryDef, f, i, kwi, one_rounding_mode

U = UnaryDef
_D64 = np.float64


def _f64(function):
    """``function`` over float64 values (for accuracy), the result as float32."""
    return lambda x, **k: np.asarray(function(np.asarray(x, _D64), **k)).astype(np.float32)


def _round(x: np.ndarray, decimals: int = 0) -> np.ndarray:
    """Round half to even at ``decimals`` places (torch.round's rule)."""
    if not decimals:
        return np.round(x)
    scale = 10.0**decimals
    return (np.round(np.asarray(x, _D64) * scale) / scale).astype(np.float32)


def _expm1(x: np.ndarray) -> np.ndarray:
    """exp(x) - 1 in float64, rounded once to float32: within 1 ulp of torch's float32 expm1 (numpy's
    float32 expm1 is up to 2 ulp off near 0.006, which tt-metal's all-bit-patterns test refuses)."""
    with np.errstate(over="ignore"):
        return np.expm1(np.asarray(x, _D64)).astype(np.float32)


def _exp2(x: np.ndarray) -> np.ndarray:
    """2**x with a subnormal result flushed to 0 (tt-metal 2026's exp2 kernels, #44507: the fp32 one
    builds its result with setexp, zero where the biased exponent is below 1; the bf16 one's output
    is flushed as the SFPU's: exp2(-127) is 0, not 2**-127).  Computed in float64 and rounded once
    (numpy's float32 exp2 is 2 ulp off near 128; the fp32 kernel is within 1)."""
    result = np.exp2(np.asarray(x, _D64)).astype(np.result_type(x, np.float32))
    return np.where(np.abs(result) < np.finfo(np.float32).tiny, np.zeros_like(result), result)


def _cbrt(x: np.ndarray) -> np.ndarray:
    return np.cbrt(x)


MATH = (
    # exponentials and logarithms
    U("exp", np.exp, lambda t, x, **k: t.exp(x), member="EXP", hardware=APPROX),
    U("exp2", _exp2, lambda t, x, **k: t.exp2(x), member="EXP2"),
    U("expm1", _expm1, lambda t, x, **k: t.expm1(x), member="EXPM1"),
    U("log", np.log, lambda t, x, **k: t.log(x), member="LOG", hardware=APPROX),
    U("log2", np.log2, lambda t, x, **k: t.log2(x), member="LOG2", hardware=APPROX),
    U("log10", np.log10, lambda t, x, **k: t.log10(x), member="LOG10", hardware=APPROX),
    U("log1p", np.log1p, lambda t, x, **k: t.log1p(x), member="LOG1P", hardware=APPROX),
    # powers and roots
    U("sqrt", np.sqrt, lambda t, x, **k: t.sqrt(x), member="SQRT", hardware=APPROX),
    U("rsqrt", lambda x: np.float32(1) / np.sqrt(x), lambda t, x, **k: t.rsqrt(x), member="RSQRT", hardware=APPROX),
    U("cbrt", _cbrt, lambda t, x, **k: t.sgn(x) * t.pow(t.abs(x), 1.0 / 3)),
    U("square", np.square, lambda t, x, **k: t.square(x), member="SQUARE", integer=True),
    U(
        "reciprocal",
        lambda x: np.float32(1) / x,
        lambda t, x, **k: t.nan_to_num(t.reciprocal(x), nan=float("inf")),
        member="RECIP",
    ),
    U(
        "rpow",
        lambda x, exponent: np.power(np.float32(exponent), x),
        lambda t, x, exponent, **k: t.pow(exponent, x),
        params=(f("exponent"),),
        member="RPOW",
    ),
    U(
        "rdiv",
        lambda x, value, round_mode=None, rounding_mode=None: _rounded(
            np.float32(value) / x, one_rounding_mode("rdiv", round_mode, rounding_mode)
        ),
        lambda t, x, value, round_mode=None, rounding_mode=None, **k: t.div(
            t.tensor(value, dtype=x.dtype), x, rounding_mode=one_rounding_mode("rdiv", round_mode, rounding_mode)
        ),
        params=(f("value"), ROUND_MODE, ROUNDING_MODE),
        member="RDIV",
        operator="rdiv",  # ``number / tensor``
    ),
    # trigonometric and hyperbolic
    U("sin", np.sin, lambda t, x, **k: t.sin(x), member="SIN"),
    U("cos", np.cos, lambda t, x, **k: t.cos(x), member="COS"),
    U("tan", np.tan, lambda t, x, **k: t.tan(x), member="TAN"),
    U("asin", np.arcsin, lambda t, x, **k: t.asin(x), member="ASIN"),
    U("acos", np.arccos, lambda t, x, **k: t.acos(x), member="ACOS"),
    U("atan", np.arctan, lambda t, x, **k: t.atan(x), member="ATAN"),
    U("sinh", np.sinh, lambda t, x, **k: t.sinh(x), member="SINH"),
    U("cosh", np.cosh, lambda t, x, **k: t.cosh(x), member="COSH"),
    U("asinh", np.arcsinh, lambda t, x, **k: t.asinh(x), member="ASINH"),
    U("acosh", np.arccosh, lambda t, x, **k: t.acosh(x), member="ACOSH"),
    U("atanh", np.arctanh, lambda t, x, **k: t.atanh(x), member="ATANH"),
    U("deg2rad", lambda x: x * np.float32(math.pi / 180), lambda t, x, **k: t.deg2rad(x)),
    U("rad2deg", lambda x: x * np.float32(180 / math.pi), lambda t, x, **k: t.rad2deg(x)),
    # rounding
    U("floor", np.floor, lambda t, x, **k: t.floor(x), member="FLOOR"),
    U("ceil", np.ceil, lambda t, x, **k: t.ceil(x), member="CEIL"),
    U("trunc", np.trunc, lambda t, x, **k: t.trunc(x), member="TRUNC"),
    U("frac", lambda x: x - np.trunc(x), lambda t, x, **k: t.frac(x), member="FRAC"),
    U(
        "round",
        _round,
        lambda t, x, decimals=0, **k: t.round(x, decimals=decimals or 0),
        params=(kwi("decimals", 0),),
        member="ROUND",
    ),
    # special functions
    U("erf", _f64(erf), lambda t, x, **k: t.erf(x), member="ERF", hardware=APPROX),
    U("erfc", _f64(erfc), lambda t, x, **k: t.erfc(x), member="ERFC", hardware=APPROX),
    U("erfinv", _f64(erfinv), lambda t, x, **k: t.erfinv(x), member="ERFINV"),
    U("i0", _f64(np.i0), lambda t, x, **k: t.i0(x), member="I0"),
    U("i1", _f64(i1), lambda t, x, **k: t.special.i1(x), member="I1"),
    U("lgamma", _f64(lgamma), lambda t, x, **k: t.lgamma(x), member="LGAMMA"),
    U("digamma", _f64(digamma), lambda t, x, **k: t.digamma(x), member="DIGAMMA"),
    U("multigammaln", _f64(multigammaln), lambda t, x, **k: t.special.multigammaln(x, 4)),
    U(
        "polygamma",
        lambda x, k: polygamma(int(k), np.asarray(x, _D64)).astype(np.float32),
        lambda t, x, k, **kw: t.special.polygamma(k, x),
        params=(i("k"),),
        member="POLYGAMMA",
    ),
)
"""The math ops (public, each a ttnn op)."""


def _rounded(x: np.ndarray, round_mode: str | None) -> np.ndarray:
    """``x`` rounded as ``round_mode`` says: None, ``"trunc"`` or ``"floor"`` (torch's names; checked
    before the op runs)."""
    if round_mode == "trunc":
        return np.trunc(x)
    if round_mode == "floor":
        return np.floor(x)
    return x
