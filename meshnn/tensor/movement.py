"""Moving tensors: host <-> mesh, torch <-> ttnn, and the distribution helpers of ttnn.

Every device allocation is a Replicated MeshBuffer sized by the shard spec (as in tt-metal PR
#17513); per-coordinate data goes through the mesh command queue's ``enqueue_write_shards``, and
reads through ``enqueue_read_shards``.  A plain (one-shard) host tensor written to a mesh is
replicated to every device.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.command_queue import HostDecoder, HostEncoder, ShardDataTransfer
from meshnn.mesh.coord import MeshCoordinate, MeshShape, to_linear_index
from meshnn.mesh.mesh_buffer import DeviceLocalBufferConfig, MeshBuffer, ReplicatedBufferConfig
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.composers import MeshToTensor
from meshnn.tensor.dtypes import DataType
from meshnn.tensor.encoding import byte_view, decode, decode_many, encode, packed_spec
from meshnn.tensor.encoding import to_layout as layout_bytes
from meshnn.tensor.encoding import typecast as typecast_bytes
from meshnn.tensor.layout import Layout, Tile, padded_shape
from meshnn.tensor.mappers import TensorToMesh
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import RESULT_ARRAYS, DeviceStorage, DistributedHostBuffer, HostBuffer, HostStorage
from meshnn.tensor.tensor import MappedArray, Tensor, as_array, caller_site, host_tensor_from_array
from meshnn.tensor.topology import PlacementReplicate, PlacementShard, TensorTopology

# ttnn.distribute(mapper_or_composer) binds these for from_torch / to_torch inside its block.
DEFAULT_MAPPER: contextvars.ContextVar[TensorToMesh | None] = contextvars.ContextVar("mapper", default=None)
DEFAULT_COMPOSER: contextvars.ContextVar[MeshToTensor | None] = contextvars.ContextVar("composer", default=None)


TILE_EDGE = 32  # ttnn's pad_to_tile pads to 32x32 (TILE_HEIGHT, TILE_WIDTH), whatever the tile

TORCH_EXTRA = "torch is not installed: install it with `pip install 'meshnn[torch]'` (or `pip install torch`)"


def _device_tensor(
    spec: TensorSpec, buffer: MeshBuffer, coords: Sequence[MeshCoordinate], topology: TensorTopology
) -> Tensor:
    return track_view(
        Tensor.make(spec, DeviceStorage(buffer, coords if type(coords) is tuple else tuple(coords)), topology)
    )


def track_view(tensor: Tensor) -> Tensor:
    """Record that ``tensor`` views its MeshBuffer (every device tensor must be recorded, or
    ``deallocate(force=False)`` of another view would free the buffer under it).

    The record lives on the buffer (``MeshBuffer.views``): a weak reference to its one view (an
    op's output has one), a WeakSet once a second view is made.  Weak: a record never keeps a
    tensor alive."""
    storage = tensor.storage
    if isinstance(storage, DeviceStorage):
        buffer = storage.mesh_buffer
        views = buffer.views
        if views is None:
            buffer.views = weakref.ref(tensor)
        elif type(views) is weakref.ref:
            first = views()
            if first is not tensor:
                every: weakref.WeakSet[Tensor] = weakref.WeakSet()
                if first is not None:
                    every.add(first)
                every.add(tensor)
                buffer.views = every
        else:
            views.add(tensor)
    return tensor


def _views_of(buffer: MeshBuffer) -> list[Tensor]:
    """The live tensors :func:`track_view` recorded as views of ``buffer``."""
    views = buffer.views
    if views is None:
        return []
    if type(views) is weakref.ref:
        tensor = views()
        return [] if tensor is None else [tensor]
    return list(views)


def _check_tensor(tensor: object, what: str = "tensor") -> Tensor:
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"{what} must be a ttnn.Tensor, got {type(tensor).__name__}")
    tensor.check_usable(what)
    return tensor


def allocate_mesh_buffer(spec: TensorSpec, mesh_device: MeshDevice) -> MeshBuffer:
    """A Replicated MeshBuffer sized by ``spec`` on every device of ``mesh_device``."""
    made = spec._derived.get("mesh_buffer_configs")
    if made is None:
        made = spec._once("mesh_buffer_configs", lambda: _buffer_configs(spec))
    return MeshBuffer.create(made[0], made[1], mesh_device)


def _buffer_configs(spec: TensorSpec) -> tuple[ReplicatedBufferConfig, DeviceLocalBufferConfig]:
    layout = spec.buffer_layout()
    local = DeviceLocalBufferConfig(layout.page_size, layout.buffer_type, layout.memory_layout, layout.shard)
    return ReplicatedBufferConfig(layout.size), local


# --------------------------------------------------------------------------- host <-> device


def to_device(
    tensor: Tensor, device: MeshDevice, memory_config: MemoryConfig | None = None, *, queue_id: int | None = None
) -> Tensor:
    """Write a host tensor to ``device``: one shard per populated coordinate, or a plain host
    tensor replicated to every device.  A tensor already on ``device`` is returned as it is."""
    _check_tensor(tensor)
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"device must be a MeshDevice, got {type(device).__name__}")
    device.check_open()
    if isinstance(tensor.storage, DeviceStorage):
        if tensor.storage.mesh_buffer.mesh_id != device.mesh_id:
            raise WrongMeshError(f"tensor of shape {list(tensor.shape)} is on another mesh device than {device!r}")
        if memory_config is not None and memory_config != tensor.memory_config():
            from meshnn.tensor.device_hooks import convert_memory_config

            return convert_memory_config(tensor, memory_config)
        return tensor
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"to_device: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    spec = tensor.spec if memory_config is None else tensor.spec.with_memory_config(memory_config)
    coords, topology = _placement_on(tensor, device)
    queue = device.mesh_command_queue(0 if queue_id is None else queue_id)
    buffer = allocate_mesh_buffer(spec, device)
    shards = tensor.host_buffer()
    if topology is not tensor.tensor_topology():  # a plain host tensor: the same bytes everywhere
        data = shards.get_shard(MeshCoordinate(0, 0))
        queue.enqueue_write_shards(buffer, [ShardDataTransfer(c, data.data) for c in device.local_coords()], True)
    else:
        transfers = [
            ShardDataTransfer(c, shards.get_shard(c).data)
            for c in coords
            if device.is_local(c)  # type: ignore[union-attr]
        ]
        queue.enqueue_write_shards(buffer, transfers, True)
    return _device_tensor(spec, buffer, coords, topology)


def mapped_to_device(
    mapped: MappedArray, device: MeshDevice, memory_config: MemoryConfig | None = None, cq_id: int | None = None
) -> Tensor:
    """``host_tensor_from_array`` then ``to_device``, without the host copy: each distinct shard
    is written to every device that holds it, in one blocking ``enqueue_write_shards``, as a
    strided view of the caller's array when a view of its values is the bytes (the write tilizes
    as it copies), else as a :class:`HostEncoder` that converts it straight into the memory of
    the first device holding it (copied from there to the others); the shards' conversions run
    together, in one pass over the host threads."""
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"device must be a MeshDevice, got {type(device).__name__}")
    device.check_open()
    spec = mapped.spec if memory_config is None else mapped.spec.with_memory_config(memory_config)
    if mapped.buffer_shape == MeshShape(1, 1) and mapped.topology.mesh_coords == (MeshCoordinate(0, 0),):
        coords, topology = list(device.shape.coords()), TensorTopology.replicated(device.shape)
        groups = [(next(iter(mapped.shards.values())), coords)]
    else:
        if mapped.buffer_shape != device.shape:
            raise MeshnnValueError(
                f"a tensor mapped over {mapped.buffer_shape!r} cannot be written to a {device.shape!r} mesh; "
                f"create its mapper for this mesh"
            )
        coords, topology = list(mapped.topology.mesh_coords), mapped.topology
        for coord in coords:
            to_linear_index(device.shape, coord)
        groups = mapped.unique_shards()
    queue = device.mesh_command_queue(cq_id or 0)
    buffer = allocate_mesh_buffer(spec, device)  # sized by the spec: a shard's packed bytes fill its device's region
    size = spec.compute_packed_buffer_size_bytes()
    shards: dict[int, np.ndarray] = {}  # by id of its encoder

    def together(pairs: list[tuple[HostEncoder, np.ndarray]]) -> None:
        mapped.encode_many([(shards[id(encoder)], out) for encoder, out in pairs])

    try:
        transfers = []
        for shard, holders in groups:
            local = [c for c in holders if device.is_local(c)]
            if not local:
                continue
            data = byte_view(shard, spec.dtype, spec.layout, tile=spec.tile, col_tilize=mapped.col_tilize)
            if data is None:
                data = HostEncoder(size, lambda out, shard=shard: mapped.encode(shard, out=out), together)
                shards[id(data)] = shard
            transfers += [ShardDataTransfer(c, data) for c in local]
        if transfers:
            queue.enqueue_write_shards(buffer, transfers, True)
    except BaseException:
        buffer.deallocate()
        raise
    return _device_tensor(spec, buffer, coords, topology)


def _composed_from_device(tensor: Tensor, composer: MeshToTensor) -> np.ndarray | None:
    """The composed global array of a device tensor whose shards are all on this process, each
    shard read straight into its block of the result (through the block's byte view, which
    untilizes as it copies) or decoded into it straight out of device memory (a
    :class:`HostDecoder`); None when the tensor does not qualify (then shards are read and
    concatenated).  A large result takes the
    memory of a dropped earlier one (``RESULT_ARRAYS``): its pages are not faulted in again."""
    if not isinstance(tensor.storage, DeviceStorage):
        return None
    buffer, coords = tensor.storage.mesh_buffer, tensor.tensor_topology().mesh_coords
    mesh = buffer.device()
    spec = tensor.spec
    if spec.explicit_padded_shape is not None or not coords or not all(mesh.is_local(c) for c in coords):
        return None
    if set(coords) - set(tensor.storage.coords):
        return None
    shape = tuple(spec.shape)
    global_shape, slots = composer.slots([shape] * len(coords))
    values = np.dtype(np.float32) if spec.dtype.is_block_float else spec.dtype.numpy_dtype
    out = RESULT_ARRAYS.empty(global_shape, values)  # every element is written below
    size = spec.compute_packed_buffer_size_bytes()
    region = None if size == buffer.device_local_size() else _region(size)
    blocks: dict[int, np.ndarray] = {}  # by id of its decoder
    kind = {"dtype": spec.dtype, "layout": spec.layout, "shape": spec.encoded_shape, "tile": spec.tile}

    def together(pairs: list[tuple[HostDecoder, np.ndarray]]) -> None:
        decode_many([(raw, blocks[id(decoder)]) for decoder, raw in pairs], **kind)

    transfers = []
    for coord, slot in zip(coords, slots, strict=True):
        block = out[slot]
        data = byte_view(block, spec.dtype, spec.layout, tile=spec.tile)
        if data is None:
            data = HostDecoder(size, lambda raw, block=block: decode(raw, out=block, **kind), together)
            blocks[id(data)] = block
        transfers.append(ShardDataTransfer(coord, data, region))
    mesh.mesh_command_queue(0).enqueue_read_shards(transfers, buffer, True)
    return out


def _placement_on(tensor: Tensor, device: MeshDevice) -> tuple[list[MeshCoordinate], TensorTopology]:
    """The coordinates a host tensor populates on ``device``, and its topology there."""
    topology = tensor.tensor_topology()
    buffer = tensor.host_buffer()
    if buffer.shape() == MeshShape(1, 1) and topology.mesh_coords == (MeshCoordinate(0, 0),):
        return list(device.shape.coords()), TensorTopology.replicated(device.shape)
    if buffer.shape() != device.shape:
        raise MeshnnValueError(
            f"a host tensor distributed over {buffer.shape()!r} cannot be written to a {device.shape!r} mesh; "
            f"create its mapper for this mesh"
        )
    if not topology.mesh_coords or not buffer.shard_coords():
        raise MeshnnValueError(
            f"a host tensor of shape {list(tensor.shape)} with no shards cannot be written to a {device.shape!r} mesh"
        )
    for coord in topology.mesh_coords:
        to_linear_index(device.shape, coord)
        if device.is_local(coord) and buffer.get_shard(coord) is None:
            raise MeshnnValueError(
                f"a host tensor of shape {list(tensor.shape)} has no shard at {coord!r}, which its topology "
                f"places there"
            )
    return list(topology.mesh_coords), topology


def from_device(
    tensor: Tensor, blocking: bool = True, *, queue_id: int | None = None, cq_id: int | None = None
) -> Tensor:
    """Read a device tensor back into a host tensor with the same shards and topology."""
    _check_tensor(tensor)
    if isinstance(tensor.storage, HostStorage):
        return tensor
    buffer, coords = tensor.storage.mesh_buffer, tensor.storage.coords
    mesh = buffer.device()
    size = tensor.spec.compute_packed_buffer_size_bytes()
    local = [c for c in coords if mesh.is_local(c)]
    block = np.empty((len(local), size), np.uint8)  # rows side by side: one copy for all of them
    queue = mesh.mesh_command_queue(_queue_of(queue_id, cq_id))
    region = None if size == buffer.device_local_size() else _region(size)
    queue.enqueue_read_shards([ShardDataTransfer(c, block[i], region) for i, c in enumerate(local)], buffer, True)
    host = DistributedHostBuffer(mesh.shape, is_local=mesh.is_local if mesh.context.world_size > 1 else None)
    rows = {c: block[i] for i, c in enumerate(local)}
    for coord in coords:
        host.emplace_shard(coord, lambda c=coord: HostBuffer(rows[c]))
    return Tensor.make(tensor.spec, HostStorage(host), tensor.tensor_topology())


def _queue_of(queue_id: int | None, cq_id: int | None) -> int:
    """The command queue a call names (``queue_id`` or its alias ``cq_id``; default 0)."""
    return queue_id if queue_id is not None else (cq_id if cq_id is not None else 0)


def _region(size: int):
    from meshnn.mesh.mesh_buffer import BufferRegion

    return BufferRegion(0, size)


def allocate_tensor_on_device(
    spec_or_shape: TensorSpec | Sequence[int],
    dtype: DataType | MeshDevice | None = None,
    layout: Layout | None = None,
    device: MeshDevice | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """An uninitialised device tensor on every device: ``(spec, mesh_device)`` or
    ``(shape, dtype, layout, mesh_device, memory_config=None)``."""
    spec, mesh = _spec_and_device(spec_or_shape, dtype, layout, device, memory_config, "allocate_tensor_on_device")
    mesh.check_open()
    buffer = allocate_mesh_buffer(spec, mesh)
    return _device_tensor(spec, buffer, list(mesh.shape.coords()), TensorTopology.replicated(mesh.shape))


def allocate_tensor_on_host(
    spec_or_shape: TensorSpec | Sequence[int],
    dtype: DataType | MeshDevice | None = None,
    layout: Layout | None = None,
    device: MeshDevice | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """A zero-filled host tensor with a shard per coordinate of ``device``'s mesh."""
    spec, mesh = _spec_and_device(spec_or_shape, dtype, layout, device, memory_config, "allocate_tensor_on_host")
    if spec.compute_packed_buffer_size_bytes() * mesh.get_num_devices() > host_memory_bytes():
        raise MeshnnValueError(
            f"allocate_tensor_on_host: shape {list(spec.shape)} needs {spec.compute_packed_buffer_size_bytes()} B per "
            f"device on {mesh.get_num_devices()} devices, more than this machine's {host_memory_bytes()} B of memory"
        )
    host = DistributedHostBuffer(mesh.shape, is_local=mesh.is_local if mesh.context.world_size > 1 else None)
    for coord in mesh.shape.coords():
        host.emplace_shard(coord, lambda: HostBuffer(np.zeros(spec.compute_packed_buffer_size_bytes(), np.uint8)))
    return Tensor.make(spec, HostStorage(host), TensorTopology.replicated(mesh.shape))


