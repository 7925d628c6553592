"""``ttnn.all_gather``: every device of a group gets the group's shards concatenated along
``dim``, in group order (in reversed group order for ``all_gather_async_reversed``).  On the
simulated mesh a rearrangement of slab rows (the shards' bytes
end to end when they can be); across ranks, every rank's local shards gathered.

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch, outputs, memo and values
modules and the collectives' arguments, groups and ranks.
"""

from __future__ import annotations

import numpy as np

from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.ccl.arguments import FABRIC_KEYWORDS, Topology, check_options, checked_input, tensor_grid
from meshnn.ops.ccl.async_arguments import persistent
from meshnn.ops.ccl.groups import from_groups, group_and_member, group_size, launch_grouped, to_groups
from meshnn.ops.ccl.ranks import gather_bytes_over_ranks, gathered_over_ranks, local_indices
from meshnn.ops.memo import known_values, settled
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import encode_values, logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.identity import operation_on
from meshnn.tensor.spec import MemoryConfig, TensorMemoryLayout, TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate


def _raw_concatenation(shape: tuple[int, ...], layout: Layout, dim: int, explicit: bool) -> bool:
    """True when gathering along ``dim`` puts the shards' bytes end to end: every dim before
    ``dim`` is 1 and ``dim`` is not tiled."""
    outer = int(np.prod(shape[:dim], dtype=np.int64))
    return outer == 1 and not explicit and (layout is Layout.ROW_MAJOR or dim < len(shape) - 2)


