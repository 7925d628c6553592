"""Circular buffers and semaphores of a program descriptor: ``ttnn.TileDescriptor``,
``ttnn.FaceGeometry``, ``ttnn.CBFormatDescriptor``, ``ttnn.CBDescriptor``,
``ttnn.SemaphoreDescriptor``, and ``ttnn.cb_descriptor_from_sharded_tensor`` /
``ttnn.get_cb_address`` (a circular buffer placed in a sharded tensor's L1).

Sizes are bytes.  A format descriptor's ``data_format`` is given as a ``ttnn.DataType`` and read
back as one (ttnn's getter of the unbound ``tt::DataFormat`` fails; ``data_format_as_uint8`` gives
tt-metal's raw number, as in ttnn).  What tt-metal checks when it builds the program (page sizes
dividing the total, buffer indices, offsets) is checked by ``ttnn.generic_op``
(:func:`check_cb`), as tt-metal checks it then, not at construction.

Layer: ops.  Imports errors, device, formats, mesh and tensor.
"""

from __future__ import annotations

from typing import Any

from meshnn.device.arch import Arch
from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Tile
from meshnn.mesh.global_circular_buffer import GlobalCircularBuffer
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.ops.generic import fields as f
from meshnn.ops.generic.enums import CoreType, DataFormat, data_format_of
from meshnn.tensor.tensor import Tensor

L1_ALIGNMENT = 16
"""Bytes: a circular buffer's offset into its tensor is a multiple of this (tt-metal's L1 alignment)."""
NUM_CIRCULAR_BUFFERS = {Arch.WORMHOLE_B0: 32, Arch.BLACKHOLE: 64}
"""Circular buffers per core, by arch (tt-metal's HAL figure)."""
FACE_HEIGHT = 16


class TileDescriptor:
    """``ttnn.TileDescriptor()`` (32x32), ``(height, width, transpose=False)``, ``(tile)`` from a
    ``ttnn.Tile``, or ``(other)`` a copy; elements."""

    height = f.Field(f.uint(32))
    width = f.Field(f.uint(32))
    transpose = f.Field(f.boolean)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        source = args[0] if len(args) == 1 and not kwargs else kwargs.get("tile", kwargs.get("other"))
        if isinstance(source, Tile) and len(args) + len(kwargs) == 1:
            (self.height, self.width), self.transpose = source.tile_shape, source.transpose_tile
            return
        if isinstance(source, TileDescriptor) and len(args) + len(kwargs) == 1:
            self.height, self.width, self.transpose = source.height, source.width, source.transpose
            return
        if not args and not kwargs:
            self.height, self.width, self.transpose = 32, 32, False
            return
        given = f.bind(
            "ttnn.TileDescriptor", {"height": f.REQUIRED, "width": f.REQUIRED, "transpose": False}, args, kwargs
        )
        self.height, self.width, self.transpose = given["height"], given["width"], given["transpose"]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TileDescriptor):
            return NotImplemented
        return (self.height, self.width, self.transpose) == (other.height, other.width, other.transpose)

    def __hash__(self) -> int:
        return hash((self.height, self.width, self.transpose))

    def __repr__(self) -> str:
        return f"TileDescriptor({self.height}x{self.width}{',T' if self.transpose else ''})"


class FaceGeometry:
    """``ttnn.FaceGeometry()`` (16-row faces, 4 of them) or ``(face_r_dim, num_faces)``."""

    face_r_dim = f.Field(f.uint(32))
    num_faces = f.Field(f.uint(32))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not args and not kwargs:
            self.face_r_dim, self.num_faces = FACE_HEIGHT, 4
            return
        given = f.bind("ttnn.FaceGeometry", {"face_r_dim": f.REQUIRED, "num_faces": f.REQUIRED}, args, kwargs)
        self.face_r_dim, self.num_faces = given["face_r_dim"], given["num_faces"]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FaceGeometry):
            return NotImplemented
        return (self.face_r_dim, self.num_faces) == (other.face_r_dim, other.num_faces)

    __hash__ = None  # type: ignore[assignment]  (mutable)