def host_memory_bytes() -> int:
    """The machine's physical memory in bytes: host tensors larger than that are refused."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: a fixed 1 TiB bound
        return 1 << 40


def _spec_and_device(spec_or_shape, dtype, layout, device, memory_config, name):
    if isinstance(spec_or_shape, TensorSpec):
        mesh = dtype if isinstance(dtype, MeshDevice) else device
        spec = spec_or_shape
    else:
        if not isinstance(dtype, DataType) or not isinstance(layout, Layout):
            raise MeshnnTypeError(f"{name}(shape, dtype, layout, mesh_device) needs a DataType and a Layout")
        mesh = device
        spec = TensorSpec(spec_or_shape, dtype, layout, memory_config=memory_config)
    if not isinstance(mesh, MeshDevice):
        raise MeshnnTypeError(f"{name} needs a MeshDevice, got {type(mesh).__name__}")
    return spec, mesh


def copy_host_to_device_tensor(host_tensor: Tensor, device_tensor: Tensor, cq_id: int | None = None) -> None:
    """Write ``host_tensor``'s shards into the existing ``device_tensor`` (same spec)."""
    _check_tensor(host_tensor, "host_tensor")
    _check_tensor(device_tensor, "device_tensor")
    if not isinstance(host_tensor.storage, HostStorage) or not isinstance(device_tensor.storage, DeviceStorage):
        raise MeshnnValueError(
            "copy_host_to_device_tensor needs a host tensor and a device tensor: host_tensor is on the "
            f"{host_tensor.storage_type().name.lower()}, device_tensor on the "
            f"{device_tensor.storage_type().name.lower()}"
        )
    _check_same_layout(host_tensor, device_tensor, "copy_host_to_device_tensor")
    buffer = device_tensor.storage.mesh_buffer
    mesh = buffer.device()
    mesh.mesh_command_queue(_queue_of(None, cq_id))
    coords, topology = _placement_on(host_tensor, mesh)
    shards = host_tensor.host_buffer()
    single = shards.get_shard(MeshCoordinate(0, 0)) if topology is not host_tensor.tensor_topology() else None
    transfers = [
        ShardDataTransfer(c, (single or shards.get_shard(c)).data)  # type: ignore[union-attr]
        for c in coords
        if mesh.is_local(c)
    ]
    mesh.mesh_command_queue(_queue_of(None, cq_id)).enqueue_write_shards(buffer, transfers, True)
    object.__setattr__(device_tensor, "_storage", DeviceStorage(buffer, tuple(coords)))
    device_tensor._topology = topology


