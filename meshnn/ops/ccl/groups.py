"""The groups of a collective: without ``cluster_axis`` the whole mesh, in row-major order; with
``cluster_axis=1`` each mesh row (devices that differ only in their column), with
``cluster_axis=0`` each column.  Values of every device ``(devices, *t)`` regrouped as
``(groups, members, *t)`` and back, a device's (group, member), the topology of a result, and the
launch of a collective's one program with it.

May import: :mod:`meshnn.tensor`, the ops' launch and outputs (numpy for the rest).
"""

from __future__ import annotations

import numpy as np

from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.launch import Kernel, launch
from meshnn.ops.outputs import Output
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import TensorTopology


def group_size(shape: tuple[int, ...], axis: int | None) -> int:
    """Devices in each group of a ``shape`` mesh (grid axis ``axis``; None: the whole mesh)."""
    return int(np.prod(shape)) if axis is None else shape[axis]


def output_topology(tensor: Tensor, axis: int | None, placement: object) -> TensorTopology:
    """``tensor``'s topology with ``placement`` along the groups' mesh axis (every axis for None)."""
    old = tensor.tensor_topology()
    placements = list(old.placements)
    if axis is None:
        placements = [placement] * len(placements)
    elif len(placements) == tensor.storage.mesh_buffer.device().shape.dims():  # type: ignore[union-attr]
        placements[axis] = placement
    return TensorTopology(old.distribution_shape, tuple(placements), old.mesh_coords)


def launch_grouped(
    op: str,
    mesh: MeshDevice,
    tensor: Tensor,
    result: tuple[TensorSpec, int | None, object],
    kernel: Kernel,
    attrs: dict[str, object],
    *,
    into: Tensor | None,
    repeat: tuple,
    semaphores: int,
) -> Tensor:
    """Launch a group collective's program over ``tensor``: one output, ``result = (spec, axis,
    placement)``, its topology ``tensor``'s with ``placement`` along the groups' axis (``tensor``'s
    own for None; ``into``: a checked persistent buffer of that spec, when given); ``attrs`` gain the memory config;
    ``repeat``: everything the kernel uses but the bytes; ``semaphores``: those the program makes."""
    spec, axis, placement = result
    attrs["memory_config"] = spec.memory_config
    topology = tensor.tensor_topology() if placement is None else output_topology(tensor, axis, placement)
    out = Output(spec, topology=topology)
    (made,) = launch(
        op,
        mesh,
        [tensor],
        [out],
        kernel,
        reads_memos=True,
        attrs=attrs,
        into=None if into is None else [into],
        repeat_key=repeat,
        semaphores=semaphores,
    )
    return made


def to_groups(values: np.ndarray, shape: tuple[int, ...], axis: int | None) -> np.ndarray:
    """``(devices, *t)`` values as ``(groups, members, *t)``."""
    grid = values.reshape((*shape, *values.shape[1:]))
    if axis is None:
        return values.reshape((1, values.shape[0], *values.shape[1:]))
    moved = np.moveaxis(grid, axis, len(shape) - 1)  # the group axis last among the mesh axes
    return moved.reshape((-1, shape[axis], *values.shape[1:]))


def from_groups(grouped: np.ndarray, shape: tuple[int, ...], axis: int | None) -> np.ndarray:
    """The inverse of :func:`to_groups`: ``(groups, members, *t)`` back to ``(devices, *t)``."""
    tail = grouped.shape[2:]
    if axis is None:
        return grouped.reshape((-1, *tail))
    others = [d for i, d in enumerate(shape) if i != axis]
    moved = grouped.reshape((*others, shape[axis], *tail))
    return np.moveaxis(moved, len(shape) - 1, axis).reshape((-1, *tail))


def group_and_member(shape: tuple[int, ...], axis: int | None, index: int) -> tuple[int, int]:
    """(group, member) of the device at row-major ``index`` (the numbering of :func:`to_groups`)."""
    position = np.unravel_index(index, shape)
    if axis is None:
        return 0, index
    others = tuple(p for i, p in enumerate(position) if i != axis)
    other_shape = tuple(d for i, d in enumerate(shape) if i != axis)
    group = int(np.ravel_multi_index(others, other_shape)) if other_shape else 0
    return group, int(position[axis])


def sum_dtype(values: np.ndarray) -> np.dtype:
    """What a sum of ``values`` is computed in: their own integer type, else float32."""
    return values.dtype if values.dtype.kind in "iu" else np.dtype(np.float32)


def summed_in_order(grouped: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """``(groups, members, *t)`` summed over the members one after another, in member order,
    starting from member 0, in :func:`sum_dtype`: one fixed order of additions, the order the
    ranks of a multi-process mesh add in too (numpy's own sum may pair the terms differently
    depending on the array's shape), so a float32 sum has the same bits in one process and on any
    number of ranks."""
    total = grouped[:, 0].astype(sum_dtype(grouped), copy=True)
    for member in range(1, grouped.shape[1]):
        total += grouped[:, member]
    return total[:, None] if keepdims else total
