"""bfloat16 as ttnn rounds it: float32 <-> bfloat16 bits, bit-exact with ttnn 0.81.1 and vectorised.

float32 -> bfloat16 rounds to nearest, ties to even, on the upper 16 bits (ml_dtypes does the
rounding); subnormals are rounded, not flushed; overflow gives inf; **every NaN becomes 0x7FC0**
(positive, payload dropped).  bfloat16 -> float32 is ``bits << 16`` (NaNs kept).  When the program
uses torch, large casts run on torch's threads instead (checked once to round bit for bit alike).

Part of the ``formats`` layer; imports only ``meshnn.errors``.
"""

from __future__ import annotations

import functools
import sys
import warnings

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError

BFLOAT16_NAN = 0x7FC0
"""The one NaN pattern ttnn's float32 -> bfloat16 conversion produces."""


@functools.cache
def _canonical_nans() -> bool:
    return _ml_dtypes_nans_are_canonical()


def _ml_dtypes_nans_are_canonical() -> bool:
    """Whether ml_dtypes turns every float32 NaN into 0x7FC0 or 0xFFC0 (checked, not assumed)."""
    import ml_dtypes  # at first use, not with meshnn (about 0.9 s for ml_dtypes 0.7)

    nan_bits = np.array([0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0xFF800001, 0xFFC12345], np.uint32)
    with np.errstate(invalid="ignore"):
        converted = nan_bits.view(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
    return set(converted.tolist()) <= {0x7FC0, 0xFFC0}


def quiet_bfloat16_nans(bits: np.ndarray, produced: int | None = None) -> None:
    """Rewrite, in place, every NaN of bfloat16 ``bits`` (uint16, C-contiguous) into ttnn's one
    NaN, 0x7FC0.  ``produced``: the only non-canonical NaN pattern the producing cast makes (None:
    the ml_dtypes cast's)."""
    if not bits.flags.c_contiguous:
        raise MeshnnValueError("quiet_bfloat16_nans rewrites in place and needs a C-contiguous array")
    flat = bits.reshape(-1)
    step = 1 << 20
    mask = np.empty(min(step, flat.size), bool)
    for start in range(0, flat.size, step):
        part = flat[start : start + step]
        found = mask[: part.size]
        if produced is not None:
            np.equal(part, produced, out=found)
        elif _canonical_nans():
            np.equal(part, 0xFFC0, out=found)
        else:
            np.greater(part & 0x7FFF, 0x7F80, out=found)
        if found.any():
            np.putmask(part, found, BFLOAT16_NAN)


TORCH_CAST_MIN_VALUES = 1 << 14
"""Below this many values the ml_dtypes cast is used (a torch call costs more than it saves)."""


@functools.cache
def _torch_cast_nan() -> int | None:
    """The one NaN pattern torch's float32 -> bfloat16 cast makes, if torch (already imported by
    the program: meshnn never imports it for this) rounds every other value exactly as ml_dtypes
    does; None when torch is absent or differs.  Checked once, on values that include every class
    of input: zeros, subnormals, ties to even, the largest finite values, infinities and NaNs."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    rng = np.random.default_rng(0)
    special = np.array(
        [0, 0x80000000, 1, 0x807FFFFF, 0x00008000, 0x00018000, 0x3F808000, 0x3F818000, 0x7F7FFFFF, 0x7F7F8000,
         0x7F800000, 0xFF800000, 0x7F800001, 0x7FC00000, 0xFFFFFFFF, 0xFFC12345, 0x7FBFFFFF],
        np.uint32,
    )  # fmt: skip
    bits = np.concatenate([np.tile(special, 64), rng.integers(0, 2**32, 1 << 14, dtype=np.uint64).astype(np.uint32)])
    values = bits.view(np.float32)
    try:
        got = torch.from_numpy(values.copy()).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    except Exception:  # any failure means: do not use torch
        return None
    import ml_dtypes  # at first use

    with np.errstate(invalid="ignore"):
        want = values.astype(ml_dtypes.bfloat16).view(np.uint16)
    nan = np.isnan(values)
    patterns = set(np.unique(got[nan]).tolist()) - {BFLOAT16_NAN}
    if np.any(got[~nan] != want[~nan]) or len(patterns) > 1:
        return None
    return patterns.pop() if patterns else BFLOAT16_NAN


def _torch_cast_into(out: np.ndarray, values: np.ndarray) -> bool:
    """Cast float32 ``values`` into bfloat16 bits ``out`` (same shape, any non-negative strides)
    with torch when it is in use and verified; False when it was not used."""
    if values.size < TORCH_CAST_MIN_VALUES or "torch" not in sys.modules:
        return False
    nan = _torch_cast_nan()
    if nan is None or not out.flags.c_contiguous or any(st < 0 for st in values.strides):
        return False
    torch = sys.modules["torch"]
    target = torch.from_numpy(out.view(np.int16)).view(torch.bfloat16)
    with warnings.catch_warnings():  # a read-only source is only read
        warnings.simplefilter("ignore", UserWarning)
        source = torch.from_numpy(values)
    target.copy_(source)
    if nan != BFLOAT16_NAN:
        quiet_bfloat16_nans(out, produced=nan)
    return True


def float32_to_bfloat16_bits(values: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """bfloat16 bits (uint16, ``values``' shape) of float32 ``values`` (any strides), as ttnn
    rounds them.  ``out``: C-contiguous uint16 of ``values``' shape.

    The cast is ml_dtypes', or torch's when the program uses torch and torch was checked to round
    bit for bit the same (:func:`_torch_cast_nan`): torch's copies run on several threads and
    tilize in the same pass."""
    if values.dtype != np.float32:
        raise MeshnnTypeError(f"float32_to_bfloat16_bits takes float32 values, got {values.dtype}")
    if out is None:
        out = np.empty(values.shape, np.uint16)
    if _torch_cast_into(out, values):
        return out
    import ml_dtypes  # at first use

    with np.errstate(invalid="ignore"):  # NaN -> bfloat16 NaN is wanted, not an error
        np.copyto(out.view(ml_dtypes.bfloat16), values, casting="unsafe")
    quiet_bfloat16_nans(out)
    return out


def bfloat16_bits_to_float32(bits: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """float32 values of bfloat16 ``bits`` (uint16): exactly ``bits << 16``, NaN payloads kept."""
    if out is None:
        out = np.empty(bits.shape, np.float32)
    np.left_shift(bits.view(np.uint16), 16, dtype=np.uint32, out=out.view(np.uint32))
    return out


def round_to_bfloat16(values: np.ndarray, *, in_place: bool = False) -> np.ndarray:
    """float32 ``values`` (C-contiguous) rounded to bfloat16 as ttnn rounds them, still float32:
    exactly ``bfloat16_bits_to_float32(float32_to_bfloat16_bits(values))`` (nearest, ties to
    even; every NaN becomes 0x7FC0).  The high 16 bits of each result are its bfloat16 bits.
    ``in_place``: round ``values`` itself (it must be writable) and return it."""
    if values.dtype != np.float32 or not values.flags.c_contiguous:
        raise MeshnnTypeError("round_to_bfloat16 takes C-contiguous float32 values")
    if not values.size:
        return values if in_place else values.copy()
    # First, as a NaN's sum below can carry into an infinity or a zero: where the NaNs are (the
    # maximum is NaN when any value is; one read, no mask written, in the common case of none).
    nan = np.isnan(values) if np.isnan(np.maximum.reduce(values, axis=None)) else None
    bits = values.view(np.uint32)
    carry = np.right_shift(bits, 16)
    carry &= 1
    carry += 0x7FFF  # round half to even: 0x7FFF, plus 1 when the kept part is odd
    out = np.add(bits, carry, out=bits if in_place else carry)
    out &= 0xFFFF0000
    if nan is not None:
        out[nan] = BFLOAT16_NAN << 16
    return out.view(np.float32)


def bf16(values: np.ndarray) -> np.ndarray:
    """Any real ``values`` (any layout or float dtype) rounded to bfloat16 as ttnn rounds them, as a
    new float32 array: :func:`round_to_bfloat16` of their contiguous float32 copy (a kernel's
    16-bit result, written back to float32 for the next step)."""
    return round_to_bfloat16(np.ascontiguousarray(values, dtype=np.float32))