def copy_device_to_host_tensor(
    device_tensor: Tensor, host_tensor: Tensor, blocking: bool = True, cq_id: int | None = None
) -> None:
    """Read ``device_tensor`` into the existing ``host_tensor``'s buffers (same spec)."""
    _check_tensor(device_tensor, "device_tensor")
    _check_tensor(host_tensor, "host_tensor")
    if not isinstance(host_tensor.storage, HostStorage) or not isinstance(device_tensor.storage, DeviceStorage):
        raise MeshnnValueError(
            "copy_device_to_host_tensor needs a device tensor and a host tensor: device_tensor is on the "
            f"{device_tensor.storage_type().name.lower()}, host_tensor on the {host_tensor.storage_type().name.lower()}"
        )
    _check_same_layout(host_tensor, device_tensor, "copy_device_to_host_tensor")
    read = from_device(device_tensor, cq_id=cq_id)
    target = host_tensor.host_buffer()
    for coord, shard in read.host_buffer().local_shards().items():
        existing = target.get_shard(coord) if coord in target.local_shards() else None
        if existing is not None and existing.nbytes == shard.nbytes:
            existing.data[...] = shard.data
        else:
            target.emplace_shard(coord, lambda s=shard: s)
    host_tensor._topology = read.tensor_topology()


