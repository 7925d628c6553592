"""Host byte formats of ttnn tensors: logical values <-> the raw bytes of a ttnn host buffer.

``encode`` gives exactly the bytes ttnn 0.81.1 holds for ``ttnn.Tensor(values, dtype, layout=...,
tile=..., pad_value=...)``; ``decode`` gives back what ``to_numpy`` / ``to_torch`` give; ``typecast``
is the host ``ttnn.typecast`` / ``to_dtype``; ``to_layout`` converts ROW_MAJOR <-> TILE on host.

Element rules (golden ``typecast.json``, all four ttnn paths agree):

- float -> bfloat16: round to nearest even, every NaN -> 0x7FC0 (see ``bfloat``).  numpy
  ``ml_dtypes.bfloat16`` input is a bit pass-through (what ``from_torch`` of a torch.bfloat16 does).
- float -> int32: truncate toward zero; out of range, NaN and inf -> INT32_MIN.
- float -> uint32: truncate; values in [-2**31, 2**32) wrap modulo 2**32 (-1.5 -> 0xFFFFFFFF);
  the rest, NaN and inf -> 0x80000000.
- float -> uint16 / uint8 / int8: the int32 result, clamped to the type's range (so out-of-int32,
  NaN and inf give 0 for unsigned, -128 for int8).
- integer/bool -> integer: wraps modulo the target width (numpy ``astype``).
- integer -> float32: nearest float32; integer -> bfloat16: through float32, then as a float.
- float -> fp8_e4m3: |x| < 2**-6 (fp8 subnormals) -> signed 0; else nearest even, saturating to
  +-448 (0x7E / 0xFE, no inf); NaN -> 0x7F.  fp8 -> float32 is exact.
- bfloat8_b / bfloat4_b: the block-float model of ``bfloat`` applied to the float32 values (bfloat16
  input is widened exactly first, so ``from_torch(torch.bfloat16)`` rounds twice).
"""

from __future__ import annotations

import functools
import math
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import ml_dtypes
import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.host.threads import each_chunk, parallel_copyto
from meshnn.tensor.bfloat import (
    CHUNK_VALUES,
    TORCH_CHUNK_VALUES,
    BfpPacker,
    BfpRowPacker,
    BfpRowUnpacker,
    BfpUnpacker,
    BlockFloatFormat,
    bfloat16_bits_to_float32,
    float32_to_bfloat16_bits,
    pack_bfp,
    torch_for,
    unpack_bfp,
)
from meshnn.tensor.dtypes import DataType
from meshnn.tensor.layout import (
    DEFAULT_TILE,
    Layout,
    Tile,
    padded_matrices,
    padded_shape,
    physical_shape,
    tile_chunks,
    tile_view,
    tilize,
    untilize,
)

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

BFP_NEEDS_TILE = "Layout must be Layout::TILE for bfloat8_b or bfloat4_b!"
"""ttnn's message (py_to_tt_tensor.cpp) when a bfloat8_b/bfloat4_b tensor is asked for ROW_MAJOR."""

FP8_E4M3_MAX = 448.0
FP8_E4M3_MIN_NORMAL = 2.0**-6
FP8_E4M3_NAN = 0x7F

_INT32_MIN = -(2**31)

# numpy inputs ttnn 0.81.1 cannot import for a bfloat16 target ("parse_py_tensor: ndarray_import
# failed"); the bfloat16-based block floats are held to the same rule.
_NOT_FOR_BFLOAT_TARGETS = frozenset(np.dtype(t) for t in (np.float64, np.float16, np.int16, np.int64, np.uint64))
_BFLOAT_TARGETS = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B)


@dataclass(frozen=True, slots=True)
class PackedSpec:
    """What a converted tensor reports: its logical ``shape`` (transposed by ``col_tilize``), the
    ``padded_shape`` the buffer holds, and ``nbytes``, the packed buffer size in bytes."""

    shape: tuple[int, ...]
    padded_shape: tuple[int, ...]
    nbytes: int


def packed_spec(
    shape: Sequence[int], dtype: DataType, layout: Layout, *, tile: Tile = DEFAULT_TILE, col_tilize: bool = False
) -> PackedSpec:
    """The shape, padded shape and packed byte size of a tensor, without converting anything."""
    _check_kinds(dtype, layout, tile)
    dims = tuple(int(d) for d in shape)
    if col_tilize:
        _check_col_tilize(len(dims), layout)
        dims = (*dims[:-2], dims[-1], dims[-2])
    padded = padded_shape(dims, layout, tile)
    if layout is Layout.ROW_MAJOR:
        nbytes = math.prod(dims) * dtype.row_major_element_size
    else:
        nbytes = math.prod(padded) // tile.values_per_tile * tile.get_tile_size(dtype)
    return PackedSpec(shape=dims, padded_shape=padded, nbytes=nbytes)


