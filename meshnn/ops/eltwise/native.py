"""bfloat16 element-wise kernels that torch runs natively, when the program uses torch.

torch adds, subtracts and multiplies bfloat16 tensors by computing each result in float32 and
rounding it to nearest even: what meshnn's float32 kernels followed by the host cast do.  That
is not assumed but checked, once per op, bit for bit against meshnn's own numpy path, over every
bfloat16 value (zeros, subnormals, infinities and NaNs included) paired four ways.  An op whose
check fails, and every op of a program that has not imported torch, keeps the numpy kernel.
meshnn never imports torch for this.

The results are the numpy path's, so a native kernel changes speed only: one torch call over
the slab rows instead of decoding both operands to float32, computing, and rounding back.
(A program that turns on ``torch.set_flush_denormal`` after the check would flush subnormal
results that meshnn keeps; the check runs with torch's settings of its first use.)

May import: the bfloat16 byte format of the layers below the ops; torch only when the program
has imported it.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable

import numpy as np

from meshnn.formats.bfloat16 import (
    BFLOAT16_NAN,
    bfloat16_bits_to_float32,
    float32_to_bfloat16_bits,
    quiet_bfloat16_nans,
)

NativeKernel = Callable[[np.ndarray, np.ndarray, np.ndarray], None]
"""``kernel(a_rows, b_rows, out_rows)``: C-contiguous uint8 rows of bfloat16 values, same shape
(``out_rows`` writable).  Writable rows are handed to torch with ``torch.frombuffer`` (half the
cost of ``torch.from_numpy`` and a dtype view); read-only ones through ``from_numpy``, whose
warning about them is silenced (an input is only read)."""

_TORCH_NAMES = {"add": "add", "subtract": "sub", "multiply": "mul"}
_NUMPY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}
_checked: dict[str, int | None] = {}  # op -> the one NaN pattern torch makes, or None: not usable
_kernels: dict[str, NativeKernel | None] = {}  # op -> its kernel, made once
_lock = threading.Lock()


def bfloat16_binary(name: str) -> NativeKernel | None:
    """torch's kernel for the bfloat16 binary op ``name``, or None (no torch, op not covered, or
    torch's results differ from meshnn's)."""
    torch = sys.modules.get("torch")
    if torch is None or name not in _TORCH_NAMES:
        return None
    if name not in _checked:
        with _lock:
            if name not in _checked:
                _checked[name] = _check(torch, name)
    if name not in _kernels:
        _kernels[name] = _make_kernel(torch, name, _checked[name])
    return _kernels[name]


def _make_kernel(torch, name: str, nan: int | None) -> NativeKernel | None:
    if nan is None:
        return None
    function = getattr(torch, _TORCH_NAMES[name])

    frombuffer, bfloat16 = torch.frombuffer, torch.bfloat16

    def kernel(a_rows: np.ndarray, b_rows: np.ndarray, out_rows: np.ndarray) -> None:
        if not out_rows.size:
            return
        if a_rows.flags.writeable and b_rows.flags.writeable:  # slab rows: viewed through the buffer protocol
            a = frombuffer(a_rows, dtype=bfloat16)
            b = a if b_rows is a_rows else frombuffer(b_rows, dtype=bfloat16)  # (x op x: one view)
            function(a, b, out=frombuffer(out_rows, dtype=bfloat16))
        else:
            function(_as_bfloat16(torch, a_rows), _as_bfloat16(torch, b_rows), out=_as_bfloat16(torch, out_rows))
        if nan == BFLOAT16_NAN:
            return
        bits = out_rows.view(np.uint16)
        if nan != 0xFFFF or np.maximum.reduce(bits, axis=None) == 0xFFFF:  # torch's NaN is the largest uint16
            quiet_bfloat16_nans(bits, produced=nan)

    return kernel


def _as_bfloat16(torch, rows: np.ndarray):
    if rows.flags.writeable:
        return torch.from_numpy(rows.view(np.int16)).view(torch.bfloat16)
    with warnings.catch_warnings():  # a read-only input is only read
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(rows.view(np.int16)).view(torch.bfloat16)


def _check(torch, name: str) -> int | None:
    """The one NaN pattern torch's ``name`` produces when every other bit of its results equals
    meshnn's numpy path on the check vectors; None when anything differs or torch fails."""
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    partners = np.random.default_rng(0).permutation(every)
    a = np.concatenate([every, every, every, every])
    b = np.concatenate([partners, every, every ^ 0x8000, np.roll(every, 1)])  # random, equal, negated, next
    with np.errstate(all="ignore"):
        want = float32_to_bfloat16_bits(_NUMPY[name](bfloat16_bits_to_float32(a), bfloat16_bits_to_float32(b)))
    got = np.empty_like(want)
    try:
        kernel = getattr(torch, _TORCH_NAMES[name])
        kernel(_as_bfloat16(torch, a), _as_bfloat16(torch, b), out=_as_bfloat16(torch, got))
    except Exception:  # any failure means: do not use torch
        return None
    nan = (want & 0x7FFF) > 0x7F80
    patterns = set(np.unique(got[nan]).tolist())
    if not np.array_equal(got[~nan], want[~nan]) or len(patterns) != 1:
        return None
    pattern = patterns.pop()
    return pattern if (pattern & 0x7FFF) > 0x7F80 else None
