"""Host byte formats of ttnn tensors: logical values <-> the raw bytes of a ttnn host buffer.

``encode`` gives exactly the bytes ttnn 0.81.1 holds for ``ttnn.Tensor(values, dtype, layout=...,
tile=..., pad_value=...)``; ``decode`` gives back what ``to_numpy`` / ``to_torch`` give.
``encode_many`` / ``decode_many`` convert the shards of one tensor (each into, or out of, its
device's memory) in one pass over the host threads; ``byte_view`` is a view of values whose
elements are their encoding, for copies that convert as they go.  The elements of each dtype are
:mod:`meshnn.formats.elements`'; block-float tiles are packed by :mod:`meshnn.formats.bfp_chunks`.

Part of the ``formats`` layer; imports ``meshnn.errors``, ``meshnn.host`` and ``meshnn.formats``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.bfloat16 import float32_to_bfloat16_bits
from meshnn.formats.bfp_chunks import pack_tiles, row_pack_chunks, row_unpack_chunks, unpack_tiles
from meshnn.formats.bfp_tiles import torch_for
from meshnn.formats.block_float import BlockFloatFormat
from meshnn.formats.dtypes import DataType
from meshnn.formats.elements import as_bytes, from_storage, pad_element, to_float32, to_storage
from meshnn.formats.layout import DEFAULT_TILE, Layout, Tile, padded_matrices, padded_shape, tile_view, tilize, untilize
from meshnn.formats.packed_spec import check_out, checked_raw, checked_values
from meshnn.host.threads import each_chunk, parallel_copyto


def encode(
    values: np.ndarray,
    dtype: DataType,
    layout: Layout,
    *,
    tile: Tile = DEFAULT_TILE,
    pad_value: float = 0.0,
    col_tilize: bool = False,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The raw bytes (1-D uint8, C-contiguous, a new array) that ttnn's host buffer holds for
    ``ttnn.Tensor(values, dtype, layout=layout, tile=tile, pad_value=pad_value)``.

    With ``col_tilize=True`` the last two dims are swapped before tiling (ttnn then reports the
    swapped shape: see ``packed_spec``).  ``out``: a 1-D uint8 C-contiguous array of exactly the
    encoded size to write the bytes into (it is returned), e.g. a reused staging buffer.
    """
    return _encode_checked(
        checked_values(values, dtype, layout, tile, col_tilize, out), dtype, layout, tile, pad_value, out
    )


def _encode_checked(
    values: np.ndarray, dtype: DataType, layout: Layout, tile: Tile, pad_value: float, out: np.ndarray | None
) -> np.ndarray:
    """:func:`encode` of values :func:`checked_values` has passed."""
    if layout is Layout.ROW_MAJOR:
        return _row_major_bytes(values, dtype, out)
    if dtype.is_block_float:
        return pack_tiles(to_float32(values), dtype, tile, pad_value, out)
    if values.dtype == np.float32 and dtype in (DataType.FLOAT32, DataType.BFLOAT16):
        return _tilize_float32(values, dtype, tile, pad_value, out)
    storage = to_storage(values, dtype)
    tiles = tilize(storage, tile, pad_value=pad_element(pad_value, dtype))
    return _into(as_bytes(tiles), out)


