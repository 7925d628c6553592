"""Rows of a TILE tensor written in place, at the byte level: what a KV-cache update does to its
cache (one row of a tile replaced, every other byte of the buffer left as it was).

A TILE tensor's bytes are its tiles in row-major tile order over the 2-D view ``[rows, width]``
(every dim but the last folded into the rows; the padded shape).  Inside a tile, the values are in
face order, and a *block* is one face row (16 values): a plain dtype stores a block's values
contiguously; a block float stores a block as one shared-exponent byte (in the exponent section at
the front of the tile) and its codes.  A tile row is the blocks of one face row of each face in
that row of faces (:func:`row_bytes`), so replacing a row touches those bytes only: a block float
row is re-packed from the new values alone, exactly as the device packs it.

:func:`write_rows` writes ``(k, R, width)`` values into rows of ``k`` devices' slab rows;
:func:`write_tiles` writes whole tiles (a prefill's fill); :func:`tile_grid` says how many tiles a
tensor without tile padding has per dim.  Only tiles whose width is whole
faces are taken (every ttnn tile: 32x32, 16x32, ...), without ``transpose_tile``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats` and the tensor spec.
"""

from __future__ import annotations

import functools

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.codec import decode, encode
from meshnn.formats.dtypes import DataType, bfp_exponent_section_size
from meshnn.formats.layout import Layout, Tile
from meshnn.tensor.spec import TensorSpec


@functools.cache
def row_bytes(dtype: DataType, tile: Tile) -> np.ndarray:
    """``(tile height, L)`` int64: for each row of a tile of ``dtype``, the offsets (within the tile)
    of the bytes that hold it, in the same order for every row (so row ``r``'s bytes of one tile
    go to row ``s``'s bytes of another)."""
    if tile.transpose_tile:
        raise MeshnnValueError("rows of a transposed tile are not contiguous blocks; ttnn's caches do not use them")
    (height, width), (face_h, face_w) = tile.tile_shape, tile.face_shape
    faces_per_row = width // face_w
    rows = []
    for r in range(height):
        blocks = [((r // face_h) * faces_per_row + c) * face_h + r % face_h for c in range(faces_per_row)]
        rows.append(np.concatenate([_block_bytes(dtype, tile, b, face_w) for b in blocks]))
    return np.stack(rows).astype(np.int64)


def _block_bytes(dtype: DataType, tile: Tile, block: int, values: int) -> np.ndarray:
    if not dtype.is_block_float:
        size = dtype.row_major_element_size
        return np.arange(block * values * size, (block + 1) * values * size)
    exponents = bfp_exponent_section_size(tile.num_faces * tile.face_shape[0])
    code_bytes = values * (dtype.magnitude_bits + 1) // 8
    start = exponents + block * code_bytes
    return np.concatenate([[block], np.arange(start, start + code_bytes)])


def encoded_row_tiles(values: np.ndarray, dtype: DataType, tile: Tile) -> np.ndarray:
    """``(k, R, width)`` float32 values as tiles of ``dtype``: ``(k, ceil(R / h) * width / w, tile
    bytes)`` uint8, row ``i`` of the values in row ``i % h`` of tile row ``i // h`` (h x w tiles)."""
    k, count, width = values.shape
    height = tile.tile_shape[0]
    padded = -(-count // height) * height
    block = np.zeros((k, padded, width), np.float32)
    block[:, :count] = values
    raw = encode(block, dtype, Layout.TILE, tile=tile)
    return raw.reshape(k, -1, tile.get_tile_size(dtype))


def write_rows(out: np.ndarray, dtype: DataType, tile: Tile, width: int, dest: np.ndarray, values: np.ndarray) -> None:
    """Write ``values`` ``(k, R, width)`` into the rows ``dest`` ``(k, R)`` (indices into the 2-D
    view's rows; -1: leave that one be) of ``k`` devices' TILE bytes ``out`` ``(k, bytes)``, in
    place: only the bytes of those rows change."""
    k, count = dest.shape
    if count == 0:
        return
    height, tile_w = tile.tile_shape
    per_row = width // tile_w
    size = tile.get_tile_size(dtype)
    src = encoded_row_tiles(values, dtype, tile)
    target = out[:, : (out.shape[1] // size) * size].reshape(k, -1, size)
    offsets = row_bytes(dtype, tile)
    index = np.arange(count)
    cols = np.arange(per_row)
    src_tiles = (index // height)[:, None] * per_row + cols  # (R, C)
    src_bytes = offsets[index % height]  # (R, L)
    gathered = src[:, src_tiles[:, :, None], src_bytes[:, None, :]]  # (k, R, C, L)
    keep = dest >= 0
    rows = np.where(keep, dest, 0)
    dst_tiles = (rows // height)[:, :, None] * per_row + cols  # (k, R, C)
    dst_bytes = offsets[rows % height][:, :, None, :]  # (k, R, 1, L)
    devices = np.arange(k)[:, None, None, None]
    if not keep.all():  # a skipped row writes back what it holds
        current = target[devices, dst_tiles[..., None], dst_bytes]
        gathered = np.where(keep[:, :, None, None], gathered, current)
    target[devices, dst_tiles[..., None], dst_bytes] = gathered
    return decode_row_tiles(src, dtype, tile, count, width)


def decode_row_tiles(tiles: np.ndarray, dtype: DataType, tile: Tile, count: int, width: int) -> np.ndarray:
    """``(k, count, width)`` float32: the rows :func:`encoded_row_tiles` packed, decoded."""
    k = tiles.shape[0]
    height = tile.tile_shape[0]
    rows = -(-count // height) * height
    values = decode(np.ascontiguousarray(tiles).reshape(-1), dtype, Layout.TILE, (k, rows, width), tile=tile)
    return values.reshape(k, rows, width)[:, :count].astype(np.float32, copy=False)


def write_tiles(out: np.ndarray, dtype: DataType, tile: Tile, dest: np.ndarray, tiles: np.ndarray) -> None:
    """Write whole tiles ``tiles`` ``(k, T, tile bytes)`` at tile indices ``dest`` ``(k, T)`` of
    ``k`` devices' TILE bytes ``out``, in place."""
    size = tile.get_tile_size(dtype)
    k = out.shape[0]
    target = out[:, : (out.shape[1] // size) * size].reshape(k, -1, size)
    target[np.arange(k)[:, None], dest] = tiles


def tile_grid(spec: TensorSpec) -> tuple[int, ...] | None:
    """The tiles of a TILE tensor without padding, per dim (the last two: tile rows, tile
    columns), in its page order; None when a tile holds padding or the layout is not TILE."""
    if spec.layout is not Layout.TILE or spec.explicit_padded_shape is not None or len(spec.shape) < 2:
        return None
    shape = tuple(spec.shape)
    height, width = spec.tile.tile_shape
    if shape[-2] % height or shape[-1] % width or tuple(spec.padded_shape) != shape:
        return None
    return (*shape[:-2], shape[-2] // height, shape[-1] // width)
