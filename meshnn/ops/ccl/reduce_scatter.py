"""``ttnn.reduce_scatter``: the group's shards are summed; device i of the group keeps slice i of
``dim`` (which must divide into the group's devices, whole tiles each when tiled).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch,
outputs, memo and values modules and the collectives' arguments, groups and ranks.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.op_keywords import Keyword, optional, ttnn_keywords
from meshnn.ops.ccl.arguments import (
    FABRIC_KEYWORDS,
    Topology,
    check_math_op,
    check_options,
    checked_input,
    group_grid,
)
from meshnn.ops.ccl.async_arguments import persistent
from meshnn.ops.ccl.groups import (
    from_groups,
    group_and_member,
    group_size,
    launch_grouped,
    sum_dtype,
    summed_in_order,
    to_groups,
)
from meshnn.ops.ccl.ranks import summed_over_ranks
from meshnn.ops.config import COMPUTE_KERNEL_CONFIG
from meshnn.ops.memo import known_values, settled
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.identity import operation_on
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementShard


@register(kind=OpKind.COLLECTIVE, family=OpFamily.REDUCE_SCATTER)
@ttnn_keywords(
    **FABRIC_KEYWORDS,
    intermediate_memory_config=Keyword(None, optional(MemoryConfig, what="a ttnn.MemoryConfig")),
    compute_kernel_config=COMPUTE_KERNEL_CONFIG,
)
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
    output_tensor: Tensor | None = None,
) -> Tensor:
    """The group's shards are summed; device i of the group keeps slice i of ``dim`` (written into
    ``output_tensor``, a preallocated output of the result's spec, when given)."""
    op = "reduce_scatter"
    tensor, mesh, axis_dim = checked_input(op, input_tensor, dim)
    check_options(op, mesh, mesh_device, num_links, topology, memory_config)
    check_math_op(op, math_op)
    spec = scattered_spec(op, tensor, mesh, (dim, axis_dim), cluster_axis, memory_config)
    into = None if output_tensor is None else persistent(op, "output_tensor", output_tensor, mesh, spec)
    attrs = {"dim": dim, "cluster_axis": cluster_axis, "num_links": num_links, "topology": topology}
    where = (axis_dim, cluster_axis)
    return run_reduce_scatter(op, tensor, mesh, where, spec, attrs, into=into, semaphores=REDUCE_SCATTER_SEMAPHORES)


REDUCE_SCATTER_SEMAPHORES = 4
"""The global semaphores ttnn's reduce_scatter program makes for itself (three for its steps, a barrier)."""


def scattered_spec(
    op: str, tensor: Tensor, mesh: MeshDevice, dims: tuple[int, int], cluster_axis: int | None, memory_config: object
) -> TensorSpec:
    """The spec of ``tensor``'s slice along ``dims = (dim as given, dim)``, checked to divide into
    the group's devices (whole tiles each when tiled)."""
    dim, axis_dim = dims
    shape, axis = group_grid(mesh, cluster_axis, op)
    n = group_size(shape, axis)
    size = tensor.shape[axis_dim]
    rank = len(tensor.shape)
    unit = n
    if tensor.layout is Layout.TILE and axis_dim >= rank - 2:
        unit = n * tensor.tile.tile_shape[axis_dim - (rank - 2)]
    if size % unit:
        raise MeshnnValueError(
            f"ttnn.{op}: dim {dim} of input_tensor {list(tensor.shape)} ({size}) must be divisible by "
            f"{unit} ({n} devices{' x the tile' if unit != n else ''})"
        )
    out_shape = tuple(d // n if i == axis_dim else d for i, d in enumerate(tensor.shape))
    return out_spec_like(tensor, shape=out_shape, memory_config=memory_config, op=op)


def run_reduce_scatter(
    op: str,
    tensor: Tensor,
    mesh: MeshDevice,
    where: tuple[int, int | None],
    spec: TensorSpec,
    attrs: dict[str, object],
    into: Tensor | None = None,
    semaphores: int = 0,
) -> Tensor:
    """Launch the reduce-scatter of ``tensor`` along ``where = (dim, cluster_axis)`` into an output
    of ``spec`` (``into``, a checked persistent buffer, when given); ``semaphores``: the global
    semaphores the program makes for itself (:func:`~meshnn.ops.launch.launch`)."""
    axis_dim, cluster_axis = where
    shape, axis = group_grid(mesh, cluster_axis, op)
    n = group_size(shape, axis)
    label = operation_on(f"ttnn.{op}", tensor)  # what the ranks compare before they exchange
    in_spec = tensor.spec  # the kernel holds specs, never the tensor: a trace must not keep the input allocated

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        if not mesh.all_local:
            values = logical_values(in_rows[0], in_spec)
            totals, members = summed_over_ranks(mesh, values, coords, shape, axis, op=label)
            pieces = np.split(totals, n, axis=axis_dim + 1)  # n x (groups, *out)
            result = np.stack([pieces[member][group] for group, member in members])
        else:
            total = _group_sums(in_rows[0], in_spec, shape, axis)
            pieces = np.stack(np.split(total, n, axis=axis_dim + 1), axis=1)  # (groups, members, *out)
            result = from_groups(pieces, shape, axis)
        write_values(out_rows[0], np.ascontiguousarray(result), spec)

    repeat = (op, in_spec, spec, shape, axis, axis_dim)
    result = (spec, axis, PlacementShard(axis_dim))
    return launch_grouped(op, mesh, tensor, result, kernel, attrs, into=into, repeat=repeat, semaphores=semaphores)


def _group_sums(rows: np.ndarray, spec: TensorSpec, shape: tuple[int, ...], axis: int | None) -> np.ndarray:
    """``(groups, *spec.shape)``: every group's devices' values summed in member order (the
    additions of :func:`summed_in_order`, so the same bits).  Values a memo already holds are summed
    at once; bytes are decoded one member at a time (the member's row of every group), so the
    peak is two members' float32 values, not the whole mesh's (32 devices' prefill activations
    decoded at once took gigabytes of host memory)."""
    if known_values(rows, spec) is not None:
        return summed_in_order(to_groups(logical_values(rows, spec), shape, axis))
    placed = [group_and_member(shape, axis, i) for i in range(rows.shape[0])]
    bytes_rows = settled(rows)
    total = None
    for member in range(max(m for _, m in placed) + 1):
        picked = [i for _, i in sorted((g, i) for i, (g, m) in enumerate(placed) if m == member)]
        values = logical_values(np.ascontiguousarray(bytes_rows[picked]), spec)
        if total is None:
            total = values.astype(sum_dtype(values), copy=True)
        else:
            total += values
    return total
