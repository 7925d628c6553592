"""The packer's float32 -> fp8_e4m3 conversion, as Tenstorrent's Blackhole packer writes an
``Fp8_e4m3`` circular buffer: the float32 mantissa truncated to its top 3 bits (rounding toward
zero), not rounded to nearest as the host conversion (:mod:`meshnn.formats.elements`) does.

The rest follows the format's host rules: magnitudes at or above 448 saturate to +-448 (the format
has no infinity; 0x7F / 0xFF are NaN), magnitudes below the smallest normal 2**-6 become a signed
zero, NaN stays NaN.  The result is given as float32 values on the e4m3 grid, so the host encoding
of them (:func:`meshnn.formats.elements.to_storage`) is exact and gives the packer's bytes.

Part of the ``formats`` layer; imports ``meshnn.formats`` (elements).
"""

from __future__ import annotations

import numpy as np

from meshnn.formats.elements import FP8_E4M3_MAX, FP8_E4M3_MIN_NORMAL

_KEEP_3_MANTISSA_BITS = np.uint32(0xFFF0_0000)
"""Sign, 8 exponent bits and the top 3 of float32's 23 mantissa bits."""


def truncated_e4m3(values: np.ndarray) -> np.ndarray:
    """``values`` (float32, any shape) as the e4m3 values the packer's truncation gives: float32
    values each exactly representable in fp8_e4m3 (NaN where ``values`` is NaN)."""
    x = np.clip(np.asarray(values, np.float32), -FP8_E4M3_MAX, FP8_E4M3_MAX)  # (NaN passes through)
    out = (np.ascontiguousarray(x).view(np.uint32) & _KEEP_3_MANTISSA_BITS).view(np.float32)
    out = np.where(np.isnan(x), x, out)  # (a NaN of low payload bits alone would be masked to infinity)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(out) < FP8_E4M3_MIN_NORMAL, np.copysign(np.float32(0), out), out)
