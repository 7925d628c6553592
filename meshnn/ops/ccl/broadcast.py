"""``ttnn.broadcast`` (one device's shard to every device of its group) and ``ttnn.all_broadcast``
(every device's shard to every device of its group, one output tensor per member).

A group: with ``cluster_axis`` the input's devices along that mesh axis (a 8x1 distribution on an
8x4 mesh: its one column); without it, the devices the input populates, in their order, whose distribution shape must
be a line for ``broadcast`` (an ``all_broadcast`` over a 2-D distribution runs along axis 0, then
along axis 1 for each result: output ``k`` then holds the shard of the device at row-major index
``k``, which is what one group of every device in row-major order gives).

``broadcast(input_tensor, sender_coord, *, cluster_axis=None, subdevice_id=None, memory_config=None,
num_links=1, topology=ttnn.Topology.Linear)``: every device of ``sender_coord``'s group ends with
the sender's shard.  Only ``sender_coord`` sends; a device of another group would wait for a sender
on hardware, so an input with shards outside the sender's group is refused.

``all_broadcast(input_tensor, *, cluster_axis=None, subdevice_id=None, memory_config=None,
num_links=1, topology=ttnn.Topology.Linear)``: a list of group-size tensors; tensor ``i`` holds, on
every device, member ``i``'s shard of that device's group.

Both: the group has more than one device; ``num_links`` (None: the fabric's, as newer ttnn) is at
least 1 and at most the compute grid's rows; ``memory_config`` (default: the input's) is the
outputs'.  Values move exactly.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs, values and registry, and the collectives' arguments, groups and point_to_point.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.ccl.arguments import FABRIC_KEYWORDS, Topology, check_options, group_grid
from meshnn.ops.ccl.async_arguments import link_options
from meshnn.ops.ccl.groups import output_topology
from meshnn.ops.ccl.point_to_point import check_coord, local_only
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import encode_values, logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate


def device_groups(op: str, tensor: Tensor, mesh: MeshDevice, cluster_axis: int | None) -> list[list[int]]:
    """The groups as lists of the input's devices (row-major indices in the mesh: the rows of a
    kernel launched over :func:`whole_mesh`), in member order:
    the devices it populates that differ only along ``cluster_axis`` (all of them without it)."""
    coords = tensor.storage.coords  # type: ignore[union-attr]
    if cluster_axis is None:
        return [[coord.to_linear_index(mesh.shape) for coord in coords]]
    _, axis = group_grid(mesh, cluster_axis, op)
    groups: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    for coord in coords:
        key = tuple(c for i, c in enumerate(coord) if i != axis)
        groups.setdefault(key, []).append((coord[axis], coord.to_linear_index(mesh.shape)))  # type: ignore[index]
    found = [[row for _, row in sorted(members)] for members in groups.values()]
    if len({len(group) for group in found}) > 1:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor's devices make groups of {sorted({len(g) for g in found})} devices along "
            f"cluster_axis {cluster_axis}; every group must be as large"
        )
    return found


def whole_mesh(mesh: MeshDevice) -> tuple[MeshCoordinate, ...]:
    """Every device of ``mesh``: an exchange's kernel runs once over all of them (its rows are the
    row-major device indices), whichever devices its tensors populate."""
    return tuple(mesh.shape.coords())


def _line_distribution(op: str, tensor: Tensor) -> None:
    shape = tuple(tensor.tensor_topology().distribution_shape)
    if sum(1 for d in shape if d > 1) > 1:
        raise MeshnnValueError(
            f"ttnn.{op}: without cluster_axis the input's distribution shape {list(shape)} must be a line"
        )


def _group_size(op: str, n: int) -> None:
    if n < 2:
        raise MeshnnValueError(f"ttnn.{op} only works for more than one device; the group has {n}")


def copy_shards(
    in_rows: np.ndarray, out_rows: np.ndarray, moves: Sequence[tuple[int, int]], specs: tuple[TensorSpec, TensorSpec]
) -> None:
    """``out_rows[dst] = in_rows[src]`` for each ``(dst, src)`` of ``moves``: the bytes as they are
    when both specs are one, else each source decoded and encoded in the output's format."""
    in_spec, out_spec = specs
    if in_spec == out_spec:
        size = in_spec.compute_packed_buffer_size_bytes()
        for dst, src in moves:
            out_rows[dst, :size] = in_rows[src, :size]
        return
    size = out_spec.compute_packed_buffer_size_bytes()
    sources = sorted({src for _, src in moves})
    encoded = encode_values(logical_values(in_rows[sources], in_spec, as_float=False), out_spec)
    position = {src: i for i, src in enumerate(sources)}
    for dst, src in moves:
        out_rows[dst, :size] = encoded[position[src]]


