"""What the Llama-70B Galaxy fused collectives (``ttnn.experimental.llama_reduce_scatter``,
``llama_rs_create_heads``) take and check as ttnn checks them, and the sums they scatter.

Both take ``(input_tensor, intermediate_packet_buffer, dim, cross_device_semaphore, subdevice_id,
cluster_axis, mesh_device, ...)``: a width-sharded input whose shards are one tile row high (32),
a sharded scratch buffer of the same tile shape that the fabric kernels stage their packets in
(checked, left as it is: a simulated link needs no staging), ``dim`` 3, ``cluster_axis`` 1, whose
groups are a mesh row of 2 or 4 devices (the ``ring_devices`` ttnn reads off the mesh view), one
global semaphore of the input's mesh and a sub-device of the loaded manager.  ``num_links`` (a
positive int within the worker rows), ``topology`` (Ring or Linear) and ``use_noc1_only`` change no
value; each is checked and recorded.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, :mod:`meshnn.ops.checks`
and the collectives' arguments, groups and ranks.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.global_semaphore import check_semaphore
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.sub_device import SubDeviceId
from meshnn.ops.ccl.arguments import checked_input
from meshnn.ops.ccl.async_arguments import link_options, same_mesh_device
from meshnn.ops.ccl.groups import sum_dtype
from meshnn.ops.ccl.ranks import summed_over_ranks
from meshnn.ops.checks import device_input
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

TRACE_BYTES = 2048
"""Dispatch-command bytes one of these fabric programs adds to a trace on each device (a model
figure, below what tt-metal's tests allow them: ``test_rs_create_heads_tg_trace`` captures a
10-op warm-up and a 75-op trace in a 241,664 B trace region, at most 2,843 B an op)."""

SHARD_HEIGHT = 32
"""The shard height every tensor of these ops has: one tile row (ttnn's kernels move tile rows)."""


def ring_devices(op: str, mesh: MeshDevice, cluster_axis: object) -> int:
    """The devices of a group along ``cluster_axis`` (ttnn: the mesh view's rows for 0, columns
    for 1): more than one, and the kernels take rings of 2 or 4 along axis 1 only."""
    if isinstance(cluster_axis, bool) or not isinstance(cluster_axis, int):
        raise MeshnnTypeError(f"ttnn.{op}: cluster_axis must be an int, got {cluster_axis!r}")
    shape = tuple(mesh.shape)
    n = shape[0] if cluster_axis == 0 else shape[-1]
    if n < 2:
        raise MeshnnValueError(f"ttnn.{op}: the reduce scatter only works for ring_devices > 1, but has {n}")
    if cluster_axis != 1:
        raise MeshnnValueError(f"ttnn.{op}: cluster_axis must be 1, got {cluster_axis}")
    if n not in (2, 4):
        raise MeshnnValueError(f"ttnn.{op}: ring_devices must be 4 or 2, got {n} (the {list(shape)} mesh's columns)")
    return n


def _one_tile_row(op: str, name: str, memory_config: MemoryConfig) -> None:
    spec = memory_config.shard_spec
    if spec is None:
        raise MeshnnValueError(f"ttnn.{op}: {name} must have a shard spec (a sharded memory config)")
    if spec.shape[0] != SHARD_HEIGHT:
        raise MeshnnValueError(f"ttnn.{op}: {name} shard height must be {SHARD_HEIGHT} but got {spec.shape[0]}")


def checked_call(
    op: str, given: dict[str, object], scattered: TensorSpec | None = None
) -> tuple[Tensor, MeshDevice, int, dict[str, object]]:
    """The common arguments checked: the input, its mesh, the ring size and the attrs to record
    (the buffer, the semaphore, the link options, ``dim`` and ``cluster_axis``).  ``scattered``:
    the spec of the tensor the reduce-scatter reads when it is not ``input_tensor`` (a fused
    op's product, checked before the product exists)."""
    tensor, mesh, dim = checked_input(op, given["input_tensor"], given["dim"])  # type: ignore[arg-type]
    spec = tensor.spec if scattered is None else scattered
    same_mesh_device(op, given["mesh_device"], mesh)
    n = ring_devices(op, mesh, given["cluster_axis"])
    if dim != 3:
        raise MeshnnValueError(f"ttnn.{op}: dim must be 3, got {given['dim']}")
    semaphore = check_semaphore(op, "cross_device_semaphore", given["cross_device_semaphore"], mesh)
    subdevice = given["subdevice_id"]
    if not isinstance(subdevice, SubDeviceId):
        raise MeshnnTypeError(f"ttnn.{op}: subdevice_id must be a ttnn.SubDeviceId, got {subdevice!r}")
    options = {k: given[k] for k in ("num_links", "topology", "subdevice_id")}
    attrs = link_options(op, mesh, options, links_required=True)
    if not isinstance(given["use_noc1_only"], bool):
        raise MeshnnTypeError(f"ttnn.{op}: use_noc1_only must be a bool, got {given['use_noc1_only']!r}")
    _one_tile_row(op, "input_tensor" if scattered is None else "the scattered product", spec.memory_config)
    buffer = _packet_buffer(op, given["intermediate_packet_buffer"], spec, mesh)
    attrs.update(
        intermediate_packet_buffer=buffer, cross_device_semaphore=semaphore, dim=dim,
        cluster_axis=given["cluster_axis"], use_noc1_only=given["use_noc1_only"],
    )  # fmt: skip
    return tensor, mesh, n, attrs


def _packet_buffer(op: str, value: object, scattered: TensorSpec, mesh: MeshDevice) -> Tensor:
    """The intermediate packet buffer: a live sharded device tensor of the input's mesh, one tile
    row high, of the scattered tensor's tile shape."""
    name = "intermediate_packet_buffer"
    buffer = device_input(op, name, value)
    if buffer.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: {name} is on another mesh device than input_tensor")
    _one_tile_row(op, name, buffer.memory_config())
    mine, theirs = buffer.spec.tile, scattered.tile
    if mine is not None and theirs is not None and mine.tile_shape != theirs.tile_shape:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} must have the same tile shape {list(theirs.tile_shape)} as input_tensor, "
            f"got {list(mine.tile_shape)}"
        )
    return buffer


