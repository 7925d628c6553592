"""How tensor elements are ordered in memory: ``Layout.ROW_MAJOR`` and ``Layout.TILE``.

ROW_MAJOR is C order and is never padded.  TILE pads the last two dims up to multiples of the tile
shape (1-D input is treated as ``[1, N]``), flattens all leading dims into a batch, and stores tiles
in the order batch -> tile row -> tile column.  Inside a tile the elements are grouped in faces
(``min(16, th) x min(16, tw)``) in row-major face order, each face row-major;
``Tile(..., transpose_tile=True)`` transposes the face grid and each face.  A padded dim of 0 stays
0, so empty tensors have no tiles.

Part of the ``formats`` layer; imports ``meshnn.errors`` and ``meshnn.formats.dtypes``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType

FACE_EDGE = 16
"""Elements per side of a full face."""

TILE_SHAPES = ((32, 32), (16, 32), (32, 16), (16, 16), (8, 32), (4, 32), (2, 32), (1, 32))
"""The tile shapes ttnn accepts, (height, width) in elements."""


class Layout(enum.Enum):
    """Element order of a tensor's buffer (``ttnn.Layout``)."""

    __hash__ = object.__hash__  # members are singletons compared by identity; enum's own hash is Python code

    ROW_MAJOR = 0
    TILE = 1

    def __str__(self) -> str:
        return f"Layout.{self.name}"

    def __int__(self) -> int:
        """The member's number, as ttnn's (pybind11) enums convert: ``int(ttnn.TILE_LAYOUT) == 1``."""
        return self.value

    __index__ = __int__


@dataclass(frozen=True, slots=True)
class Tile:
    """A tile shape (``ttnn.Tile``): ``tile_shape`` is (height, width) in elements."""

    tile_shape: tuple[int, int] = (32, 32)
    transpose_tile: bool = False

    def __post_init__(self) -> None:
        try:
            shape = tuple(int(d) for d in self.tile_shape)
            exact = all(d == s for d, s in zip(shape, self.tile_shape, strict=True))
        except (TypeError, ValueError):
            exact = False
        if not exact:
            raise MeshnnTypeError(f"tile_shape must be two integers, got {self.tile_shape!r}")
        if shape not in TILE_SHAPES:
            allowed = ", ".join(str(list(s)) for s in TILE_SHAPES)
            raise MeshnnValueError(f"unsupported tile shape {list(shape)}; ttnn tiles are {allowed}")
        object.__setattr__(self, "tile_shape", shape)
        object.__setattr__(self, "transpose_tile", bool(self.transpose_tile))

    @property
    def face_shape(self) -> tuple[int, int]:
        height, width = self.tile_shape
        return (min(FACE_EDGE, height), min(FACE_EDGE, width))

    @property
    def face_grid(self) -> tuple[int, int]:
        """Faces per tile column and per tile row."""
        (height, width), (face_height, face_width) = self.tile_shape, self.face_shape
        return (height // face_height, width // face_width)

    @property
    def num_faces(self) -> int:
        rows, cols = self.face_grid
        return rows * cols

    @property
    def transpose_within_face(self) -> bool:
        return self.transpose_tile

    @property
    def transpose_of_faces(self) -> bool:
        return self.transpose_tile

    @property
    def values_per_tile(self) -> int:
        height, width = self.tile_shape
        return height * width

    def get_tile_size(self, dtype: DataType) -> int:
        """Bytes of one tile of ``dtype``."""
        return dtype.tile_size(self)


DEFAULT_TILE = Tile()
"""The 32x32 tile every TILE tensor has unless told otherwise."""


def tile_size(dtype: DataType) -> int:
    """``ttnn.tile_size(dtype)``: bytes of one 32x32 tile of ``dtype`` (bfloat8_b 1088, bfloat4_b 576)."""
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"tile_size: dtype must be a ttnn.DataType, got {dtype!r}")
    return dtype.tile_size(DEFAULT_TILE)


def element_size(dtype: DataType) -> int:
    """``ttnn.element_size(dtype)``: bytes of one element of ``dtype``; a block float (bfloat8_b,
    bfloat4_b) has none of its own (its exponents are shared) and is refused."""
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"element_size: dtype must be a ttnn.DataType, got {dtype!r}")
    if dtype.is_block_float:
        raise MeshnnValueError(f"element_size: {dtype} is a block float; its elements share exponents, so no size")
    return dtype.row_major_element_size


