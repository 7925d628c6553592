"""Repetition: ``ttnn.repeat`` (the tensor tiled ``repeat_dims`` times, as torch's ``repeat``; a
longer ``repeat_dims`` adds leading dims, a shorter one repeats the trailing dims, a 0 empties
the dim) and ``ttnn.repeat_interleave`` (each element repeated along ``dim``).

``repeat_interleave`` of a tensor not in bfloat16 goes through bfloat16 on ttnn (typecast,
repeat, typecast back), so its values round to bfloat16: meshnn rounds them the same way.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, outputs, registry and rearrange modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.bfloat16 import round_to_bfloat16
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import Keyword, choice, ttnn_keywords
from meshnn.ops.checks import device_input, int_arg, int_list
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _repeat_golden(torch, input_tensor, repeat_dims, **_):
    return input_tensor.repeat(*repeat_dims)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="RepeatDeviceOperation",
    golden=torch_golden(_repeat_golden),
)
@ttnn_keywords(implementation=Keyword("auto", choice("auto", "native", "codegen")))
def repeat(input_tensor: Tensor, repeat_dims: Sequence[int], *, memory_config: MemoryConfig | None = None) -> Tensor:
    """The tensor repeated ``repeat_dims[i]`` times along dim i (ttnn's rank matching: leading 1s
    added to the shorter of the shape and ``repeat_dims``)."""
    tensor = device_input("repeat", "input_tensor", input_tensor)
    reps = int_list("repeat", "repeat_dims", repeat_dims)
    shape = tuple(tensor.shape)
    if not shape:
        raise MeshnnValueError("ttnn.repeat: repeat does not support rank 0 tensors")
    if not reps or any(r < 0 for r in reps):
        raise MeshnnValueError(f"ttnn.repeat: repeat_dims {reps} must be non-negative counts")
    rank = max(len(shape), len(reps))
    shape = (1,) * (rank - len(shape)) + shape
    reps = [1] * (rank - len(reps)) + reps
    out_shape = tuple(d * r for d, r in zip(shape, reps, strict=True))
    spec = out_spec_like(tensor, shape=out_shape, memory_config=memory_config, op="repeat")
    return rearranged("repeat", tensor, spec, lambda x: np.tile(x.reshape((x.shape[0], *shape)), (1, *reps)))


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.CONCAT,
    device_operation="ConcatDeviceOperation",
    golden=torch_golden(
        lambda torch, input_tensor, repeats, dim=0, **_: torch.repeat_interleave(input_tensor, repeats, dim)
    ),
)
def repeat_interleave(
    input_tensor: Tensor, repeats: int, dim: int, *, memory_config: MemoryConfig | None = None
) -> Tensor:
    """Each element repeated ``repeats`` times along ``dim`` (torch.repeat_interleave with an int)."""
    op = "repeat_interleave"
    tensor = device_input(op, "input_tensor", input_tensor)
    count = int_arg(op, "repeats", repeats)
    if count < 1:
        raise MeshnnValueError(f"ttnn.{op}: repeats must be >= 1, got {count}")
    rank = len(tensor.shape)
    axis = int_arg(op, "dim", dim)
    if not -rank <= axis < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {axis} is out of range for input_tensor {list(tensor.shape)}")
    axis %= rank
    shape = tuple(d * count if i == axis else d for i, d in enumerate(tensor.shape))
    spec = out_spec_like(tensor, shape=shape, memory_config=memory_config, op=op)
    through_bfloat16 = count > 1 and tensor.dtype is not DataType.BFLOAT16

    def interleave(x: np.ndarray) -> np.ndarray:
        out = np.repeat(x, count, axis=axis + 1)
        if through_bfloat16:
            kind = out.dtype
            out = round_to_bfloat16(out.astype(np.float32)).astype(kind)
        return out

    return rearranged(op, tensor, spec, interleave, new_values=through_bfloat16)
