"""Host conversions of a tensor's raw bytes: ``typecast`` (the host ``ttnn.typecast`` /
``to_dtype``) and ``to_layout`` (ROW_MAJOR <-> TILE on host), every stored element converted,
padding included, as ttnn converts it.

Part of the ``formats`` layer; imports ``meshnn.errors`` and ``meshnn.formats``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.bfp_chunks import pack_tiles
from meshnn.formats.bfp_tiles import pack_bfp, unpack_bfp
from meshnn.formats.block_float import BlockFloatFormat
from meshnn.formats.codec import decode
from meshnn.formats.dtypes import DataType
from meshnn.formats.elements import as_bytes, from_storage, pad_element, to_float32, to_storage
from meshnn.formats.layout import DEFAULT_TILE, Layout, Tile, physical_shape, tilize, untilize
from meshnn.formats.packed_spec import check_kinds, checked_raw


def _physical_shape_error(shape: Sequence[int], tile: Tile) -> MeshnnValueError | None:
    before = physical_shape(shape, Layout.ROW_MAJOR)
    after = physical_shape(shape, Layout.TILE, tile)
    if before == after:
        return None
    return MeshnnValueError(
        f"to_dtype: Converting layout to Layout::TILE implicitly changed physical shape from {before} to "
        f"{after} due to alignment constraints. This is currently unsupported. Please pad the tensor "
        f"explicitly before conversion."
    )


def typecast(
    raw: np.ndarray,
    src_dtype: DataType,
    dst_dtype: DataType,
    layout: Layout,
    shape: Sequence[int],
    *,
    tile: Tile = DEFAULT_TILE,
) -> np.ndarray:
    """Raw bytes of host ``ttnn.typecast(tensor, dst_dtype)`` (= ``to_dtype``) of the tensor whose
    bytes are ``raw``.  It converts every stored element, padding included, in storage order.

    A block-float target needs TILE: a ROW_MAJOR tensor whose last two dims are tile multiples is
    tilized (the result is then in TILE layout); any other ROW_MAJOR tensor is refused with ttnn's
    "implicitly changed physical shape" error.
    """
    check_kinds(dst_dtype, layout, tile)
    raw = checked_raw(raw, src_dtype, layout, shape, tile)
    if src_dtype is dst_dtype:
        return raw.copy()
    if layout is Layout.ROW_MAJOR and dst_dtype.is_block_float:
        error = _physical_shape_error(shape, tile)
        if error is not None:
            raise error
        values = decode(raw, src_dtype, layout, shape)
        return pack_tiles(to_float32(values), dst_dtype, tile, 0.0)
    elements = _stored_elements(raw, src_dtype, layout, tile)
    if dst_dtype.is_block_float:
        floats = to_float32(elements).reshape(-1, tile.values_per_tile)
        return pack_bfp(floats, BlockFloatFormat.of(dst_dtype)).reshape(-1)
    return as_bytes(to_storage(elements, dst_dtype))


def _stored_elements(raw: np.ndarray, dtype: DataType, layout: Layout, tile: Tile) -> np.ndarray:
    """Every stored element of ``raw`` (padding included), in storage order, as numpy values."""
    if not dtype.is_block_float:
        return from_storage(raw.view(dtype.storage_dtype), dtype)
    if layout is Layout.ROW_MAJOR:
        return raw.view(np.float32)
    return unpack_bfp(raw, BlockFloatFormat.of(dtype), tile.values_per_tile).reshape(-1)


def to_layout(
    raw: np.ndarray,
    dtype: DataType,
    from_layout: Layout,
    to_layout: Layout,
    shape: Sequence[int],
    *,
    tile: Tile = DEFAULT_TILE,
    pad_value: float = 0.0,
) -> np.ndarray:
    """Raw bytes of the host ROW_MAJOR <-> TILE conversion of the tensor whose bytes are ``raw``
    (``pad_value`` fills the tile padding; TILE -> ROW_MAJOR drops it).  Block floats in
    ROW_MAJOR are float32 elements, as ttnn stores them."""
    check_kinds(dtype, to_layout, tile)
    raw = checked_raw(raw, dtype, from_layout, shape, tile)
    if from_layout is to_layout:
        return raw.copy()
    if dtype.is_block_float:
        values = decode(raw, dtype, from_layout, shape, tile=tile)
        if to_layout is Layout.TILE:
            return pack_tiles(values, dtype, tile, pad_value)
        return as_bytes(values)
    elements = raw.view(dtype.storage_dtype)
    if to_layout is Layout.TILE:
        logical = elements.reshape(tuple(int(d) for d in shape))
        return as_bytes(tilize(logical, tile, pad_value=pad_element(pad_value, dtype)))
    return as_bytes(untilize(elements, shape, tile))