def _dtype(where: str, value: Any) -> DataType:
    data_format_of(value, where)  # (a DataType, or the error)
    return value


class CBFormatDescriptor:
    """``ttnn.CBFormatDescriptor()`` or ``(buffer_index, data_format, page_size, tile=None)``: one
    circular buffer index of a :class:`CBDescriptor`, its format and its page size in bytes."""

    buffer_index = f.Field(f.uint(8))
    data_format = f.Field(_dtype)
    page_size = f.Field(f.uint(32))
    tile = f.Field(f.optional(f.instance(TileDescriptor)))
    face_geometry = f.Field(f.optional(f.instance(FaceGeometry)))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.face_geometry = None
        if not args and not kwargs:
            self.buffer_index, self.data_format, self.page_size, self.tile = 0, DataType.FLOAT32, 0, None
            return
        params = {"buffer_index": f.REQUIRED, "data_format": f.REQUIRED, "page_size": f.REQUIRED, "tile": None}
        given = f.bind("ttnn.CBFormatDescriptor", params, args, kwargs)
        self.buffer_index, self.data_format = given["buffer_index"], given["data_format"]
        self.page_size, self.tile = given["page_size"], given["tile"]

    @property
    def data_format_as_uint8(self) -> int:
        """tt-metal's raw ``tt::DataFormat`` number of :attr:`data_format`."""
        return int(data_format_of(self.data_format, "data_format"))

    @property
    def format(self) -> DataFormat:
        """tt-metal's format of :attr:`data_format`."""
        return data_format_of(self.data_format, "data_format")

    def __repr__(self) -> str:
        return f"CBFormatDescriptor({self.buffer_index}, {self.data_format}, page_size={self.page_size})"


_formats = f.list_of(f.instance(CBFormatDescriptor))


class CBDescriptor:
    """``ttnn.CBDescriptor()`` or ``(total_size, core_ranges, format_descriptors)``: a circular
    buffer of ``total_size`` bytes on each core of ``core_ranges``, placed by the program unless it
    has a buffer (a sharded tensor's L1: :func:`cb_descriptor_from_sharded_tensor`), then at the
    buffer's address plus ``address_offset`` bytes."""

    total_size = f.Field(f.uint(32))
    core_ranges = f.Field(f.core_ranges)
    format_descriptors = f.Field(_formats)
    remote_format_descriptors = f.Field(_formats)
    address_offset = f.Field(f.uint(32))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.remote_format_descriptors, self.address_offset = [], 0
        self.buffer: MeshBuffer | None = None
        self.global_circular_buffer: GlobalCircularBuffer | None = None
        if not args and not kwargs:
            self.total_size, self.core_ranges, self.format_descriptors = 0, CoreRangeSet(), []
            return
        params = {"total_size": f.REQUIRED, "core_ranges": f.REQUIRED, "format_descriptors": f.REQUIRED}
        given = f.bind("ttnn.CBDescriptor", params, args, kwargs)
        self.total_size, self.core_ranges = given["total_size"], given["core_ranges"]
        self.format_descriptors = given["format_descriptors"]

    def has_buffer(self) -> bool:
        return self.buffer is not None

    def buffer_address(self) -> int | None:
        """The L1 address of the pinned buffer (None: none)."""
        return None if self.buffer is None else self.buffer.address()

    def set_buffer_from_cb(self, other: CBDescriptor) -> None:
        self.buffer = f.instance(CBDescriptor)("ttnn.CBDescriptor.set_buffer_from_cb: other", other).buffer

    def has_global_circular_buffer(self) -> bool:
        return self.global_circular_buffer is not None

    def set_global_circular_buffer(self, global_circular_buffer: GlobalCircularBuffer) -> None:
        where = "ttnn.CBDescriptor.set_global_circular_buffer: global_circular_buffer"
        self.global_circular_buffer = f.instance(GlobalCircularBuffer)(where, global_circular_buffer)

    def set_global_circular_buffer_from_cb(self, other: CBDescriptor) -> None:
        where = "ttnn.CBDescriptor.set_global_circular_buffer_from_cb: other"
        self.global_circular_buffer = f.instance(CBDescriptor)(where, other).global_circular_buffer

    def __repr__(self) -> str:
        return f"CBDescriptor(total_size={self.total_size}, core_ranges={self.core_ranges}, {self.format_descriptors})"