def _check_same_layout(a: Tensor, b: Tensor, name: str) -> None:
    if (a.shape, a.padded_shape, a.dtype, a.layout, a.tile) != (b.shape, b.padded_shape, b.dtype, b.layout, b.tile):
        raise MeshnnValueError(
            f"{name}: host_tensor {list(a.shape)} (padded {list(a.padded_shape)}) {a.dtype} {a.layout} does not "
            f"match device_tensor {list(b.shape)} (padded {list(b.padded_shape)}) {b.dtype} {b.layout}"
        )


def deallocate(tensor: Tensor, force: bool = True) -> None:
    """Free a device tensor's MeshBuffer on every device (a no-op for host tensors).

    ``force=True`` (ttnn's default) frees it even when other tensors view it; ``force=False``
    frees it only when no other live tensor does."""
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(f"deallocate needs a ttnn.Tensor, got {type(tensor).__name__}")
    if not isinstance(force, bool):
        raise MeshnnTypeError(f"deallocate: force must be a bool, got {force!r}")
    if isinstance(tensor.storage, HostStorage):
        return
    buffer = tensor.storage.mesh_buffer
    if not buffer.is_allocated():
        return
    if not force:
        others = [t for t in _views_of(buffer) if t is not tensor]
        if others:
            return
    buffer.deallocated_at = caller_site()  # type: ignore[attr-defined]
    buffer.deallocate()


# --------------------------------------------------------------------------- numpy and torch


