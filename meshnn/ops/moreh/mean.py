"""``ttnn.operations.moreh.mean`` and ``mean_backward`` (see :mod:`meshnn.ops.moreh.reduce`):
bfloat16, TILE; ``divisor`` is refused as moreh refuses it ("divisor not supported yet").

May import: every layer below the ops and the ops' registry and moreh modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.errors import MeshnnValueError
from meshnn.ops.checks import int_list
from meshnn.ops.moreh.common import BF16, flag
from meshnn.ops.moreh.reduce import reduction, spread
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _golden(torch, input, *, dim=None, keepdim=False, **_):
    dims = tuple(range(input.dim())) if dim is None or dim == [] else dim
    return torch.mean(input, dims, keepdim)


@register(
    name="moreh.mean",
    kind=OpKind.REDUCTION,
    family=OpFamily.REDUCTION,
    device_operation="MorehMeanOperation",
    golden=torch_golden(_golden),
)
def mean(
    input: Tensor,
    *,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    divisor: int | None = None,
    output: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The mean of ``input`` over ``dim`` (None or ``[]``: every dim)."""
    if divisor is not None:
        raise MeshnnValueError("ttnn.operations.moreh.mean: divisor not supported yet.")
    return reduction("mean", input, dim, keepdim, output, memory_config, compute_kernel_config, dtypes=BF16, mean=True)


@register(
    name="moreh.mean_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.BINARY,
    device_operation="MorehMeanBackwardOperation",
    golden=None,
)
def mean_backward(
    output_grad: Tensor,
    *,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    input_grad_shape: Sequence[int] | None = None,
    input_grad: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``output_grad`` divided by the reduced volume, spread over the input's shape (from
    ``input_grad_shape`` or ``input_grad``)."""
    op = "mean_backward"
    keep = flag(op, "keepdim", keepdim)
    shape = (
        None if input_grad_shape is None else int_list(f"operations.moreh.{op}", "input_grad_shape", input_grad_shape)
    )
    return spread(op, output_grad, shape, None, (dim, keep), input_grad, memory_config, True)
