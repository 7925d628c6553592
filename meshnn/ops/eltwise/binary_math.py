"""The division family and the other composite binary ops of ttnn, one
:class:`~meshnn.ops.eltwise.binary_defs.BinaryDef` each: ``div`` (with ``round_mode``),
``div_no_nan``, ``floor_div``, ``remainder``, ``fmod``, ``addalpha`` / ``subalpha`` and
``isclose``.  Each computes in float32, as ttnn's composite ops do (it typecasts bfloat16 and
int32 operands to float32 first), and rounds once into the output dtype.

ttnn's rules kept here: an int32 ``div`` without ``round_mode`` gives float32 (a true quotient),
with one it gives int32; ``remainder`` has the divisor's sign (Python's ``%``), ``fmod`` the
dividend's; ``div_no_nan`` gives 0 where the divisor is 0; ``isclose`` gives 1 / 0 in the operands'
dtype.

May import: numpy, the op keyword checks and the binary and unary definitions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import Keyword, flag
from meshnn.ops.eltwise.binary_defs import BinaryDef, Keywords
from meshnn.ops.eltwise.unary_defs import ROUND_MODE, ROUNDING_MODE, f, kwb, kwf, one_rounding_mode

B = BinaryDef
PLAIN = Keywords.PLAIN
APPROX = {"fast_and_approximate_mode": Keyword(False, flag)}
"""ttnn's approximate switch of divide and multiply (newer ttnn; an FPU multiply or an approximate
reciprocal on a device): meshnn computes exactly in float32 either way and records the flag."""


def _float(x: np.ndarray | float) -> np.ndarray | np.float32:
    return x.astype(np.float32, copy=False) if isinstance(x, np.ndarray) else np.float32(x)


def _rounding(params: dict[str, Any]) -> str | None:
    """The one rounding mode of a ``div`` call's keywords (checked to agree)."""
    return one_rounding_mode("div", params.get("round_mode"), params.get("rounding_mode"))


def _div(
    a: np.ndarray,
    b: np.ndarray,
    accurate_mode: bool = False,
    round_mode: str | None = None,
    saturate: bool = False,
    rounding_mode: str | None = None,
    fast_and_approximate_mode: bool = False,
) -> np.ndarray:
    """a / b in float32, then truncated or floored as ``round_mode`` (or ``rounding_mode``) says;
    ``saturate``: 0 / 0 is +inf, not NaN (ttnn's bfloat16 division with a rounding mode or
    ``accurate_mode``); ``fast_and_approximate_mode`` is recorded only (meshnn divides exactly)."""
    round_mode = one_rounding_mode("div", round_mode, rounding_mode)
    q = np.divide(_float(a), _float(b))
    if saturate:
        q = np.where(np.isnan(q) & ~np.isnan(_float(a)) & ~np.isnan(_float(b)), np.float32(np.inf), q)
    if round_mode == "trunc":
        return np.trunc(q)
    if round_mode == "floor":
        return np.floor(q)
    return q


