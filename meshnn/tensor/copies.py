"""Copies into tensors that already exist (ttnn's preallocated-tensor APIs, as traces use them):
``copy_host_to_device_tensor`` writes a host tensor's shards into a device tensor's MeshBuffer,
``copy_host_to_device_tensor_partial`` writes only the shards dealt to some cores (a sharded device
tensor), ``copy_device_to_host_tensor`` reads a device tensor into a host tensor's buffers; both need the
same shape, padding, dtype, layout and tile on each side.

Layer: tensor.  Imports errors, device, mesh and the tensor modules storage, tensor, placement and readback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from meshnn.device.buffer import BufferLayout, shard_page_grid
from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.buffer_config import BufferRegion
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.transfers import ShardDataTransfer
from meshnn.tensor.placement import placement_on
from meshnn.tensor.readback import from_device, queue_of
from meshnn.tensor.storage import DeviceStorage, HostStorage
from meshnn.tensor.tensor import Tensor, check_tensor

if TYPE_CHECKING:
    from meshnn.mesh.mesh_buffer import MeshBuffer
    from meshnn.mesh.mesh_device import MeshDevice
    from meshnn.tensor.topology import TensorTopology


def copy_host_to_device_tensor(host_tensor: Tensor, device_tensor: Tensor, cq_id: int | None = None) -> None:
    """Write ``host_tensor``'s shards into the existing ``device_tensor`` (same spec)."""
    _check_copy("copy_host_to_device_tensor", host_tensor, device_tensor, from_host=True)
    buffer = device_tensor.storage.mesh_buffer
    mesh = buffer.device()
    queue = mesh.mesh_command_queue(queue_of(None, cq_id))
    coords, topology = placement_on(host_tensor, mesh)
    if mesh.executes:  # (a planning mesh has no bytes to write)
        transfers = [ShardDataTransfer(c, data) for c, data in _local_shards(host_tensor, mesh, coords, topology)]
        queue.enqueue_write_shards(buffer, transfers, True)
    _now_on(device_tensor, buffer, coords, topology)


def _local_shards(
    host_tensor: Tensor, mesh: MeshDevice, coords: list[MeshCoordinate], topology: TensorTopology
) -> list[tuple[MeshCoordinate, np.ndarray]]:
    """(device, host shard bytes) for each of ``coords`` this process holds; a host tensor of one
    shard placed over several devices gives each the same bytes."""
    shards = host_tensor.host_buffer()
    single = shards.get_shard(MeshCoordinate(0, 0)) if topology is not host_tensor.tensor_topology() else None
    return [
        (c, (single if single is not None else shards.get_shard(c)).data)  # type: ignore[union-attr]
        for c in coords
        if mesh.is_local(c)
    ]


def _now_on(device_tensor: Tensor, buffer: MeshBuffer, coords: list[MeshCoordinate], topology: TensorTopology) -> None:
    """``device_tensor`` now holds the written shards on ``coords``, placed as ``topology`` says."""
    object.__setattr__(device_tensor, "_storage", DeviceStorage(buffer, tuple(coords)))
    device_tensor._topology = topology


def copy_host_to_device_tensor_partial(
    host_tensor: Tensor, device_tensor: Tensor, logical_core_filter: CoreRangeSet, cq_id: int | None = None
) -> None:
    """Write only the shards of ``host_tensor`` that ``device_tensor``'s sharded buffer deals to the
    cores in ``logical_core_filter`` (DRAM-sharded: the banks ``(bank, 0)``); every other page keeps
    its bytes.  An empty filter writes nothing; an interleaved device tensor is refused."""
    _check_copy("copy_host_to_device_tensor_partial", host_tensor, device_tensor, from_host=True)
    if not isinstance(logical_core_filter, CoreRangeSet):
        raise MeshnnTypeError(
            f"logical_core_filter must be a ttnn.CoreRangeSet, got {type(logical_core_filter).__name__}"
        )
    buffer = device_tensor.storage.mesh_buffer
    mesh, layout = buffer.device(), buffer.layout
    queue = mesh.mesh_command_queue(queue_of(None, cq_id))
    if not logical_core_filter.ranges():
        return
    if layout.shard is None:
        raise MeshnnValueError(
            "copy_host_to_device_tensor_partial needs a sharded device tensor; device_tensor is interleaved "
            f"in {layout.buffer_type.name}"
        )
    coords, topology = placement_on(host_tensor, mesh)
    runs = _filtered_runs(layout, logical_core_filter)
    if mesh.executes and runs:
        transfers = [
            ShardDataTransfer(c, data[a:b], BufferRegion(a, b - a))
            for c, data in _local_shards(host_tensor, mesh, coords, topology)
            for a, b in runs
        ]
        queue.enqueue_write_shards(buffer, transfers, True)
    _now_on(device_tensor, buffer, coords, topology)


