"""A gather that writes only the other devices' slices: each device's output along ``dim`` holds
its group's shards in group order, except the device's own slice, which is left as it was (a
persistent output's old values; zeros in a fresh output).  Ring attention's gather
(``ring_attention_all_gather_async``) works so: the attention reads the local K and V from its
input, so the kernels never copy them.  On the simulated mesh, where the slices are whole tiles,
the remote shards' bytes are written over the output's old bytes (or over zeros); otherwise by
values: the output's old values (or zeros), the remote shards written over them, encoded exactly
(the values were of the output's dtype already).  Several inputs run as one program (one cache
entry).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch,
memo, outputs and values modules and the collectives' all-gather, arguments and groups.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import NotImplementedByMeshnn
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.all_gather import tile_blocks
from meshnn.ops.ccl.arguments import tensor_grid
from meshnn.ops.ccl.groups import group_and_member, output_topology
from meshnn.ops.launch import launch
from meshnn.ops.memo import settled
from meshnn.ops.outputs import Output
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate


def check_local(op: str, mesh: MeshDevice, tensor: Tensor) -> None:
    """The remote-only gather runs on a mesh this process holds whole, over every device."""
    if not mesh.all_local or len(tensor.storage.coords) != mesh.get_num_devices():  # type: ignore[union-attr]
        raise NotImplementedByMeshnn(f"ttnn.{op} over a mesh split between ranks or a tensor on part of a mesh")


def gather_remote(
    op: str,
    tensors: Sequence[Tensor],
    where: tuple[int, int | None],
    specs: Sequence[TensorSpec],
    outputs: Sequence[Tensor | None],
    attrs: dict[str, object],
) -> list[Tensor]:
    """Each of ``tensors`` gathered along ``where = (dim, cluster_axis)`` into an output of its
    spec in ``specs`` (its persistent buffer in ``outputs``, or a fresh one for None), the device's
    own slice left unwritten; the first launch is the program, the others parts of it."""
    results = []
    mesh = tensors[0].device()
    for i, (tensor, spec, into) in enumerate(zip(tensors, specs, outputs, strict=True)):
        if i == 0:
            results.append(_launch(op, mesh, tensor, where, (spec, into), attrs))
            continue
        with mesh.parts_of_one_program():
            results.append(_launch(op, mesh, tensor, where, (spec, into), attrs))
    return results


def _launch(
    op: str,
    mesh: MeshDevice,
    tensor: Tensor,
    where: tuple[int, int | None],
    out: tuple[TensorSpec, Tensor | None],
    attrs: dict[str, object],
) -> Tensor:
    """One input's remote-only gather (its output read as a second input when it is a persistent buffer)."""
    (dim, cluster_axis), (spec, into) = where, out
    shape, axis = tensor_grid(op, tensor, mesh, cluster_axis)
    in_spec, width = tensor.spec, tensor.shape[dim]
    members = [group_and_member(shape, axis, row) for row in range(int(np.prod(shape)))]

    tiles = tile_blocks(in_spec, spec, dim)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        if tiles is not None:
            _by_tiles(in_rows, out_rows[0], tiles, members)
            return
        shards = logical_values(in_rows[0], in_spec, as_float=False)
        if len(in_rows) > 1:
            result = np.array(logical_values(in_rows[1], spec, as_float=False), dtype=shards.dtype)
        else:
            result = np.zeros((shards.shape[0], *spec.shape), dtype=shards.dtype)
        for row, (group, member) in enumerate(members):
            for source, (g, m) in enumerate(members):
                if g == group and m != member:
                    index = [slice(None)] * len(spec.shape)
                    index[dim] = slice(m * width, (m + 1) * width)
                    result[(row, *index)] = shards[source]
        write_values(out_rows[0], result, spec, exact=True)

    attrs = {**attrs, "memory_config": spec.memory_config}
    output = Output(spec, topology=output_topology(tensor, axis, PlacementReplicate()))
    inputs = [tensor] if into is None else [tensor, into]
    (made,) = launch(
        op, mesh, inputs, [output], kernel, reads_memos=True, attrs=attrs, into=None if into is None else [into],
        repeat_key=(op, in_spec, spec, shape, axis, dim, into is None),
    )  # fmt: skip
    return made


def _by_tiles(
    in_rows: list[np.ndarray], out: np.ndarray, blocks: tuple[int, int, int], members: list[tuple[int, int]]
) -> None:
    """The gather by whole tiles (``blocks``: :func:`~meshnn.ops.ccl.all_gather.tile_blocks`):
    each device's output viewed as ``(A, n, B, C)`` bytes gets its group's other members' ``(A,
    B, C)`` input bytes at ``[:, m]``; its own ``[:, member]`` keeps the persistent output's bytes
    (``in_rows[1]``, the output's own rows, settled) or is zeroed (a fresh output)."""
    a, b, c = blocks
    size = a * b * c
    n = 1 + max(m for _, m in members)
    shards = settled(in_rows[0])
    if len(in_rows) > 1:
        settled(in_rows[1])  # the persistent output's old bytes, in the rows written below
    for row, (group, member) in enumerate(members):
        target = out[row, : n * size].reshape(a, n, b, c)
        if len(in_rows) == 1:
            target[:, member] = 0
        for source, (g, m) in enumerate(members):
            if g == group and m != member:
                target[:, m] = shards[source, :size].reshape(a, b, c)
