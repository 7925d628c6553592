"""The binary element-wise ops of ttnn on integers, one
:class:`~meshnn.ops.eltwise.binary_defs.BinaryDef` each: bitwise and / or / xor, the arithmetic and
logical shifts, gcd and lcm.  They take integer tensors only (the dtypes ttnn's kernels take),
compute in int64 and wrap into the output dtype as the device's 32-bit registers do.

Shifts follow torch's rules, which ttnn's golden functions are: a shift by a negative amount or by
the width or more gives 0 to the left, and the sign (0 or -1) to the right; a logical right shift
treats the value as its unsigned 32-bit pattern.

May import: numpy and the binary definitions.
"""

from __future__ import annotations

import numpy as np

from meshnn.formats.dtypes import DataType
from meshnn.ops.eltwise.binary_defs import BinaryDef, Keywords

B = BinaryDef
BITWISE = Keywords.BITWISE
_BITS = 32
_INT32 = frozenset({DataType.INT32})
_SHIFTABLE = frozenset({DataType.INT32, DataType.UINT32})
_BITWISE_DTYPES = frozenset({DataType.INT32, DataType.UINT32, DataType.UINT16})


def _in_range(b: np.ndarray | int) -> np.ndarray:
    return (np.asarray(b) >= 0) & (np.asarray(b) < _BITS)


def _left_shift(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """``a << b`` in 32 bits: 0 where the shift is negative or 32 or more."""
    ok = _in_range(b)
    shifted = np.left_shift(np.asarray(a, np.int64), np.where(ok, b, 0)) & 0xFFFFFFFF
    return np.where(ok, _signed(shifted), 0)


def _right_shift(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """``a >> b`` (arithmetic): the sign where the shift is negative or 32 or more."""
    ok = _in_range(b)
    return np.right_shift(np.asarray(a, np.int64), np.where(ok, b, _BITS - 1))


def _logical_right_shift(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """``a >> b`` of a's unsigned 32-bit pattern (0 where the shift is out of range)."""
    ok = _in_range(b)
    unsigned = np.asarray(a, np.int64) & 0xFFFFFFFF
    return np.where(ok, _signed(np.right_shift(unsigned, np.where(ok, b, 0))), 0)


def _signed(bits: np.ndarray) -> np.ndarray:
    """A 32-bit pattern (int64 in [0, 2^32)) as the signed value it holds."""
    return np.where(bits >= 1 << 31, bits - (1 << 32), bits)


def _gcd(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    return np.gcd(np.asarray(a, np.int64), np.asarray(b, np.int64))


def _lcm(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    return np.lcm(np.asarray(a, np.int64), np.asarray(b, np.int64))


INTEGER = (
    B(
        "bitwise_and",
        np.bitwise_and,
        lambda t, a, b, **k: t.bitwise_and(a, b),
        keywords=BITWISE,
        dtypes=_BITWISE_DTYPES,
    ),
    B("bitwise_or", np.bitwise_or, lambda t, a, b, **k: t.bitwise_or(a, b), keywords=BITWISE, dtypes=_BITWISE_DTYPES),
    B(
        "bitwise_xor",
        np.bitwise_xor,
        lambda t, a, b, **k: t.bitwise_xor(a, b),
        keywords=BITWISE,
        dtypes=_BITWISE_DTYPES,
    ),
    B(
        "bitwise_left_shift",
        _left_shift,
        lambda t, a, b, **k: t.bitwise_left_shift(a, b),
        keywords=BITWISE,
        dtypes=_SHIFTABLE,
    ),
    B(
        "bitwise_right_shift",
        _right_shift,
        lambda t, a, b, **k: t.bitwise_right_shift(a, b),
        keywords=BITWISE,
        dtypes=_SHIFTABLE,
    ),
    B(
        "logical_left_shift",
        _left_shift,
        lambda t, a, b, **k: t.bitwise_left_shift(a, b),
        keywords=BITWISE,
        dtypes=_SHIFTABLE,
    ),
    B(
        "logical_right_shift",
        _logical_right_shift,
        lambda t, a, b, **k: ((a.to(t.int64) & 0xFFFFFFFF) >> b).to(t.int32),
        keywords=Keywords.SHIFT,
        dtypes=_SHIFTABLE,
    ),
    B("gcd", _gcd, lambda t, a, b, **k: t.gcd(a, b), dtypes=_INT32, scalar=False),
    B("lcm", _lcm, lambda t, a, b, **k: t.lcm(a, b), dtypes=_INT32, scalar=False),
)
"""The integer ops (each a ttnn op)."""
