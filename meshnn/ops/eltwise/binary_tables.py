"""The binary element-wise ops of ttnn, one :class:`~meshnn.ops.eltwise.binary_defs.BinaryDef` each:
arithmetic, comparisons, logical and bitwise ops, and the composite ops (atan2, hypot, xlogy...).
``golden`` is the torch reference ttnn attaches (``golden(torch, a, b, **params)``).

:data:`BINARY` maps each op's name to its numeric function; kernels look it up when they run.

May import: numpy and the binary definitions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meshnn.ops.eltwise.binary_defs import BinaryDef, Keywords
from meshnn.ops.eltwise.binary_int import INTEGER
from meshnn.ops.eltwise.binary_math import APPROX, DIVIDE_DTYPE, DIVISION
from meshnn.ops.eltwise.functions import _gelu

B = BinaryDef
PLAIN = Keywords.PLAIN


def _logical(test):
    return lambda a, b: test(a != 0, b != 0)


def _xlogy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a == 0, np.where(np.isnan(b), np.nan, 0), a * np.log(b)).astype(np.float32)


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b; integer operands as float32 (ttnn divides int32 tensors in float32)."""
    if isinstance(a, np.ndarray) and a.dtype.kind in "iu":
        a = a.astype(np.float32)
    if isinstance(b, np.ndarray) and b.dtype.kind in "iu":
        b = b.astype(np.float32)
    return np.divide(a, b)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a ** b; an integer base with an integer exponent stays integer (negative exponents as
    float32: numpy refuses them for integers)."""
    if isinstance(a, np.ndarray) and a.dtype.kind in "iu" and np.any(np.asarray(b) < 0):
        a = a.astype(np.float32)
    return np.power(a, b)


def _squared_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = a - b
    return d * d


ARITHMETIC = (
    B("add", np.add, lambda t, a, b, **k: a + b, inplace=True, operator="add"),
    B("subtract", np.subtract, lambda t, a, b, **k: a - b, inplace=True, operator="subtract", aliases=("sub", "sub_")),
    B(
        "multiply",
        np.multiply,
        lambda t, a, b, **k: a * b,
        inplace=True,
        operator="multiply",
        aliases=("mul", "mul_"),
        hardware=APPROX,
    ),
    B(
        "divide",
        _divide,
        lambda t, a, b, **k: t.divide(a, b),
        inplace=True,
        operator="divide",
        aliases=("div_",),
        result_dtype=DIVIDE_DTYPE,
        hardware=APPROX,
    ),
    B("rsub", lambda a, b: b - a, lambda t, a, b, **k: b - a, inplace=True),
    B("maximum", np.maximum, lambda t, a, b, **k: t.maximum(a, b)),
    B("minimum", np.minimum, lambda t, a, b, **k: t.minimum(a, b)),
    B("pow", _pow, lambda t, a, b, **k: t.pow(a, b), public=False),
    B(
        "squared_difference",
        _squared_difference,
        lambda t, a, b, **k: t.square(t.sub(a, b)),
        inplace=True,
    ),
    B(
        "bias_gelu",
        lambda a, b: _gelu(a + b),
        lambda t, a, b, **k: t.nn.functional.gelu(t.add(a, b)),
        inplace=True,
        integer=False,
    ),
    B("logaddexp", np.logaddexp, lambda t, a, b, **k: t.logaddexp(a, b), inplace=True, integer=False),
    B("logaddexp2", np.logaddexp2, lambda t, a, b, **k: t.logaddexp2(a, b), inplace=True, integer=False),
    B("ldexp", lambda a, b: a * np.exp2(b), lambda t, a, b, **k: t.ldexp(a, b), inplace=True, integer=False),
    B("atan2", np.arctan2, lambda t, a, b, **k: t.atan2(a, b), keywords=PLAIN, integer=False),
    B("hypot", np.hypot, lambda t, a, b, **k: t.hypot(a, b), keywords=PLAIN, integer=False),
    B("xlogy", _xlogy, lambda t, a, b, **k: t.xlogy(a, b), integer=False),
    B("nextafter", np.nextafter, lambda t, a, b, **k: t.nextafter(a, b), keywords=PLAIN, integer=False),
)

COMPARISONS = (
    B("eq", np.equal, lambda t, a, b, **k: t.eq(a, b), inplace=True, operator="eq"),
    B("ne", np.not_equal, lambda t, a, b, **k: t.ne(a, b), inplace=True, operator="ne"),
    B("gt", np.greater, lambda t, a, b, **k: t.gt(a, b), inplace=True, operator="gt"),
    B("lt", np.less, lambda t, a, b, **k: t.lt(a, b), inplace=True, operator="lt"),
    B("ge", np.greater_equal, lambda t, a, b, **k: t.ge(a, b), inplace=True, operator="ge"),
    B("le", np.less_equal, lambda t, a, b, **k: t.le(a, b), inplace=True, operator="le"),
    B("logical_and", _logical(np.logical_and), lambda t, a, b, **k: t.logical_and(a, b), inplace=True),
    B("logical_or", _logical(np.logical_or), lambda t, a, b, **k: t.logical_or(a, b), inplace=True),
    B("logical_xor", _logical(np.logical_xor), lambda t, a, b, **k: t.logical_xor(a, b), inplace=True),
)

BINARY_DEFS: tuple[BinaryDef, ...] = (*ARITHMETIC, *COMPARISONS, *DIVISION, *INTEGER)
"""Every binary definition."""

BINARY: dict[str, Callable[..., np.ndarray]] = {d.name: d.compute for d in BINARY_DEFS}
"""Each binary op's name -> its numeric function (kernels look it up when they run)."""
DEFS: dict[str, BinaryDef] = {d.name: d for d in BINARY_DEFS}
