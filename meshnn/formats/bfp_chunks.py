"""Block-float tiles of a whole tensor: its float32 values tilized and packed, or unpacked and
untilized, a cache-sized chunk at a time, each thread with scratch of its own.

With torch (:func:`meshnn.formats.bfp_tiles.torch_for`) and untransposed faces, chunks of whole
tile rows are packed and unpacked in the matrix's own order by the row packers
(:mod:`meshnn.formats.bfp_rows`), handed out over the host threads
(:func:`meshnn.host.threads.each_chunk`); otherwise each chunk is tilized into scratch and packed
(or unpacked straight into its place) by the tile packers (:mod:`meshnn.formats.bfp_tiles`).

Part of the ``formats`` layer; imports ``meshnn.host`` and ``meshnn.formats`` (layout,
block_float, bfp_torch, bfp_tiles, bfp_rows).
"""

from __future__ import annotations

import functools
import math
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from meshnn.formats.bfp_rows import BfpRowPacker, BfpRowUnpacker
from meshnn.formats.bfp_tiles import BfpPacker, BfpUnpacker, torch_for
from meshnn.formats.bfp_torch import TORCH_CHUNK_VALUES
from meshnn.formats.block_float import CHUNK_VALUES, BlockFloatFormat
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile, padded_matrices, padded_shape, tile_chunks, tile_view
from meshnn.host.threads import each_chunk

_Scratch = TypeVar("_Scratch")
_SCRATCH = threading.local()


def thread_scratch(key: tuple, make: Callable[[], _Scratch]) -> _Scratch:
    """This thread's scratch object for ``key`` (``make()`` on first use): packers and unpackers
    own their buffers, so each thread keeps its own, reused from one conversion to the next."""
    kept = getattr(_SCRATCH, "objects", None)
    if kept is None:
        kept = _SCRATCH.objects = {}
    if key not in kept:
        kept[key] = make()
    return kept[key]