def _check_kinds(dtype: object, layout: object, tile: object) -> None:
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"dtype must be a meshnn DataType, got {dtype!r}")
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"layout must be a meshnn Layout, got {layout!r}")
    if not isinstance(tile, Tile):
        raise MeshnnTypeError(f"tile must be a meshnn Tile, got {tile!r}")


def _check_col_tilize(rank: int, layout: Layout) -> None:
    if layout is not Layout.TILE:
        raise MeshnnValueError(f"col_tilize=True needs Layout.TILE, got {layout}")
    if rank < 2:
        raise MeshnnValueError(f"col_tilize=True needs a tensor of rank >= 2, got rank {rank}")


# --- per-thread scratch ------------------------------------------------------------------------

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


# --- element conversions ------------------------------------------------------------------------


def _check_input(values: object, dtype: DataType) -> np.ndarray:
    if not isinstance(values, np.ndarray):
        raise MeshnnTypeError(
            f"expected a numpy array, got {type(values).__name__}; convert it first "
            f"(np.asarray(...) for lists, tensor.numpy() for torch, bfloat16 viewed as ml_dtypes.bfloat16)"
        )
    source = values.dtype
    if source != BFLOAT16 and source.kind not in "fiub":
        raise MeshnnTypeError(f"cannot convert numpy {source} data to {dtype}")
    if dtype in _BFLOAT_TARGETS and source in _NOT_FOR_BFLOAT_TARGETS:
        raise MeshnnTypeError(
            f"numpy {source} input cannot be converted to {dtype}: cast it first, e.g. "
            f"values.astype(np.float32) (ttnn refuses it too: parse_py_tensor: ndarray_import failed.)"
        )
    return values


def _is_float(values: np.ndarray) -> bool:
    return values.dtype == BFLOAT16 or values.dtype.kind == "f"


def _to_float32(values: np.ndarray) -> np.ndarray:
    """float32 values (exact for bfloat16; the input itself when it is already float32)."""
    if values.dtype == BFLOAT16:
        return bfloat16_bits_to_float32(values.view(np.uint16))
    return values.astype(np.float32, copy=False)


def _float32_to_int32(values: np.ndarray) -> np.ndarray:
    truncated = np.trunc(values)
    in_range = (truncated >= -(2.0**31)) & (truncated < 2.0**31)
    return np.where(in_range, truncated, _INT32_MIN).astype(np.int32)


def _float32_to_uint32(values: np.ndarray) -> np.ndarray:
    truncated = np.trunc(values)
    in_range = (truncated >= -(2.0**31)) & (truncated < 2.0**32)
    return np.where(in_range, truncated, 2.0**31).astype(np.int64).astype(np.uint32)


def _float32_to_fp8_bits(values: np.ndarray) -> np.ndarray:
    flushed = np.where(
        np.abs(values) < FP8_E4M3_MIN_NORMAL,
        np.copysign(np.float32(0), values),
        np.clip(values, -FP8_E4M3_MAX, FP8_E4M3_MAX),
    )
    with np.errstate(invalid="ignore"):
        bits = flushed.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    bits[np.isnan(values)] = FP8_E4M3_NAN
    return bits


def _to_storage(values: np.ndarray, dtype: DataType) -> np.ndarray:
    """The stored elements (``dtype.storage_dtype``, ``values``' shape, a new array) of ``values``."""
    if dtype is DataType.FLOAT32:
        return np.array(_to_float32(values), dtype=np.float32, copy=True, order="C")
    if dtype is DataType.BFLOAT16:
        if values.dtype == BFLOAT16:
            return np.array(values.view(np.uint16), copy=True, order="C")
        return float32_to_bfloat16_bits(_to_float32(values))
    if dtype is DataType.FP8_E4M3:
        return _float32_to_fp8_bits(_to_float32(values))
    if dtype.is_block_float:
        raise MeshnnValueError(f"{dtype} has no per-element storage; it is packed in tiles")
    target = dtype.storage_dtype
    if not _is_float(values):
        return values.astype(target, order="C")
    floats = _to_float32(values)
    if dtype is DataType.UINT32:
        return _float32_to_uint32(floats)
    as_int32 = _float32_to_int32(floats)
    if dtype is DataType.INT32:
        return as_int32
    limits = np.iinfo(target)
    return np.clip(as_int32, limits.min, limits.max).astype(target)


