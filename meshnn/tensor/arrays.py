"""The caller's data before it is a tensor: a numpy view of a numpy array, torch tensor or list
(:func:`as_array`), the ttnn dtype of a numpy dtype, and an array cut for a mesh by a mapper but not
yet encoded (:class:`MappedArray`, :func:`map_array`), whose shards become host storage or go
straight into device memory.

Layer: tensor.  Imports errors, mesh, the byte formats (dtypes, layout, encoding) and the tensor
modules spec, storage, topology and mappers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, format_bytes
from meshnn.formats.codec import encode, encode_many
from meshnn.formats.dtypes import DataType, bfloat16_dtype, is_bfloat16
from meshnn.formats.layout import Layout, Tile
from meshnn.formats.packed_spec import check_encodable, packed_spec
from meshnn.host.memory import check_host_memory
from meshnn.mesh.coord import MeshCoordinate, MeshShape
from meshnn.tensor.mappers import TensorToMesh
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DistributedHostBuffer, HostBuffer, HostStorage, NoValues
from meshnn.tensor.topology import TensorTopology

_DTYPE_OF_NUMPY = {
    np.dtype(np.float32): DataType.FLOAT32,
    np.dtype(np.int32): DataType.INT32,
    np.dtype(np.uint32): DataType.UINT32,
    np.dtype(np.uint16): DataType.UINT16,
    np.dtype(np.uint8): DataType.UINT8,
    np.dtype(np.int8): DataType.INT8,
}


def infer_dtype(array: np.ndarray) -> DataType:
    if is_bfloat16(array.dtype):
        return DataType.BFLOAT16
    try:
        return _DTYPE_OF_NUMPY[array.dtype]
    except KeyError:
        raise MeshnnTypeError(
            f"cannot infer a ttnn dtype from numpy {array.dtype}; pass dtype= (e.g. ttnn.float32)"
        ) from None


class ShapeOnly(np.ndarray):
    """The stand-in of a torch "meta" tensor: its shape and dtype, no values and no memory (a
    zero-strided view of one element).  Slices and mapper shards of it are ShapeOnly too; it can
    become a tensor on a planning mesh or a host tensor of :class:`NoValues` shards, never values."""


def shape_only(shape: Sequence[int], dtype: np.dtype) -> ShapeOnly:
    """A :class:`ShapeOnly` stand-in of ``shape`` and ``dtype`` (no memory for its elements)."""
    return np.broadcast_to(np.zeros((), dtype), tuple(shape)).view(ShapeOnly)


def is_shape_only(array: np.ndarray) -> bool:
    return isinstance(array, ShapeOnly)


# ttnn's torch path (parse_py_tensor): the dtype a torch tensor of no other ttnn dtype stands for
# when none is given, and the torch dtype it is converted to (``tensor.to``) for each target.
_TORCH_INFERRED = {"float16": DataType.BFLOAT16, "int64": DataType.UINT32, "int16": DataType.UINT16}
_TORCH_STAGING = {
    DataType.UINT8: "uint8",
    DataType.UINT16: "int16",
    DataType.INT32: "int32",
    DataType.UINT32: "int32",
    DataType.BFLOAT16: "bfloat16",
    DataType.FLOAT32: "float32",
    DataType.BFLOAT8_B: "float32",
    DataType.BFLOAT4_B: "float32",
}
# torch dtypes numpy's conversion does not take as ttnn's torch path does: converted in torch first
# (ttnn's import converts a torch tensor with torch's own ``to``, so int64 -> bfloat16 works from
# torch; a numpy array is converted with ``astype``, which has no bfloat16: golden typecast.json's
# np.int64 -> bfloat16 refusal is numpy's alone, kept in meshnn.formats.elements)
_TORCH_CONVERTED = frozenset({"float16", "float64", "int64", "int16", "int8", "bool", "uint16", "uint32", "uint64"})


def torch_dtype_of(data: Any, dtype: DataType | None) -> DataType | None:
    """The ttnn dtype ``ttnn.from_torch`` infers for the torch tensor ``data`` when ``dtype`` is
    None (float16 -> bfloat16, int64 -> uint32, int16 -> uint16, as ttnn's parse_py_tensor), else
    ``dtype``; None for anything that is not a torch tensor (numpy keeps :func:`infer_dtype`)."""
    if dtype is not None or not type(data).__module__.startswith("torch"):
        return dtype
    return _TORCH_INFERRED.get(str(data.dtype).removeprefix("torch."))


def as_array(data: Any, dtype: DataType | None = None) -> np.ndarray:
    """A numpy view of ``data``: numpy arrays as they are, torch tensors without copying when they
    can be viewed (bfloat16 as ml_dtypes.bfloat16), a torch "meta" tensor as a :class:`ShapeOnly`
    stand-in, nested lists as float32.  A torch tensor of a dtype ttnn converts in torch before it
    reads it (float16, float64, int64...) is converted to ``dtype``'s staging type first, as ttnn
    does."""
    if isinstance(data, np.ndarray):
        return data
    module = type(data).__module__
    if module.startswith("torch"):
        import torch  # only reached with a torch tensor in hand

        if data.is_meta:  # a shape without values: the model's weights need not exist to plan it
            return shape_only(data.shape, as_array(torch.zeros((), dtype=data.dtype)).dtype)
        tensor = data.detach().cpu()
        source = str(tensor.dtype).removeprefix("torch.")
        if dtype in _TORCH_STAGING and source in _TORCH_CONVERTED:
            tensor = tensor.to(getattr(torch, _TORCH_STAGING[dtype]))
        if tensor.dtype == torch.bfloat16:
            return _contiguous(torch, tensor).view(torch.int16).numpy().view(bfloat16_dtype())
        return tensor.numpy()
    if isinstance(data, list | tuple | int | float):
        try:
            return np.asarray(data, dtype=np.float32)
        except (ValueError, TypeError) as error:
            raise MeshnnValueError(f"cannot make a tensor from a ragged or non-numeric list: {error}") from None
    raise MeshnnTypeError(f"cannot make a tensor from {type(data).__name__}; pass a numpy array, torch tensor or list")


def _contiguous(torch: Any, tensor: Any) -> Any:
    """``tensor.contiguous()``: a tensor of 3 or more dims whose leading dims merge (a state dict's
    weight transposed, ``[1, 1, K, N]``) is copied a matrix at a time, by torch's 2-D copy, which
    transposes in cache-sized blocks (its N-D copy does not: 3.4 s against 0.7 s of CPU for an
    ``[8192, 28672]`` bfloat16 matrix on this project's AVX2 host).  The same bytes either way."""
    if tensor.dim() < 3 or tensor.is_contiguous():
        return tensor.contiguous()
    rows, cols = tensor.shape[-2:]
    try:
        matrices = tensor.view(-1, rows, cols)
    except RuntimeError:  # leading dims that do not merge: torch's own copy
        return tensor.contiguous()
    out = torch.empty(matrices.shape, dtype=tensor.dtype)
    for index in range(matrices.shape[0]):
        out[index].copy_(matrices[index])
    return out.view(tensor.shape)


def flat_list_array(values: list | tuple, shape: Sequence[int], dtype: object = None) -> np.ndarray:
    """``ttnn.Tensor(values, shape, dtype, ...)``, the flat-list form: ``values`` of ``shape``, as
    float32, or for an integer ``dtype`` as int64 (every int32 / uint32 value exact)."""
    integer = isinstance(dtype, DataType) and dtype.is_integer
    array = np.asarray(values, dtype=np.int64 if integer else np.float32)
    if array.size != math.prod(shape):
        raise MeshnnValueError(f"{array.size} values cannot fill a tensor of shape {list(shape)}")
    return array.reshape(tuple(shape))


@dataclass(frozen=True, slots=True)
class MappedArray:
    """An array cut for a mesh, not yet encoded: one shard spec, and each coordinate's values
    (views of the caller's array; replicas are the same view)."""

    spec: TensorSpec
    shards: dict[MeshCoordinate, np.ndarray]
    topology: TensorTopology
    buffer_shape: MeshShape
    is_local: Callable[[MeshCoordinate], bool] | None
    pad_value: float
    col_tilize: bool

    @property
    def shape_only(self) -> bool:
        """Whether the array is a :class:`ShapeOnly` stand-in (no values to write)."""
        return isinstance(next(iter(self.shards.values())), ShapeOnly)

    def unique_shards(self) -> list[tuple[np.ndarray, list[MeshCoordinate]]]:
        """Each distinct shard once, with the coordinates that hold it (replicas share one)."""
        groups: dict[object, tuple[np.ndarray, list[MeshCoordinate]]] = {}
        for coord, shard in self.shards.items():
            where = shard.__array_interface__["data"][0]
            key = id(shard) if shard.base is None else (where, shard.strides, shard.shape)
            groups.setdefault(key, (shard, []))[1].append(coord)
        return list(groups.values())

    def encode(self, shard: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``shard``'s bytes in this spec's format (into ``out`` when given)."""
        spec = self.spec
        kind = {"tile": spec.tile, "pad_value": self.pad_value, "col_tilize": self.col_tilize}
        return encode(shard, spec.dtype, spec.layout, out=out, **kind)

    def encode_many(self, jobs: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """:meth:`encode` of every ``(shard, out)`` of ``jobs``, in one pass over the host threads."""
        spec = self.spec
        kind = {"tile": spec.tile, "pad_value": self.pad_value, "col_tilize": self.col_tilize}
        encode_many(jobs, spec.dtype, spec.layout, **kind)

    def check_host_memory(self, op: str, devices: int | None = None) -> None:
        """Refuse (HostMemoryError) a conversion the host has not the memory for: the encoded
        shards (one per local device on a mesh: the simulator keeps device memory in host memory,
        ``devices`` of them; else one per distinct shard) and a shard's float32 scratch."""
        size = self.spec.compute_packed_buffer_size_bytes()
        groups = self.unique_shards()
        count = devices if devices is not None else len(groups)
        largest = max((shard.size for shard, _ in groups), default=0)
        needed = count * size + 4 * largest
        where = f"{count} local device(s)" if devices is not None else f"{count} distinct shard(s)"
        check_host_memory(op, needed, f"{format_bytes(size)} for each of {where}, plus conversion scratch")

    def host_storage(self) -> HostStorage:
        """Host storage of the shards in this spec's format, each distinct shard encoded once when
        first read (replicas share one buffer, as ttnn's do)."""
        self.check_host_memory("from_torch")
        buffer = DistributedHostBuffer(self.buffer_shape, is_local=self.is_local)
        if self.shape_only:  # no values: each shard is its size only
            size = self.spec.compute_packed_buffer_size_bytes()
            for coord in self.shards:
                buffer.emplace_shard(coord, lambda: NoValues(size))
            return HostStorage(buffer)
        for shard, coords in self.unique_shards():
            encoded: list[HostBuffer] = []

            def produce(shard: np.ndarray = shard, encoded: list[HostBuffer] = encoded) -> HostBuffer:
                if not encoded:
                    encoded.append(HostBuffer(self.encode(shard)))
                return encoded[0]

            for coord in coords:
                buffer.emplace_shard(coord, produce)
        return HostStorage(buffer)


def map_array(
    array: np.ndarray,
    dtype: DataType,
    layout: Layout,
    *,
    tile: Tile | None = None,
    pad_value: float = 0.0,
    mesh_mapper: TensorToMesh | None = None,
    col_tilize: bool = False,
    memory_config: MemoryConfig | None = None,
) -> MappedArray:
    """Cut ``array`` with ``mesh_mapper`` and check that every shard can be encoded; nothing is
    converted yet."""
    if tile is not None and not isinstance(tile, Tile):
        raise MeshnnTypeError(f"tile must be a ttnn.Tile, got {tile!r}")
    tile = tile or Tile()
    if mesh_mapper is not None and not isinstance(mesh_mapper, TensorToMesh):
        raise MeshnnTypeError(f"mesh_mapper must be a ttnn mesh mapper, got {type(mesh_mapper).__name__}")
    if mesh_mapper is None:
        shards = {MeshCoordinate(0, 0): array}
        topology, buffer_shape = TensorTopology.unit(), MeshShape(1, 1)
    else:
        distribution = mesh_mapper.map(array)
        shards, topology, buffer_shape = distribution.shards, distribution.topology, mesh_mapper.mesh_shape
    first = next(iter(shards.values()))
    check_encodable(first, dtype, layout, tile=tile, col_tilize=col_tilize)
    packed = packed_spec(first.shape, dtype, layout, tile=tile, col_tilize=col_tilize)
    spec = TensorSpec(packed.shape, dtype, layout, tile=tile, memory_config=memory_config)
    return MappedArray(spec, shards, topology, buffer_shape, _local_predicate(mesh_mapper), pad_value, col_tilize)


def _local_predicate(mapper: TensorToMesh | None):
    """Which coordinates this process keeps: all, unless a mapper for a multi-process mesh says."""
    device = getattr(mapper, "mesh_device", None)
    if device is None or device.context.world_size == 1:
        return None
    return device.is_local
