"""``ttnn.operations.moreh.sum`` and ``sum_backward`` (see :mod:`meshnn.ops.moreh.reduce`):
bfloat16 or int32 (summed exactly) inputs, TILE.

May import: every layer below the ops and the ops' registry and moreh modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.formats.dtypes import DataType
from meshnn.ops.moreh.common import flag, moreh_tensor
from meshnn.ops.moreh.reduce import reduction, spread
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

SUMMABLE = (DataType.BFLOAT16, DataType.INT32)


def _golden(torch, input, dim=None, *, keepdim=False, **_):
    return torch.sum(input, tuple(range(input.dim())) if dim is None or dim == [] else dim, keepdim)


@register(
    name="moreh.sum",
    kind=OpKind.REDUCTION,
    family=OpFamily.REDUCTION,
    device_operation="MorehSumOperation",
    golden=torch_golden(_golden),
)
def sum(
    input: Tensor,
    dim: int | Sequence[int] | None = None,
    *,
    keepdim: bool = False,
    output: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The sum of ``input`` over ``dim`` (None or ``[]``: every dim)."""
    return reduction(
        "sum", input, dim, keepdim, output, memory_config, compute_kernel_config, dtypes=SUMMABLE, mean=False
    )


@register(
    name="moreh.sum_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.BINARY,
    device_operation="MorehSumBackwardOperation",
    golden=torch_golden(lambda torch, output_grad, *, input=None, **_: output_grad.expand_as(input)),
)
def sum_backward(
    output_grad: Tensor,
    *,
    input: Tensor | None = None,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    input_grad: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``output_grad`` spread over the input's shape (from ``input`` or ``input_grad``)."""
    keep = flag("sum_backward", "keepdim", keepdim)
    x = None if input is None else moreh_tensor("sum_backward", "input", input)
    shape = None if x is None else tuple(x.shape)
    return spread("sum_backward", output_grad, shape, x, (dim, keep), input_grad, memory_config, False)
