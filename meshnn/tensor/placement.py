"""Putting tensors on a mesh: ``ttnn.to_device`` of a host tensor (one shard per populated
coordinate, or a plain host tensor replicated to every device) and the direct put of an array cut
for the mesh (:func:`mapped_to_device`, behind ``from_torch(..., device=)``), each one blocking
``enqueue_write_shards`` into a freshly allocated MeshBuffer.

Layer: tensor.  Imports errors, mesh, the byte formats (encoding) and the tensor modules spec,
memory_config, topology, arrays, tensor and lifetime (device_hooks for a device tensor's new
memory config).  On a planning mesh (:mod:`meshnn.mesh.planning`) a put allocates and writes nothing.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, PlanningError, WrongMeshError
from meshnn.formats.codec import byte_view
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate, MeshShape, to_linear_index
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.observers import OBSERVERS, TO_DEVICE, HostOpEvent, host_call
from meshnn.mesh.slab import distinct_rows, rows_held
from meshnn.mesh.transfers import HostEncoder, ShardDataTransfer
from meshnn.tensor.arrays import MappedArray
from meshnn.tensor.lifetime import allocate_mesh_buffer, device_tensor
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor
from meshnn.tensor.topology import TensorTopology


def to_device(
    tensor: Tensor, device: MeshDevice, memory_config: MemoryConfig | None = None, *, queue_id: int | None = None
) -> Tensor:
    """Write a host tensor to ``device``: one shard per populated coordinate, or a plain host
    tensor replicated to every device.  A tensor already on ``device`` is returned as it is."""
    with host_call(TO_DEVICE, device, (tensor,)) as made:
        made.tensors = (_to_device(tensor, device, memory_config, queue_id),)
    return made.tensors[0]


def _to_device(tensor: Tensor, device: MeshDevice, memory_config: MemoryConfig | None, queue_id: int | None) -> Tensor:
    check_tensor(tensor)
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
    coords, topology = placement_on(tensor, device)
    queue = device.mesh_command_queue(0 if queue_id is None else queue_id)
    queue.refuse_in_capture("Writes")  # (before the buffer is allocated)
    held = set()  # the distinct host memory the shards are in (replicas share one buffer)
    if device.executes:
        for shard in tensor.host_buffer().local_shards().values():
            data = shard.data  # (a shape-only shard raises here, before anything is allocated)
            held.add((data.__array_interface__["data"][0], data.nbytes))
    plain = topology is not tensor.tensor_topology()  # a plain host tensor: the same bytes on every device
    with distinct_rows(1 if plain else max(1, len(held))):  # (rows that share pages count once)
        buffer = allocate_mesh_buffer(spec, device)
    if not device.executes:  # a planning mesh: an address, no bytes (the shards are not even read)
        return device_tensor(spec, buffer, coords, topology)
    _write_shards(tensor, device, queue, buffer, coords, topology)
    made = device_tensor(spec, buffer, coords, topology)
    if OBSERVERS:  # ttnn.to_device is one of ttnn's Python operations (reports, graph report files)
        OBSERVERS.host_op(HostOpEvent("to_device", device, inputs=(tensor,), outputs=(made,)))
    return made


def _write_shards(
    tensor: Tensor, device: MeshDevice, queue: object, buffer: object, coords: list, topology: TensorTopology
) -> None:
    """Write a host tensor's shards into its new MeshBuffer (a plain host tensor to every device)."""
    shards = tensor.host_buffer()
    if topology is not tensor.tensor_topology():  # a plain host tensor: the same bytes everywhere
        data = shards.get_shard(MeshCoordinate(0, 0))
        queue.enqueue_write_shards(buffer, [ShardDataTransfer(c, data.data) for c in device.local_coords()], True)  # type: ignore[attr-defined]
    else:
        transfers = [
            ShardDataTransfer(c, shards.get_shard(c).data)
            for c in coords
            if device.is_local(c)  # type: ignore[union-attr]
        ]
        queue.enqueue_write_shards(buffer, transfers, True)  # type: ignore[attr-defined]


def aligned_rows(shard: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``shard`` zero padded to ``spec``'s explicit padded shape where that is ttnn's alignment of a
    sharded ROW_MAJOR tensor (its width padded to the shard width) and the shard holds only the
    logical values."""
    padded = spec.explicit_padded_shape
    if padded is None or spec.layout is not Layout.ROW_MAJOR or tuple(shard.shape) != tuple(spec.shape):
        return shard
    return np.pad(shard, [(0, p - d) for p, d in zip(padded, shard.shape, strict=True)])


def mapped_to_device(
    mapped: MappedArray, device: MeshDevice, memory_config: MemoryConfig | None = None, cq_id: int | None = None
) -> Tensor:
    """``host_tensor_from_array`` then ``to_device`` (graph capture's ``Tensor::to_device``), see
    :func:`_mapped_to_device`."""
    with host_call(TO_DEVICE, device) as made:
        made.tensors = (_mapped_to_device(mapped, device, memory_config, cq_id),)
    return made.tensors[0]


def _mapped_to_device(
    mapped: MappedArray, device: MeshDevice, memory_config: MemoryConfig | None, cq_id: int | None
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
    distinct = sum(1 for _, holders in groups if any(device.is_local(c) for c in holders))
    _check_writable(mapped, device, queue, distinct)
    with distinct_rows(distinct):  # (devices holding the same shard share its memory: meshnn.mesh.slab)
        buffer = allocate_mesh_buffer(spec, device)  # sized by the spec: a shard fills its device's region
    if not device.executes:  # a planning mesh: an address, no bytes, nothing encoded
        return device_tensor(spec, buffer, coords, topology)
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
            shard = aligned_rows(shard, spec)
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
    return device_tensor(spec, buffer, coords, topology)


def _check_writable(mapped: MappedArray, device: MeshDevice, queue: object, distinct: int) -> None:
    """What must hold before a put allocates anything: no trace is being captured on the queue,
    a shape-only (meta) tensor goes only to a planning mesh, and the conversion fits host memory
    (``distinct`` shards among the local devices: rows that share pages count once)."""
    queue.refuse_in_capture("Writes")  # type: ignore[attr-defined]
    if not device.executes:
        return
    if mapped.shape_only:
        raise PlanningError(
            f"a torch meta tensor of shape {list(mapped.spec.shape)} has no values to write to the executing "
            f"{device.shape} mesh; plan with a mesh opened with execute=False, or give real values"
        )
    local, size = len(device.local_coords()), mapped.spec.compute_packed_buffer_size_bytes()
    mapped.check_host_memory("from_torch", rows_held(local, size, distinct))  # before any device memory is taken


def placement_on(tensor: Tensor, device: MeshDevice) -> tuple[list[MeshCoordinate], TensorTopology]:
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
