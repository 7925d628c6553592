"""``ttnn.operations.moreh.cumsum(input, dim, *, output, memory_config)`` and ``cumsum_backward
(output_grad, dim, *, input_grad, memory_config)``: moreh runs ttnn's cumsum (the input's dtype;
the backward from the end of ``dim``, ``reverse_order``), writing into ``output`` / ``input_grad``
when given.

May import: every layer below the ops and the ops' registry and reduce.accumulate modules.
"""

from __future__ import annotations

from meshnn.ops.checks import device_input
from meshnn.ops.reduce.accumulate import cumsum as ttnn_cumsum
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _golden_backward(torch, output_grad, dim, **_):
    return torch.flip(torch.cumsum(torch.flip(output_grad, [dim]), dim), [dim])


@register(
    name="moreh.cumsum",
    kind=OpKind.REDUCTION,
    family=OpFamily.COPY,
    device_operation="AccumulationDeviceOperation",  # moreh_cumsum.cpp calls ttnn::cumsum
    modelled=False,  # as ttnn.cumsum: its program is timed as a copy, marked estimated
    golden=torch_golden(lambda torch, input, dim, **_: torch.cumsum(input, dim)),
)
def cumsum(
    input: Tensor, dim: int, *, output: Tensor | None = None, memory_config: MemoryConfig | None = None
) -> Tensor:
    """The running sum of ``input`` along ``dim``."""
    x = device_input("operations.moreh.cumsum", "input", input)
    return ttnn_cumsum(x, dim, dtype=x.dtype, reverse_order=False, out=output, memory_config=memory_config)


@register(
    name="moreh.cumsum_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.COPY,
    device_operation="AccumulationDeviceOperation",  # ttnn::cumsum, reversed
    modelled=False,
    golden=torch_golden(_golden_backward),
)
def cumsum_backward(
    output_grad: Tensor, dim: int, *, input_grad: Tensor | None = None, memory_config: MemoryConfig | None = None
) -> Tensor:
    """The gradient of a running sum: the running sum of ``output_grad`` from the end of ``dim``."""
    og = device_input("operations.moreh.cumsum_backward", "output_grad", output_grad)
    return ttnn_cumsum(og, dim, dtype=og.dtype, reverse_order=True, out=input_grad, memory_config=memory_config)
