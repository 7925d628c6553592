"""``ttnn.operations.moreh.linear_backward``: the gradients of ``input @ weight^T + bias`` (see
:mod:`meshnn.ops.moreh.matmul_backward` for how each is computed and written).

May import: every layer below the ops and the ops' registry and moreh modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.ops.checks import same_mesh
from meshnn.ops.moreh.common import (
    BF16_BFP8,
    fp32_dest,
    into_tensor,
    moreh_tensor,
    optional_tensor,
    output_spec,
    reduce_axis,
    run,
)
from meshnn.ops.moreh.matmul_backward import grad_product, required
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "linear_backward"


def _bias_grad(og: Tensor, like: Tensor, into: object, memory_config: object, fp32: bool) -> Tensor:
    """The sum of ``og`` over its rows (and its columns for a one-value bias), 32 rows a tile: a
    reduction, run (and timed) as moreh's sum."""
    shape = tuple(like.shape)
    n = og.shape[-1]
    if like.logical_volume() not in (1, n):
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{OP}: bias must hold one value or one per output ({n}), got {list(shape)}"
        )
    grad = into_tensor(OP, "bias_grad", into, shape, BF16_BFP8)
    spec = None if grad is not None else output_spec(OP, like, shape, memory_config)
    scalar = like.logical_volume() == 1 and n != 1

    def compute(xs: list[np.ndarray]) -> np.ndarray:
        rows = xs[0].reshape(xs[0].shape[0], -1, n)
        total = reduce_axis(rows, 1, True, fp32)
        if scalar:
            total = reduce_axis(total, 2, True, fp32)
        return total.reshape((rows.shape[0], *shape))

    return run(OP, [og], spec, grad, compute, {"gradient": "bias_grad"}, ("output_grad",), launched_as="sum")


def _golden(torch, output_grad, input, weight, *, are_required_outputs=(True, True, True), bias=None, **_):
    x = input.detach().clone().requires_grad_(are_required_outputs[0])
    w = weight.detach().clone().requires_grad_(are_required_outputs[1])
    b = None if bias is None else bias.detach().clone().reshape(-1).requires_grad_(are_required_outputs[2])
    out = torch.nn.functional.linear(x, w, b if b is None or b.numel() > 1 else None)
    if b is not None and b.numel() == 1:
        out = out + b.reshape(())
    out.backward(output_grad)
    return [x.grad, w.grad, None if b is None or b.grad is None else b.grad.reshape(bias.shape)]


@register(
    name="moreh.linear_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.MATMUL,
    device_operation="MorehMatmulOperation",
    golden=torch_golden(_golden),
)
def linear_backward(
    output_grad: Tensor,
    input: Tensor,
    weight: Tensor,
    *,
    are_required_outputs: Sequence[bool] = (True, True, True),
    bias: Tensor | None = None,
    input_grad: Tensor | None = None,
    weight_grad: Tensor | None = None,
    bias_grad: Tensor | None = None,
    input_grad_memory_config: MemoryConfig | None = None,
    weight_grad_memory_config: MemoryConfig | None = None,
    bias_grad_memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """``[d input, d weight, d bias]`` (None where not asked for)."""
    need = required(OP, are_required_outputs, 3)
    og = moreh_tensor(OP, "output_grad", output_grad, BF16_BFP8)
    x = moreh_tensor(OP, "input", input, BF16_BFP8)
    w = moreh_tensor(OP, "weight", weight, BF16_BFP8)
    b = optional_tensor(OP, "bias", bias, BF16_BFP8)
    same_mesh(f"operations.moreh.{OP}", {"output_grad": og, "input": x, "weight": w})
    fp32 = fp32_dest(OP, compute_kernel_config)
    if len(w.shape) != 2 or og.shape[-1] != w.shape[0] or x.shape[-1] != w.shape[1]:
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{OP}: weight {list(w.shape)} must be [out, in] for input {list(x.shape)} and "
            f"output_grad {list(og.shape)}"
        )
    out: list[Tensor | None] = [None, None, None]
    if need[0]:
        out[0] = grad_product(OP, (og, w), (False, False), x, input_grad, input_grad_memory_config, fp32, "input_grad")
    if need[1]:
        memory = weight_grad_memory_config
        out[1] = grad_product(OP, (og, x), (True, False), w, weight_grad, memory, fp32, "weight_grad")
    if need[2]:
        like = b if b is not None else optional_tensor(OP, "bias_grad", bias_grad, BF16_BFP8)
        if like is None:
            raise MeshnnValueError(f"ttnn.operations.moreh.{OP}: the bias gradient needs bias or bias_grad")
        out[2] = _bias_grad(og, like, bias_grad, bias_grad_memory_config, fp32)
    return out