def cb_descriptor_from_sharded_tensor(
    cb_index: int,
    tensor: Tensor,
    address_offset: int = 0,
    total_size: int = 0,
    core_ranges: CoreRangeSet | None = None,
) -> CBDescriptor:
    """``ttnn.cb_descriptor_from_sharded_tensor``: a circular buffer in the L1 of a sharded device
    tensor, at ``address_offset`` bytes into each core's shard, ``total_size`` bytes (0: the whole
    bank), on ``core_ranges`` (None: the shard grid); one format, the tensor's dtype, aligned page
    size and tile."""
    op = "ttnn.cb_descriptor_from_sharded_tensor"
    index = f.uint(8)(f"{op}: cb_index", cb_index)
    offset, size = f.uint(32)(f"{op}: address_offset", address_offset), f.uint(32)(f"{op}: total_size", total_size)
    if core_ranges is not None:
        f.core_ranges(f"{op}: core_ranges", core_ranges)
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"{op}: tensor must be a ttnn.Tensor, got {type(tensor).__name__}")
    buffer = tensor.mesh_buffer()  # refuses a host, deallocated or closed tensor, by name
    if not tensor.memory_config().is_sharded():
        raise MeshnnValueError(f"{op}: tensor must be sharded to automatically create a CBDescriptor")
    bank = bank_size(buffer)
    if offset + size > bank:
        raise MeshnnValueError(
            f"{op}: address_offset {offset} + total_size {size} exceeds the buffer's bank ({bank} B)"
        )
    spec = tensor.spec
    tile = TileDescriptor(spec.tile) if spec.tile is not None else TileDescriptor()
    page = buffer.get_reference_buffer().aligned_page_size()
    grid = core_ranges if core_ranges is not None else tensor.memory_config().shard_spec.grid
    cb = CBDescriptor(size or bank, grid, [CBFormatDescriptor(index, spec.dtype, page, tile)])
    cb.buffer, cb.address_offset = buffer, offset
    return cb


def bank_size(buffer: MeshBuffer) -> int:
    """Bytes of one bank (core) of a sharded buffer: its shard's pages at the aligned page size."""
    shard = buffer.layout.shard
    return shard.pages_per_core * buffer.get_reference_buffer().aligned_page_size()


def get_cb_address(descriptor: CBDescriptor) -> int:
    """``ttnn.get_cb_address``: the buffer's address plus ``address_offset``, or the offset alone."""
    cb = f.instance(CBDescriptor)("ttnn.get_cb_address: descriptor", descriptor)
    return cb.address_offset + (cb.buffer.address() if cb.buffer is not None else 0)


class SemaphoreDescriptor:
    """``ttnn.SemaphoreDescriptor()`` or ``(id, core_type=WORKER, core_ranges, initial_value)``: a
    semaphore of the program on each core of ``core_ranges`` (``id`` is read-only, as in ttnn)."""

    core_type = f.Field(f.member(CoreType))
    core_ranges = f.Field(f.core_ranges)
    initial_value = f.Field(f.uint(32))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not args and not kwargs:
            self._id, self.core_type, self.core_ranges, self.initial_value = 0, CoreType.WORKER, CoreRangeSet(), 0
            return
        params = {
            "id": f.REQUIRED,
            "core_type": CoreType.WORKER,
            "core_ranges": f.REQUIRED,
            "initial_value": f.REQUIRED,
        }
        given = f.bind("ttnn.SemaphoreDescriptor", params, args, kwargs)
        self._id = f.uint(32)("ttnn.SemaphoreDescriptor.id", given["id"])
        self.core_type, self.core_ranges = given["core_type"], given["core_ranges"]
        self.initial_value = given["initial_value"]

    @property
    def id(self) -> int:
        return self._id
