"""``ttnn.DataType``: the element formats of a tensor and their size arithmetic.

A size called ``*_size`` is in bytes.  Block-float formats (``BFLOAT8_B``, ``BFLOAT4_B``) exist only
in TILE layout as packed tiles (one shared exponent byte per 16 values of a face row, then the
sign+magnitude codes); in ROW_MAJOR ttnn stores them as full float32 values, so their row-major
element size is 4.

Part of the ``formats`` layer; imports only ``meshnn.errors`` (and the tile type of its sibling
``layout`` for annotations).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import numpy as np

from meshnn.errors import MeshnnValueError

if TYPE_CHECKING:
    from meshnn.formats.layout import Tile

BFP_EXPONENT_ALIGNMENT = 16
"""Bytes: a tile's shared-exponent section is zero-padded up to this (the L1 alignment)."""


class DataType(enum.Enum):
    """Element formats, numbered as ``ttnn.DataType`` numbers them."""

    __hash__ = object.__hash__  # members are singletons compared by identity; enum's own hash is Python code

    BFLOAT16 = 0
    FLOAT32 = 1
    UINT32 = 2
    BFLOAT8_B = 3
    BFLOAT4_B = 4
    UINT8 = 5
    UINT16 = 6
    INT32 = 7
    INT8 = 8
    FP8_E4M3 = 9

    def __str__(self) -> str:
        return f"DataType.{self.name}"

    def __int__(self) -> int:
        """The member's number, as ttnn's (pybind11) enums convert: ``int(ttnn.TILE_LAYOUT) == 1``."""
        return self.value

    __index__ = __int__

    @property
    def is_block_float(self) -> bool:
        """True for the shared-exponent formats bfloat8_b and bfloat4_b."""
        return self in (DataType.BFLOAT8_B, DataType.BFLOAT4_B)

    @property
    def is_integer(self) -> bool:
        return self in _INTEGER

    @property
    def is_float(self) -> bool:
        return not self.is_integer

    @property
    def magnitude_bits(self) -> int:
        """Bits of magnitude per value of a block-float format (the sign is one more bit)."""
        if self is DataType.BFLOAT8_B:
            return 7
        if self is DataType.BFLOAT4_B:
            return 3
        raise MeshnnValueError(f"{self} is not a block-float format")

    @property
    def row_major_element_size(self) -> int:
        """Bytes per element in ROW_MAJOR layout (4 for bfloat8_b/bfloat4_b: ttnn stores floats)."""
        return _ROW_MAJOR_SIZE[self]

    @property
    def storage_dtype(self) -> np.dtype | None:
        """The numpy type of one stored element (bits for bfloat16 and fp8); None for block floats."""
        return _STORAGE.get(self)

    @property
    def numpy_dtype(self) -> np.dtype:
        """The numpy type that ``to_numpy`` returns for this dtype (float32 for bfp and fp8)."""
        return _NUMPY.get(self) or bfloat16_dtype()

    def tile_size(self, tile: Tile) -> int:
        """Bytes of one tile of this dtype.

        Plain formats: ``tile elements x element size``.  Block floats: the exponent section
        (``faces x face rows`` bytes, aligned up to 16) then ``tile elements x (bits + 1) / 8`` bytes
        of codes; e.g. 32x32 bfloat8_b = 64 + 1024 = 1088, Tile([1, 32]) bfloat8_b = 16 + 32 = 48.
        """
        height, width = tile.tile_shape
        elements = height * width
        if not self.is_block_float:
            return elements * self.row_major_element_size
        exponents = tile.num_faces * tile.face_shape[0]
        return bfp_exponent_section_size(exponents) + elements * (self.magnitude_bits + 1) // 8


def bfp_exponent_section_size(exponents: int) -> int:
    """Bytes a tile reserves for ``exponents`` shared-exponent bytes (aligned up to 16)."""
    return -(-exponents // BFP_EXPONENT_ALIGNMENT) * BFP_EXPONENT_ALIGNMENT


_INTEGER = frozenset({DataType.UINT32, DataType.UINT8, DataType.UINT16, DataType.INT32, DataType.INT8})

_ROW_MAJOR_SIZE = {
    DataType.BFLOAT16: 2,
    DataType.FLOAT32: 4,
    DataType.UINT32: 4,
    DataType.BFLOAT8_B: 4,
    DataType.BFLOAT4_B: 4,
    DataType.UINT8: 1,
    DataType.UINT16: 2,
    DataType.INT32: 4,
    DataType.INT8: 1,
    DataType.FP8_E4M3: 1,
}

_STORAGE = {
    DataType.BFLOAT16: np.dtype(np.uint16),
    DataType.FLOAT32: np.dtype(np.float32),
    DataType.UINT32: np.dtype(np.uint32),
    DataType.UINT8: np.dtype(np.uint8),
    DataType.UINT16: np.dtype(np.uint16),
    DataType.INT32: np.dtype(np.int32),
    DataType.INT8: np.dtype(np.int8),
    DataType.FP8_E4M3: np.dtype(np.uint8),
}

_NUMPY = {
    DataType.FLOAT32: np.dtype(np.float32),
    DataType.UINT32: np.dtype(np.uint32),
    DataType.BFLOAT8_B: np.dtype(np.float32),
    DataType.BFLOAT4_B: np.dtype(np.float32),
    DataType.UINT8: np.dtype(np.uint8),
    DataType.UINT16: np.dtype(np.uint16),
    DataType.INT32: np.dtype(np.int32),
    DataType.INT8: np.dtype(np.int8),
    DataType.FP8_E4M3: np.dtype(np.float32),
}


_BFLOAT16: list[np.dtype] = []


def bfloat16_dtype() -> np.dtype:
    """numpy's bfloat16 (``ml_dtypes.bfloat16``), imported at its first use, not with meshnn:
    importing ml_dtypes 0.7 takes about 0.9 s, most of ``import meshnn``."""
    if not _BFLOAT16:
        import ml_dtypes

        _BFLOAT16.append(np.dtype(ml_dtypes.bfloat16))
    return _BFLOAT16[0]


def is_bfloat16(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is ml_dtypes' bfloat16 (without importing ml_dtypes: an array of it
    exists only once something has)."""
    return dtype.name == "bfloat16" and dtype.kind == "V"


class _Invalid:
    """``ttnn.DataType.INVALID``: ttnn's "no dtype" value; no tensor has it and no op takes it."""

    def __repr__(self) -> str:
        return "DataType.INVALID"


DataType.INVALID = _Invalid()  # not a member: iterating DataType gives the real formats
setattr(DataType, "__entries", {m.name: (m, None) for m in DataType})  # pybind's enum table, as ttnn scripts read it
