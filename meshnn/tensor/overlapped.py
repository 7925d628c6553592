"""``ttnn.OverlappedTensor`` (tt-metal 2026): a view of one sub-tensor inside a fused device buffer.

A model that packs several small weights into one sharded buffer (DeepSeek-V3's decode kernels do)
keeps the fused tensor once and describes each part by its own 2-D shape, shard shape, cores, dtype,
tile shape and byte offset; the fused tensor's own spec says nothing about the parts.  The view is
plain data, as ttnn's: every field can be read and set (each set checked), and ``get_tile()`` gives
the part's ``ttnn.Tile``.  Shapes are (rows, columns) in elements; ``byte_offset`` and
``total_size`` are bytes within each core's shard of the fused buffer.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats` and the tensor layer.
"""

from __future__ import annotations

from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Tile
from meshnn.tensor.tensor import Tensor

_UINT32 = 2**32
_UINT64 = 2**64


def _pair(name: str, value: object) -> tuple[int, int]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise MeshnnTypeError(f"OverlappedTensor: {name} must be two unsigned ints, got {value!r}")
    return (_uint(name, value[0], _UINT32), _uint(name, value[1], _UINT32))


def _uint(name: str, value: object, bound: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < bound:
        raise MeshnnTypeError(f"OverlappedTensor: {name} must be an unsigned int below {bound}, got {value!r}")
    return value


_CHECKS = {
    "fused_tensor": lambda v: v if isinstance(v, Tensor) else _bad("fused_tensor", "a ttnn.Tensor", v),
    "tensor_shape": lambda v: _pair("tensor_shape", v),
    "shard_shape": lambda v: _pair("shard_shape", v),
    "core_range_set": lambda v: v if isinstance(v, CoreRangeSet) else _bad("core_range_set", "a ttnn.CoreRangeSet", v),
    "dtype": lambda v: v if isinstance(v, DataType) else _bad("dtype", "a ttnn.DataType", v),
    "tile_shape": lambda v: _pair("tile_shape", v),
    "byte_offset": lambda v: _uint("byte_offset", v, _UINT64),
    "total_size": lambda v: _uint("total_size", v, _UINT64),
}


def _bad(name: str, what: str, value: object) -> object:
    raise MeshnnTypeError(f"OverlappedTensor: {name} must be {what}, got {type(value).__name__}")


class OverlappedTensor:
    """``ttnn.OverlappedTensor(fused_tensor, tensor_shape, shard_shape, core_range_set, dtype,
    tile_shape, byte_offset=0, total_size=0)``: one part of a fused buffer (see the module's text)."""

    fused_tensor: Tensor
    tensor_shape: tuple[int, int]
    shard_shape: tuple[int, int]
    core_range_set: CoreRangeSet
    dtype: DataType
    tile_shape: tuple[int, int]
    byte_offset: int
    total_size: int

    def __init__(
        self,
        fused_tensor: Tensor,
        tensor_shape: tuple[int, int],
        shard_shape: tuple[int, int],
        core_range_set: CoreRangeSet,
        dtype: DataType,
        tile_shape: tuple[int, int],
        byte_offset: int = 0,
        total_size: int = 0,
    ) -> None:
        given = dict(fused_tensor=fused_tensor, tensor_shape=tensor_shape, shard_shape=shard_shape,
                     core_range_set=core_range_set, dtype=dtype, tile_shape=tile_shape, byte_offset=byte_offset,
                     total_size=total_size)  # fmt: skip
        checked = {name: _CHECKS[name](value) for name, value in given.items()}  # all checked before any is set
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        if name not in _CHECKS:
            raise AttributeError(f"OverlappedTensor has no attribute {name!r}")
        object.__setattr__(self, name, _CHECKS[name](value))

    def get_tile(self) -> Tile:
        """The part's tile, of ``tile_shape``."""
        return Tile(list(self.tile_shape))

    def __repr__(self) -> str:
        return (
            f"OverlappedTensor(tensor_shape={self.tensor_shape}, shard_shape={self.shard_shape}, "
            f"dtype={self.dtype}, tile_shape={self.tile_shape}, byte_offset={self.byte_offset}, "
            f"total_size={self.total_size})"
        )
