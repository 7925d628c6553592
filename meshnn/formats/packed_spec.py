"""What a tensor's packed bytes are, and the checks the codec makes before converting anything.

``packed_spec`` gives the shape, padded shape and byte size of a tensor of a dtype and layout
without converting it; the checks refuse, with ttnn's messages where ttnn has one, a dtype,
layout or tile of the wrong kind, values of a kind that cannot be converted, a block-float
ROW_MAJOR tensor, and host bytes or ``out`` arrays that do not fit the spec.

Part of the ``formats`` layer; imports ``meshnn.errors`` and ``meshnn.formats`` (dtypes, layout,
elements).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.elements import check_input
from meshnn.formats.layout import DEFAULT_TILE, Layout, Tile, padded_shape

BFP_NEEDS_TILE = "Layout must be Layout::TILE for bfloat8_b or bfloat4_b!"
"""ttnn's message (py_to_tt_tensor.cpp) when a bfloat8_b/bfloat4_b tensor is asked for ROW_MAJOR."""


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
    check_kinds(dtype, layout, tile)
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


def check_kinds(dtype: object, layout: object, tile: object) -> None:
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


def checked_values(
    values: object, dtype: DataType, layout: Layout, tile: Tile, col_tilize: bool, out: np.ndarray | None
) -> np.ndarray:
    """``codec.encode``'s checks; ``values`` as an array, its last two dims swapped for ``col_tilize``."""
    check_kinds(dtype, layout, tile)
    values = check_input(values, dtype)
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
    """Raise what ``codec.encode`` would raise for ``values``' kind, before anything is converted."""
    check_kinds(dtype, layout, tile)
    check_input(values, dtype)
    if dtype.is_block_float and layout is not Layout.TILE:
        raise MeshnnValueError(BFP_NEEDS_TILE)
    if col_tilize:
        _check_col_tilize(values.ndim, layout)


def checked_raw(raw: object, dtype: DataType, layout: Layout, shape: Sequence[int], tile: Tile) -> np.ndarray:
    spec = packed_spec(shape, dtype, layout, tile=tile)
    if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8:
        raise MeshnnTypeError(f"raw tensor bytes must be a uint8 numpy array, got {type(raw).__name__}")
    if raw.size != spec.nbytes:
        raise MeshnnValueError(
            f"{raw.size} bytes do not hold a {dtype} {layout} tensor of shape {list(spec.shape)} "
            f"(it needs {spec.nbytes} bytes)"
        )
    return np.ascontiguousarray(raw).reshape(-1)


def check_out(out: object, dtype: DataType, shape: tuple[int, ...]) -> None:
    want = np.dtype(np.float32) if dtype.is_block_float else dtype.numpy_dtype
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != want:
        raise MeshnnValueError(f"decode: out must be a {want} array of shape {list(shape)}")