def checked_memory_config(op: str, name: str, value: object) -> MemoryConfig | None:
    """An output memory config: None, or a sharded one whose shards are one tile row high."""
    if value is None:
        return None
    if not isinstance(value, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.MemoryConfig, got {value!r}")
    _one_tile_row(op, name, value)
    return value


def scattered_sums(
    mesh: MeshDevice,
    values: np.ndarray,
    coords: tuple[MeshCoordinate, ...],
    axis: int,
    label: str,
    part: Callable[[np.ndarray, int], np.ndarray],
) -> np.ndarray:
    """``(k, *piece)``: for each of the ``k`` devices at ``coords``, ``part(total, member)`` of its
    group's sum (float32, members added in member order, on any number of ranks), ``member`` being
    the device's place in its group along ``axis``; a group is the devices at ``coords`` that differ
    only along ``axis`` (a tensor on one row of a mesh makes one group of that row)."""
    shape = tuple(mesh.shape)
    if not mesh.all_local:
        totals, members = summed_over_ranks(mesh, values, coords, shape, axis, op=label)
        return np.stack([part(totals[group], member) for group, member in members])
    groups: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    for index, coord in enumerate(coords):  # a group: the devices that differ only along ``axis``
        key = tuple(c for i, c in enumerate(coord) if i != axis)
        groups.setdefault(key, []).append((coord[axis], index))
    pieces: list[np.ndarray | None] = [None] * len(coords)
    for members in groups.values():
        members.sort()
        total = values[members[0][1]].astype(sum_dtype(values), copy=True)
        for _, index in members[1:]:
            total += values[index]
        for member, index in members:
            pieces[index] = part(total, member)
    return np.stack(pieces)  # type: ignore[arg-type]
