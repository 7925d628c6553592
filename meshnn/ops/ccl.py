"""Collectives across the mesh: ``ttnn.all_gather``, ``ttnn.reduce_scatter``, ``ttnn.all_reduce``.

Groups: without ``cluster_axis`` the group is the whole mesh, in row-major order; with
``cluster_axis=1`` each mesh row is a group (devices that differ only in their column), with
``cluster_axis=0`` each column.  Every device of a group ends with the same gathered or reduced
result; ``reduce_scatter`` leaves device i of a group with slice i of ``dim``.  On the simulated
mesh a collective is a rearrangement of slab rows along a mesh axis (sums in float32).
"""

from __future__ import annotations

import enum

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.execution import Output, device_input, encode_values, launch, logical_values, out_spec_like, same_mesh
from meshnn.tensor.distribution import PlacementReplicate, PlacementShard, TensorTopology
from meshnn.tensor.layout import Layout
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


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
    if isinstance(cluster_axis, bool) or not isinstance(cluster_axis, int) or not 0 <= cluster_axis < len(shape):
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
    if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {dim!r} is out of range for input_tensor of shape {list(tensor.shape)}")
    return tensor, mesh, dim % rank


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
    shape, axis = _grid(mesh, cluster_axis, "all_gather")
    n = _group_size(shape, axis)
    out_shape = tuple(d * n if i == axis_dim else d for i, d in enumerate(tensor.shape))
    spec = out_spec_like(tensor, shape=out_shape, memory_config=memory_config, op="all_gather")

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        grouped = _grouped(logical_values(in_rows[0], tensor.spec, as_float=False), shape, axis)
        gathered = np.concatenate([grouped[:, m] for m in range(n)], axis=axis_dim + 1)  # (groups, *out)
        result = np.broadcast_to(gathered[:, None], (gathered.shape[0], n, *gathered.shape[1:]))
        out_rows[0][:, : spec.compute_packed_buffer_size_bytes()] = encode_values(
            np.ascontiguousarray(_ungrouped(result, shape, axis)), spec
        )

    out = Output(spec, topology=_topology(tensor, axis, PlacementReplicate()))
    return launch("all_gather", mesh, [tensor], [out], kernel)[0]


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
    shape, axis = _grid(mesh, cluster_axis, "all_reduce")
    spec = out_spec_like(tensor, memory_config=memory_config, op="all_reduce")

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        grouped = _grouped(logical_values(in_rows[0], tensor.spec), shape, axis)
        total = grouped.sum(axis=1, keepdims=True, dtype=grouped.dtype if grouped.dtype.kind in "iu" else np.float32)
        result = np.broadcast_to(total, grouped.shape)
        out_rows[0][:, : spec.compute_packed_buffer_size_bytes()] = encode_values(
            np.ascontiguousarray(_ungrouped(result, shape, axis)), spec
        )

    out = Output(spec, topology=_topology(tensor, axis, PlacementReplicate()))
    return launch("all_reduce", mesh, [tensor], [out], kernel)[0]


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
        grouped = _grouped(logical_values(in_rows[0], tensor.spec), shape, axis)
        total = grouped.sum(axis=1, dtype=grouped.dtype if grouped.dtype.kind in "iu" else np.float32)
        pieces = np.stack(np.split(total, n, axis=axis_dim + 1), axis=1)  # (groups, members, *out)
        out_rows[0][:, : spec.compute_packed_buffer_size_bytes()] = encode_values(
            np.ascontiguousarray(_ungrouped(pieces, shape, axis)), spec
        )

    out = Output(spec, topology=_topology(tensor, axis, PlacementShard(axis_dim)))
    return launch("reduce_scatter", mesh, [tensor], [out], kernel)[0]
