"""Collectives across the mesh: ``ttnn.all_gather``, ``ttnn.reduce_scatter``, ``ttnn.all_reduce``.

Groups: without ``cluster_axis`` the group is the whole mesh, in row-major order; with
``cluster_axis=1`` each mesh row is a group (devices that differ only in their column), with
``cluster_axis=0`` each column.  Every device of a group ends with the same gathered or reduced
result; ``reduce_scatter`` leaves device i of a group with slice i of ``dim``.  On the simulated
mesh a collective is a rearrangement of slab rows along a mesh axis (sums in float32).

Across MPI ranks (each rank holding some of the mesh's devices) the values cross ranks through
the context's array collectives: ``all_gather`` gathers every rank's local shards
(``Allgatherv``); ``all_reduce`` and ``reduce_scatter`` sum each group's local members first and
then add those partial sums over ranks (``Allreduce``), so a rank sends one partial per group, not
one shard per device.  The kernel runs once per rank, over all of its local devices.
"""

from __future__ import annotations

import enum

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.coord import MeshCoordinate, to_linear_index
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.execution import (
    Output,
    device_input,
    known_values,
    launch,
    logical_values,
    out_spec_like,
    same_mesh,
    settled,
    store_elements,
    stored_elements,
    write_values,
)
from meshnn.tensor.dtypes import DataType
from meshnn.tensor.layout import Layout
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate, PlacementShard, TensorTopology


class Topology(enum.Enum):
    """Fabric topologies (``ttnn.Topology``); accepted, the simulated links need none."""

    Ring = 0
    Linear = 1
    Mesh = 2
    Torus = 3


def _grid(mesh: MeshDevice, cluster_axis: int | None, op: str) -> tuple[tuple[int, ...], int | None]:
    """The mesh as a grid of devices and the grid axis a group runs along (None: the whole mesh)."""
    shape = tuple(mesh.shape)
    if cluster_axis is None:
        return shape, None
    if isinstance(cluster_axis, bool) or not isinstance(cluster_axis, int):
        raise MeshnnTypeError(f"ttnn.{op}: cluster_axis must be an int or None, got {cluster_axis!r}")
    if not 0 <= cluster_axis < len(shape):
        raise MeshnnValueError(
            f"ttnn.{op}: cluster_axis {cluster_axis!r} must be one of {list(range(len(shape)))} for a "
            f"{mesh.shape!r} mesh"
        )
    return shape, cluster_axis


def _check(op: str, input_tensor: Tensor, dim: int | None) -> tuple[Tensor, MeshDevice, int | None]:
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    if len(tensor.storage.coords) != mesh.get_num_devices():  # type: ignore[union-attr]
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor populates {len(tensor.storage.coords)} of {mesh.get_num_devices()} devices; "  # type: ignore[union-attr]
            "a collective needs a shard on every device"
        )
    if dim is None:
        return tensor, mesh, None
    rank = len(tensor.shape)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise MeshnnTypeError(f"ttnn.{op}: dim must be an int, got {dim!r}")
    if not -rank <= dim < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {dim!r} is out of range for input_tensor of shape {list(tensor.shape)}")
    return tensor, mesh, dim % rank


