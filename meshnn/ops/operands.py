"""The bfloat16 operands of a running kernel's matrix products: an input's values as a torch
bfloat16 tensor, exact for the dtypes whose values are all bfloat16 values
(:data:`~meshnn.ops.decoded.BF16_EXACT`), taken from the buffer's memo when it has one and kept
as a :class:`~meshnn.ops.decoded.Decoded` memo when decoded here (a weight: decoded once).

:func:`bf16_values` gives ``(k, *spec.shape)`` values; :func:`bf16_sides` a column-parallel
weight's ``k`` matrices side by side, ``(K, k * N)``, for one product with an input that is the
same on every device.  Both give the same values, bit for bit, whether they come from a memo or
from the bytes (memos only save time).

May import: the byte formats, :mod:`meshnn.tensor` (the spec), :mod:`meshnn.ops.memo`,
:mod:`meshnn.ops.decoded` and :mod:`meshnn.ops.values`.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from meshnn.formats.bfp_bf16 import unpack_bf16_rows
from meshnn.formats.block_float import BlockFloatFormat, canonical_tiles
from meshnn.formats.codec import decode
from meshnn.formats.layout import Layout
from meshnn.host.threads import each_chunk
from meshnn.mesh.slab import EQUAL_ROWS
from meshnn.ops.decoded import DECODED, Decoded
from meshnn.ops.memo import BOUND_ROWS, bound_rows, known_values
from meshnn.ops.values import decoded_floats, encode_values
from meshnn.tensor.spec import TensorSpec


def bf16_torch() -> Any | None:
    """torch, when the program imported it and its bfloat16 products round as meshnn rounds
    (checked once: :func:`_rounds_to_nearest_even`); else None (numpy's float32 products run)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    agrees = _CHECKED.get(id(torch))
    if agrees is None:
        agrees = _CHECKED[id(torch)] = _rounds_to_nearest_even(torch)
    return torch if agrees else None


_CHECKED: dict[int, bool] = {}


def _rounds_to_nearest_even(torch: Any) -> bool:
    """Whether torch's bfloat16 ``matmul`` rounds its float32 sums to the nearest bfloat16, ties
    to even (products whose exact sums are ties, halfway values and carries), as meshnn rounds."""
    one, tie, ulp = 1.0, 2.0**-8, 2.0**-7
    x = torch.tensor([[one, tie], [one + ulp, tie], [one, 3 * tie], [-one - ulp, -tie]], dtype=torch.bfloat16)
    w = torch.tensor([[1.0], [1.0]], dtype=torch.bfloat16)
    want = [one, one + 2 * ulp, one + 2 * ulp, -one - 2 * ulp]
    try:
        got = torch.matmul(x, w).float().flatten().tolist()
    except RuntimeError:
        return False
    return got == want


def _as_torch(torch: Any, array: np.ndarray) -> Any:
    """``array`` (float32, any non-negative strides, possibly read-only) as a torch bfloat16 tensor
    (exact: its values are bfloat16 values, so their high halves are their bfloat16 bits).  numpy
    does it: a single-threaded pass costs no waiting on torch's threads for small operands."""
    if array.ndim and array.strides[0] == 0 and array.shape[0] > 1:
        return _as_torch(torch, array[:1]).expand(*array.shape)
    bits = np.right_shift(np.ascontiguousarray(array, np.float32).view(np.uint32), 16).astype(np.uint16)
    return torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)


def bf16_values(rows: np.ndarray, spec: TensorSpec, torch: Any) -> Any:
    """``(k, *spec.shape)`` bfloat16 values of a running kernel's input ``rows`` (``spec.dtype``
    one of ``BF16_EXACT``): from its buffer's memo (a Decoded one as it is, a float32 one
    narrowed), else decoded from the bytes and kept as a Decoded memo when the bound allows."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    k = rows.shape[0]
    if bound is not None:
        decoded = DECODED.get(bound.buffer, spec)
        if decoded is not None:
            return _rows_of(decoded, k, bound.first)
        known = known_values(rows, spec)
        if known is not None:
            return _as_torch(torch, known)
    values = torch.empty((k, *spec.shape), dtype=torch.bfloat16)
    _from_bytes(rows, spec, torch, values)
    if bound is not None and bound.keep and (not bound.first or bound.buffer.memo is EQUAL_ROWS):
        _keep(bound.buffer, rows, spec, values, sides=False)  # (first: every device holds its bytes)
    return values


def _rows_of(decoded: Decoded, k: int, first: bool) -> Any:
    """A Decoded memo's values for ``k`` rows of its buffer (the first device's only when ``first``)."""
    if decoded.equal_rows:
        return decoded.values.expand(k, *decoded.values.shape[1:])
    stacked = decoded.stacked(_devices(decoded))
    return stacked[:1] if first else stacked


def _devices(decoded: Decoded) -> int:
    """How many devices' values a Decoded memo holds."""
    if decoded.sides:
        return decoded.values.shape[1] // decoded.spec.shape[-1]
    return decoded.values.shape[0]


