"""Collectives across MPI ranks, each rank holding some of the mesh's devices: the values cross
ranks through the context's array collectives.  ``all_gather`` gathers every rank's local shards
(``Allgatherv``); ``all_reduce`` and ``reduce_scatter`` sum each group's local members first and
then add those partial sums over ranks (``Allreduce``), so a rank sends one partial per group,
not one shard per device.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh` and :mod:`meshnn.ops.ccl.groups`.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, to_linear_index
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.groups import group_and_member, group_size, sum_dtype


def local_indices(mesh: MeshDevice, coords: tuple[MeshCoordinate, ...]) -> np.ndarray:
    """Row-major device indices of this rank's ``coords`` (which must be all its local devices)."""
    if len(coords) != len(mesh.local_coords()):
        raise MeshnnValueError("a collective across ranks must run on every local device of the mesh at once")
    return np.fromiter((to_linear_index(mesh.shape, c) for c in coords), dtype=np.int64, count=len(coords))


def gathered_over_ranks(
    mesh: MeshDevice,
    local: np.ndarray,
    coords: tuple[MeshCoordinate, ...],
    out: np.ndarray | None = None,
    op: str = "ttnn.all_gather",
) -> np.ndarray:
    """``(local devices, *t)`` values of every rank as ``(devices, *t)`` in row-major device order
    (received straight into ``out`` when given and the ranks own contiguous rows in rank order).
    ``op`` names the operation to the other ranks (a rank calling another is named)."""
    context = mesh.context
    index = np.concatenate(context.allgather_array(local_indices(mesh, coords), op=f"{op} (device order)"))
    in_order = bool(np.array_equal(index, np.arange(index.size)))
    shape = (index.size, *local.shape[1:])
    received = out if out is not None and in_order else np.empty(shape, dtype=local.dtype)
    context.allgather_array(local, out=received, op=op)
    if in_order:
        return received
    ordered = np.empty_like(received) if out is None else out
    ordered[index] = received
    return ordered


def gather_bytes_over_ranks(
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
    op = "ttnn.all_gather"
    n = group_size(shape, axis)
    mine = local_indices(mesh, coords)
    if len(mine) == 1 and n == int(np.prod(shape)):  # one local device, one group of all: in place
        gathered_over_ranks(
            mesh, np.ascontiguousarray(in_rows[:, :size]), coords, out_rows[0, : n * size].reshape(n, size), op
        )
        return
    everything = gathered_over_ranks(mesh, np.ascontiguousarray(in_rows[:, :size]), coords, op=op)
    group_of = [group_and_member(shape, axis, i)[0] for i in range(everything.shape[0])]
    for row, index in enumerate(mine):
        members = [i for i, g in enumerate(group_of) if g == group_of[int(index)]]
        out_rows[row, : n * size].reshape(n, size)[...] = everything[members]


def summed_over_ranks(
    mesh: MeshDevice,
    local: np.ndarray,
    coords: tuple[MeshCoordinate, ...],
    shape: tuple[int, ...],
    axis: int | None,
    out: np.ndarray | None = None,
    op: str = "ttnn.all_reduce",
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Each group's sum over all its members on every rank: ``(groups, *t)``, and the (group,
    member) of each local device.  When every local device is a group of its own, in order (a
    collective across the ranks only), the local values are the partial sums as they stand and
    the sum is received into ``out`` when given."""
    members = [group_and_member(shape, axis, int(i)) for i in local_indices(mesh, coords)]
    groups = int(np.prod(shape)) // group_size(shape, axis)
    dtype = sum_dtype(local)
    if [g for g, _ in members] == list(range(groups)):
        partial = local.astype(dtype, copy=False)
        if out is not None and (out.shape != partial.shape or out.dtype != dtype):
            out = None
        return mesh.context.allreduce_array(partial, out=out, op=op), members
    partial = np.zeros((groups, *local.shape[1:]), dtype=dtype)
    for row, (group, _) in enumerate(members):
        partial[group] += local[row]
    return mesh.context.allreduce_array(partial, op=op), members
