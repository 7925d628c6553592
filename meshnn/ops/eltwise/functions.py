"""Numeric functions of the element-wise ops that numpy lacks (erfc, gelu, softplus, sigmoid, silu,
mish), computed as accurately as the device computes them, over float32 arrays; and :func:`wide`
(integers in int64, what integer element-wise ops compute in).  The op tables
(:mod:`~meshnn.ops.eltwise.unary_tables`, :mod:`~meshnn.ops.eltwise.binary_tables`) use them.

May import: nothing of meshnn (numpy only).
"""

from __future__ import annotations

import numpy as np

_SQRT_HALF = 1 / np.sqrt(2)
# Numerical Recipes' Chebyshev fit of erfc: RELATIVE error < 1.2e-7 for every argument, so gelu
# stays accurate in its tails too (an erf fit with 1.5e-7 absolute error is not: gelu(-5) is
# -1.4e-6, which such a fit misses by a quarter).  Evaluated in float64, rounded once to float32.
_ERFC_C = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)


def erfc(x: np.ndarray) -> np.ndarray:
    """The complementary error function in float64 (numpy has none)."""
    z = np.asarray(x, np.float64)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.5 * a)
    poly = np.zeros_like(t)
    for c in reversed(_ERFC_C[1:]):
        poly = t * (c + poly)
    tail = t * np.exp(-a * a + _ERFC_C[0] + poly)
    return np.where(z >= 0, tail, 2.0 - tail)


def _gelu(x: np.ndarray, approximate: bool = False) -> np.ndarray:
    if approximate:
        inner = np.float32(np.sqrt(2 / np.pi)) * (x + np.float32(0.044715) * x * x * x)
        return np.float32(0.5) * x * (np.float32(1) + np.tanh(inner))
    wide = np.asarray(x, np.float64)
    return (0.5 * wide * erfc(-wide * _SQRT_HALF)).astype(np.float32)


def _softplus(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    scaled = x * np.float32(beta)
    with np.errstate(over="ignore"):
        soft = np.log1p(np.exp(np.minimum(scaled, np.float32(threshold)))) / np.float32(beta)
    return np.where(scaled > threshold, x, soft)


def _one_plus_exp_minus(x: np.ndarray) -> np.ndarray:
    """1 + exp(-x), in a new array (the scratch that sigmoid and silu finish in)."""
    with np.errstate(over="ignore"):
        t = np.negative(x)
        np.exp(t, out=t)
    t += np.float32(1)
    return t


def _sigmoid(x: np.ndarray) -> np.ndarray:
    t = _one_plus_exp_minus(x)
    return np.reciprocal(t, out=t)


def _silu(x: np.ndarray) -> np.ndarray:
    """x / (1 + exp(-x))."""
    t = _one_plus_exp_minus(x)
    return np.divide(x, t, out=t)


def _mish(x: np.ndarray) -> np.ndarray:
    """x * tanh(softplus(x))."""
    return x * np.tanh(_softplus(x))


def wide(x: np.ndarray) -> np.ndarray:
    """Integer values in int64 (what integer element-wise ops compute in); floats as they are."""
    return x.astype(np.int64) if x.dtype.kind in "iu" else x


def xielu(x: np.ndarray, alpha_p: float = 0.8, alpha_n: float = 0.8) -> np.ndarray:
    """xIELU (arXiv 2411.13010) in float32, beta 0.5 and eps -1e-6 as ttnn fixes them:
    ``alpha_p * x * x + 0.5 * x`` above 0, else ``alpha_n * expm1(min(x, eps)) - alpha_n * x + 0.5 * x``."""
    a_p, a_n, beta = np.float32(alpha_p), np.float32(alpha_n), np.float32(0.5)
    positive = a_p * x * x + beta * x
    negative = a_n * np.expm1(np.minimum(x, np.float32(-1e-6))) - a_n * x + beta * x
    return np.where(x > 0, positive, negative).astype(np.float32, copy=False)


def golden_xielu(t, x, alpha_p: float = 0.8, alpha_n: float = 0.8, **_):
    """ttnn's torch reference of xielu: a bfloat16 input computed in float32, rounded once."""
    wide = x.float() if x.dtype == t.bfloat16 else x
    positive = alpha_p * wide * wide + 0.5 * wide
    negative = alpha_n * t.expm1(t.minimum(wide, t.full_like(wide, -1e-6))) - alpha_n * wide + 0.5 * wide
    return t.where(wide > 0, positive, negative).to(x.dtype)
