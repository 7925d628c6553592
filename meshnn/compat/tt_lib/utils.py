"""``tt_lib.utils``: host helpers of tt-metal's older tests — rounding up to tiles, padding activations and
weights to whole 32 x 32 tiles, tolerant comparisons.  ``tilize`` / ``untilize`` / ``tilize_to_list`` are
identities (deprecated in tt-metal: the tensor layer lays out torch data itself)."""

from __future__ import annotations

import math
import struct
import warnings
from typing import Any

import torch

import meshnn

TILE = 32
"""A tile's height and width, elements."""


def _nearest_32(x: int) -> int:
    """``x`` rounded up to a multiple of 32."""
    return _nearest_y(x, TILE)


def _nearest_y(x: int, y: int) -> int:
    """``x`` rounded up to a multiple of ``y``."""
    return math.ceil(x / y) * y


def divup(a: int, b: int) -> int:
    """``a / b`` rounded up (integers)."""
    return (a + b - 1) // b


def roundup(a: int, b: int) -> int:
    """``a`` rounded up to a multiple of ``b`` (integers)."""
    return divup(a, b) * b


def roundup32(a: int) -> int:
    """``a`` rounded up to a multiple of 32."""
    return roundup(a, TILE)


def float_to_bits(x: float) -> int:
    """The float32 bits of ``x`` as a signed 32-bit integer."""
    return struct.unpack(">l", struct.pack(">f", x))[0]


def _checked(x: Any) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"tt_lib.utils: the input must be a torch.Tensor, not {type(x).__name__}")
    if not 1 <= x.dim() <= 4:
        raise ValueError(f"tt_lib.utils: only tensors of 1 to 4 dims are padded, not {x.dim()}")
    return x


def _padded(x: torch.Tensor, leading: tuple[int, ...], rows: int, cols: int) -> torch.Tensor:
    """Zeros of ``leading + (rows rounded up, cols rounded up)`` (float32) with ``x`` (viewed as
    ``leading + (rows, cols)``) in the top-left corner of its last two dims."""
    out = torch.zeros(*leading, _nearest_32(rows), _nearest_32(cols))
    out[..., :rows, :cols] = x.reshape(*leading, rows, cols)
    return out


def pad_activation(x: torch.Tensor) -> torch.Tensor:
    """An activation padded with zeros to whole tiles, 4-D: a vector ``(F,)`` as ``(1, 1, 32, F32)``
    (in row 0), ``(B, F)`` as ``(B, 1, 32, F32)`` (row 0), ``(B, Y, X)`` as ``(B, 1, Y32, X32)``,
    ``(N, C, Y, X)`` as ``(N, C, Y32, X32)``; ``F32`` is ``F`` rounded up to 32."""
    x = _checked(x)
    if x.dim() == 1:
        return _padded(x, (1, 1), 1, x.shape[0])
    if x.dim() == 2:
        return _padded(x, (x.shape[0], 1), 1, x.shape[1])
    if x.dim() == 3:
        return _padded(x, (x.shape[0], 1), x.shape[1], x.shape[2])
    return _padded(x, tuple(x.shape[:2]), x.shape[2], x.shape[3])


def pad_weight(x: torch.Tensor) -> torch.Tensor:
    """A weight or bias padded with zeros to whole tiles: a vector ``(F,)`` as ``(1, 1, 32, F32)``
    (in row 0), a matrix ``(R, C)`` as ``(1, 1, R32, C32)``, 3-D and 4-D tensors in their last two
    dims (3-D stays 3-D)."""
    x = _checked(x)
    if x.dim() == 1:
        return _padded(x, (1, 1), 1, x.shape[0])
    if x.dim() == 2:
        return _padded(x, (1, 1), x.shape[0], x.shape[1])
    return _padded(x, tuple(x.shape[:-2]), x.shape[-2], x.shape[-1])


def _deprecated(name: str) -> None:
    warnings.warn(
        f"tt_lib.utils.{name}: torch data is laid out by the tensor layer; this returns its input",
        DeprecationWarning,
        stacklevel=3,
    )


def tilize(x: torch.Tensor) -> torch.Tensor:
    """``x`` itself (deprecated in tt-metal: the tensor layer tilizes torch data)."""
    _deprecated("tilize")
    return x


def untilize(x: torch.Tensor) -> torch.Tensor:
    """``x`` itself (deprecated in tt-metal, as :func:`tilize`)."""
    _deprecated("untilize")
    return x


def tilize_to_list(x: torch.Tensor) -> list:
    """``x``'s elements as a flat list (deprecated in tt-metal, as :func:`tilize`)."""
    _deprecated("tilize_to_list")
    return x.reshape(-1).tolist()


def tt2torch(ttx: meshnn.Tensor) -> torch.Tensor:
    """A ttnn tensor (host or device, any layout) as torch."""
    return meshnn.to_torch(ttx)


tt2torch_rm = tt2torch


def is_close(a: torch.Tensor, b: torch.Tensor, rtol=8e-2, atol=8e-2, max_mag=4.0, max_mag_fraction=0.02):
    """Whether every element of ``a`` is close to ``b``'s: within ``atol``, or ``|a| / |b|`` or
    ``(|a| + 1) / (|b| + 1)`` within ``rtol`` of 1, or within ``max_mag * max_mag_fraction``.
    Returns a 0-dim bool tensor."""
    absdiff = (a - b).abs()
    ratio = (a.abs() / b.abs() - 1.0).abs() < rtol
    shifted = ((a.abs() + 1.0) / (b.abs() + 1.0) - 1.0).abs() < rtol
    close = (absdiff < atol) | ratio | shifted | (absdiff < max_mag * max_mag_fraction)
    return torch.all(close)


def find_closest_largest_divisor(num: int, start_divisor: int) -> int:
    """The largest divisor of ``num`` not above ``start_divisor``."""
    divisor = start_divisor
    while num % divisor:
        divisor -= 1
    return divisor


def find_closest_largest_divisor_with_num_padding(num: int, start_divisor: int) -> int:
    """The largest ``d <= start_divisor`` for which padding ``num`` to a multiple of ``d`` adds less
    than one share (``padded / d``)."""
    divisor = start_divisor
    while (_nearest_y(num, divisor) - num) >= _nearest_y(num, divisor) // divisor:
        divisor -= 1
    return divisor
