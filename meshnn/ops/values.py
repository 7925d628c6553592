"""The values of an op's inputs and outputs: slab rows decoded to numpy values and values encoded
back into slab rows, in a tensor spec's format.

Kernels decode inputs to float32 (integers stay integers), compute, and encode the results into
the output dtype with the host conversion rules, so results round exactly as ``ttnn.from_torch``
would round them.  Two views of a shard's bytes:

- *logical*: :func:`logical_values` / :func:`write_values`, ``(k, *spec.shape)`` values of ``k``
  devices (untilized);
- *storage order*: :func:`stored_elements` / :func:`store_elements`, ``(k, stored elements)``
  with tiles, faces and padding as stored (element-wise kernels never untilize).

Memos (:mod:`meshnn.ops.memo`): while a kernel runs over whole slabs, :func:`logical_values` of an
input takes the values its buffer's memo holds instead of decoding the bytes (and leaves a memo
when it did decode), and :func:`write_values` leaves the rounded output values as the output
buffer's memo.  The bytes are written as before: a memo only saves decoding them.

May import: the byte formats and tensor specs of the layers below the ops, and
:mod:`meshnn.ops.memo`.
"""

from __future__ import annotations

import sys

import numpy as np

from meshnn.formats.bfloat16 import bfloat16_bits_to_float32, float32_to_bfloat16_bits, round_to_bfloat16
from meshnn.formats.bfp_tiles import pack_bfp, unpack_bfp
from meshnn.formats.block_float import BlockFloatFormat
from meshnn.formats.codec import decode, encode
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, padded_matrices, tile_view, tilize
from meshnn.ops.memo import BOUND_ROWS, MEMO_MIN_BYTES, VALUES_MEMO, bound_rows, known_values, settled
from meshnn.tensor.spec import TensorSpec