def _filtered_runs(layout: BufferLayout, cores: CoreRangeSet) -> list[tuple[int, int]]:
    """Byte ranges [start, end) of a device's buffer (host page order) holding the pages dealt to
    ``cores``, adjacent pages merged."""
    dealt = layout.shard.dealt_cores()  # type: ignore[union-attr]
    pages = sorted(
        page
        for core, owned in zip(dealt, shard_page_grid(layout), strict=False)
        if cores.contains(core)
        for page in owned
        if page >= 0
    )
    runs: list[tuple[int, int]] = []
    size = layout.page_size
    for page in pages:
        if runs and runs[-1][1] == page * size:
            runs[-1] = (runs[-1][0], (page + 1) * size)
        else:
            runs.append((page * size, (page + 1) * size))
    return runs


def copy_device_to_host_tensor(
    device_tensor: Tensor, host_tensor: Tensor, blocking: bool = True, cq_id: int | None = None
) -> None:
    """Read ``device_tensor`` into the existing ``host_tensor``'s buffers (same spec)."""
    _check_copy("copy_device_to_host_tensor", host_tensor, device_tensor, from_host=False)
    read = from_device(device_tensor, cq_id=cq_id)
    target = host_tensor.host_buffer()
    for coord, shard in read.host_buffer().local_shards().items():
        existing = target.get_shard(coord) if coord in target.local_shards() else None
        if existing is not None and existing.nbytes == shard.nbytes:
            existing.data[...] = shard.data
        else:
            target.emplace_shard(coord, lambda s=shard: s)
    host_tensor._topology = read.tensor_topology()


def _check_copy(name: str, host_tensor: Tensor, device_tensor: Tensor, *, from_host: bool) -> None:
    """Both tensors usable, ``host_tensor`` on the host and ``device_tensor`` on a device, alike in
    shape, padding, dtype, layout and tile; the copy's source is checked (and named) first."""
    sides = [("host_tensor", host_tensor, "a host tensor"), ("device_tensor", device_tensor, "a device tensor")]
    if not from_host:
        sides.reverse()
    for what, tensor, _ in sides:
        check_tensor(tensor, what)
    if not isinstance(host_tensor.storage, HostStorage) or not isinstance(device_tensor.storage, DeviceStorage):
        (first, a, kind_a), (second, b, kind_b) = sides
        raise MeshnnValueError(
            f"{name} needs {kind_a} and {kind_b}: {first} is on the {a.storage_type().name.lower()}, "
            f"{second} on the {b.storage_type().name.lower()}"
        )
    _check_same_layout(host_tensor, device_tensor, name)


def _check_same_layout(a: Tensor, b: Tensor, name: str) -> None:
    if (a.shape, a.padded_shape, a.dtype, a.layout, a.tile) != (b.shape, b.padded_shape, b.dtype, b.layout, b.tile):
        raise MeshnnValueError(
            f"{name}: host_tensor {list(a.shape)} (padded {list(a.padded_shape)}) {a.dtype} {a.layout} does not "
            f"match device_tensor {list(b.shape)} (padded {list(b.padded_shape)}) {b.dtype} {b.layout}"
        )