def _links(op: str, mesh: MeshDevice, num_links: object, topology: object, memory_config: object) -> None:
    local_only(op, mesh)
    check_options(op, mesh, None, num_links, topology, memory_config)
    link_options(op, mesh, {"num_links": num_links}, links_required=False)  # None: the fabric's links (newer ttnn)


@register(kind=OpKind.COLLECTIVE, family=OpFamily.BROADCAST)
@ttnn_keywords(**FABRIC_KEYWORDS)
def broadcast(
    input_tensor: Tensor,
    sender_coord: MeshCoordinate,
    *,
    cluster_axis: int | None = None,
    memory_config: MemoryConfig | None = None,
    num_links: int | None = 1,
    topology: Topology = Topology.Linear,
) -> Tensor:
    """Every device of ``sender_coord``'s group gets the sender's shard (see the module's text)."""
    op = "broadcast"
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    sender = check_coord(op, "sender_coord", sender_coord, mesh)
    _links(op, mesh, num_links, topology, memory_config)
    if cluster_axis is None:
        _line_distribution(op, tensor)
    groups = device_groups(op, tensor, mesh, cluster_axis)
    if sender not in tensor.storage.coords:  # type: ignore[union-attr]
        raise MeshnnValueError(f"ttnn.{op}: input_tensor has no shard on sender_coord {tuple(sender)}")
    source = sender.to_linear_index(mesh.shape)
    group = next(g for g in groups if source in g)
    _group_size(op, len(group))
    if len(groups) > 1:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor has shards outside sender_coord {tuple(sender)}'s group along cluster_axis "
            f"{cluster_axis}; only the sender sends, so those devices would wait for it (one group per call)"
        )
    spec = out_spec_like(tensor, memory_config=memory_config, op=op)
    position = group.index(source)
    hops = max(position, len(group) - 1 - position)

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        copy_shards(in_rows[0], out_rows[0], [(row, source) for row in group], (tensor_spec, spec))

    axis = group_grid(mesh, cluster_axis, op)[1]
    placed = output_topology(tensor, axis, PlacementReplicate()) if axis is not None else None
    out = Output(spec, coords=tensor.storage.coords, topology=placed)  # type: ignore[union-attr]
    attrs = {"cluster_axis": cluster_axis, "num_links": num_links, "topology": topology, "hops": hops}
    attrs.update(sender_coord=sender, memory_config=spec.memory_config)
    return launch(op, mesh, [tensor], [out], kernel, coords=whole_mesh(mesh), attrs=attrs, semaphores=2)[0]


@register(kind=OpKind.COLLECTIVE, family=OpFamily.ALL_BROADCAST)
@ttnn_keywords(**FABRIC_KEYWORDS)
def all_broadcast(
    input_tensor: Tensor,
    *,
    cluster_axis: int | None = None,
    memory_config: MemoryConfig | None = None,
    num_links: int | None = 1,
    topology: Topology = Topology.Linear,
) -> list[Tensor]:
    """One tensor per group member: tensor ``i`` holds member ``i``'s shard on every device of
    each group (see the module's text)."""
    op = "all_broadcast"
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    _links(op, mesh, num_links, topology, memory_config)
    groups = device_groups(op, tensor, mesh, cluster_axis)
    n = len(groups[0])
    _group_size(op, n)
    spec = out_spec_like(tensor, memory_config=memory_config, op=op)

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        for member in range(n):
            moves = [(row, group[member]) for group in groups for row in group]
            copy_shards(in_rows[0], out_rows[member], moves, (tensor_spec, spec))

    axis = group_grid(mesh, cluster_axis, op)[1]
    topology_out = output_topology(tensor, axis, PlacementReplicate())
    outs = [Output(spec, coords=tensor.storage.coords, topology=topology_out) for _ in range(n)]  # type: ignore[union-attr]
    attrs = {"cluster_axis": cluster_axis, "num_links": num_links, "topology": topology}
    attrs["memory_config"] = spec.memory_config
    return launch(op, mesh, [tensor], outs, kernel, coords=whole_mesh(mesh), attrs=attrs, semaphores=2)