def bf16_sides(rows: np.ndarray, spec: TensorSpec, torch: Any) -> Any:
    """A weight's ``k`` matrices ``(K, N)`` (its ``(k, K, N)`` bfloat16 values) side by side, as one
    C-contiguous ``(K, k * N)`` bfloat16 matrix: its buffer's memo in that layout, or made from
    its values (and kept in that layout when the buffer keeps a memo)."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    k = rows.shape[0]
    if bound is not None:
        decoded = DECODED.get(bound.buffer, spec)
        if decoded is not None and decoded.sides:
            return decoded.values
        known = None if decoded is not None else known_values(rows, spec)
        values = decoded.stacked(k) if decoded is not None else None if known is None else _as_torch(torch, known)
    else:
        values = None
    big_k, n = spec.shape[-2], spec.shape[-1]
    if values is not None:
        sides = values.permute(1, 0, 2).contiguous().reshape(big_k, k * n)
    else:  # decoded from the bytes straight into the side-by-side layout
        sides = torch.empty((big_k, k * n), dtype=torch.bfloat16)
        _from_bytes(rows, spec, torch, sides.view(big_k, k, n).permute(1, 0, 2))
    if bound is not None and bound.keep and not bound.first:
        _keep(bound.buffer, rows, spec, sides, sides=True)
    return sides


DECODE_CHUNK_VALUES = 1 << 22
"""Values decoded at a time into a bfloat16 operand (float32 scratch of 16 MiB, not the weight's)."""


def _from_bytes(rows: np.ndarray, spec: TensorSpec, torch: Any, out: Any) -> None:
    """Decode ``rows`` into ``out`` (a ``(k, *spec.shape)`` bfloat16 tensor, any strides): a TILE
    tensor without padding a block of tile rows at a time, the blocks shared out over the host
    threads (block floats straight to bfloat16: :func:`unpack_bf16_rows`; the float32 scratch of
    anything else stays small), anything else whole."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is not None and bound.buffer.has_deferred_write():
        bound.buffer.settle()
    shape = tuple(spec.shape)
    height, width = spec.tile.tile_shape
    plain = spec.layout is Layout.TILE and len(shape) >= 2 and spec.explicit_padded_shape is None
    if not plain or tuple(spec.padded_shape) != shape or shape[-2] % height or shape[-1] % width:
        out.copy_(_as_torch(torch, decoded_floats(rows, spec)))
        return
    n, matrix_rows = shape[-1], int(np.prod(shape[:-1]))
    tile_size = spec.tile.get_tile_size(spec.dtype)
    row_bytes = (n // width) * tile_size  # a tile row of the 2-D view
    step = max(1, DECODE_CHUNK_VALUES // (height * n))
    bits = out.reshape(out.shape[0], matrix_rows, n).view(torch.int16).numpy().view(np.uint16)
    fmt = BlockFloatFormat.of(spec.dtype) if spec.dtype.is_block_float and spec.tile.tile_shape == (32, 32) else None
    chunks = [(d, r) for d in range(rows.shape[0]) for r in range(0, matrix_rows // height, step)]

    def work(chunk: tuple[int, int]) -> None:
        device, first = chunk
        count = min(step, matrix_rows // height - first)
        raw = rows[device, first * row_bytes : (first + count) * row_bytes]
        target = bits[device, first * height : (first + count) * height]
        if fmt is not None and unpack_bf16_rows(raw.reshape(-1, tile_size), fmt, target):
            return
        values = decode(np.ascontiguousarray(raw), spec.dtype, Layout.TILE, (count * height, n), tile=spec.tile)
        target[...] = np.right_shift(values.astype(np.float32, copy=False).view(np.uint32), 16)

    each_chunk(torch, chunks, work)


def _keep(buffer: Any, rows: np.ndarray, spec: TensorSpec, values: Any, *, sides: bool) -> None:
    """Keep ``values`` as ``buffer``'s Decoded memo when the bound allows; and when they stand
    for every byte of a block-float buffer (canonical tiles, no padding), let the bytes go: the
    memo makes them again when anything asks (:func:`_maker`), and counts that much less."""
    if buffer.has_deferred_write():
        buffer.settle()  # (bytes an earlier memo stood in for: back before another stands in)
    memo = DECODED.put(buffer, spec, values, sides=sides)
    if memo is None or not spec.dtype.is_block_float or not _stands_for_bytes(rows, spec):
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
            bits = one.contiguous().view(torch.int16).numpy().view(np.uint16)
            floats = np.left_shift(bits.astype(np.uint32), 16).view(np.float32)
            slab[i, :size] = encode_values(floats.reshape(1, *spec.shape), spec)[0]
        slab[:, size:] = tail

    return write