def _div_saturates(dtype: DataType, params: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """ttnn's legacy division (a rounding mode or ``accurate_mode``) of a non-float32 tensor
    multiplies by the divisor's reciprocal on the device, where 0 / 0 comes out +inf."""
    legacy = _rounding(params) is not None or bool(params.get("accurate_mode"))
    return (("saturate", legacy and dtype.is_float and dtype is not DataType.FLOAT32),)


def _div_dtype(dtype: DataType, params: dict[str, Any]) -> DataType | None:
    """An int32 quotient without rounding is float32 (ttnn returns its float32 division)."""
    if dtype is DataType.INT32 and _rounding(params) is None:
        return DataType.FLOAT32
    return None


def _divide_dtype(dtype: DataType, params: dict[str, Any]) -> DataType | None:
    return DataType.FLOAT32 if dtype is DataType.INT32 else None


def _div_no_nan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = _float(b)
    return np.where(b == 0, np.float32(0), np.divide(_float(a), b))


def _floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor(np.divide(_float(a), _float(b)))


def _remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.mod(_float(a), _float(b))


def _fmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.fmod(_float(a), _float(b))


def _addalpha(a: np.ndarray, b: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    return _float(a) + _float(b) * np.float32(alpha)


def _subalpha(a: np.ndarray, b: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    return _float(a) - _float(b) * np.float32(alpha)


def _isclose(a: np.ndarray, b: np.ndarray, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False):
    """|a - b| <= atol + rtol |b| (1 / 0); NaNs are close to each other only with ``equal_nan``."""
    a, b = _float(a), _float(b)
    close = np.abs(a - b) <= np.float32(atol) + np.float32(rtol) * np.abs(b)
    if equal_nan:
        close = close | (np.isnan(a) & np.isnan(b))
    return close


def _torch_div(t, a, b, round_mode=None, **_):
    return t.div(a, b, rounding_mode=round_mode)


def _torch_div_no_nan(t, a, b, **_):
    if not t.is_tensor(b):
        return t.zeros_like(a) if b == 0 else a / b
    return t.where(b == 0, 0, a / b)


def _torch_isclose(t, a, b, rtol=1e-5, atol=1e-8, equal_nan=False, **_):
    return t.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _torch_in_float(function):
    """A golden that computes a bfloat16 tensor and a scalar in float32 (as ttnn's do)."""

    def golden(t, a, b, **_):
        if not t.is_tensor(b) and a.dtype == t.bfloat16:
            return function(t, a.float(), b).bfloat16()
        return function(t, a, b)

    return golden


_ALPHA = (f("alpha", 1.0),)
_DIV_PARAMS = (
    kwb("accurate_mode", False),
    ROUND_MODE,
    ROUNDING_MODE,
    kwb("fast_and_approximate_mode", False),
)
"""ttnn 0.81's ``accurate_mode`` / ``round_mode`` and newer ttnn's ``fast_and_approximate_mode`` /
``rounding_mode`` (tt-metal's sampling code of 2026 calls ``div(..., rounding_mode="floor")``)."""

DIVISION = (
    B(
        "div",
        _div,
        _torch_div,
        params=_DIV_PARAMS,
        integer=False,
        result_dtype=_div_dtype,
        dtype_params=_div_saturates,
        device_operation="BinaryNgDeviceOperation",
    ),
    B("div_no_nan", _div_no_nan, _torch_div_no_nan, keywords=PLAIN, integer=False),
    B("floor_div", _floor_div, lambda t, a, b, **k: t.floor_divide(a, b), keywords=PLAIN, integer=False),
    B(
        "remainder",
        _remainder,
        _torch_in_float(lambda t, a, b: t.remainder(a, b)),
        keywords=Keywords.NG,  # (tt-metal of 2026 binds it as it binds add: sub_core_grids, ...)
        integer=False,
    ),
    B("fmod", _fmod, _torch_in_float(lambda t, a, b: t.fmod(a, b)), keywords=PLAIN, integer=False),
    B(
        "addalpha",
        _addalpha,
        lambda t, a, b, alpha=1.0, **k: t.add(a, b, alpha=alpha),
        params=_ALPHA,
        keywords=Keywords.OUTPUT,
        integer=False,
        scalar=False,
    ),
    B(
        "subalpha",
        _subalpha,
        lambda t, a, b, alpha=1.0, **k: t.sub(a, b, alpha=alpha),
        params=_ALPHA,
        keywords=Keywords.OUTPUT,
        integer=False,
        scalar=False,
    ),
    B(
        "isclose",
        _isclose,
        _torch_isclose,
        params=(kwf("rtol", 1e-5), kwf("atol", 1e-8), kwb("equal_nan", False)),
        keywords=PLAIN,
        integer=False,
        scalar=False,
    ),
)
"""The composite division ops and their kin (each a ttnn op)."""

DIVIDE_DTYPE = _divide_dtype
"""``divide`` of two int32 tensors gives their float32 quotient."""