def _options(
    op: str, mesh: MeshDevice, mesh_device: object, num_links: object, topology: object, memory_config: object
) -> None:
    """The arguments a simulated collective only checks: ``mesh_device`` (when given, the input's
    mesh), ``num_links`` (a positive int or None), ``topology`` (a ttnn.Topology or None) and
    ``memory_config`` (a MemoryConfig or None)."""
    if mesh_device is not None:
        if not isinstance(mesh_device, MeshDevice):
            raise MeshnnTypeError(f"ttnn.{op}: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
        if mesh_device.mesh_id != mesh.mesh_id:
            raise WrongMeshError(f"ttnn.{op}: mesh_device is not the mesh device input_tensor lives on")
    if num_links is not None and (isinstance(num_links, bool) or not isinstance(num_links, int)):
        raise MeshnnTypeError(f"ttnn.{op}: num_links must be an int, got {num_links!r}")
    if num_links is not None and num_links < 1:
        raise MeshnnValueError(f"ttnn.{op}: num_links must be >= 1, got {num_links}")
    if topology is not None and not isinstance(topology, Topology):
        raise MeshnnTypeError(f"ttnn.{op}: topology must be a ttnn.Topology, got {topology!r}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")


def _group_size(shape: tuple[int, ...], axis: int | None) -> int:
    return int(np.prod(shape)) if axis is None else shape[axis]


def _topology(tensor: Tensor, axis: int | None, placement: object) -> TensorTopology:
    old = tensor.tensor_topology()
    placements = list(old.placements)
    if axis is None:
        placements = [placement] * len(placements)
    elif len(placements) == tensor.storage.mesh_buffer.device().shape.dims():  # type: ignore[union-attr]
        placements[axis] = placement
    return TensorTopology(old.distribution_shape, tuple(placements), old.mesh_coords)


def _grouped(values: np.ndarray, shape: tuple[int, ...], axis: int | None) -> np.ndarray:
    """``(devices, *t)`` values as ``(groups, members, *t)``."""
    grid = values.reshape((*shape, *values.shape[1:]))
    if axis is None:
        return values.reshape((1, values.shape[0], *values.shape[1:]))
    moved = np.moveaxis(grid, axis, len(shape) - 1)  # the group axis last among the mesh axes
    return moved.reshape((-1, shape[axis], *values.shape[1:]))


def _ungrouped(grouped: np.ndarray, shape: tuple[int, ...], axis: int | None) -> np.ndarray:
    """The inverse of :func:`_grouped`: ``(groups, members, *t)`` back to ``(devices, *t)``."""
    tail = grouped.shape[2:]
    if axis is None:
        return grouped.reshape((-1, *tail))
    others = [d for i, d in enumerate(shape) if i != axis]
    moved = grouped.reshape((*others, shape[axis], *tail))
    return np.moveaxis(moved, len(shape) - 1, axis).reshape((-1, *tail))


# ----------------------------------------------------------------------------- across ranks


def _local_indices(mesh: MeshDevice, coords: tuple[MeshCoordinate, ...]) -> np.ndarray:
    """Row-major device indices of this rank's ``coords`` (which must be all its local devices)."""
    if len(coords) != len(mesh.local_coords()):
        raise MeshnnValueError("a collective across ranks must run on every local device of the mesh at once")
    return np.fromiter((to_linear_index(mesh.shape, c) for c in coords), dtype=np.int64, count=len(coords))


def _gathered(
    mesh: MeshDevice, local: np.ndarray, coords: tuple[MeshCoordinate, ...], out: np.ndarray | None = None
) -> np.ndarray:
    """``(local devices, *t)`` values of every rank as ``(devices, *t)`` in row-major device order
    (received straight into ``out`` when given and the ranks own contiguous rows in rank order)."""
    context = mesh.context
    index = np.concatenate(context.allgather_array(_local_indices(mesh, coords)))
    in_order = bool(np.array_equal(index, np.arange(index.size)))
    shape = (index.size, *local.shape[1:])
    received = out if out is not None and in_order else np.empty(shape, dtype=local.dtype)
    context.allgather_array(local, out=received)
    if in_order:
        return received
    ordered = np.empty_like(received) if out is None else out
    ordered[index] = received
    return ordered


def _gather_bytes(
    mesh: MeshDevice,
    in_rows: np.ndarray,
    out_rows: np.ndarray,
    coords: tuple[MeshCoordinate, ...],
    shape: tuple[int, ...],
    axis: int | None,
    size: int,
) -> None:
    """all_gather across ranks when the result is the members' bytes end to end: each local
    device's output row is its group's ``size``-byte input rows in member order."""
    n = _group_size(shape, axis)
    mine = _local_indices(mesh, coords)
    if len(mine) == 1 and n == int(np.prod(shape)):  # one local device, one group of all: in place
        _gathered(mesh, np.ascontiguousarray(in_rows[:, :size]), coords, out=out_rows[0, : n * size].reshape(n, size))
        return
    everything = _gathered(mesh, np.ascontiguousarray(in_rows[:, :size]), coords)
    group_of = [_group_of(shape, axis, i)[0] for i in range(everything.shape[0])]
    for row, index in enumerate(mine):
        members = [i for i, g in enumerate(group_of) if g == group_of[int(index)]]
        out_rows[row, : n * size].reshape(n, size)[...] = everything[members]


def _group_of(shape: tuple[int, ...], axis: int | None, index: int) -> tuple[int, int]:
    """(group, member) of the device at row-major ``index`` (the numbering of :func:`_grouped`)."""
    position = np.unravel_index(index, shape)
    if axis is None:
        return 0, index
    others = tuple(p for i, p in enumerate(position) if i != axis)
    other_shape = tuple(d for i, d in enumerate(shape) if i != axis)
    group = int(np.ravel_multi_index(others, other_shape)) if other_shape else 0
    return group, int(position[axis])


def _summed_over_ranks(
    mesh: MeshDevice,
    local: np.ndarray,
    coords: tuple[MeshCoordinate, ...],
    shape: tuple[int, ...],
    axis: int | None,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Each group's sum over all its members on every rank: ``(groups, *t)``, and the (group,
    member) of each local device.  When every local device is a group of its own, in order (a
    collective across the ranks only), the local values are the partial sums as they stand and
    the sum is received into ``out`` when given."""
    members = [_group_of(shape, axis, int(i)) for i in _local_indices(mesh, coords)]
    groups = int(np.prod(shape)) // _group_size(shape, axis)
    dtype = _sum_dtype(local)
    if [g for g, _ in members] == list(range(groups)):
        partial = local.astype(dtype, copy=False)
        if out is not None and (out.shape != partial.shape or out.dtype != dtype):
            out = None
        return mesh.context.allreduce_array(partial, out=out), members
    partial = np.zeros((groups, *local.shape[1:]), dtype=dtype)
    for row, (group, _) in enumerate(members):
        partial[group] += local[row]
    return mesh.context.allreduce_array(partial), members


def _raw_concatenation(shape: tuple[int, ...], layout: Layout, dim: int, explicit: bool) -> bool:
    """True when gathering along ``dim`` puts the shards' bytes end to end: every dim before
    ``dim`` is 1 and ``dim`` is not tiled."""
    outer = int(np.prod(shape[:dim], dtype=np.int64))
    return outer == 1 and not explicit and (layout is Layout.ROW_MAJOR or dim < len(shape) - 2)


def _sum_dtype(values: np.ndarray) -> np.dtype:
    return values.dtype if values.dtype.kind in "iu" else np.dtype(np.float32)


def all_gather(
    input_tensor: Tensor,
    dim: int,
    cluster_axis: int | None = None,
    mesh_device: MeshDevice | None = None,
    *,
    num_links: int = 1,
    topology: Topology | None = None,
    memory_config: MemoryConfig | None = None,
    **_: object,
) -> Tensor:
    """Every device of a group gets the group's shards concatenated along ``dim``, in group order."""
    tensor, mesh, axis_dim = _check("all_gather", input_tensor, dim)
    _options("all_gather", mesh, mesh_device, num_links, topology, memory_config)
    shape, axis = _grid(mesh, cluster_axis, "all_gather")
    n = _group_size(shape, axis)
    out_shape = tuple(d * n if i == axis_dim else d for i, d in enumerate(tensor.shape))
    spec = out_spec_like(tensor, shape=out_shape, memory_config=memory_config, op="all_gather")

    raw = _raw_concatenation(
        tuple(tensor.shape), tensor.layout, axis_dim, tensor.spec.explicit_padded_shape is not None
    )
    in_size = tensor.spec.compute_packed_buffer_size_bytes()

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        by_bytes = raw and (not mesh.all_local or known_values(in_rows[0], tensor.spec) is None)
        if by_bytes:
            settled(in_rows[0])  # the bytes are read below
        if raw and not mesh.all_local:
            _gather_bytes(mesh, in_rows[0], out_rows[0], coords, shape, axis, in_size)
            return
        if by_bytes and len(coords) == mesh.get_num_devices():  # the group's bytes end to end, row by row
            groups = [_group_of(shape, axis, i)[0] for i in range(len(coords))]
            for row, group in enumerate(groups):
                members = [i for i, g in enumerate(groups) if g == group]
                out_rows[0][row, : n * in_size].reshape(n, in_size)[...] = in_rows[0][members, :in_size]
            return
        values = logical_values(in_rows[0], tensor.spec, as_float=False)
        if not mesh.all_local:
            values = _gathered(mesh, values, coords)
        grouped = _grouped(values, shape, axis)
        gathered = np.concatenate([grouped[:, m] for m in range(n)], axis=axis_dim + 1)  # (groups, *out)
        if gathered.shape[0] == 1 and mesh.all_local:  # one group: the same result on every device
            write_values(out_rows[0], gathered, spec, exact=True)
            return
        result = np.broadcast_to(gathered[:, None], (gathered.shape[0], n, *gathered.shape[1:]))
        result = _ungrouped(result, shape, axis)
        if not mesh.all_local:
            result = result[_local_indices(mesh, coords)]
        write_values(out_rows[0], np.ascontiguousarray(result), spec)

    out = Output(spec, topology=_topology(tensor, axis, PlacementReplicate()))
    return launch("all_gather", mesh, [tensor], [out], kernel, reads_memos=True)[0]


def all_reduce(
    input_tensor: Tensor,
    cluster_axis: int | None = None,
    mesh_device: MeshDevice | None = None,
    *,
    num_links: int | None = None,
    topology: Topology | None = None,
    memory_config: MemoryConfig | None = None,
    **_: object,
) -> Tensor:
    """Every device of a group gets the sum of the group's shards."""
    tensor, mesh, _ = _check("all_reduce", input_tensor, None)
    _options("all_reduce", mesh, mesh_device, num_links, topology, memory_config)
    shape, axis = _grid(mesh, cluster_axis, "all_reduce")
    spec = out_spec_like(tensor, memory_config=memory_config, op="all_reduce")

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        if not mesh.all_local:  # element-wise: summed in storage order, tile padding and all
            rows, out_row = settled(in_rows[0]), out_rows[0]
            elements = stored_elements(rows, tensor.spec)
            direct = (spec.dtype is DataType.FLOAT32 or spec.dtype.is_integer) and rows.shape == out_row.shape
            target = out_row.view(elements.dtype) if direct else None
            totals, members = _summed_over_ranks(mesh, elements, coords, shape, axis, out=target)
            if totals is not target:
                store_elements(totals[[group for group, _ in members]], spec, out_row[:, : rows.shape[1]])
            return
        grouped = _grouped(logical_values(in_rows[0], tensor.spec), shape, axis)
        total = grouped.sum(axis=1, keepdims=True, dtype=_sum_dtype(grouped))
        if total.shape[0] == 1:  # one group: every device gets the one sum (written once, to each)
            write_values(out_rows[0], total[0], spec)
            return
        result = _ungrouped(np.broadcast_to(total, grouped.shape), shape, axis)
        write_values(out_rows[0], np.ascontiguousarray(result), spec)

    out = Output(spec, topology=_topology(tensor, axis, PlacementReplicate()))
    return launch("all_reduce", mesh, [tensor], [out], kernel, reads_memos=True)[0]


def reduce_scatter(
    input_tensor: Tensor,
    dim: int,
    cluster_axis: int | None = None,
    mesh_device: MeshDevice | None = None,
    *,
    num_links: int | None = None,
    topology: Topology | None = None,
    memory_config: MemoryConfig | None = None,
    math_op: object = None,
    **_: object,
) -> Tensor:
    """The group's shards are summed; device i of the group keeps slice i of ``dim``."""
    tensor, mesh, axis_dim = _check("reduce_scatter", input_tensor, dim)
    _options("reduce_scatter", mesh, mesh_device, num_links, topology, memory_config)
    shape, axis = _grid(mesh, cluster_axis, "reduce_scatter")
    n = _group_size(shape, axis)
    size = tensor.shape[axis_dim]
    rank = len(tensor.shape)
    unit = n
    if tensor.layout is Layout.TILE and axis_dim >= rank - 2:
        unit = n * tensor.tile.tile_shape[axis_dim - (rank - 2)]
    if size % unit:
        raise MeshnnValueError(
            f"ttnn.reduce_scatter: dim {dim} of input_tensor {list(tensor.shape)} ({size}) must be divisible by "
            f"{unit} ({n} devices{' x the tile' if unit != n else ''})"
        )
    out_shape = tuple(d // n if i == axis_dim else d for i, d in enumerate(tensor.shape))
    spec = out_spec_like(tensor, shape=out_shape, memory_config=memory_config, op="reduce_scatter")

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], tensor.spec)
        if not mesh.all_local:
            totals, members = _summed_over_ranks(mesh, values, coords, shape, axis)
            pieces = np.split(totals, n, axis=axis_dim + 1)  # n x (groups, *out)
            result = np.stack([pieces[member][group] for group, member in members])
        else:
            grouped = _grouped(values, shape, axis)
            total = grouped.sum(axis=1, dtype=_sum_dtype(grouped))
            pieces = np.stack(np.split(total, n, axis=axis_dim + 1), axis=1)  # (groups, members, *out)
            result = _ungrouped(pieces, shape, axis)
        write_values(out_rows[0], np.ascontiguousarray(result), spec)

    out = Output(spec, topology=_topology(tensor, axis, PlacementShard(axis_dim)))
    return launch("reduce_scatter", mesh, [tensor], [out], kernel, reads_memos=True)[0]