def _into(raw: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    if out is None:
        return raw
    out[...] = raw
    return out


def _row_major_bytes(values: np.ndarray, dtype: DataType, out: np.ndarray | None) -> np.ndarray:
    if out is not None and values.dtype == np.float32 and dtype in (DataType.FLOAT32, DataType.BFLOAT16):
        if dtype is DataType.FLOAT32:
            np.copyto(out.view(np.float32).reshape(values.shape), values)
        else:
            float32_to_bfloat16_bits(values, out=out.view(np.uint16).reshape(values.shape))
        return out
    return _into(as_bytes(to_storage(values, dtype)), out)


def _tilize_float32(
    values: np.ndarray, dtype: DataType, tile: Tile, pad_value: float, out: np.ndarray | None = None
) -> np.ndarray:
    """Tilize and convert in one pass (the common, performance-critical case)."""
    n_tiles = math.prod(padded_shape(values.shape, Layout.TILE, tile)) // tile.values_per_tile
    if out is None:
        out = np.empty(n_tiles * tile.values_per_tile * dtype.storage_dtype.itemsize, np.uint8)
    tiles = out.view(dtype.storage_dtype).reshape(n_tiles, tile.values_per_tile)
    if dtype is DataType.BFLOAT16:
        if n_tiles:
            grid = tile_view(padded_matrices(values, tile, np.float32(pad_value)), tile)
            float32_to_bfloat16_bits(grid, out=tiles.reshape(grid.shape))
        return out
    if n_tiles:
        grid = tile_view(padded_matrices(values, tile, np.float32(pad_value)), tile)
        parallel_copyto(tiles.reshape(grid.shape), grid)
    return out


def encode_many(
    jobs: Sequence[tuple[np.ndarray, np.ndarray]],
    dtype: DataType,
    layout: Layout,
    *,
    tile: Tile = DEFAULT_TILE,
    pad_value: float = 0.0,
    col_tilize: bool = False,
) -> None:
    """``encode(values, ..., out=out)`` for every ``(values, out)`` of ``jobs`` (e.g. the shards
    of a tensor, each into its device's memory), every ``out`` checked before any is written.
    The block-float packs done by chunks of tile rows (:func:`row_pack_chunks`) of the jobs
    whose values are float32 tile rows already (views: no job holds a converted or padded copy
    while the others wait) all run in one pass over the host threads, their chunks handed out
    one at a time: a thread slowed by a busy host does fewer, and no thread waits at the end of
    each job.  The other jobs are encoded one at a time."""
    if any(out is None for _, out in jobs):
        raise MeshnnValueError("encode_many: every job needs an out array")
    checked = [(checked_values(values, dtype, layout, tile, col_tilize, out), out) for values, out in jobs]

    def chunked(values: np.ndarray, out: np.ndarray) -> tuple[Any, list[Callable[[], None]] | None]:
        if not dtype.is_block_float or values.dtype != np.float32:
            return None, None
        matrices = _tile_aligned_view(values, tile)
        torch = None if matrices is None else torch_for(matrices.size)
        fmt = BlockFloatFormat.of(dtype)
        return torch, None if torch is None else row_pack_chunks(torch, matrices, fmt, tile, out, view=True)

    _in_one_pass(checked, chunked, lambda values, out: _encode_checked(values, dtype, layout, tile, pad_value, out))


def _tile_aligned_view(values: np.ndarray, tile: Tile) -> np.ndarray | None:
    """``values`` as (batch, height, width) matrices when that is a view and needs no padding, else None."""
    shape = tuple(values.shape)
    if len(shape) < 2 or shape[-2] % tile.tile_shape[0] or shape[-1] % tile.tile_shape[1]:
        return None
    try:
        return values.reshape((math.prod(shape[:-2]), shape[-2], shape[-1]), copy=False)
    except ValueError:
        return None


def _in_one_pass(
    jobs: list[tuple[np.ndarray, np.ndarray]],
    chunked: Callable[[np.ndarray, np.ndarray], tuple[Any, list[Callable[[], None]] | None]],
    alone: Callable[[np.ndarray, np.ndarray], None],
) -> None:
    """Run every job of :func:`encode_many` / :func:`decode_many`: ``chunked(*job)`` gives the
    torch module and the job's chunk tasks (None for a job that has none), and the tasks of all
    jobs run in one :func:`each_chunk`; a job without them runs ``alone(*job)``, at once."""
    tasks: list[Callable[[], None]] = []
    chunked_with = None  # the torch module the tasks use
    for job in jobs:
        torch, chunks = chunked(*job)
        if chunks is None:
            alone(*job)
            continue
        tasks += chunks
        chunked_with = torch
    if tasks:
        each_chunk(chunked_with, tasks, lambda task: task())


def decode(
    raw: np.ndarray,
    dtype: DataType,
    layout: Layout,
    shape: Sequence[int],
    *,
    tile: Tile = DEFAULT_TILE,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The logical values (``dtype.numpy_dtype``, ``shape``, a new array) held by ``raw`` bytes,
    as ttnn's ``to_numpy`` / ``to_torch`` give them (block floats decoded to float32, tiles
    untilized and unpadded).  ``out``: an array of ``shape`` and that dtype, any strides (e.g. a
    shard's block of the composed global array), to decode into (it is returned)."""
    raw = checked_raw(raw, dtype, layout, shape, tile)
    shape = tuple(int(d) for d in shape)
    if out is not None:
        check_out(out, dtype, shape)
    return _decode_checked(raw, dtype, layout, shape, tile, out)


def _decode_checked(
    raw: np.ndarray, dtype: DataType, layout: Layout, shape: tuple[int, ...], tile: Tile, out: np.ndarray | None
) -> np.ndarray:
    """:func:`decode` of checked ``raw`` bytes (flat, C-contiguous) into a checked ``out``."""
    if layout is Layout.ROW_MAJOR:
        stored = np.float32 if dtype.is_block_float else dtype.storage_dtype
        values = from_storage(raw.view(stored).reshape(shape), dtype)
        if out is None:
            return np.array(values, copy=True)
        parallel_copyto(out, values)
        return out
    matrices = None if out is None or dtype is DataType.FP8_E4M3 else _matrices_view(out, shape, tile)
    if dtype.is_block_float:
        result = unpack_tiles(raw, dtype, shape, tile, matrices)
    else:
        tiles = raw.view(dtype.storage_dtype)
        if matrices is not None:
            grid = tile_view(matrices.view(dtype.storage_dtype), tile)
            parallel_copyto(grid, tiles.reshape(grid.shape))
            return out
        result = from_storage(untilize(tiles, shape, tile), dtype)
    if out is None or result is out:
        return result
    if matrices is None:
        np.copyto(out, result)
    return out


def decode_many(
    jobs: Sequence[tuple[np.ndarray, np.ndarray]],
    dtype: DataType,
    layout: Layout,
    shape: Sequence[int],
    *,
    tile: Tile = DEFAULT_TILE,
) -> None:
    """``decode(raw, dtype, layout, shape, tile=tile, out=out)`` for every ``(raw, out)`` of
    ``jobs`` (e.g. each shard of a tensor into its block of the composed array), every job
    checked before any is decoded.  The block-float unpacks by chunks of tile rows straight into
    ``out`` (:func:`row_unpack_chunks`) of all jobs run in one pass over the host threads, their
    chunks handed out one at a time; the other jobs are decoded one at a time."""
    shape = tuple(int(d) for d in shape)
    checked = []
    for raw, out in jobs:
        checked.append((checked_raw(raw, dtype, layout, shape, tile), out))
        check_out(out, dtype, shape)

    def chunked(raw: np.ndarray, out: np.ndarray) -> tuple[Any, list[Callable[[], None]] | None]:
        if not dtype.is_block_float or layout is not Layout.TILE:
            return None, None
        matrices = _matrices_view(out, shape, tile)
        torch = None if matrices is None else torch_for(matrices.size)
        return torch, None if torch is None else row_unpack_chunks(
            torch, raw, matrices, BlockFloatFormat.of(dtype), tile
        )

    _in_one_pass(checked, chunked, lambda raw, out: _decode_checked(raw, dtype, layout, shape, tile, out))


def _matrices_view(out: np.ndarray, shape: tuple[int, ...], tile: Tile) -> np.ndarray | None:
    """``out`` as (batch, height, width) tile-aligned matrices without copying, whose tile view
    (:func:`tile_view`, which merges batch and height) is a view of ``out`` too; or None (then the
    values are decoded aside and copied in).  A block of a batched array whose batches are
    further apart than their height (say ``out[:, 32:]``) takes the second route."""
    padded = padded_shape(shape, Layout.TILE, tile)
    if tuple(padded) != shape or len(shape) < 2:
        return None
    try:
        matrices = out.reshape((math.prod(shape[:-2]), shape[-2], shape[-1]), copy=False)
        matrices.reshape((-1, shape[-1]), copy=False)  # tile_view merges batch and height: a view too?
    except (ValueError, AttributeError):
        return None
    return matrices


_VIEWABLE = frozenset(
    {
        DataType.FLOAT32,
        DataType.BFLOAT16,
        DataType.INT32,
        DataType.UINT32,
        DataType.UINT16,
        DataType.UINT8,
        DataType.INT8,
    }
)
"""The dtypes whose stored elements are the bits of their numpy values (``numpy_dtype``)."""


def byte_view(
    values: np.ndarray, dtype: DataType, layout: Layout, *, tile: Tile = DEFAULT_TILE, col_tilize: bool = False
) -> np.ndarray | None:
    """A view of ``values`` (any strides) whose elements in C order ARE its encoding, or None
    when the encoding converts values, pads tiles or cannot be viewed without a copy.

    Both ways round: the bytes :func:`encode` gives for ``values``, and the values :func:`decode`
    gives for those bytes.  A host <-> device copy through the view converts as it copies (a
    TILE view tilizes or untilizes), in one pass, with no staging buffer."""
    if not isinstance(values, np.ndarray) or col_tilize or dtype not in _VIEWABLE:
        return None
    if values.dtype != dtype.numpy_dtype:
        return None
    elements = values.view(dtype.storage_dtype)  # bfloat16: its uint16 bits
    if layout is Layout.ROW_MAJOR:
        return elements
    matrices = _matrices_view(elements, tuple(values.shape), tile)
    return None if matrices is None else tile_view(matrices, tile)