def tile_blocks(in_spec: TensorSpec, out_spec: TensorSpec, dim: int) -> tuple[int, int, int] | None:
    """``(A, B, C)`` when gathering along ``dim`` moves whole tiles: the input's packed bytes are
    ``(A, B, C)`` (A: the tiles' grid before ``dim``, B: its extent along ``dim``, C: the bytes of
    everything after) and a gather of ``n`` puts member ``m``'s ``(A, B, C)`` at ``[:, m]`` of the
    output's ``(A, n, B, C)``; None when it does not (ROW_MAJOR, sharded, padded along ``dim``,
    another dtype or tile out than in).  Block floats keep their bytes: their shared exponents
    are per tile row of a face, never across tiles."""
    if in_spec.layout is not Layout.TILE or in_spec.dtype is not out_spec.dtype or in_spec.tile != out_spec.tile:
        return None
    if in_spec.explicit_padded_shape is not None or out_spec.explicit_padded_shape is not None:
        return None
    interleaved = TensorMemoryLayout.INTERLEAVED
    if (
        in_spec.memory_config.memory_layout is not interleaved
        or out_spec.memory_config.memory_layout is not interleaved
    ):
        return None
    shape, rank = tuple(in_spec.shape), len(in_spec.shape)
    if rank < 2 or not 0 <= dim < rank:
        return None
    th, tw = in_spec.tile.tile_shape
    if (dim == rank - 2 and shape[dim] % th) or (dim == rank - 1 and shape[dim] % tw):
        return None
    padded = tuple(in_spec.padded_shape)
    grid = (*padded[:-2], padded[-2] // th, padded[-1] // tw)
    a, b = int(np.prod(grid[:dim], dtype=np.int64)), grid[dim]
    c = int(np.prod(grid[dim + 1 :], dtype=np.int64)) * in_spec.page_size
    return (a, b, c) if a * b * c == in_spec.compute_packed_buffer_size_bytes() else None


@register(kind=OpKind.COLLECTIVE, family=OpFamily.ALL_GATHER)
@ttnn_keywords(**FABRIC_KEYWORDS)
def all_gather(
    input_tensor: Tensor,
    dim: int,
    cluster_axis: int | None = None,
    mesh_device: MeshDevice | None = None,
    *,
    num_links: int = 1,
    topology: Topology | None = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """Every device of a group gets the group's shards concatenated along ``dim``, in group order
    (written into ``output_tensor``, a preallocated output of the result's spec, when given)."""
    tensor, mesh, axis_dim = checked_input("all_gather", input_tensor, dim)
    check_options("all_gather", mesh, mesh_device, num_links, topology, memory_config)
    spec = gathered_spec("all_gather", tensor, mesh, axis_dim, cluster_axis, memory_config)
    into = None if output_tensor is None else persistent("all_gather", "output_tensor", output_tensor, mesh, spec)
    attrs = {"dim": dim, "cluster_axis": cluster_axis, "num_links": num_links, "topology": topology}
    where = (axis_dim, cluster_axis)
    return run_all_gather("all_gather", tensor, mesh, where, spec, attrs, into=into, semaphores=ALL_GATHER_SEMAPHORES)


ALL_GATHER_SEMAPHORES = 3
"""The global semaphores ttnn's all_gather program makes for itself (two for its links, a barrier)."""


def gathered_spec(
    op: str, tensor: Tensor, mesh: MeshDevice, axis_dim: int, cluster_axis: int | None, memory_config: object
) -> TensorSpec:
    """The spec of ``tensor`` gathered along ``axis_dim`` over the groups of ``cluster_axis`` (of
    the devices ``tensor`` populates: :func:`~meshnn.ops.ccl.arguments.tensor_grid`)."""
    shape, axis = tensor_grid(op, tensor, mesh, cluster_axis)
    n = group_size(shape, axis)
    out_shape = tuple(d * n if i == axis_dim else d for i, d in enumerate(tensor.shape))
    return out_spec_like(tensor, shape=out_shape, memory_config=memory_config, op=op)


def run_all_gather(
    op: str,
    tensor: Tensor,
    mesh: MeshDevice,
    where: tuple[int, int | None],
    spec: TensorSpec,
    attrs: dict[str, object],
    into: Tensor | None = None,
    reverse: bool = False,
    semaphores: int = 0,
) -> Tensor:
    """Launch the gather of ``tensor`` along ``where = (dim, cluster_axis)`` into an output of
    ``spec`` (``into``, a checked persistent buffer, when given); ``attrs`` gain the memory config.
    ``reverse``: the shards in reversed group order (the last member's first).  ``semaphores``: the
    global semaphores the program makes for itself (:func:`~meshnn.ops.launch.launch`)."""
    axis_dim, cluster_axis = where
    shape, axis = tensor_grid(op, tensor, mesh, cluster_axis)
    raw = _raw_concatenation(
        tuple(tensor.shape), tensor.layout, axis_dim, tensor.spec.explicit_padded_shape is not None
    ) and not (reverse and not mesh.all_local)  # across ranks, a reversed gather goes by values
    in_size = tensor.spec.compute_packed_buffer_size_bytes()
    label = operation_on(f"ttnn.{op}", tensor)  # what the ranks compare before they exchange
    in_spec = tensor.spec  # the kernel holds specs, never the tensor: a trace must not keep the input allocated
    tiles = None if raw else tile_blocks(in_spec, spec, axis_dim)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        by_bytes = raw and (not mesh.all_local or known_values(in_rows[0], in_spec) is None)
        if by_bytes:
            settled(in_rows[0])  # the bytes are read below
        if raw and not mesh.all_local:
            gather_bytes_over_ranks(mesh, in_rows[0], out_rows[0], coords, shape, axis, in_size, label)
            return
        # by bytes: whole tiles (tile_blocks), or the shards' bytes end to end (a block each)
        blocks = tiles if tiles is not None and mesh.all_local else (1, 1, in_size) if by_bytes else None
        if blocks is not None and len(coords) == int(np.prod(shape)):
            settled(in_rows[0])
            groups = [group_and_member(shape, axis, i)[0] for i in range(len(coords))]
            _gather_blocks(in_rows[0], out_rows[0], blocks, groups, reverse)
            return
        grid = (shape, axis, axis_dim, reverse)
        _gather_values(mesh, (in_spec, spec), in_rows[0], out_rows[0], coords, grid, label)

    repeat = (op, in_spec, spec, shape, axis, axis_dim, reverse, raw, tiles)
    result = (spec, axis, PlacementReplicate())
    return launch_grouped(op, mesh, tensor, result, kernel, attrs, into=into, repeat=repeat, semaphores=semaphores)


def _gather_blocks(
    in_rows: np.ndarray, out_rows: np.ndarray, blocks: tuple[int, int, int], groups: list[int], reverse: bool
) -> None:
    """The gather by bytes, each input row ``(A, B, C)`` blocks (:func:`tile_blocks`; ``(1, 1,
    size)``: the shards' bytes end to end): each group's result assembled once from its members'
    bytes, in member order (reversed when asked), and copied to the group's other rows."""
    a, b, c = blocks
    size = a * b * c
    for group in dict.fromkeys(groups):
        rows = [i for i, g in enumerate(groups) if g == group]
        members = rows[::-1] if reverse else rows
        first = out_rows[rows[0], : len(rows) * size]
        target = first.reshape(a, len(rows), b, c)
        for m, row in enumerate(members):
            target[:, m] = in_rows[row, :size].reshape(a, b, c)
        for row in rows[1:]:
            out_rows[row, : first.shape[0]] = first


def _gather_values(
    mesh: MeshDevice,
    specs: tuple[TensorSpec, TensorSpec],
    in_rows: np.ndarray,
    out_rows: np.ndarray,
    coords: tuple[MeshCoordinate, ...],
    grid: tuple[tuple[int, ...], int | None, int, bool],
    label: str,
) -> None:
    """The gather by values: decode, regroup, concatenate along the dim (in reversed member order
    when ``grid``'s last item says so), encode."""
    (in_spec, spec), (shape, axis, axis_dim, reverse) = specs, grid
    n = group_size(shape, axis)
    values = logical_values(in_rows, in_spec, as_float=False)
    if not mesh.all_local:
        values = gathered_over_ranks(mesh, values, coords, op=label)
    grouped = to_groups(values, shape, axis)
    order = range(n - 1, -1, -1) if reverse else range(n)
    gathered = np.concatenate([grouped[:, m] for m in order], axis=axis_dim + 1)  # (groups, *out)
    if gathered.shape[0] == 1 and mesh.all_local:  # one group: the same result on every device
        write_values(out_rows, gathered, spec, exact=True)
        return
    if mesh.all_local:  # every member of a group holds the same bytes: encoded once per group, copied
        encoded = encode_values(gathered, spec)
        for row in range(out_rows.shape[0]):
            out_rows[row, : encoded.shape[1]] = encoded[group_and_member(shape, axis, row)[0]]
        return
    result = np.broadcast_to(gathered[:, None], (gathered.shape[0], n, *gathered.shape[1:]))
    result = from_groups(result, shape, axis)
    if not mesh.all_local:
        result = result[local_indices(mesh, coords)]
    write_values(out_rows, np.ascontiguousarray(result), spec)