def _check_shape(shape: Sequence[int]) -> tuple[int, ...]:
    dims = tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise MeshnnValueError(f"shape dims must be non-negative, got {list(dims)}")
    return dims


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def padded_shape(shape: Sequence[int], layout: Layout, tile: Tile = DEFAULT_TILE) -> tuple[int, ...]:
    """The shape the buffer holds: ROW_MAJOR as given (a scalar as ``[1]``: tt-metal's padded shape
    has at least the rank of its row-major alignment, one dim); TILE with the last two dims rounded
    up to the tile (1-D ``[N]`` becomes 2-D ``[th, round_up(N)]``; ``[0, 32]`` stays ``[0, 32]``)."""
    dims = _check_shape(shape)
    if layout is Layout.ROW_MAJOR:
        return dims or (1,)
    if len(dims) <= 1:  # a scalar is one value in one tile, as ttnn pads it: [1] -> [32, 32]
        dims = (1, *dims) if dims else (1, 1)
    *outer, height, width = dims
    tile_height, tile_width = tile.tile_shape
    return (*outer, _round_up(height, tile_height), _round_up(width, tile_width))


def physical_shape(shape: Sequence[int], layout: Layout, tile: Tile = DEFAULT_TILE) -> tuple[int, int]:
    """The 2-D shape of the buffer: (product of all padded dims but the last, last padded dim)."""
    padded = padded_shape(shape, layout, tile)
    if not padded:
        return (1, 1)
    return (math.prod(padded[:-1]), padded[-1])


def tile_count(shape: Sequence[int], tile: Tile = DEFAULT_TILE) -> int:
    """Tiles of a TILE-layout tensor of logical ``shape``."""
    return math.prod(padded_shape(shape, Layout.TILE, tile)) // tile.values_per_tile


def _as_batch_of_matrices(shape: Sequence[int]) -> tuple[int, int, int]:
    """(batch, height, width) of a logical shape, for tiling (rank >= 1)."""
    dims = _check_shape(shape)
    if len(dims) <= 1:  # a scalar tiles as a [1, 1] matrix
        return (1, 1, dims[0] if dims else 1)
    return (math.prod(dims[:-2]), dims[-2], dims[-1])


def tile_view(matrices: np.ndarray, tile: Tile) -> np.ndarray:
    """A view of ``matrices`` (batch, height, width; height and width multiples of the tile) as
    (tile rows, tiles per row, face-grid-a, face-grid-b, face-a, face-b), whose C order is TTNN's
    tile order.  Writing into it writes into ``matrices`` when ``matrices`` is C-contiguous."""
    batch, height, width = matrices.shape
    (tile_height, tile_width), (face_height, face_width) = tile.tile_shape, tile.face_shape
    grid_rows, grid_cols = tile.face_grid
    split = matrices.reshape(
        batch * height // tile_height, grid_rows, face_height, width // tile_width, grid_cols, face_width
    )
    if tile.transpose_tile:
        return split.transpose(0, 3, 4, 1, 5, 2)
    return split.transpose(0, 3, 1, 4, 2, 5)


def tile_chunks(rows: int, cols: int, max_tiles: int) -> Iterator[tuple[slice, slice, int, int]]:
    """Split a grid of ``rows`` x ``cols`` tiles into chunks of at most ``max_tiles`` tiles (whole
    rows when a row fits), yielding (row slice, col slice, first tile index, tile count); each
    chunk is a contiguous run of tiles in TTNN order."""
    if cols == 0:
        return
    if cols <= max_tiles:
        step = max_tiles // cols
        for row in range(0, rows, step):
            stop = min(rows, row + step)
            yield slice(row, stop), slice(0, cols), row * cols, (stop - row) * cols
        return
    for row in range(rows):
        for col in range(0, cols, max_tiles):
            stop = min(cols, col + max_tiles)
            yield slice(row, row + 1), slice(col, stop), row * cols + col, stop - col


def padded_matrices(values: np.ndarray, tile: Tile, pad_value: object) -> np.ndarray:
    """``values`` as (batch, padded height, padded width), padded with ``pad_value`` (already in
    ``values``' dtype) where the last two dims are not tile multiples; a view when no padding."""
    batch, height, width = _as_batch_of_matrices(values.shape)
    matrices = values.reshape(batch, height, width)
    tile_height, tile_width = tile.tile_shape
    padded = (batch, _round_up(height, tile_height), _round_up(width, tile_width))
    if padded == matrices.shape:
        return matrices
    out = np.full(padded, pad_value, dtype=values.dtype)
    out[:, :height, :width] = matrices
    return out


def tilize(
    values: np.ndarray, tile: Tile = DEFAULT_TILE, *, pad_value: object = 0, out: np.ndarray | None = None
) -> np.ndarray:
    """``values`` (rank >= 1) as tiles in TTNN order: an (n_tiles, values_per_tile) array.

    ``pad_value`` fills the padding (cast to ``values``' dtype).  ``out`` (C-contiguous,
    n_tiles x values_per_tile) may have another dtype: the elements are cast into it.
    """
    matrices = padded_matrices(values, tile, pad_value)
    n_tiles = matrices.size // tile.values_per_tile
    if out is None:
        out = np.empty((n_tiles, tile.values_per_tile), values.dtype)
    elif out.shape != (n_tiles, tile.values_per_tile) or not out.flags.c_contiguous:
        raise MeshnnValueError(
            f"tilize output must be C-contiguous of shape {(n_tiles, tile.values_per_tile)}, got {out.shape}"
        )
    if n_tiles:
        grid = tile_view(matrices, tile)
        np.copyto(out.reshape(grid.shape), grid, casting="unsafe")
    return out