def pack_tiles(
    values: np.ndarray, dtype: DataType, tile: Tile, pad_value: float, out: np.ndarray | None = None
) -> np.ndarray:
    """Block-float bytes of float32 ``values``: tilize and pack a cache-sized chunk at a time.
    With torch (:func:`torch_for`) and untransposed faces, chunks of whole tile rows are packed in
    the matrix's own order (:func:`row_pack_chunks`); otherwise each chunk is tilized into
    scratch and packed, on torch's threads when torch is in use.
    (numpy on several threads of its own runs slower, not faster: its operations on a chunk are
    short, so the threads spend their time handing the interpreter lock to each other.)"""
    fmt = BlockFloatFormat.of(dtype)
    matrices = padded_matrices(values, tile, np.float32(pad_value))
    if out is None:
        out = np.empty(matrices.size // tile.values_per_tile * fmt.tile_size(tile.values_per_tile), np.uint8)
    torch = torch_for(matrices.size)
    chunks = row_pack_chunks(torch, matrices, fmt, tile, out)
    if chunks is not None:
        each_chunk(torch, chunks, lambda task: task())
        return out
    grid = tile_view(matrices, tile)
    packer = _packer(fmt, tile.values_per_tile, torch)
    tiles = out.reshape(-1, packer.tile_size)
    for rows_, cols, first, count in tile_chunks(grid.shape[0], grid.shape[1], packer.chunk_tiles):
        chunk = grid[rows_, cols]
        buffer = packer.tiles_buffer(count)
        _copy(buffer.reshape(chunk.shape), chunk, torch)
        packer.pack_into(buffer, tiles[first : first + count])
    return out


def row_pack_chunks(
    torch: Any | None, matrices: np.ndarray, fmt: BlockFloatFormat, tile: Tile, out: np.ndarray, *, view: bool = False
) -> list[Callable[[], None]] | None:
    """The pack of ``matrices`` (float32, padded to whole tiles) into ``out`` (their packed bytes,
    uint8) as independent tasks of whole tile rows, each packed in the matrix's own order by its
    thread's :class:`BfpRowPacker` (no float32 tilizing copy) with ``torch``'s operations (run
    them with ``each_chunk``); None where that does not apply (no torch, transposed faces,
    or, with ``view``, rows that are not a view of ``matrices``: see :func:`_tile_rows`)."""
    rows = None if torch is None else _tile_rows(matrices, tile, view=view)
    if rows is None:
        return None
    tile_width = tile.tile_shape[1]
    tiles_per_row = rows.shape[2] // tile_width
    tiles = out.reshape(rows.shape[0] * tiles_per_row, fmt.tile_size(tile.values_per_tile))

    def pack(chunk_rows: slice, cols: slice, first: int, count: int) -> None:
        block = rows[chunk_rows, :, cols.start * tile_width : cols.stop * tile_width]
        _row_packer(fmt, tile).pack_rows(torch, block, tiles[first : first + count])

    chunk_tiles = max(1, TORCH_CHUNK_VALUES // tile.values_per_tile)  # a BfpRowPacker's chunk
    return [functools.partial(pack, *chunk) for chunk in tile_chunks(rows.shape[0], tiles_per_row, chunk_tiles)]


def unpack_tiles(
    raw: np.ndarray, dtype: DataType, shape: tuple[int, ...], tile: Tile, matrices: np.ndarray | None = None
) -> np.ndarray:
    """float32 values of block-float tiles: unpack and untilize a cache-sized chunk at a time
    (into ``matrices``, tile-aligned (batch, height, width) float32, when given), on torch's
    threads as in :func:`pack_tiles`."""
    padded = padded_shape(shape, Layout.TILE, tile)
    given = matrices is not None
    if matrices is None:
        matrices = np.empty((math.prod(padded[:-2]), padded[-2], padded[-1]), np.float32)
    fmt = BlockFloatFormat.of(dtype)
    torch = torch_for(matrices.size)
    chunks = row_unpack_chunks(torch, raw, matrices, fmt, tile)
    if chunks is not None:
        each_chunk(torch, chunks, lambda task: task())
    else:
        grid = tile_view(matrices, tile)
        unpacker = _unpacker(fmt, tile.values_per_tile, torch)
        packed = raw.reshape(-1, unpacker.tile_size)
        for chunk_rows, cols, first, count in tile_chunks(grid.shape[0], grid.shape[1], unpacker.chunk_tiles):
            unpacker.unpack_into(packed[first : first + count], grid[chunk_rows, cols])  # untilizes as it decodes
    if given:
        return matrices
    logical = (matrices.shape[0], *((1, shape[0]) if len(shape) == 1 else shape[-2:] if shape else (1, 1)))
    if logical != matrices.shape:
        matrices = np.ascontiguousarray(matrices[:, : logical[1], : logical[2]])
    return matrices.reshape(shape)


def row_unpack_chunks(
    torch: Any | None, raw: np.ndarray, matrices: np.ndarray, fmt: BlockFloatFormat, tile: Tile
) -> list[Callable[[], None]] | None:
    """The unpack of block-float ``raw`` bytes into ``matrices`` (float32, tile-aligned (batch,
    height, width), any strides) as independent tasks of whole tile rows, each decoded in the
    matrix's own order by its thread's :class:`BfpRowUnpacker` with ``torch``'s operations (run
    them with ``each_chunk``); None where that does not apply (no torch, transposed faces,
    rows that are not a view of ``matrices``: see :func:`_tile_rows`)."""
    rows = None if torch is None else _tile_rows(matrices, tile, view=True)
    if rows is None:
        return None
    tile_width = tile.tile_shape[1]
    packed = raw.reshape(-1, fmt.tile_size(tile.values_per_tile))
    tiles_per_row = rows.shape[2] // tile_width

    def unpack(chunk_rows: slice, cols: slice, first: int, count: int) -> None:
        block = rows[chunk_rows, :, cols.start * tile_width : cols.stop * tile_width]
        _row_unpacker(fmt, tile).unpack_rows(torch, packed[first : first + count], block)

    chunk_tiles = max(1, TORCH_CHUNK_VALUES // tile.values_per_tile)  # a BfpRowUnpacker's chunk
    return [functools.partial(unpack, *chunk) for chunk in tile_chunks(rows.shape[0], tiles_per_row, chunk_tiles)]


def _tile_rows(matrices: np.ndarray, tile: Tile, *, view: bool) -> np.ndarray | None:
    """``matrices`` (batch, height, width; tile multiples) as rows of tiles (tile rows, tile height,
    width) for the row packers, or None where they do not apply: transposed faces, negative strides
    (torch takes none), or, with ``view``, when that shape is not a view of ``matrices``."""
    if tile.transpose_tile or min(matrices.strides, default=0) < 0:
        return None
    batch, height, width = matrices.shape
    shape = (batch * height // tile.tile_shape[0], tile.tile_shape[0], width)
    try:
        return matrices.reshape(shape, copy=False if view else None)
    except ValueError:
        return None


def _row_packer(fmt: BlockFloatFormat, tile: Tile) -> BfpRowPacker:
    """This thread's row packer for ``tile``'s shape."""
    key = ("rowpack", fmt, tile.tile_shape)
    return thread_scratch(
        key, lambda: BfpRowPacker(fmt, tile.tile_shape, tile.face_shape[0], chunk_values=TORCH_CHUNK_VALUES)
    )


def _row_unpacker(fmt: BlockFloatFormat, tile: Tile) -> BfpRowUnpacker:
    """This thread's row unpacker for ``tile``'s shape."""
    key = ("rowunpack", fmt, tile.tile_shape)
    return thread_scratch(
        key, lambda: BfpRowUnpacker(fmt, tile.tile_shape, tile.face_shape[0], chunk_values=TORCH_CHUNK_VALUES)
    )


def _copy(dst: np.ndarray, src: np.ndarray, torch: Any | None) -> None:
    """``np.copyto(dst, src)`` (one shape, any strides), with torch's threaded copy when given
    (and torch can view both: it takes no negative strides)."""
    if torch is None or min(src.strides, default=0) < 0 or min(dst.strides, default=0) < 0:
        np.copyto(dst, src)
        return
    with warnings.catch_warnings():  # a read-only source is only read
        warnings.simplefilter("ignore", UserWarning)
        torch.from_numpy(dst).copy_(torch.from_numpy(src))


def _packer(fmt: BlockFloatFormat, values_per_tile: int, torch: Any | None) -> BfpPacker:
    """This thread's packer, with chunks sized for torch's arithmetic or numpy's."""
    chunk = TORCH_CHUNK_VALUES if torch is not None else CHUNK_VALUES
    return thread_scratch(
        ("pack", fmt, values_per_tile, chunk), lambda: BfpPacker(fmt, values_per_tile, chunk_values=chunk)
    )


def _unpacker(fmt: BlockFloatFormat, values_per_tile: int, torch: Any | None) -> BfpUnpacker:
    """This thread's unpacker, with chunks sized as for :func:`_packer`."""
    chunk = TORCH_CHUNK_VALUES if torch is not None else CHUNK_VALUES
    return thread_scratch(
        ("unpack", fmt, values_per_tile, chunk), lambda: BfpUnpacker(fmt, values_per_tile, chunk_values=chunk)
    )
