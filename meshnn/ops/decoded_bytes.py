"""A block-float weight's bytes let go while its decoded memo stands for them.

When a buffer's decoded values give back every one of its bytes (TILE, 32 x 32 tiles, no padding,
tiles as the packer writes them: :func:`~meshnn.formats.block_float.canonical_tiles`), the
:class:`~meshnn.ops.decoded.Decoded` memo can stand for them: the bytes' memory goes back to the
system and the buffer's deferred write (:meth:`MeshBuffer.drop_bytes`) packs the values again,
bit for bit, when anything reads or writes the bytes.  The memo then counts only what it holds
beyond the bytes against the bound (:meth:`~meshnn.ops.decoded.DecodedCache.credit`).

May import: the byte formats, :mod:`meshnn.tensor` (the spec), :mod:`meshnn.ops.decoded` and
:mod:`meshnn.ops.values`.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from meshnn.formats.block_float import BlockFloatFormat, canonical_tiles
from meshnn.formats.layout import Layout
from meshnn.ops.decoded import DECODED
from meshnn.ops.values import encode_values
from meshnn.tensor.spec import TensorSpec


def keep(buffer: Any, rows: np.ndarray, spec: TensorSpec, values: Any, *, sides: bool, let_go: bool = True) -> None:
    """Keep ``values`` as ``buffer``'s Decoded memo when the bound allows; and, ``let_go`` (a
    weight: its bytes are not written again), when they stand for every byte of a block-float
    buffer (canonical tiles, no padding), let the bytes go: the memo makes them again when
    anything asks (:func:`_maker`), and counts that much less.  (A KV cache keeps its bytes: the
    updates write rows of them at every step.)"""
    if buffer.has_deferred_write():
        buffer.settle()  # (bytes an earlier memo stood in for: back before another stands in)
    memo = DECODED.put(buffer, spec, values, sides=sides)
    if memo is None or not let_go or not spec.dtype.is_block_float or not _stands_for_bytes(rows, spec):
        return
    size = spec.compute_packed_buffer_size_bytes()
    maker = _maker(values, sides, spec, rows.shape[0], size, rows[:, size:].copy())
    if buffer.drop_bytes(maker):
        DECODED.credit(memo, rows.shape[0] * rows.shape[1])


def _stands_for_bytes(rows: np.ndarray, spec: TensorSpec) -> bool:
    """Whether a block-float buffer's decoded values give back all of its bytes: TILE, 32 x 32
    tiles, no padding, tiles as the packer writes them (:func:`canonical_tiles`)."""
    if spec.layout is not Layout.TILE or spec.tile.tile_shape != (32, 32) or spec.explicit_padded_shape is not None:
        return False
    if tuple(spec.padded_shape) != tuple(spec.shape) or len(spec.shape) < 2:
        return False
    size = spec.compute_packed_buffer_size_bytes()
    fmt = BlockFloatFormat.of(spec.dtype)
    tiles = rows[:, :size].reshape(-1, fmt.tile_size(1024))
    return canonical_tiles(tiles, fmt, 1024)


def _maker(values: Any, sides: bool, spec: TensorSpec, k: int, size: int, tail: np.ndarray):
    """``write(slab)``: the bytes of ``values`` (a Decoded memo's, see :class:`Decoded`) packed
    again, a device at a time, and the bytes past the tiles as they were."""

    def write(slab: np.ndarray) -> None:
        torch = sys.modules["torch"]
        for i in range(k):
            if sides:
                n = values.shape[1] // k
                one = values[:, i * n : (i + 1) * n]
            else:
                one = values[0 if values.shape[0] == 1 else i]
            slab[i, :size] = encode_values(_floats(torch, one).reshape(1, *spec.shape), spec)[0]
        slab[:, size:] = tail

    return write


def _floats(torch: Any, values: Any) -> np.ndarray:
    """A Decoded memo's torch values (bfloat16 or float32) as a float32 numpy array."""
    if values.dtype == torch.float32:
        return values.contiguous().numpy()
    bits = values.contiguous().view(torch.int16).numpy().view(np.uint16)
    return np.left_shift(bits.astype(np.uint32), 16).view(np.float32)