def decode_shard(raw: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """The logical values of one shard's bytes.  With an explicit padded shape the bytes hold the
    padded array; the logical window is its origin corner, as ttnn reads it."""
    values = decode(raw, spec.dtype, spec.layout, spec.encoded_shape, tile=spec.tile)
    if spec.explicit_padded_shape is None:
        return values
    return np.ascontiguousarray(values[tuple(slice(0, d) for d in spec.shape)])


def _decoded_shards(tensor: Tensor) -> list[np.ndarray]:
    """Every shard of ``tensor`` as logical values, in topology order (gathered across ranks)."""
    host = from_device(tensor)
    buffer = host.host_buffer()
    spec = host.spec
    coords = host.tensor_topology().mesh_coords
    local = buffer.local_shards()
    values: dict[MeshCoordinate, np.ndarray] = {}
    for coord in coords:
        if coord in local:
            values[coord] = decode_shard(local[coord].data, spec)
    missing = [c for c in coords if c not in values]
    if missing:
        from meshnn.tensor.device_hooks import gather_remote_shards

        values.update(gather_remote_shards(host, values, missing))
    return [values[c] for c in coords]


def to_numpy(tensor: Tensor, *, mesh_composer: MeshToTensor | None = None, dtype: Any = None) -> np.ndarray:
    """The logical values of ``tensor`` as numpy (composed with ``mesh_composer`` when it has
    several shards)."""
    _check_tensor(tensor)
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise MeshnnTypeError(f"to_numpy: dtype must be a numpy dtype, got {dtype!r}") from None
    composer = mesh_composer if mesh_composer is not None else DEFAULT_COMPOSER.get()
    if composer is not None and not isinstance(composer, MeshToTensor):
        raise MeshnnTypeError(f"mesh_composer must be a ttnn mesh composer, got {type(composer).__name__}")
    if composer is not None:
        direct = _composed_from_device(tensor, composer)
        if direct is not None:
            return direct if dtype is None else direct.astype(dtype)
    shards = _decoded_shards(tensor)
    if composer is None:
        if len(shards) != 1:
            raise MeshnnValueError(
                f"Can't convert a tensor distributed on {tensor.tensor_topology().distribution_shape!r} mesh to "
                "row-major logical tensor. Supply a mesh composer to concatenate multi-device shards."
            )
        array = shards[0]
    else:
        array = composer.concat(shards)
    return array if dtype is None else array.astype(dtype)


_TORCH_DTYPE_NAMES = {
    DataType.BFLOAT16: "bfloat16",
    DataType.FLOAT32: "float32",
    DataType.BFLOAT8_B: "float32",
    DataType.BFLOAT4_B: "float32",
    DataType.FP8_E4M3: "float32",
    DataType.INT32: "int32",
    DataType.UINT32: "int32",
    DataType.UINT16: "int16",
    DataType.UINT8: "uint8",
    DataType.INT8: "int8",
}


def _torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise MeshnnError(TORCH_EXTRA) from error
    return torch


def to_torch(
    tensor: Tensor,
    dtype: Any = None,
    *,
    torch_rank: int | None = None,
    mesh_composer: MeshToTensor | None = None,
    device: Any = None,
    cq_id: int | None = None,
) -> Any:
    """``ttnn.to_torch``: bfloat16 -> torch.bfloat16, block floats -> float32, uint32 -> int32 and
    uint16 -> int16 (bits kept), as ttnn gives them."""
    torch = _torch()
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise MeshnnTypeError(f"to_torch: dtype must be a torch.dtype, got {dtype!r}")
    if torch_rank is not None and (isinstance(torch_rank, bool) or not isinstance(torch_rank, int)):
        raise MeshnnTypeError(f"to_torch: torch_rank must be an int, got {torch_rank!r}")
    if cq_id is not None and isinstance(tensor, Tensor) and isinstance(tensor.storage, DeviceStorage):
        tensor.check_usable()
        tensor.storage.mesh_buffer.device().mesh_command_queue(cq_id)
    array = to_numpy(tensor, mesh_composer=mesh_composer)
    if tensor.dtype is DataType.BFLOAT16:
        result = torch.from_numpy(np.ascontiguousarray(array).view(np.int16)).view(torch.bfloat16)
    elif tensor.dtype in (DataType.UINT32, DataType.UINT16):
        result = torch.from_numpy(
            np.ascontiguousarray(array).view(np.int32 if tensor.dtype is DataType.UINT32 else np.int16)
        )
    else:
        result = torch.from_numpy(np.ascontiguousarray(array))
    if torch_rank is not None:
        while result.dim() > torch_rank:
            if result.shape[0] != 1:
                raise MeshnnValueError(
                    f"to_torch: unable to squeeze to desired rank! torch_rank {torch_rank} for shape "
                    f"{list(result.shape)}"
                )
            result = result.squeeze(0)
    return result if dtype is None else result.to(dtype)


def from_torch(
    tensor: Any,
    dtype: DataType | None = None,
    *,
    spec: TensorSpec | None = None,
    tile: Tile | None = None,
    pad_value: float | None = None,
    layout: Layout | None = None,
    device: MeshDevice | None = None,
    memory_config: MemoryConfig | None = None,
    mesh_mapper: TensorToMesh | None = None,
    cq_id: int | None = None,
    preserve_nan_values: bool = False,
    col_tilize: bool = False,
    enable_bfloat_opt: bool = False,
) -> Tensor:
    """``ttnn.from_torch``: convert (and map, and write to ``device``) a torch tensor or numpy array."""
    if spec is not None:
        if not isinstance(spec, TensorSpec):
            raise MeshnnTypeError(f"spec must be a TensorSpec, got {type(spec).__name__}")
        dtype, layout, tile = spec.dtype, spec.layout, spec.tile
        memory_config = memory_config or spec.memory_config
    if type(tensor).__module__.startswith("torch"):
        _torch()
    if pad_value is not None and (isinstance(pad_value, bool) or not isinstance(pad_value, int | float | np.number)):
        raise MeshnnTypeError(f"from_torch: pad_value must be a number, got {pad_value!r}")
    mapper = mesh_mapper if mesh_mapper is not None else DEFAULT_MAPPER.get()
    return Tensor(
        tensor,
        dtype,
        device=device,
        layout=layout,
        tile=tile,
        pad_value=pad_value,
        mesh_mapper=mapper,
        memory_config=memory_config,
        col_tilize=col_tilize,
    )


@contextlib.contextmanager
def distribute(default: TensorToMesh | MeshToTensor) -> Iterator[None]:
    """``with ttnn.distribute(mapper_or_composer):`` binds it for from_torch / to_torch inside."""
    if isinstance(default, TensorToMesh):
        var = DEFAULT_MAPPER
    elif isinstance(default, MeshToTensor):
        var = DEFAULT_COMPOSER
    else:
        raise MeshnnTypeError(f"distribute needs a mesh mapper or composer, got {type(default).__name__}")
    token = var.set(default)
    try:
        yield
    finally:
        var.reset(token)


# ------------------------------------------------------------------------- shards and views


def get_device_tensors(tensor: Tensor) -> list[Tensor]:
    """One tensor per populated shard, in coordinate order; device shards share the MeshBuffer."""
    _check_tensor(tensor)
    if isinstance(tensor.storage, DeviceStorage):
        buffer = tensor.storage.mesh_buffer
        return [
            _device_tensor(tensor.spec, buffer, [c], TensorTopology(MeshShape([1]), (PlacementReplicate(),), (c,)))
            for c in sorted(tensor.storage.coords)
        ]
    shards = tensor.host_buffer().local_shards()
    out = []
    for coord in sorted(tensor.tensor_topology().mesh_coords):
        if coord in shards:
            unit = DistributedHostBuffer(MeshShape(1, 1), {MeshCoordinate(0, 0): shards[coord]})
            out.append(Tensor.make(tensor.spec, HostStorage(unit), TensorTopology.unit()))
    return out


def combine_device_tensors(tensors: Sequence[Tensor] | None = None, shard_dim: int | None = None) -> Tensor:
    """Shards of ONE MeshBuffer (e.g. from get_device_tensors) back into one device tensor."""
    items = list(tensors or [])
    if not items:
        raise MeshnnValueError("combine_device_tensors needs at least one tensor shard")
    for t in items:
        _check_tensor(t, "tensor shard")
        if not isinstance(t.storage, DeviceStorage):
            raise MeshnnValueError("combine_device_tensors: all tensor shards must be on device")
    buffer = items[0].storage.mesh_buffer  # type: ignore[union-attr]
    if any(t.storage.mesh_buffer is not buffer for t in items):  # type: ignore[union-attr]
        raise MeshnnValueError("tensor shards must be allocated on the same mesh buffer.")
    if any(t.spec != items[0].spec for t in items):
        raise MeshnnValueError("All tensor shards must have the same tensor spec")
    coords: list[MeshCoordinate] = []
    for t in items:
        for coord in t.storage.coords:  # type: ignore[union-attr]
            if coord in coords:
                raise MeshnnValueError(f"Found a tensor shard at duplicate coordinate {coord!r}")
            coords.append(coord)
    coords.sort()
    rank = len(items[0].shape)
    if shard_dim is not None and not 0 <= shard_dim < rank:
        raise MeshnnValueError(f"shard_dim {shard_dim} is out of range for a tensor of rank {rank}")
    placement = PlacementReplicate() if shard_dim is None else PlacementShard(shard_dim)
    topology = TensorTopology(MeshShape([len(coords)]), (placement,), tuple(coords))
    return _device_tensor(items[0].spec, buffer, coords, topology)


def from_host_shards(tensors: Sequence[Tensor], mesh_shape: MeshShape) -> Tensor:
    """Host shards, one per coordinate of ``mesh_shape`` (row-major), as one distributed host tensor."""
    items = list(tensors)
    if not items or not all(isinstance(t, Tensor) for t in items):
        raise MeshnnTypeError("from_host_shards needs a list of ttnn.Tensors")
    if any(not isinstance(t.storage, HostStorage) for t in items):
        raise MeshnnValueError("All tensor shards must be on host")
    if any(t.spec != items[0].spec for t in items):
        raise MeshnnValueError("All tensor shards must have the same tensor spec")
    shape = mesh_shape if isinstance(mesh_shape, MeshShape) else MeshShape(mesh_shape)
    if len(items) != shape.mesh_size():
        raise MeshnnValueError(f"Number of tensor shards must match mesh size: {len(items)} != {shape.mesh_size()}")
    coords = list(shape.coords())
    host = DistributedHostBuffer(shape)
    for coord, t in zip(coords, items, strict=True):
        shard = t.host_buffer().get_shard(t.tensor_topology().mesh_coords[0])
        host.emplace_shard(coord, lambda s=shard: s)
    topology = TensorTopology(MeshShape([len(items)]), (PlacementShard(0),), tuple(coords))
    return Tensor.make(items[0].spec, HostStorage(host), topology)


def aggregate_tensor(tensor_or_shards: Tensor | Sequence[Tensor], composer: MeshToTensor) -> Tensor:
    """Compose shards into one plain host tensor of the same dtype and layout."""
    if not isinstance(composer, MeshToTensor):
        raise MeshnnTypeError(f"aggregate_tensor needs a mesh composer, got {type(composer).__name__}")
    if isinstance(tensor_or_shards, Tensor):
        array, spec = to_numpy(tensor_or_shards, mesh_composer=composer), tensor_or_shards.spec
    else:
        items = list(tensor_or_shards)
        if not items:
            raise MeshnnValueError("aggregate_tensor needs at least one shard")
        array = composer.concat([to_numpy(t) for t in items])
        spec = items[0].spec
    return host_tensor_from_array(array, spec.dtype, spec.layout, tile=spec.tile)


def distribute_tensor(tensor: Tensor, mapper: TensorToMesh, mesh_device: MeshDevice | None = None) -> Tensor:
    """Apply ``mapper`` to a plain host tensor (and write the result to ``mesh_device``)."""
    _check_tensor(tensor)
    if not isinstance(tensor.storage, HostStorage):
        raise MeshnnValueError("TensorToMesh only supports host tensors")
    spec = tensor.spec
    mapped = host_tensor_from_array(to_numpy(tensor), spec.dtype, spec.layout, tile=spec.tile, mesh_mapper=mapper)
    return mapped if mesh_device is None else to_device(mapped, mesh_device)


# ------------------------------------------------------------------------- host conversions


def _per_shard(tensor: Tensor, spec: TensorSpec, convert) -> Tensor:
    """A host tensor whose every shard is ``convert(raw bytes)``, with the same topology."""
    source = tensor.host_buffer()
    out = DistributedHostBuffer(source.shape())
    done: dict[int, HostBuffer] = {}
    for coord in source.shard_coords():
        shard = source.get_shard(coord)
        if shard is None:
            continue
        if id(shard) not in done:  # replicas share one buffer: convert it once
            done[id(shard)] = HostBuffer(convert(shard.data))
        converted = done[id(shard)]
        out.emplace_shard(coord, lambda b=converted: b)
    return Tensor.make(spec, HostStorage(out), tensor.tensor_topology())


def to_layout(
    tensor: Tensor,
    layout: Layout,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    *,
    pad_value: float | None = None,
    **_: Any,
) -> Tensor:
    """ROW_MAJOR <-> TILE (``pad_value`` fills the tile padding).  On host ``dtype`` is ignored, as
    in ttnn 0.81.  An explicitly padded ROW_MAJOR tensor is tilized with its padding as data."""
    _check_tensor(tensor)
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"layout must be a ttnn Layout, got {layout!r}")
    if isinstance(tensor.storage, DeviceStorage):
        from meshnn.tensor.device_hooks import device_to_layout

        if pad_value is not None:
            return device_to_layout(tensor, layout, dtype=dtype, memory_config=memory_config, pad_value=pad_value)
        return device_to_layout(tensor, layout, dtype=dtype, memory_config=memory_config)
    if layout is tensor.layout:
        return tensor
    spec = tensor.spec
    stored = spec.encoded_shape
    padded = None if spec.explicit_padded_shape is None else padded_shape(stored, layout, spec.tile)
    new = TensorSpec(
        spec.shape, spec.dtype, layout, tile=spec.tile, memory_config=spec.memory_config, padded_shape=padded
    )
    fill = 0.0 if pad_value is None else float(pad_value)
    return _per_shard(
        tensor,
        new,
        lambda raw: layout_bytes(raw, spec.dtype, spec.layout, layout, stored, tile=spec.tile, pad_value=fill),
    )


