"""Joining tensors: ``ttnn.concat`` (with ttnn's grouped form, which interleaves the channel
groups of two tensors) and ``ttnn.stack`` (a new dimension, as torch.stack).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' checks,
outputs, registry and rearrange modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.op_keywords import NO_OUTPUT_TENSOR, SUB_CORE_GRIDS, ttnn_keywords
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.movement.rearrange import joined_tiles, rearranged
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _concat_golden(torch, tensors, dim=0, groups=1, **_):
    """ttnn's reference: torch.concat, or for ``groups`` > 1 the channel groups of two [N, H, W, C]
    tensors interleaved (group i of the first, then group i of the second)."""
    if groups <= 1:
        return torch.concat(tensors, dim)
    first, second = tensors
    *lead, c1 = first.shape
    c2 = second.shape[-1]
    joined = torch.cat([first.reshape(*lead, groups, c1 // groups), second.reshape(*lead, groups, c2 // groups)], -1)
    return joined.reshape(*lead, c1 + c2)


def _tensors(op: str, input_tensors: object) -> list[Tensor]:
    if isinstance(input_tensors, Tensor) or not isinstance(input_tensors, Sequence):
        raise MeshnnTypeError(f"ttnn.{op}: input_tensors must be a list of tensors, got {type(input_tensors).__name__}")
    tensors = [device_input(op, f"input_tensors[{i}]", t) for i, t in enumerate(input_tensors)]
    if not tensors:
        raise MeshnnValueError(f"ttnn.{op}: input_tensors needs at least one tensor")
    same_mesh(op, {f"input_tensors[{i}]": t for i, t in enumerate(tensors)})
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not tensors[0].dtype:
            raise MeshnnValueError(
                f"ttnn.{op}: input_tensors[{i}] is {t.dtype} and input_tensors[0] {tensors[0].dtype}; "
                "all must share a dtype"
            )
    return tensors


def _axis(op: str, dim: object, rank: int, shape: Sequence[int]) -> int:
    dim = int_arg(op, "dim", dim)
    if not -rank <= dim < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {dim} is out of range for input_tensors[0] {list(shape)} (rank {rank})")
    return dim % rank


def _groups(groups: object, tensors: list[Tensor], axis: int) -> int:
    """``groups`` checked as ttnn checks it: > 1 joins exactly two tensors on their last dim, each
    dividing into that many groups."""
    groups = int_arg("concat", "groups", groups)
    if groups < 1:
        raise MeshnnValueError(f"ttnn.concat: groups must be >= 1, got {groups}")
    if groups == 1:
        return groups
    rank = len(tensors[0].shape)
    if len(tensors) != 2 or axis != rank - 1:
        raise MeshnnValueError(f"ttnn.concat: groups={groups} joins exactly two tensors on their last dim")
    for i, t in enumerate(tensors):
        if t.shape[-1] % groups:
            raise MeshnnValueError(
                f"ttnn.concat: input_tensors[{i}]'s last dim {t.shape[-1]} is not divisible by groups"
            )
    return groups


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.CONCAT,
    golden=torch_golden(_concat_golden),
)
@ttnn_keywords(output_tensor=NO_OUTPUT_TENSOR, sub_core_grids=SUB_CORE_GRIDS)
def concat(
    input_tensors: Sequence[Tensor], dim: int = 0, *, memory_config: MemoryConfig | None = None, groups: int = 1
) -> Tensor:
    """The tensors joined along ``dim`` (they match elsewhere); ``groups`` > 1 interleaves the
    channel groups of two tensors (ttnn's grouped concat, for UNet-style skips)."""
    tensors = _tensors("concat", input_tensors)
    first = tensors[0]
    rank = len(first.shape)
    axis = _axis("concat", dim, rank, first.shape)
    for i, t in enumerate(tensors[1:], 1):
        same = len(t.shape) == rank and all(t.shape[d] == first.shape[d] for d in range(rank) if d != axis)
        if not same:
            raise MeshnnValueError(
                f"ttnn.concat: input_tensors[{i}] {list(t.shape)} does not match {list(first.shape)} outside dim {dim}"
            )
    count = _groups(groups, tensors, axis)
    shape = tuple(sum(t.shape[d] for t in tensors) if d == axis else first.shape[d] for d in range(rank))
    spec = out_spec_like(first, shape=shape, memory_config=memory_config, op="concat")

    if count == 1 and (joined := joined_tiles("concat", tensors, spec, axis)) is not None:
        return joined

    def join(*xs: np.ndarray) -> np.ndarray:
        if count == 1:
            return np.concatenate(xs, axis=axis + 1)
        parts = [x.reshape(*x.shape[:-1], count, x.shape[-1] // count) for x in xs]
        return np.concatenate(parts, axis=-1).reshape((xs[0].shape[0], *shape))

    return rearranged("concat", first, spec, join, extra=tensors[1:])


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.CONCAT,
    device_operation="ConcatDeviceOperation",
    golden=torch_golden(lambda torch, input_tensors, dim=0, **_: torch.stack(input_tensors, dim)),
)
def stack(input_tensors: Sequence[Tensor], dim: int) -> Tensor:
    """``torch.stack``: tensors of one shape joined along a new dimension ``dim`` (-rank-1 <= dim
    <= rank), as ttnn does it: each unsqueezed, then concatenated."""
    tensors = _tensors("stack", input_tensors)
    shape = tuple(tensors[0].shape)
    for i, t in enumerate(tensors[1:], 1):
        if tuple(t.shape) != shape:
            raise MeshnnValueError(f"ttnn.stack: input_tensors[{i}] {list(t.shape)} is not {list(shape)} as the first")
    axis = _axis("stack", dim, len(shape) + 1, shape)
    out_shape = (*shape[:axis], len(tensors), *shape[axis:])
    spec = out_spec_like(tensors[0], shape=out_shape, op="stack")
    return rearranged("stack", tensors[0], spec, lambda *xs: np.stack(xs, axis=axis + 1), extra=tensors[1:])