def untilize(tiles: np.ndarray, shape: Sequence[int], tile: Tile = DEFAULT_TILE) -> np.ndarray:
    """The logical array of ``shape`` (padding dropped) held by TTNN-ordered ``tiles`` (any array of
    n_tiles x values_per_tile elements)."""
    batch, height, width = _as_batch_of_matrices(shape)
    tile_height, tile_width = tile.tile_shape
    padded = (batch, _round_up(height, tile_height), _round_up(width, tile_width))
    if tiles.size != math.prod(padded):
        raise MeshnnValueError(
            f"{tiles.size} tiled elements do not hold shape {list(shape)} in {list(tile.tile_shape)} tiles "
            f"(padded {list(padded)} needs {math.prod(padded)})"
        )
    if padded[1] == tile_height and height <= tile.face_shape[0] and not tile.transpose_tile and tiles.size:
        return _first_face_rows(tiles, padded, height, width, tile).reshape(tuple(shape))
    matrices = np.empty(padded, tiles.dtype)
    if tiles.size:
        grid = tile_view(matrices, tile)
        np.copyto(grid, tiles.reshape(grid.shape))
    if padded != (batch, height, width):
        matrices = np.ascontiguousarray(matrices[:, :height, :width])
    return matrices.reshape(tuple(shape))


def _first_face_rows(tiles: np.ndarray, padded: tuple[int, ...], height: int, width: int, tile: Tile) -> np.ndarray:
    """:func:`untilize` of matrices one tile high whose ``height`` rows all lie in the first row of
    faces: only those rows are read (a decode step's one row per user in a 32-row tile reads 1 of
    32), the same values as untilizing the whole tiles and dropping the padding."""
    batch, _, padded_width = padded
    (_, tile_width), (_, face_width) = tile.tile_shape, tile.face_shape
    grid_rows, grid_cols = tile.face_grid
    face_height = tile.face_shape[0]
    split = tiles.reshape(batch, padded_width // tile_width, grid_rows, grid_cols, face_height, face_width)
    rows = split[:, :, 0, :, :height, :].transpose(0, 3, 1, 2, 4)  # (batch, height, tiles, faces, face width)
    return np.ascontiguousarray(rows.reshape(batch, height, padded_width)[:, :, :width])


def pad(values: np.ndarray, output_shape: Sequence[int], input_start: Sequence[int], pad_value: object) -> np.ndarray:
    """ttnn's host ``Tensor.pad``: an array of ``output_shape`` filled with ``pad_value`` holding
    ``values`` (left-padded with 1s to the same rank) at offset ``input_start``."""
    target = _check_shape(output_shape)
    start = _check_shape(input_start)
    if values.ndim > len(target) or len(start) != len(target):
        raise MeshnnValueError(
            f"pad: output shape {list(target)} and start {list(start)} must have the rank of the tensor "
            f"({values.ndim}) or more"
        )
    source = values.reshape((1,) * (len(target) - values.ndim) + values.shape)
    if any(s + d > t for s, d, t in zip(start, source.shape, target, strict=True)):
        raise MeshnnValueError(
            f"pad: a tensor of shape {list(source.shape)} at {list(start)} does not fit in {list(target)}"
        )
    out = np.full(target, pad_value, dtype=values.dtype)
    out[tuple(slice(s, s + d) for s, d in zip(start, source.shape, strict=True))] = source
    return out


def pad_to_tile(values: np.ndarray, pad_value: object, tile: Tile = DEFAULT_TILE) -> np.ndarray:
    """ttnn's host ``Tensor.pad_to_tile`` in ROW_MAJOR: the last two dims padded up to tile
    multiples with ``pad_value``, data at the origin."""
    target = padded_shape(values.shape, Layout.TILE, tile)
    return pad(values, target, (0,) * len(target), pad_value)


def pad_to_tile_shape(unpadded_shape: Sequence[int]) -> list[int]:
    """``ttnn.pad_to_tile_shape``: a 4-D shape (a list or a ``ttnn.Shape``) with its last two dims
    rounded up to 32 (the default tile's height and width, in elements), as a new list of ints.
    ttnn binds it for exactly 4 uint32 dims; anything else is refused with a TypeError (as its
    binding's), naming the argument."""
    if isinstance(unpadded_shape, (str, bytes)) or not isinstance(unpadded_shape, Sequence):
        raise MeshnnTypeError(f"pad_to_tile_shape: unpadded_shape must be a list of 4 ints, got {unpadded_shape!r}")
    dims = list(unpadded_shape)
    if len(dims) != 4 or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise MeshnnTypeError(f"pad_to_tile_shape: unpadded_shape must be 4 non-negative ints, got {dims!r}")
    height, width = DEFAULT_TILE.tile_shape
    return [*dims[:2], _round_up(dims[2], height), _round_up(dims[3], width)]