def typecast(tensor: Tensor, dtype: DataType, *, memory_config: MemoryConfig | None = None, **_: Any) -> Tensor:
    """Convert every element to ``dtype`` (host rules of typecast.json; device tensors as an op)."""
    _check_tensor(tensor)
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"dtype must be a ttnn DataType, got {dtype!r}")
    if isinstance(tensor.storage, DeviceStorage):
        from meshnn.tensor.device_hooks import device_typecast

        return device_typecast(tensor, dtype, memory_config=memory_config)
    spec = tensor.spec
    layout = Layout.TILE if dtype.is_block_float else spec.layout
    stored = spec.encoded_shape
    padded = None if spec.explicit_padded_shape is None else padded_shape(stored, layout, spec.tile)
    new = TensorSpec(spec.shape, dtype, layout, tile=spec.tile, memory_config=spec.memory_config, padded_shape=padded)
    return _per_shard(
        tensor, new, lambda raw: typecast_bytes(raw, spec.dtype, dtype, spec.layout, stored, tile=spec.tile)
    )


def to_dtype(tensor: Tensor, dtype: DataType) -> Tensor:
    return typecast(tensor, dtype)


def pad_host(tensor: Tensor, output_shape: Sequence[int], input_start: Sequence[int], value: float) -> Tensor:
    """``Tensor.pad`` (host, ROW_MAJOR): the tensor's stored array placed at ``input_start`` in a
    ``value``-filled array of ``output_shape``.  As in ttnn the LOGICAL shape stays the input's
    (left-padded with 1s to the output rank) and only the padded shape becomes ``output_shape``."""
    _check_tensor(tensor)
    if not isinstance(tensor.storage, HostStorage):
        raise MeshnnValueError("Tensor.pad works on host tensors; use ttnn.pad on device")
    spec = tensor.spec
    if spec.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(
            f"Tensor.pad on host needs a ROW_MAJOR tensor, got {spec.layout}: "
            "call ttnn.to_layout(tensor, ttnn.ROW_MAJOR_LAYOUT) first"
        )
    out_shape, start = tuple(int(d) for d in output_shape), tuple(int(d) for d in input_start)
    rank = len(out_shape)
    if len(spec.shape) > rank or len(start) != rank:
        raise MeshnnValueError(
            f"pad: output shape {list(out_shape)} and start {list(start)} need one rank, at least the tensor's "
            f"rank {len(spec.shape)}"
        )
    lead = (1,) * (rank - len(spec.shape))
    stored = lead + tuple(spec.encoded_shape)
    if any(s < 0 or s + d > o for s, d, o in zip(start, stored, out_shape, strict=True)):
        raise MeshnnValueError(
            f"pad: a tensor of padded shape {list(stored)} at {list(start)} does not fit in {list(out_shape)}"
        )
    new = TensorSpec(
        lead + tuple(spec.shape),
        spec.dtype,
        spec.layout,
        tile=spec.tile,
        memory_config=spec.memory_config,
        padded_shape=out_shape,
    )

    def padded(raw: np.ndarray) -> np.ndarray:
        values = decode(raw, spec.dtype, spec.layout, spec.encoded_shape).reshape(stored)
        out = np.full(out_shape, value, dtype=values.dtype)
        out[tuple(slice(s, s + d) for s, d in zip(start, stored, strict=True))] = values
        return encode(out, spec.dtype, spec.layout)

    return _per_shard(tensor, new, padded)


