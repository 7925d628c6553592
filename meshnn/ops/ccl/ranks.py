"""Collectives across MPI ranks, each rank holding some of the mesh's devices: the values cross
ranks through the context's array collectives.  ``all_gather`` gathers every rank's local shards
(``Allgatherv``); ``all_reduce`` and ``reduce_scatter`` sum each group's members in member order
(device order), one after another, as one process does (:func:`~meshnn.ops.ccl.groups.summed_in_order`):
the running sums of every group are handed from rank to rank in mesh-row order, chunk by chunk,
each rank adding its members, and the last rank's sums go to every rank.  A rank sends one running sum per group,
not one shard per device, and the bits of a float32 sum do not depend on how many ranks share
the mesh.

Every exchange names the operation and its tensor (``op``, e.g. ``ttnn.all_gather of DRAM
MeshBuffer 0x...``): ranks that call it on different tensors are named before any data moves.

May import: :mod:`meshnn.errors`, :mod:`meshnn.distributed`, :mod:`meshnn.mesh` and
:mod:`meshnn.ops.ccl.groups`.
"""

from __future__ import annotations

import numpy as np

from meshnn.distributed.context import rows_of_rank
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
    op: str = "ttnn.all_gather",
) -> None:
    """all_gather across ranks when the result is the members' bytes end to end: each local
    device's output row is its group's ``size``-byte input rows in member order."""
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


def ranks_in_row_order(mesh: MeshDevice) -> list[int]:
    """Every rank, ordered by the first mesh row it owns (the order of the devices it holds)."""
    size = mesh.context.world_size
    return sorted(range(size), key=lambda rank: rows_of_rank(mesh.shape[0], rank, size).start)


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
    member) of each local device.  Members are added in member order, one after another, starting
    from member 0 (exactly :func:`summed_in_order`'s arithmetic); the sums are made in ``out`` when
    it is given (C-contiguous, the sums' shape and dtype) and each local device is the group of its
    row."""
    members = [group_and_member(shape, axis, int(i)) for i in local_indices(mesh, coords)]
    groups = int(np.prod(shape)) // group_size(shape, axis)
    dtype = sum_dtype(local)
    width = int(np.prod(local.shape[1:], dtype=np.int64))  # elements of one device's values
    rows = local.reshape(len(members), width)

    def add_mine(flat: np.ndarray, start: int, stop: int) -> None:  # this rank's devices, in device order
        for row, (group, member) in enumerate(members):
            first, last = max(start, group * width), min(stop, (group + 1) * width)
            if first < last:
                target, source = flat[first:last], rows[row, first - group * width : last - group * width]
                if member == 0:
                    target[...] = source
                else:
                    target += source

    in_place = [group for group, _ in members] == list(range(groups))  # local row i is group i's device
    shape_out = (groups, *local.shape[1:])
    direct = out is not None and in_place and out.shape == shape_out and out.dtype == dtype and out.flags.c_contiguous
    running = out if direct else np.empty(shape_out, dtype=dtype)  # (every element is set by member 0's rank)
    return mesh.context.relay_array(running, ranks_in_row_order(mesh), add_mine, op=op), members
