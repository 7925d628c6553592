"""The halo collectives of the diffusion models' convolutions over a sequence- or space-split
tensor: ``ttnn.experimental.neighbor_pad_async`` and ``slice_reshard_async``.

``neighbor_pad_async``: along ``cluster_axis`` each device holds a piece of a tensor split on
``dim``; its output is its piece with ``padding_left`` rows of its left neighbour's piece (that
piece's last rows) before it and ``padding_right`` rows of its right neighbour's (the first rows)
after it.  A device at an end of the line has no neighbour there: ``padding_mode`` ``"zeros"``
pads zeros, ``"replicate"`` repeats its own edge row.  Two dims (``dim`` of length 2) pad the
first, then the second over the first's output (so the corners come from the diagonal neighbours).
``logical_h`` (> 0): the rows of the first dim at a global index ``>= logical_h`` count as zeros;
``t_front_pad`` (> 0): that many zero rows are put before every device's output along ``dim - 1``.
A Ring topology pads its ends as a line does (ttnn's ends have no neighbour either way).

``slice_reshard_async``: the pieces along ``cluster_axis`` joined on ``dim`` (0, the only one
ttnn supports), the rows ``output_dim_offset .. + output_dim_shape`` of the whole (zeros past its
end), split again evenly over the devices.

ttnn's checks, kept (``neighbor_pad_async.cpp``, its device operation's validate, and
``slice_reshard_async``'s): ROW_MAJOR, interleaved inputs; a non-last dim; paddings no larger
than the dim; ``padding_mode`` zeros or replicate; cluster axes 0 or 1; positive link counts;
``t_front_pad`` only with ``dim >= 1`` and a batch of 1; two dims increasing; a persistent output
of the output's layout, dtype, memory config and shape; ``output_dim_shape`` divisible by the
devices.  Rows of the slice past the end of the whole tensor are zeros.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs, registry and values modules and the collectives' modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.global_semaphore import check_semaphore
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.arguments import Topology
from meshnn.ops.ccl.async_arguments import persistent
from meshnn.ops.ccl.groups import from_groups, to_groups
from meshnn.ops.ccl.ranks import gathered_over_ranks, local_indices
from meshnn.ops.checks import device_input
from meshnn.ops.launch import launch
from meshnn.ops.memo import settled
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorMemoryLayout, TensorSpec
from meshnn.tensor.tensor import Tensor

PAD = "experimental.neighbor_pad_async"
RESHARD = "experimental.slice_reshard_async"
MODES = ("zeros", "replicate")


def _row_major_input(op: str, value: object) -> tuple[Tensor, MeshDevice]:
    t = device_input(op, "input_tensor", value)
    if t.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be ROW_MAJOR, it is {t.layout}")
    if t.spec.memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be interleaved (sharded inputs are not supported)")
    return t, t.storage.mesh_buffer.device()  # type: ignore[union-attr]


def _uint(op: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int >= 0, got {value!r}")
    return int(value)


def _uints(op: str, name: str, value: object, count: int) -> list[int]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a list of ints, got {value!r}")
    if len(value) != count:
        raise MeshnnValueError(f"ttnn.{op}: {name} size ({len(value)}) must match dim size ({count})")
    return [_uint(op, name, v) for v in value]


def _axis(op: str, mesh: MeshDevice, axis: int) -> int:
    if axis not in (0, 1):
        raise MeshnnValueError(f"ttnn.{op}: Unsupported cluster axis {axis} (0 or 1)")
    if len(tuple(mesh.shape)) != 2:
        raise MeshnnValueError(f"ttnn.{op}: needs a 2-D mesh, got {list(mesh.shape)}")
    return axis


def _semaphores(op: str, name: str, value: object, mesh: MeshDevice) -> tuple:
    items = list(value) if isinstance(value, list | tuple) else [value]
    if not items:
        raise MeshnnValueError(f"ttnn.{op}: {name} must not be empty")
    return tuple(check_semaphore(op, name, s, mesh) for s in items)


def _pad_plan(op: str, t: Tensor, mesh: MeshDevice, args: dict) -> list[tuple[int, int, int, int]]:
    """``(dim, left, right, cluster_axis)`` per padded dim, checked."""
    dims = args["dim"]
    if not isinstance(dims, Sequence) or isinstance(dims, str) or not 1 <= len(dims) <= 2:
        raise MeshnnValueError(f"ttnn.{op}: dim must have 1 or 2 elements, got {dims!r}")
    count = len(dims)
    lefts = _uints(op, "padding_left", args["padding_left"], count)
    rights = _uints(op, "padding_right", args["padding_right"], count)
    axes = _uints(op, "cluster_axis", args["cluster_axis"], count)
    links = [1] * count if args["num_links"] is None else _uints(op, "num_links", args["num_links"], count)
    shape = tuple(t.spec.padded_shape)
    plan = []
    for i, d in enumerate(dims):
        d = _uint(op, f"dim[{i}]", d)
        if d >= len(shape) - 1:
            raise MeshnnValueError(f"ttnn.{op}: only a non-last dim can be padded, got dim={d} for rank {len(shape)}")
        if lefts[i] > shape[d] or rights[i] > shape[d]:
            raise MeshnnValueError(
                f"ttnn.{op}: padding {lefts[i]} or {rights[i]} exceeds the input's size {shape[d]} in dim {d}"
            )
        if links[i] < 1:
            raise MeshnnValueError(f"ttnn.{op}: num_links should be more than 0, got {links[i]}")
        plan.append((d, lefts[i], rights[i], _axis(op, mesh, axes[i])))
    if count == 2 and plan[1][0] <= plan[0][0]:
        raise MeshnnValueError(
            f"ttnn.{op}: the second pad dim {plan[1][0]} must be greater than the first {plan[0][0]}"
        )
    return plan


def _pad_spec(op: str, t: Tensor, plan: list, t_front: int, memory_config: object) -> TensorSpec:
    shape = list(t.shape)
    for d, left, right, _ in plan:
        shape[d] += left + right
    if t_front:
        first = plan[0][0]
        if first < 1 or t.shape[0] != 1:
            raise MeshnnValueError(f"ttnn.{op}: t_front_pad needs dim >= 1 and a batch of 1, got dim={first}")
        shape[first - 1] += t_front
    return out_spec_like(t, shape=shape, memory_config=memory_config, op=op)


def _rows_of(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, *shape)`` of ``k`` devices' ROW_MAJOR shards: their bytes as they are (the last dim a
    row of bytes: the halo dims are never last, so the bytes move untouched) when the shard holds
    no padding, else the values."""
    shape = tuple(spec.shape)
    if tuple(spec.padded_shape) != shape or not shape or rows.shape[1] % max(1, int(np.prod(shape))):
        return logical_values(rows, spec, as_float=False)
    settled(rows)  # the bytes are read below
    size = int(np.prod(shape))
    return rows[:, : size * (rows.shape[1] // size)].reshape(rows.shape[0], *shape[:-1], -1)


def _write(out: np.ndarray, values: np.ndarray, spec: TensorSpec) -> None:
    """``values`` of :func:`_rows_of`'s form (bytes, or values) into the output rows."""
    if values.dtype == np.uint8 and tuple(spec.padded_shape) == tuple(spec.shape):
        out[:, : values[0].size] = values.reshape(values.shape[0], -1)
        return
    write_values(out, np.ascontiguousarray(values), spec)


def _halo(grouped: np.ndarray, d: int, left: int, right: int, mode: str) -> np.ndarray:
    """``(groups, members, *t)`` padded along ``d`` (of ``t``) with the neighbours' edge rows."""
    axis = d + 1  # of one member's (groups, *t)
    n, size = grouped.shape[1], grouped.shape[d + 2]

    def rows(x: np.ndarray, start: int, stop: int) -> np.ndarray:
        return np.take(x, np.arange(start, stop), axis=axis)

    def end(own: np.ndarray, row: int, count: int) -> np.ndarray:
        edge = rows(own, row, row + 1)
        return np.repeat(edge if mode == "replicate" else np.zeros_like(edge), count, axis=axis)

    parts = []
    for m in range(n):
        own = grouped[:, m]
        before = rows(grouped[:, m - 1], size - left, size) if m > 0 else end(own, 0, left)
        after = rows(grouped[:, m + 1], 0, right) if m < n - 1 else end(own, size - 1, right)
        parts.append(np.concatenate([before, own, after], axis=axis))
    return np.stack(parts, axis=1)


@register(PAD, kind=OpKind.COLLECTIVE, family=OpFamily.NEIGHBOR_PAD, device_operation="NeighborPadAsyncDeviceOperation")
def neighbor_pad_async(
    input_tensor: Tensor,
    dim: list[int],
    padding_left: list[int],
    padding_right: list[int],
    padding_mode: str,
    cluster_axis: list[int],
    neighbor_semaphore: list,
    barrier_semaphore: list,
    *,
    num_links: list[int] | None = None,
    memory_config: MemoryConfig | None = None,
    topology: Topology = Topology.Linear,
    persistent_output_buffer: Tensor | None = None,
    logical_h: int = 0,
    t_front_pad: int = 0,
) -> Tensor:
    """Each device's piece with its neighbours' edge rows around it along ``dim`` (see the module
    docstring); the input's placements."""
    t, mesh = _row_major_input(PAD, input_tensor)
    if padding_mode not in MODES:
        raise MeshnnValueError(f"ttnn.{PAD}: Unsupported padding mode {padding_mode!r} (zeros or replicate)")
    args = dict(dim=dim, padding_left=padding_left, padding_right=padding_right, cluster_axis=cluster_axis)
    plan = _pad_plan(PAD, t, mesh, {**args, "num_links": num_links})
    sems = _semaphores(PAD, "neighbor_semaphore", neighbor_semaphore, mesh)
    barrier = _semaphores(PAD, "barrier_semaphore", barrier_semaphore, mesh)
    if topology not in (Topology.Ring, Topology.Linear):
        raise MeshnnValueError(f"ttnn.{PAD}: topology must be ttnn.Topology.Ring or Linear, got {topology!r}")
    logical_h, t_front = _uint(PAD, "logical_h", logical_h), _uint(PAD, "t_front_pad", t_front_pad)
    spec = _pad_spec(PAD, t, plan, t_front, memory_config)
    into = None
    if persistent_output_buffer is not None:
        into = persistent(PAD, "persistent_output_buffer", persistent_output_buffer, mesh, spec)
    shape, in_spec, all_local = tuple(mesh.shape), t.spec, mesh.all_local

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = _rows_of(in_rows[0], in_spec)
        if not all_local:
            values = gathered_over_ranks(mesh, values, coords, op=f"ttnn.{PAD}")
        for i, (d, left, right, axis) in enumerate(plan):
            grouped = to_groups(values, shape, axis)
            if i == 0 and logical_h:
                grouped = _masked(grouped, d, logical_h)
            values = from_groups(_halo(grouped, d, left, right, padding_mode), shape, axis)
        if t_front:
            front = list(values.shape)
            front[plan[0][0]] = t_front
            values = np.concatenate([np.zeros(front, values.dtype), values], axis=plan[0][0])
        if not all_local:
            values = values[local_indices(mesh, coords)]
        _write(out_rows[0], values, spec)

    attrs = {"dim": plan[0][0], "padding": [(p[1], p[2]) for p in plan], "padding_mode": padding_mode}
    attrs.update(cluster_axis=plan[0][3], topology=topology, hops=1, neighbor_semaphore=sems)
    attrs.update(barrier_semaphore=barrier, logical_h=logical_h, t_front_pad=t_front, memory_config=spec.memory_config)
    out = Output(spec, topology=t.tensor_topology())
    into_list = None if into is None else [into]
    return launch(PAD, mesh, [t], [out], kernel, reads_memos=True, attrs=attrs, into=into_list)[0]


def _masked(grouped: np.ndarray, d: int, logical_h: int) -> np.ndarray:
    """Rows of ``d`` at a global index (over the members) ``>= logical_h`` zeroed."""
    size = grouped.shape[d + 2]
    index = np.arange(grouped.shape[1])[:, None] * size + np.arange(size)[None, :]  # (members, rows)
    keep = (index < logical_h).reshape((1, grouped.shape[1]) + (1,) * d + (size,) + (1,) * (grouped.ndim - d - 3))
    return np.where(keep, grouped, np.zeros((), grouped.dtype))


@register(
    RESHARD,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.SLICE_RESHARD,
    device_operation="SliceReshardAsyncDeviceOperation",
)
def slice_reshard_async(
    input_tensor: Tensor,
    dim: int,
    output_dim_offset: int,
    output_dim_shape: int,
    cluster_axis: int,
    final_semaphore: object,
    barrier_semaphore: object,
    *,
    num_links: int = 1,
    memory_config: MemoryConfig | None = None,
    topology: Topology = Topology.Linear,
) -> Tensor:
    """The rows ``output_dim_offset .. + output_dim_shape`` of the pieces joined along ``dim``,
    split evenly again over the devices of ``cluster_axis``."""
    t, mesh = _row_major_input(RESHARD, input_tensor)
    dim, offset = _uint(RESHARD, "dim", dim), _uint(RESHARD, "output_dim_offset", output_dim_offset)
    length, links = _uint(RESHARD, "output_dim_shape", output_dim_shape), _uint(RESHARD, "num_links", num_links)
    if dim != 0:
        raise MeshnnValueError(f"ttnn.{RESHARD}: only dim 0 is supported, got {dim}")
    axis = _axis(RESHARD, mesh, _uint(RESHARD, "cluster_axis", cluster_axis))
    n = tuple(mesh.shape)[axis]
    if n < 2:
        raise MeshnnValueError(f"ttnn.{RESHARD} only works for more than one device; cluster_axis {axis} has {n}")
    if length % n or length == 0:
        raise MeshnnValueError(f"ttnn.{RESHARD}: output_dim_shape {length} must be divisible by the {n} devices")
    if links < 1:
        raise MeshnnValueError(f"ttnn.{RESHARD}: num_links should be more than 0, got {links}")
    sems = _semaphores(RESHARD, "final_semaphore", final_semaphore, mesh)
    barrier = _semaphores(RESHARD, "barrier_semaphore", barrier_semaphore, mesh)
    spec = out_spec_like(t, shape=(length // n, *t.shape[1:]), memory_config=memory_config, op=RESHARD)
    shape, in_spec, all_local = tuple(mesh.shape), t.spec, mesh.all_local

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = _rows_of(in_rows[0], in_spec)
        if not all_local:
            values = gathered_over_ranks(mesh, values, coords, op=f"ttnn.{RESHARD}")
        grouped = to_groups(values, shape, axis)  # (groups, n, rows, ...)
        whole = grouped.reshape(grouped.shape[0], n * grouped.shape[2], *grouped.shape[3:])
        sliced = whole[:, offset : offset + length]
        if sliced.shape[1] < length:  # rows past the end of the whole tensor are zeros
            tail = np.zeros((sliced.shape[0], length - sliced.shape[1], *sliced.shape[2:]), sliced.dtype)
            sliced = np.concatenate([sliced, tail], axis=1)
        result = from_groups(sliced.reshape(grouped.shape[0], n, length // n, *grouped.shape[3:]), shape, axis)
        if not all_local:
            result = result[local_indices(mesh, coords)]
        _write(out_rows[0], result, spec)

    attrs = {"dim": dim, "output_dim_offset": offset, "output_dim_shape": length, "cluster_axis": axis}
    attrs.update(num_links=links, topology=topology, hops=1, final_semaphore=sems, barrier_semaphore=barrier)
    attrs["memory_config"] = spec.memory_config
    out = Output(spec, topology=t.tensor_topology())
    return launch(RESHARD, mesh, [t], [out], kernel, reads_memos=True, attrs=attrs)[0]
