"""``ttnn.split`` and ``ttnn.chunk`` (a tensor cut along one dim into a list of tensors, with
torch's rules) and ``ttnn.unsqueeze_to_4D`` (leading 1s up to rank 4: a view, on host or device).

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor` and the ops' checks and data movement
modules.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from meshnn.errors import MeshnnValueError
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, int_arg
from meshnn.ops.movement.slicing import getitem
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.lifetime import deallocate
from meshnn.tensor.reshape import reshape
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor, check_tensor


def _axis(op: str, tensor: Tensor, dim: object) -> int:
    rank = len(tensor.shape)
    axis = int_arg(op, "dim", dim)
    if not -rank <= axis < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {axis} is out of range for input_tensor {list(tensor.shape)}")
    return axis % rank


def _pieces(tensor: Tensor, axis: int, sizes: Sequence[int], memory_config: MemoryConfig | None) -> list[Tensor]:
    """One slice per size; when one fails (out of memory), the pieces already made are freed at
    once, so the allocator is as it was while the error (and its traceback) is still alive."""
    rank = len(tensor.shape)
    out: list[Tensor] = []
    start = 0
    try:
        for size in sizes:
            cut = builtins.slice(start, start + size)
            index = tuple(cut if d == axis else builtins.slice(None) for d in range(rank))
            out.append(getitem(tensor, index, memory_config=memory_config))
            start += size
    except BaseException:
        own = getattr(tensor.storage, "mesh_buffer", None)
        for piece in out:
            if getattr(piece.storage, "mesh_buffer", None) is not own:  # (never the input's own buffer)
                deallocate(piece)
        raise
    return out


@register(
    kind=OpKind.DATA_MOVEMENT, family=OpFamily.SLICE, device_operation="SplitDeviceOperation", golden=goldens.split
)
@ttnn_keywords()
def split(
    input_tensor: Tensor,
    split_size: int | Sequence[int],
    dim: int = 0,
    *,
    memory_config: MemoryConfig | None = None,
) -> list[Tensor]:
    """Pieces of ``split_size`` along ``dim`` (the last one smaller when it does not divide), or of
    the sizes listed (which must add up to the dim)."""
    op = "split"
    tensor = device_input(op, "input_tensor", input_tensor)
    axis = _axis(op, tensor, dim)
    length = tensor.shape[axis]
    if isinstance(split_size, Sequence) and not isinstance(split_size, str):
        sizes = [int_arg(op, "split_size", s) for s in split_size]
        if any(s < 0 for s in sizes) or sum(sizes) != length:
            raise MeshnnValueError(
                f"ttnn.{op}: split_size {sizes} must be non-negative and add up to dim {axis} ({length})"
            )
    else:
        step = int_arg(op, "split_size", split_size)
        if step <= 0:
            raise MeshnnValueError(f"ttnn.{op}: split_size must be positive, got {step}")
        sizes = [min(step, length - start) for start in range(0, length, step)] or [0]
    return _pieces(tensor, axis, sizes, memory_config)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="SliceDeviceOperation",
    golden=goldens.chunk,
    modelled=False,
)
@ttnn_keywords()
def chunk(input_tensor: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    """At most ``chunks`` pieces of ``ceil(size / chunks)`` along ``dim`` (torch's rule)."""
    op = "chunk"
    tensor = device_input(op, "input_tensor", input_tensor)
    axis = _axis(op, tensor, dim)
    count = int_arg(op, "chunks", chunks)
    if count <= 0:
        raise MeshnnValueError(f"ttnn.{op}: chunks must be positive, got {count}")
    length = tensor.shape[axis]
    step = max(1, -(-length // count))
    sizes = [min(step, length - start) for start in range(0, length, step)] or [0]
    return _pieces(tensor, axis, sizes, None)


@register(
    kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="ReshapeViewDeviceOperation", modelled=False
)
def unsqueeze_to_4D(tensor: Tensor) -> Tensor:
    """``tensor`` with leading 1s up to rank 4 (its padding kept): a view of the same bytes; its
    logical and padded shapes are each brought to rank 4 (ttnn's ``to_rank(4)``)."""
    check_tensor(tensor, "ttnn.unsqueeze_to_4D: input_tensor")
    rank = len(tensor.shape)
    if rank == 4:
        return tensor
    if rank > 4:
        raise MeshnnValueError(f"ttnn.unsqueeze_to_4D: input_tensor has rank {rank}; it needs rank <= 4")
    padded = tuple(tensor.padded_shape)  # (a TILE tensor of rank 1 has a padded shape of rank 2, as in ttnn)
    padded = (1,) * (4 - len(padded)) + padded
    return reshape(tensor, (1,) * (4 - rank) + tuple(tensor.shape), padded)