def _rank_for_tiles(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The per-device shape with a leading device axis, as tiles see it (rank-1 is [1, N])."""
    if len(shape) >= 2:
        return shape
    return (1, *shape) if shape else (1, 1)


_PLAIN = (DataType.FLOAT32, DataType.INT32, DataType.UINT32, DataType.UINT16, DataType.UINT8, DataType.INT8)


def logical_values(rows: np.ndarray, spec: TensorSpec, *, as_float: bool = True) -> np.ndarray:
    """``(k, *spec.shape)`` values of ``k`` devices' bytes ``rows`` (float32, or the integer type).

    Row-major float32 and integer shards are returned as a read-only view of ``rows`` (no copy);
    values from a memo are read-only too.

    A spec with an explicit padded shape holds the padded array; its logical window is the origin
    corner."""
    if BOUND_ROWS:
        bound = bound_rows(rows)
        if bound is not None and not spec.dtype.is_float:
            settled(rows)
            bound = None
        if bound is not None:
            known = known_values(rows, spec)
            if known is not None:
                return known
            if bound.buffer.has_deferred_write():
                bound.buffer.settle()  # (a view of the bytes under another spec)
            values = _decoded(rows, spec, as_float=True)
            if bound.keep and not bound.first and not np.may_share_memory(values, rows):
                VALUES_MEMO.put(bound.buffer, spec, values)
            return values
    return _decoded(rows, spec, as_float=as_float)


def decoded_floats(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, *spec.shape)`` float32 values of a running kernel's input ``rows`` decoded from the
    bytes (its buffer's deferred write done first), leaving no memo."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is not None and bound.buffer.has_deferred_write():
        bound.buffer.settle()
    return _decoded(rows, spec, as_float=True)


def _decoded(rows: np.ndarray, spec: TensorSpec, *, as_float: bool) -> np.ndarray:
    k = rows.shape[0]
    size = spec.compute_packed_buffer_size_bytes()
    stored = tuple(spec.encoded_shape)
    if spec.layout is Layout.ROW_MAJOR and spec.explicit_padded_shape is None and spec.dtype in _PLAIN:
        view = rows[:, :size].view(spec.dtype.storage_dtype).reshape((k, *stored))
        view.flags.writeable = False  # the device's own bytes: a kernel only reads its inputs
        return view
    flat = np.ascontiguousarray(rows[:, :size]).reshape(-1)
    stacked = (k, *_rank_for_tiles(stored)) if spec.layout is Layout.TILE else (k, *stored)
    values = decode(flat, spec.dtype, spec.layout, stacked, tile=spec.tile).reshape((k, *stored))
    if spec.explicit_padded_shape is not None:
        values = values[(slice(None), *(slice(0, d) for d in spec.shape))]
    if as_float and spec.dtype.is_float:
        return values.astype(np.float32, copy=False)
    return values


def write_values(
    out: np.ndarray, values: np.ndarray, spec: TensorSpec, *, exact: bool = False, owned: bool = False
) -> None:
    """Write ``(k, *spec.shape)`` values into the output rows ``out`` in ``spec``'s format, and,
    when ``out`` is a running kernel's whole output slab, leave the rounded values (what the bytes
    decode to) as its buffer's memo.  ``exact``: the values are already of ``spec.dtype``'s value
    set (moved, not computed: decoded from a tensor of that dtype), so rounding would not change
    them and is skipped.  ``owned``: ``values`` is a view (e.g. transposed) of an array the kernel
    made for this output alone; it is rounded and kept as it is, not copied into C order first."""
    size = spec.compute_packed_buffer_size_bytes()
    bound = bound_rows(out) if BOUND_ROWS else None
    dtype = spec.dtype
    if (
        bound is None
        or dtype not in (DataType.BFLOAT16, DataType.FLOAT32)
        or spec.explicit_padded_shape is not None
        or (dtype is DataType.FLOAT32 and spec.layout is Layout.ROW_MAJOR)  # its bytes are its values
        or values.size * 4 < MEMO_MIN_BYTES
    ):
        out[:, :size] = encode_values(values, spec)
        return
    k = values.shape[0]
    base = values.base if owned else None
    if (
        base is not None
        and base.dtype == np.float32
        and base.flags.c_contiguous
        and base.flags.writeable
        and base.size == values.size
    ):
        if dtype is DataType.BFLOAT16 and not exact:
            round_to_bfloat16(base, in_place=True)  # the same elements, in the base's order
        rounded = values.reshape((k, *tuple(spec.shape)))  # (a view still: only leading axes are split)
    else:
        values = np.ascontiguousarray(values, dtype=np.float32).reshape((k, *tuple(spec.shape)))
        own = values.base is None and values.flags.writeable  # the kernel's own result: kept (rounded in place)
        if dtype is DataType.BFLOAT16 and not exact:
            rounded = round_to_bfloat16(values, in_place=own)
        else:  # (a view may be of another buffer's bytes or memo: copied, so this memo stays its own)
            rounded = values if own else values.copy()
    bits = rounded
    if dtype is DataType.BFLOAT16:
        bits = rounded.view(np.uint16).reshape((*rounded.shape, 2))[..., _HIGH_HALF]  # the bfloat16 bits
    kept = VALUES_MEMO.put(bound.buffer, spec, rounded)  # (first: one row, which launch copies to every device)
    if kept and bound.defer:
        bound.buffer.defer(lambda slab: _write_elements(slab[:, :size], bits, spec))
        return
    _write_elements(out[:, :size], bits, spec)


def copied_values(rows: np.ndarray, out: np.ndarray, spec: TensorSpec, out_spec: TensorSpec) -> bool:
    """A byte copy of a running kernel's input ``rows`` (of ``spec``) into ``out`` (of
    ``out_spec``: the same spec in another memory config, so the same bytes) made from the
    input's memo, when the input's bytes are still its producer's deferred write of those values:
    the copy's bytes are then what that write would write, and the output keeps the values as its
    memo (its own bytes deferred in turn).  False, nothing done, otherwise (then copy the bytes,
    :func:`~meshnn.ops.memo.settled` first)."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is None or not bound.buffer.has_deferred_write():
        return False
    known = known_values(rows, spec)
    if known is None or spec.with_memory_config(out_spec.memory_config) != out_spec:
        return False
    write_values(out, known, out_spec, exact=True)
    return True


def _write_elements(out: np.ndarray, bits: np.ndarray, spec: TensorSpec) -> None:
    """Write ``(k or 1, *spec.shape)`` elements ``bits`` (the storage dtype's bits, any strides) into
    ``(k, packed size)`` rows ``out``, tilized when ``spec`` is TILE (one row goes to every row)."""
    dtype = spec.dtype
    k = out.shape[0]
    elements = out.view(dtype.storage_dtype)
    if spec.layout is Layout.ROW_MAJOR:
        target = elements.reshape((k, *bits.shape[1:]))
        np.copyto(target, bits.view(dtype.storage_dtype))
        return
    stacked = bits.reshape((bits.shape[0], *_rank_for_tiles(tuple(spec.shape)))).view(dtype.storage_dtype)
    grid = tile_view(padded_matrices(stacked, spec.tile, 0), spec.tile)
    target = elements.reshape((k, -1))
    if bits.shape[0] == k:
        np.copyto(target.reshape(grid.shape), grid)
        return
    np.copyto(target[:1].reshape(grid.shape), grid)  # one device's tiles, then copied to the others
    target[1:] = target[0]


_HIGH_HALF = 1 if sys.byteorder == "little" else 0  # which uint16 of a float32 holds its bfloat16 bits


