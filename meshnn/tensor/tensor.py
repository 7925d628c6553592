"""Tensor = spec + storage + topology (``ttnn.Tensor``).

The spec describes one shard; the storage is host (a packed-byte buffer per mesh coordinate) or
device (a MeshBuffer and the coordinates it populates); the topology says how the shards sit on
the mesh.  A device tensor keeps its MeshBuffer alive: when nothing refers to it any more the
MeshBuffer frees its address on every device, as ttnn's do.  Views (reshape, get_device_tensors)
share the MeshBuffer; deallocating any of them frees it for all (``force=True``, ttnn's default).
This module holds the class, the check every tensor function makes of its argument
(:func:`check_tensor`) and :func:`host_tensor_from_array`.  ``a == b`` is ``ttnn.eq(a, b)``, as in ttnn.

Layer: tensor.  Imports errors, mesh, the byte formats (dtypes, layout) and the tensor modules
spec, memory_config, storage, topology, mappers and arrays; the tensor functions its methods call
(placement, readback, interop, conversions, reshape, lifetime) import this module, so it imports
them inside those methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from meshnn.errors import DeallocatedError, DeviceClosedError, MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import Device, MeshDevice
from meshnn.tensor.arrays import MappedArray, as_array, flat_list_array, infer_dtype, map_array, torch_dtype_of
from meshnn.tensor.host_padding import HostPadding
from meshnn.tensor.mappers import TensorToMesh
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import Shape, TensorSpec
from meshnn.tensor.storage import DeviceStorage, DistributedHostBuffer, HostStorage, StorageType
from meshnn.tensor.topology import TensorTopology, check_made_for

if TYPE_CHECKING:
    from meshnn.tensor.composers import MeshToTensor


def _operator(name: str, *args: object) -> Tensor:
    from meshnn.tensor.device_hooks import operator  # registered by the ops layer

    return operator(name, *args)


def check_tensor(tensor: object, what: str = "tensor") -> Tensor:
    """``tensor``, once it is known to be a usable ttnn.Tensor (raises otherwise)."""
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"{what} must be a ttnn.Tensor, got {type(tensor).__name__}")
    tensor.check_usable(what)
    return tensor


class Tensor(HostPadding):
    """A ttnn tensor on the host or on a mesh device."""

    __slots__ = ("__weakref__", "_spec", "_storage", "_topology")

    def __init__(
        self,
        data: Any = None,
        data_type: DataType | Sequence[int] | None = None,
        device: MeshDevice | DataType | None = None,
        layout: Layout | None = None,
        mem_config: MemoryConfig | None = None,
        tile: Tile | None = None,
        cq_id: int | None = None,
        pad_value: float | None = None,
        mesh_mapper: TensorToMesh | None = None,
        *,
        dtype: DataType | None = None,
        memory_config: MemoryConfig | None = None,
        col_tilize: bool = False,
    ) -> None:
        if data is None:
            raise MeshnnTypeError("Tensor needs data: a numpy array, a torch tensor or a list")
        if isinstance(data, Tensor):  # ttnn's copy constructor: another handle on the same storage
            self._share(data, data_type, device, layout, mem_config, dtype, memory_config)
            return
        if isinstance(data, list | tuple) and isinstance(data_type, list | tuple | Shape):
            # ttnn.Tensor(values, shape, dtype, layout[, device]): the flat-list form
            array, data_type = flat_list_array(data, data_type, device), device
            layout = layout if isinstance(layout, Layout) else None
            device, mem_config = (mem_config, None) if isinstance(mem_config, MeshDevice) else (None, mem_config)
            if isinstance(tile, MemoryConfig):  # (values, shape, dtype, layout, device, memory_config)
                mem_config, tile = tile, None
        else:
            array = None
        target = dtype if dtype is not None else data_type
        if target is not None and not isinstance(target, DataType):
            raise MeshnnTypeError(f"dtype must be a ttnn DataType, got {target!r}")
        if array is None:
            target = torch_dtype_of(data, target)
            array = as_array(data, target)
        target = target or infer_dtype(array)
        if device is not None and not isinstance(device, MeshDevice):
            raise MeshnnTypeError(f"device must be a MeshDevice, got {type(device).__name__}")
        if layout is None:
            layout = Layout.TILE if target.is_block_float else Layout.ROW_MAJOR
        fill = 0.0 if pad_value is None else pad_value
        if isinstance(mesh_mapper, TensorToMesh):
            check_made_for("mesh_mapper", mesh_mapper.mesh_device, device)
        mapped = map_array(
            array, target, layout, tile=tile, pad_value=fill, mesh_mapper=mesh_mapper, col_tilize=col_tilize
        )
        self._take(mapped, device, memory_config if memory_config is not None else mem_config, cq_id)

    def _take(
        self, mapped: MappedArray, device: MeshDevice | None, config: MemoryConfig | None, cq_id: int | None
    ) -> None:
        """Become ``mapped``: as host storage, or written straight to ``device`` (no host copy is kept)."""
        if device is None:
            spec = mapped.spec if config is None else mapped.spec.with_memory_config(config)
            self._spec, self._storage, self._topology = spec, mapped.host_storage(), mapped.topology
            return
        from meshnn.tensor.lifetime import track_view
        from meshnn.tensor.placement import mapped_to_device

        placed = mapped_to_device(mapped, device, config, cq_id)
        self._spec, self._storage, self._topology = placed._spec, placed._storage, placed._topology
        track_view(self)  # self, not ``placed``, is the tensor the caller holds

    def _share(self, other: Tensor, *rest: object) -> None:
        """Become another handle on ``other``'s storage (``ttnn.Tensor(tensor)``, which takes nothing else)."""
        if any(arg is not None for arg in rest):
            raise MeshnnTypeError("ttnn.Tensor(tensor) copies a tensor's handle and takes no other argument")
        self._spec, self._storage, self._topology = other._spec, other._storage, other._topology
        if isinstance(self._storage, DeviceStorage):
            from meshnn.tensor.lifetime import track_view

            track_view(self)

    @classmethod
    def make(cls, spec: TensorSpec, storage: HostStorage | DeviceStorage, topology: TensorTopology) -> Tensor:
        tensor = object.__new__(cls)
        tensor._spec, tensor._storage, tensor._topology = spec, storage, topology
        return tensor

    # -------------------------------------------------------------------------------- state

    def storage_type(self) -> StorageType:
        return StorageType.DEVICE if isinstance(self._storage, DeviceStorage) else StorageType.HOST

    @property
    def storage(self) -> HostStorage | DeviceStorage:
        return self._storage

    def is_allocated(self) -> bool:
        """Host tensors are always allocated; device tensors while their MeshBuffer is."""
        if isinstance(self._storage, HostStorage):
            return True
        return self._storage.mesh_buffer.is_allocated()

    def check_usable(self, what: str = "tensor") -> None:
        """Raise at once if this is a deallocated tensor or a tensor of a closed mesh."""
        if isinstance(self._storage, HostStorage):
            return
        buffer = self._storage.mesh_buffer
        if buffer.is_allocated():
            return
        shape = list(self._spec.shape)
        try:
            mesh = buffer.device()
        except DeviceClosedError as closed:
            at = f" at {w}" if (w := str(closed).partition(" (closed at ")[2].rstrip(")")) else ""
            raise DeviceClosedError(f"{what} of shape {shape} lives on a mesh device that was closed{at}") from None
        where = getattr(buffer, "deallocated_at", None) or "an unknown place"
        raise DeallocatedError(f"{what} of shape {shape} on {mesh!r} was deallocated at {where}")

    def mesh_buffer(self) -> MeshBuffer:
        if not isinstance(self._storage, DeviceStorage):
            raise MeshnnValueError("a host tensor has no mesh buffer")
        self.check_usable()
        return self._storage.mesh_buffer

    def device(self) -> MeshDevice | None:
        if isinstance(self._storage, HostStorage):
            return None
        self.check_usable()
        return self._storage.mesh_buffer.device()

    def devices(self) -> list[Device]:
        mesh = self.device()
        if mesh is None:
            return []
        coords = set(self.device_coords())
        return [d for d in mesh.get_devices() if d.coord in coords]

    def device_coords(self) -> list[MeshCoordinate]:
        if isinstance(self._storage, DeviceStorage):
            return list(self._storage.coords)
        return list(self._topology.mesh_coords)

    def host_buffer(self) -> DistributedHostBuffer:
        if not isinstance(self._storage, HostStorage):
            raise MeshnnValueError("host_buffer() needs a host tensor; call ttnn.from_device first")
        return self._storage.buffer

    def tensor_topology(self) -> TensorTopology:
        return self._topology

    # ---------------------------------------------------------------------------- spec info

    @property
    def spec(self) -> TensorSpec:
        return self._spec

    @property
    def shape(self) -> Shape:
        return self._spec.shape

    @property
    def padded_shape(self) -> Shape:
        return self._spec.padded_shape

    @property
    def dtype(self) -> DataType:
        return self._spec.dtype

    def get_dtype(self) -> DataType:
        return self._spec.dtype

    @property
    def layout(self) -> Layout:
        return self._spec.layout

    def get_layout(self) -> Layout:
        return self._spec.layout

    @property
    def tile(self) -> Tile:
        return self._spec.tile

    def get_tile(self) -> Tile:
        return self._spec.tile

    def memory_config(self) -> MemoryConfig:
        return self._spec.memory_config

    def is_sharded(self) -> bool:
        return self._spec.memory_config.is_sharded()

    def volume(self) -> int:
        return self._spec.volume()

    def logical_volume(self) -> int:
        return self._spec.logical_volume()

    def element_size(self) -> int:
        return self._spec.dtype.row_major_element_size

    def buffer_address(self) -> int:
        return self.mesh_buffer().address()

    def buffer_page_size(self) -> int:
        return self._spec.page_size

    def buffer_aligned_page_size(self) -> int:
        buffer = self.mesh_buffer()
        return buffer.device().allocator.manager(buffer.buffer_type()).aligned_page_size(self._spec.page_size)

    def buffer_num_pages(self) -> int:
        return self._spec.num_pages

    # --------------------------------------------------------------------------- movement

    def to(
        self, target: MeshDevice | Layout, mem_config: MemoryConfig | None = None, cq_id: int | None = None
    ) -> Tensor:
        if isinstance(target, Layout):
            from meshnn.tensor.conversions import to_layout

            return to_layout(self, target)  # a host block-float tensor: ttnn warns and leaves it in tiles
        from meshnn.tensor.placement import to_device

        return to_device(self, target, mem_config)

    def cpu(self, blocking: bool = True, cq_id: int | None = None) -> Tensor:
        from meshnn.tensor.readback import from_device

        return from_device(self, blocking)

    def to_torch(self, mesh_composer: MeshToTensor | None = None) -> Any:
        from meshnn.tensor.interop import to_torch

        return to_torch(self, mesh_composer=mesh_composer)

    def to_torch_with_padded_shape(self) -> Any:
        from meshnn.tensor.interop import to_torch_with_padded_shape

        return to_torch_with_padded_shape(self)

    def to_numpy(self, mesh_composer: MeshToTensor | None = None) -> np.ndarray:
        from meshnn.tensor.interop import to_numpy

        return to_numpy(self, mesh_composer=mesh_composer)

    def to_list(self) -> list:
        """Nested Python floats (ints for integer dtypes); NaNs pass through doubles, quieted."""
        values = self.to_numpy()
        with np.errstate(invalid="ignore"):  # ml_dtypes warns when it widens a bfloat16 NaN
            return values.astype(np.float64 if self.dtype.is_float else np.int64).tolist()

    def item(self) -> float | int:
        """The value of a one-element tensor as a Python number: a float for a floating dtype
        (block floats decoded), an int for an integer one (as ttnn's ``Tensor.item``)."""
        if self.logical_volume() != 1:
            raise MeshnnValueError(
                f"tensor.item() requires tensor to have exactly one element, but got {self.logical_volume()} elements"
            )
        value = self.to_numpy().reshape(-1)[0]
        with np.errstate(invalid="ignore"):  # (widening a bfloat16 NaN)
            return float(value) if self.dtype.is_float else int(value)

    def deallocate(self, force: bool = False) -> None:
        """Free the device memory; the method's ``force`` defaults to False as ttnn binds it
        (``Tensor.deallocate(force=False)``: kept while another live tensor views the buffer),
        where ``ttnn.deallocate``'s defaults to True."""
        from meshnn.tensor.lifetime import deallocate

        deallocate(self, force)

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        from meshnn.tensor.reshape import int_dims, reshape

        dims = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        ints = None if isinstance(dims, str) else int_dims(dims)  # type: ignore[arg-type]
        if ints is None:
            raise MeshnnTypeError(f"reshape: shape must hold ints, got {dims!r}")
        return reshape(self, ints)

    # Python operators, as ttnn binds them: element-wise ops, matmul and slicing of device tensors.

    def __add__(self, other: object) -> Tensor:
        return _operator("add", self, other)

    def __sub__(self, other: object) -> Tensor:
        return _operator("subtract", self, other)

    def __rsub__(self, other: object) -> Tensor:
        return _operator("add", _operator("neg", self), other)

    def __mul__(self, other: object) -> Tensor:
        return _operator("multiply", self, other)

    def __truediv__(self, other: object) -> Tensor:
        return _operator("divide", self, other)

    def __rtruediv__(self, other: object) -> Tensor:
        return _operator("rdiv", self, other)  # ``number / tensor``, as ttnn binds it

    __radd__, __rmul__ = __add__, __mul__  # ttnn binds both to add / multiply(self, other)

    def __matmul__(self, other: object) -> Tensor:
        return _operator("matmul", self, other)

    def __neg__(self) -> Tensor:
        return _operator("neg", self)

    def __pow__(self, exponent: object) -> Tensor:
        return _operator("pow", self, exponent)

    def __getitem__(self, index: object) -> Tensor:
        return _operator("getitem", self, index)

    def __iter__(self):
        raise MeshnnTypeError("a ttnn.Tensor is not iterable: slice it (t[0:1]) or read it (ttnn.to_torch)")

    def __repr__(self) -> str:
        """ttnn's text of the tensor, its values included (:mod:`meshnn.tensor.printing`)."""
        from meshnn.tensor.printing import to_string

        return to_string(self)


for _op in ("eq", "ne", "gt", "ge", "lt", "le"):  # ttnn binds comparisons after the class (it keeps its hash)
    setattr(Tensor, f"__{_op}__", lambda self, other, _op=_op: _operator(_op, self, other))


def host_tensor_from_array(array: np.ndarray, dtype: DataType, layout: Layout, **options: Any) -> Tensor:
    """A host tensor holding ``array`` in ttnn's byte format, one shard per mapped coordinate;
    ``options`` are :func:`~meshnn.tensor.arrays.map_array`'s (tile, pad_value, mesh_mapper,
    col_tilize, memory_config)."""
    mapped = map_array(array, dtype, layout, **options)
    return Tensor.make(mapped.spec, mapped.host_storage(), mapped.topology)