def _pad_element(pad_value: float, dtype: DataType) -> np.generic:
    """``pad_value`` (a float, as ttnn's C++ takes it) converted to one stored element."""
    return _to_storage(np.array([pad_value], np.float32), dtype)[0]


def _from_storage(elements: np.ndarray, dtype: DataType) -> np.ndarray:
    """Stored elements as the values ``to_numpy`` gives (may be a view of ``elements``)."""
    if dtype is DataType.BFLOAT16:
        return elements.view(BFLOAT16)
    if dtype is DataType.FP8_E4M3:
        return elements.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    return elements


def _as_bytes(elements: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(elements).reshape(-1).view(np.uint8)


# --- encode / decode ----------------------------------------------------------------------------


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
    return _encode_checked(_checked(values, dtype, layout, tile, col_tilize, out), dtype, layout, tile, pad_value, out)


def _encode_checked(
    values: np.ndarray, dtype: DataType, layout: Layout, tile: Tile, pad_value: float, out: np.ndarray | None
) -> np.ndarray:
    """:func:`encode` of values :func:`_checked` has passed."""
    if layout is Layout.ROW_MAJOR:
        return _row_major_bytes(values, dtype, out)
    if dtype.is_block_float:
        return _pack_tiles(_to_float32(values), dtype, tile, pad_value, out)
    if values.dtype == np.float32 and dtype in (DataType.FLOAT32, DataType.BFLOAT16):
        return _tilize_float32(values, dtype, tile, pad_value, out)
    storage = _to_storage(values, dtype)
    tiles = tilize(storage, tile, pad_value=_pad_element(pad_value, dtype))
    return _into(_as_bytes(tiles), out)


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
    The block-float packs done by chunks of tile rows (:func:`_row_pack_chunks`) of the jobs
    whose values are float32 tile rows already (views: no job holds a converted or padded copy
    while the others wait) all run in one pass over the host threads, their chunks handed out
    one at a time: a thread slowed by a busy host does fewer, and no thread waits at the end of
    each job.  The other jobs are encoded one at a time."""
    if any(out is None for _, out in jobs):
        raise MeshnnValueError("encode_many: every job needs an out array")
    checked = [(_checked(values, dtype, layout, tile, col_tilize, out), out) for values, out in jobs]

    def chunked(values: np.ndarray, out: np.ndarray) -> tuple[Any, list[Callable[[], None]] | None]:
        if not dtype.is_block_float or values.dtype != np.float32:
            return None, None
        matrices = _tile_aligned_view(values, tile)
        torch = None if matrices is None else torch_for(matrices.size)
        fmt = BlockFloatFormat.of(dtype)
        return torch, None if torch is None else _row_pack_chunks(torch, matrices, fmt, tile, out, view=True)

    _in_one_pass(checked, chunked, lambda values, out: _encode_checked(values, dtype, layout, tile, pad_value, out))


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


def _tile_aligned_view(values: np.ndarray, tile: Tile) -> np.ndarray | None:
    """``values`` as (batch, height, width) matrices when that is a view and needs no padding, else None."""
    shape = tuple(values.shape)
    if len(shape) < 2 or shape[-2] % tile.tile_shape[0] or shape[-1] % tile.tile_shape[1]:
        return None
    try:
        return values.reshape((math.prod(shape[:-2]), shape[-2], shape[-1]), copy=False)
    except ValueError:
        return None


def _checked(
    values: object, dtype: DataType, layout: Layout, tile: Tile, col_tilize: bool, out: np.ndarray | None
) -> np.ndarray:
    """:func:`encode`'s checks; ``values`` as an array, its last two dims swapped for ``col_tilize``."""
    _check_kinds(dtype, layout, tile)
    values = _check_input(values, dtype)
    if dtype.is_block_float and layout is not Layout.TILE:
        raise MeshnnValueError(BFP_NEEDS_TILE)
    if col_tilize:
        _check_col_tilize(values.ndim, layout)
        values = np.swapaxes(values, -1, -2)
    if out is not None:
        size = packed_spec(values.shape, dtype, layout, tile=tile).nbytes
        fits = isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.shape == (size,)
        if not fits or not out.flags.c_contiguous:
            raise MeshnnValueError(f"encode: out must be a C-contiguous uint8 array of {size} bytes")
    return values


def check_encodable(
    values: np.ndarray, dtype: DataType, layout: Layout, *, tile: Tile = DEFAULT_TILE, col_tilize: bool = False
) -> None:
    """Raise what :func:`encode` would raise for ``values``' kind, before anything is converted."""
    _check_kinds(dtype, layout, tile)
    _check_input(values, dtype)
    if dtype.is_block_float and layout is not Layout.TILE:
        raise MeshnnValueError(BFP_NEEDS_TILE)
    if col_tilize:
        _check_col_tilize(values.ndim, layout)


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
    return _into(_as_bytes(_to_storage(values, dtype)), out)


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


def _pack_tiles(
    values: np.ndarray, dtype: DataType, tile: Tile, pad_value: float, out: np.ndarray | None = None
) -> np.ndarray:
    """Block-float bytes of float32 ``values``: tilize and pack a cache-sized chunk at a time.
    With torch (:func:`torch_for`) and untransposed faces, chunks of whole tile rows are packed in
    the matrix's own order (:func:`_row_pack_chunks`); otherwise each chunk is tilized into
    scratch and packed, on torch's threads when torch is in use.
    (numpy on several threads of its own runs slower, not faster: its operations on a chunk are
    short, so the threads spend their time handing the interpreter lock to each other.)"""
    fmt = BlockFloatFormat.of(dtype)
    matrices = padded_matrices(values, tile, np.float32(pad_value))
    if out is None:
        out = np.empty(matrices.size // tile.values_per_tile * fmt.tile_size(tile.values_per_tile), np.uint8)
    torch = torch_for(matrices.size)
    chunks = _row_pack_chunks(torch, matrices, fmt, tile, out)
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


def _row_pack_chunks(
    torch: Any | None, matrices: np.ndarray, fmt: BlockFloatFormat, tile: Tile, out: np.ndarray, *, view: bool = False
) -> list[Callable[[], None]] | None:
    """The pack of ``matrices`` (float32, padded to whole tiles) into ``out`` (their packed bytes,
    uint8) as independent tasks of whole tile rows, each packed in the matrix's own order by its
    thread's :class:`BfpRowPacker` (no float32 tilizing copy) with ``torch``'s operations (run
    them with :func:`each_chunk`); None where that does not apply (no torch, transposed faces,
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


def _checked_raw(raw: object, dtype: DataType, layout: Layout, shape: Sequence[int], tile: Tile) -> np.ndarray:
    spec = packed_spec(shape, dtype, layout, tile=tile)
    if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8:
        raise MeshnnTypeError(f"raw tensor bytes must be a uint8 numpy array, got {type(raw).__name__}")
    if raw.size != spec.nbytes:
        raise MeshnnValueError(
            f"{raw.size} bytes do not hold a {dtype} {layout} tensor of shape {list(spec.shape)} "
            f"(it needs {spec.nbytes} bytes)"
        )
    return np.ascontiguousarray(raw).reshape(-1)


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
    raw = _checked_raw(raw, dtype, layout, shape, tile)
    shape = tuple(int(d) for d in shape)
    if out is not None:
        _check_out(out, dtype, shape)
    return _decode_checked(raw, dtype, layout, shape, tile, out)


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
    ``out`` (:func:`_row_unpack_chunks`) of all jobs run in one pass over the host threads, their
    chunks handed out one at a time; the other jobs are decoded one at a time."""
    shape = tuple(int(d) for d in shape)
    checked = []
    for raw, out in jobs:
        checked.append((_checked_raw(raw, dtype, layout, shape, tile), out))
        _check_out(out, dtype, shape)

    def chunked(raw: np.ndarray, out: np.ndarray) -> tuple[Any, list[Callable[[], None]] | None]:
        if not dtype.is_block_float or layout is not Layout.TILE:
            return None, None
        matrices = _matrices_view(out, shape, tile)
        torch = None if matrices is None else torch_for(matrices.size)
        return torch, None if torch is None else _row_unpack_chunks(
            torch, raw, matrices, BlockFloatFormat.of(dtype), tile
        )

    _in_one_pass(checked, chunked, lambda raw, out: _decode_checked(raw, dtype, layout, shape, tile, out))


def _check_out(out: object, dtype: DataType, shape: tuple[int, ...]) -> None:
    want = np.dtype(np.float32) if dtype.is_block_float else dtype.numpy_dtype
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != want:
        raise MeshnnValueError(f"decode: out must be a {want} array of shape {list(shape)}")


def _decode_checked(
    raw: np.ndarray, dtype: DataType, layout: Layout, shape: tuple[int, ...], tile: Tile, out: np.ndarray | None
) -> np.ndarray:
    """:func:`decode` of checked ``raw`` bytes (flat, C-contiguous) into a checked ``out``."""
    if layout is Layout.ROW_MAJOR:
        stored = np.float32 if dtype.is_block_float else dtype.storage_dtype
        values = _from_storage(raw.view(stored).reshape(shape), dtype)
        if out is None:
            return np.array(values, copy=True)
        parallel_copyto(out, values)
        return out
    matrices = None if out is None or dtype is DataType.FP8_E4M3 else _matrices_view(out, shape, tile)
    if dtype.is_block_float:
        result = _unpack_tiles(raw, dtype, shape, tile, matrices)
    else:
        tiles = raw.view(dtype.storage_dtype)
        if matrices is not None:
            grid = tile_view(matrices.view(dtype.storage_dtype), tile)
            parallel_copyto(grid, tiles.reshape(grid.shape))
            return out
        result = _from_storage(untilize(tiles, shape, tile), dtype)
    if out is None or result is out:
        return result
    if matrices is None:
        np.copyto(out, result)
    return out


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


def _unpack_tiles(
    raw: np.ndarray, dtype: DataType, shape: tuple[int, ...], tile: Tile, matrices: np.ndarray | None = None
) -> np.ndarray:
    """float32 values of block-float tiles: unpack and untilize a cache-sized chunk at a time
    (into ``matrices``, tile-aligned (batch, height, width) float32, when given), on torch's
    threads as in :func:`_pack_tiles`."""
    padded = padded_shape(shape, Layout.TILE, tile)
    given = matrices is not None
    if matrices is None:
        matrices = np.empty((math.prod(padded[:-2]), padded[-2], padded[-1]), np.float32)
    fmt = BlockFloatFormat.of(dtype)
    torch = torch_for(matrices.size)
    chunks = _row_unpack_chunks(torch, raw, matrices, fmt, tile)
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
    logical = (matrices.shape[0], *((1, shape[0]) if len(shape) == 1 else shape[-2:]))
    if logical != matrices.shape:
        matrices = np.ascontiguousarray(matrices[:, : logical[1], : logical[2]])
    return matrices.reshape(shape)


def _row_unpack_chunks(
    torch: Any | None, raw: np.ndarray, matrices: np.ndarray, fmt: BlockFloatFormat, tile: Tile
) -> list[Callable[[], None]] | None:
    """The unpack of block-float ``raw`` bytes into ``matrices`` (float32, tile-aligned (batch,
    height, width), any strides) as independent tasks of whole tile rows, each decoded in the
    matrix's own order by its thread's :class:`BfpRowUnpacker` with ``torch``'s operations (run
    them with :func:`each_chunk`); None where that does not apply (no torch, transposed faces,
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


# --- typecast / to_layout -----------------------------------------------------------------------


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
    _check_kinds(dst_dtype, layout, tile)
    raw = _checked_raw(raw, src_dtype, layout, shape, tile)
    if src_dtype is dst_dtype:
        return raw.copy()
    if layout is Layout.ROW_MAJOR and dst_dtype.is_block_float:
        error = _physical_shape_error(shape, tile)
        if error is not None:
            raise error
        values = decode(raw, src_dtype, layout, shape)
        return _pack_tiles(_to_float32(values), dst_dtype, tile, 0.0)
    elements = _stored_elements(raw, src_dtype, layout, tile)
    if dst_dtype.is_block_float:
        floats = _to_float32(elements).reshape(-1, tile.values_per_tile)
        return pack_bfp(floats, BlockFloatFormat.of(dst_dtype)).reshape(-1)
    return _as_bytes(_to_storage(elements, dst_dtype))


def _stored_elements(raw: np.ndarray, dtype: DataType, layout: Layout, tile: Tile) -> np.ndarray:
    """Every stored element of ``raw`` (padding included), in storage order, as numpy values."""
    if not dtype.is_block_float:
        return _from_storage(raw.view(dtype.storage_dtype), dtype)
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
    _check_kinds(dtype, to_layout, tile)
    raw = _checked_raw(raw, dtype, from_layout, shape, tile)
    if from_layout is to_layout:
        return raw.copy()
    if dtype.is_block_float:
        values = decode(raw, dtype, from_layout, shape, tile=tile)
        if to_layout is Layout.TILE:
            return _pack_tiles(values, dtype, tile, pad_value)
        return _as_bytes(values)
    elements = raw.view(dtype.storage_dtype)
    if to_layout is Layout.TILE:
        logical = elements.reshape(tuple(int(d) for d in shape))
        return _as_bytes(tilize(logical, tile, pad_value=_pad_element(pad_value, dtype)))
    return _as_bytes(untilize(elements, shape, tile))