def encode_values(values: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, packed size)`` bytes of ``(k, *spec.shape)`` values in ``spec``'s format (or of
    ``(k, *spec.encoded_shape)`` values, the padding as data, for an explicitly padded spec)."""
    k = values.shape[0]
    shape = tuple(spec.shape)
    if spec.explicit_padded_shape is not None and values.size == k * spec.volume():
        shape = tuple(spec.encoded_shape)
    elif spec.explicit_padded_shape is not None:  # logical values: the padding written as zeros
        values = values.reshape((k, *shape))
        values = np.pad(values, [(0, 0)] + [(0, p - d) for p, d in zip(spec.encoded_shape, shape, strict=True)])
        shape = tuple(spec.encoded_shape)
    if spec.layout is Layout.TILE:
        values = values.reshape((k, *_rank_for_tiles(shape)))
    if spec.dtype.is_float and values.dtype != np.float32 and values.dtype.kind == "f":
        values = values.astype(np.float32)
    raw = encode(np.ascontiguousarray(values), spec.dtype, spec.layout, tile=spec.tile)
    return raw.reshape(k, -1)


def stored_elements(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, stored elements)`` of ``k`` devices in storage order (tiles and padding as stored):
    float32 for float dtypes, the integer type otherwise."""
    dtype = spec.dtype
    if rows.flags.c_contiguous:  # the common case: whole slab rows, viewed without copying
        if dtype is DataType.FLOAT32:
            return rows.view(np.float32)
        if dtype is DataType.BFLOAT16:
            return bfloat16_bits_to_float32(rows.view(np.uint16))
        if dtype.is_integer:
            return rows.view(dtype.storage_dtype)
    k = rows.shape[0]
    size = spec.compute_packed_buffer_size_bytes()
    flat = np.ascontiguousarray(rows[:, :size]).reshape(-1)
    if spec.dtype.is_block_float:
        tile_values = spec.tile.values_per_tile
        values = unpack_bfp(
            flat.reshape(-1, spec.tile.get_tile_size(spec.dtype)), BlockFloatFormat.of(spec.dtype), tile_values
        )
        return values.reshape(k, -1)
    count = flat.size // spec.dtype.row_major_element_size
    values = decode(flat, spec.dtype, Layout.ROW_MAJOR, (count,))
    if spec.dtype.is_float:
        values = values.astype(np.float32, copy=False)
    return values.reshape(k, -1)


def logical_mask(spec: TensorSpec) -> np.ndarray | None:
    """Per stored element of one shard, True where it holds logical data (False: tile padding);
    None when nothing is padding."""

    def compute() -> np.ndarray | None:
        if spec.layout is not Layout.TILE or tuple(spec.padded_shape) == tuple(spec.encoded_shape):
            return None
        ones = np.ones(_rank_for_tiles(tuple(spec.encoded_shape)), np.uint8)
        return tilize(ones, spec.tile, pad_value=0).reshape(-1).astype(bool)

    return spec._once("logical_mask", compute)


def store_elements(elements: np.ndarray, spec: TensorSpec, out_rows: np.ndarray) -> None:
    """Write ``(k, stored elements)`` into the output slab rows ``out_rows`` in ``spec``'s format.

    Block floats share one exponent per 16-value face row, so the tile padding of a result (which
    an element-wise op computed too, e.g. log(0) = -inf) is reset to 0 before packing: it must not
    flush the data beside it."""
    dtype = spec.dtype
    if dtype.is_block_float:
        mask = logical_mask(spec)
        if mask is not None:
            elements = np.where(mask, elements, np.float32(0))
    if out_rows.flags.c_contiguous and elements.shape == (
        out_rows.shape[0],
        out_rows.shape[1] // dtype.row_major_element_size,
    ):
        if dtype is DataType.FLOAT32:
            np.copyto(out_rows.view(np.float32), elements, casting="unsafe")
            return
        if dtype is DataType.BFLOAT16 and elements.dtype == np.float32:
            float32_to_bfloat16_bits(elements, out=out_rows.view(np.uint16))
            return
    out_rows[...] = encode_elements(elements, spec)


def encode_elements(elements: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, packed size)`` bytes of ``(k, stored elements)`` in storage order."""
    k = elements.shape[0]
    if spec.dtype.is_block_float:
        tiles = elements.astype(np.float32, copy=False).reshape(-1, spec.tile.values_per_tile)
        return pack_bfp(tiles, BlockFloatFormat.of(spec.dtype)).reshape(k, -1)
    flat = elements.reshape(-1)
    if spec.dtype.is_float and flat.dtype != np.float32:
        flat = flat.astype(np.float32)
    return encode(np.ascontiguousarray(flat), spec.dtype, Layout.ROW_MAJOR).reshape(k, -1)