def pad_to_tile(tensor: Tensor, value: float) -> Tensor:
    """``Tensor.pad_to_tile``: pad the last two dims of the padded shape up to multiples of 32."""
    dims = tuple(tensor.padded_shape) if len(tensor.shape) >= 2 else (1, *tensor.padded_shape)
    *outer, height, width = dims
    target = (*outer, -(-height // TILE_EDGE) * TILE_EDGE, -(-width // TILE_EDGE) * TILE_EDGE)
    return pad_host(tensor, target, (0,) * len(target), value)


def _resolved_shape(shape: Sequence[int], volume: int) -> tuple[int, ...]:
    if isinstance(shape, str) or not isinstance(shape, Sequence | np.ndarray):
        raise MeshnnTypeError(f"reshape: shape must be a sequence of ints, got {shape!r}")
    if not all(isinstance(d, int | np.integer) and not isinstance(d, bool) for d in shape):
        raise MeshnnTypeError(f"reshape: shape must hold ints, got {list(shape)!r}")
    dims = [int(d) for d in shape]
    if dims.count(-1) > 1:
        raise MeshnnValueError(f"reshape: only one dimension may be -1, got {dims}")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or volume % known:
            raise MeshnnValueError(f"reshape: cannot infer -1 in {dims} for a volume of {volume}")
        dims[dims.index(-1)] = volume // known
    if any(d < 0 for d in dims) or math.prod(dims) != volume:
        raise MeshnnValueError(f"reshape: shape {dims} does not hold the {volume} elements of the tensor")
    return tuple(dims)


def is_view_reshape(spec: TensorSpec, new_shape: tuple[int, ...]) -> bool:
    """True when the bytes of ``spec`` already are those of ``new_shape`` (no data moves)."""
    if spec.memory_config.is_sharded() or spec.explicit_padded_shape is not None:
        return tuple(spec.shape) == new_shape
    if spec.layout is Layout.ROW_MAJOR:
        return True
    old = tuple(spec.shape)
    if len(old) < 2 or len(new_shape) < 2:
        return old == new_shape
    th = spec.tile.tile_shape[0]
    if old[-2:] == new_shape[-2:]:
        return True
    return old[-1] == new_shape[-1] and old[-2] % th == 0 and new_shape[-2] % th == 0


def reshape(tensor: Tensor, shape: Sequence[int], *_: Any, **__: Any) -> Tensor:
    """A view with a new logical shape where the bytes allow it; otherwise a converted copy (host)
    or a data-movement op (device)."""
    _check_tensor(tensor)
    spec = tensor.spec
    new_shape = _resolved_shape(shape, spec.logical_volume())
    if not is_view_reshape(spec, new_shape):
        if isinstance(tensor.storage, DeviceStorage):
            from meshnn.tensor.device_hooks import device_reshape

            return device_reshape(tensor, new_shape)
        values = to_numpy(tensor) if len(tensor.tensor_topology().mesh_coords) == 1 else None
        if values is None:
            raise MeshnnValueError("reshape of a multi-shard TILE host tensor needs ttnn.to_layout(ROW_MAJOR) first")
        return host_tensor_from_array(values.reshape(new_shape), spec.dtype, spec.layout, tile=spec.tile)
    new_spec = TensorSpec(
        new_shape,
        spec.dtype,
        spec.layout,
        tile=spec.tile,
        memory_config=spec.memory_config,
        padded_shape=spec.explicit_padded_shape if new_shape == tuple(spec.shape) else None,
    )
    if new_spec.compute_packed_buffer_size_bytes() != spec.compute_packed_buffer_size_bytes():
        raise MeshnnValueError(f"reshape to {list(new_shape)} changes the padded size; not a view")
    if isinstance(tensor.storage, DeviceStorage):
        return _device_tensor(new_spec, tensor.storage.mesh_buffer, tensor.storage.coords, tensor.tensor_topology())
    return Tensor.make(new_spec, tensor.storage, tensor.tensor_topology())


def packed_size(shape: Sequence[int], dtype: DataType, layout: Layout, tile: Tile | None = None) -> int:
    return packed_spec(shape, dtype, layout, tile=tile or Tile()).nbytes


def as_host_array(data: Any) -> np.ndarray:
    return as_array(data)
