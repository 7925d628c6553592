"""moreh's negative log-likelihood loss: ``ttnn.operations.moreh.nll_loss`` and its backward forms
``nll_loss_backward`` (a reduced loss) and ``nll_loss_unreduced_backward``.

``nll_loss(input_tensor, target_tensor, reduction, *, weight_tensor, divisor_tensor,
output_tensor, ignore_index=-100, memory_config, compute_kernel_config)``: ``input_tensor`` holds
log-probabilities ``[N, C, d...]``, ``target_tensor`` the class of each ``[N, d...]`` element
(INT32); each element's loss is ``-w[t] * input[n, t, ...]`` (``w`` the ``[C]`` weights, 1 without
them), 0 where the target is ``ignore_index``.

- ``"sum"``: the sum of the losses;
- ``"mean"``: the sum divided by the sum of ``w[t]`` over the targets not ignored, which is
  written into ``divisor_tensor`` (required, as ttnn requires it);
- ``"none"``: each element's loss, ``[N, d...]`` (``[1, N]`` for a 2-D input).

A reduced loss is ``[1, 1]`` (moreh's sum over every dim), or ``output_tensor`` written in place.

``nll_loss_backward(target_tensor, output_grad_tensor, reduction_mean, *, weight_tensor,
input_grad_tensor, divisor_tensor, ignore_index, ...)`` writes the input's gradient
``-w[t] * output_grad (/ divisor)`` at each element's target class and 0 elsewhere;
``nll_loss_unreduced_backward(target_tensor, output_grad_tensor, *, weight_tensor,
input_grad_tensor, ignore_index, ...)`` the same with one output gradient per element.  Neither can
make its output (the channel count is nowhere else): ``input_grad_tensor`` is required, as in ttnn.

ttnn's rules: every tensor TILE; inputs, weights, divisors and gradients BFLOAT16, targets INT32.
A target outside ``[0, C)`` that is not ``ignore_index`` contributes nothing.  Computed in float64
and rounded once into each output's dtype.

May import: every layer below the ops, the ops' outputs, registry and this package's arguments.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.moreh_train.arguments import (
    flag,
    kernel_config,
    label,
    memory_config_arg,
    moreh_tensor,
    one_mesh,
    optional_tensor,
    outputs_for,
    run_elementwise,
)
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

I32 = (DataType.INT32,)
REDUCTIONS = ("mean", "sum", "none")


def _picked(target: np.ndarray, channels: int, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """Each element's class as an index safe to gather with, and whether it counts."""
    t = target.astype(np.int64)
    counts = (t != ignore_index) & (t >= 0) & (t < channels)
    return np.where(counts, t, 0), counts


def _weights(weight: np.ndarray | None, index: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``w[t]`` per element (1 without weights), 0 where the element does not count."""
    if weight is None:
        return counts.astype(np.float64)
    w = weight.reshape(weight.shape[0], -1).astype(np.float64)
    per = np.take_along_axis(w, index.reshape(index.shape[0], -1), axis=1).reshape(index.shape)
    return np.where(counts, per, 0.0)


def losses(x: np.ndarray, target: np.ndarray, weight: np.ndarray | None, ignore_index: int):
    """Each element's loss ``-w[t] * x[n, t, ...]`` and its weight ``w[t]`` (0 where ignored), for
    ``(k, N, C, d...)`` inputs and ``(k, N, d...)`` targets."""
    t = target.reshape((x.shape[0], x.shape[1], *x.shape[3:]))
    index, counts = _picked(t, x.shape[2], ignore_index)
    chosen = np.take_along_axis(x.astype(np.float64), index[:, :, None], axis=2)[:, :, 0]
    w = _weights(weight, index, counts)
    return -w * chosen, w


def _divisor_kind(op: str, reduction: object, divisor: Tensor | None) -> str:
    if not isinstance(reduction, str):
        raise MeshnnTypeError(f"ttnn.{label(op)}: reduction must be a str, got {reduction!r}")
    if reduction not in REDUCTIONS:
        raise MeshnnValueError(f"ttnn.{label(op)}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if reduction == "mean" and divisor is None:
        raise MeshnnValueError(f"ttnn.{label(op)}: Divisor tensor must not be empty (divisor_tensor, reduction mean)")
    return reduction


def _check_target(op: str, x: Tensor, t: Tensor) -> None:
    want = [x.shape[0], *x.shape[2:]]
    if len(x.shape) < 2 or int(np.prod(t.shape)) != int(np.prod(want)):
        raise MeshnnValueError(
            f"ttnn.{label(op)}: target_tensor {list(t.shape)} must hold the {want} elements of input_tensor "
            f"{list(x.shape)} without its class dim"
        )


def _loss_spec(x: Tensor, reduction: str, memory_config: MemoryConfig | None) -> TensorSpec:
    if reduction != "none":
        shape = [1, 1]
    elif len(x.shape) == 2:
        shape = [1, x.shape[0]]
    else:
        shape = [x.shape[0], *x.shape[2:]]
    config = memory_config or x.spec.memory_config
    return TensorSpec(shape, x.dtype, x.layout, tile=x.spec.tile, memory_config=config)


def _golden(torch, input_tensor, target_tensor, reduction, *, weight_tensor=None, ignore_index=-100, **_):
    return torch.nn.functional.nll_loss(
        input_tensor.double(), target_tensor.long(), weight_tensor, ignore_index=ignore_index, reduction=reduction
    )


@register(
    "moreh.nll_loss",
    kind=OpKind.LOSS,
    family=OpFamily.REDUCTION,
    device_operation="MorehNllLossStep2DeviceOperation",
    golden=torch_golden(_golden),
)
@ttnn_keywords("operations.moreh.nll_loss", records=("compute_kernel_config",))
def moreh_nll_loss(
    input_tensor: Tensor,
    target_tensor: Tensor,
    reduction: str,
    *,
    weight_tensor: Tensor | None = None,
    divisor_tensor: Tensor | None = None,
    output_tensor: Tensor | None = None,
    ignore_index: int = -100,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The loss (see the module's text); ``divisor_tensor`` is written too for ``"mean"``."""
    op = "moreh.nll_loss"
    x = moreh_tensor(op, "input_tensor", input_tensor)
    t = moreh_tensor(op, "target_tensor", target_tensor, I32)
    w = optional_tensor(op, "weight_tensor", weight_tensor)
    d = optional_tensor(op, "divisor_tensor", divisor_tensor)
    out = optional_tensor(op, "output_tensor", output_tensor, ())
    kind = _divisor_kind(op, reduction, d)
    ignore = _ignore(op, ignore_index)
    kernel_config(op, compute_kernel_config)
    memory_config_arg(op, "memory_config", memory_config)
    _check_target(op, x, t)
    _check_weight(op, w, x.shape[1])
    names = {"input_tensor": x, "target_tensor": t, "weight_tensor": w, "divisor_tensor": d, "output_tensor": out}
    mesh = one_mesh(op, names)
    (loss,) = outputs_for(mesh, x, [_loss_spec(x, kind, memory_config)], [out])
    inputs = [x, t] if w is None else [x, t, w]

    has_w = w is not None  # (flags: the compute holds no tensor)

    def compute(values: list[np.ndarray]) -> list[np.ndarray]:
        each, weights = losses(values[0], values[1], values[2] if has_w else None, ignore)
        k = each.shape[0]
        total = each.reshape(k, -1).sum(axis=1)
        if kind == "none":
            return [each]
        if kind == "sum":
            return [total]
        divisor = weights.reshape(k, -1).sum(axis=1)
        return [divisor, total / divisor]

    targets = [loss] if kind != "mean" else [d, loss]
    attrs = {"reduction": kind, "ignore_index": ignore, "memory_config": memory_config}
    run_elementwise(op, mesh, inputs, targets, compute, attrs)  # type: ignore[arg-type]
    return loss  # type: ignore[return-value]


def _ignore(op: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{label(op)}: ignore_index must be an int, got {value!r}")
    return int(value)


def _check_weight(op: str, w: Tensor | None, channels: int) -> None:
    if w is not None and int(np.prod(w.shape)) != channels:
        raise MeshnnValueError(f"ttnn.{label(op)}: weight_tensor {list(w.shape)} must hold C = {channels} weights")


def _input_grad(op: str, given: object, t: Tensor) -> Tensor:
    """The required ``input_grad_tensor``, checked to be ``[N, C, d...]`` for ``[N, d...]`` targets."""
    if given is None:
        raise MeshnnValueError(
            f"ttnn.{label(op)}: input_grad_tensor is required ({op.split('.')[-1]} does not support creating "
            "output tensors: the channel count is in no other argument)"
        )
    g = moreh_tensor(op, "input_grad_tensor", given)
    _check_target(op, g, t)
    return g


def _backward(op, target_tensor, output_grad_tensor, weight_tensor, input_grad_tensor, divisor_tensor, ignore_index,
              compute_kernel_config, memory_config, per_element: bool) -> Tensor:  # fmt: skip
    """Both backward forms: the gradient written into ``input_grad_tensor``."""
    t = moreh_tensor(op, "target_tensor", target_tensor, I32)
    dy = moreh_tensor(op, "output_grad_tensor", output_grad_tensor)
    w = optional_tensor(op, "weight_tensor", weight_tensor)
    d = optional_tensor(op, "divisor_tensor", divisor_tensor)
    g = _input_grad(op, input_grad_tensor, t)
    ignore = _ignore(op, ignore_index)
    kernel_config(op, compute_kernel_config)
    memory_config_arg(op, "memory_config", memory_config)
    _check_weight(op, w, g.shape[1])
    wanted = int(np.prod(t.shape)) if per_element else 1
    if int(np.prod(dy.shape)) != wanted:
        raise MeshnnValueError(
            f"ttnn.{label(op)}: output_grad_tensor {list(dy.shape)} must hold {wanted} value(s) for target_tensor "
            f"{list(t.shape)}"
        )
    names = {"target_tensor": t, "output_grad_tensor": dy, "weight_tensor": w, "divisor_tensor": d}
    mesh = one_mesh(op, {**names, "input_grad_tensor": g})
    inputs = [v for v in (t, dy, w, d) if v is not None]
    shape = tuple(g.shape)

    has_w, has_d = w is not None, d is not None  # (flags: the compute holds no tensor)

    def compute(values: list[np.ndarray]) -> list[np.ndarray]:
        k = values[0].shape[0]
        target = values[0].reshape((k, shape[0], *shape[2:]))
        index, counts = _picked(target, shape[1], ignore)
        weight = _weights(values[2] if has_w else None, index, counts)
        ones = (1,) * (weight.ndim - 1)
        grad_out = values[1].astype(np.float64).reshape(weight.shape if per_element else (k, *ones))
        scale = -weight * grad_out
        if has_d:
            scale = scale / values[-1].astype(np.float64).reshape((k, *ones))
        grad = np.zeros((k, *shape))
        np.put_along_axis(grad, index[:, :, None], scale[:, :, None], axis=2)
        return [grad]

    attrs = {"ignore_index": ignore, "memory_config": memory_config}
    run_elementwise(op, mesh, inputs, [g], compute, attrs)
    return g


def _golden_backward(torch, target_tensor, output_grad_tensor, reduction_mean, *, weight_tensor=None,
                     input_grad_tensor=None, divisor_tensor=None, ignore_index=-100, **_):  # fmt: skip
    x = torch.zeros(input_grad_tensor.shape, dtype=torch.float64, requires_grad=True)
    reduction = "mean" if reduction_mean else "sum"
    loss = torch.nn.functional.nll_loss(x, target_tensor.long(), weight_tensor, ignore_index=ignore_index,
                                        reduction=reduction)  # fmt: skip
    loss.backward(output_grad_tensor.double().reshape(()))
    return x.grad


def _golden_unreduced(torch, target_tensor, output_grad_tensor, *, weight_tensor=None, input_grad_tensor=None,
                      ignore_index=-100, **_):  # fmt: skip
    x = torch.zeros(input_grad_tensor.shape, dtype=torch.float64, requires_grad=True)
    loss = torch.nn.functional.nll_loss(x, target_tensor.long(), weight_tensor, ignore_index=ignore_index,
                                        reduction="none")  # fmt: skip
    loss.backward(output_grad_tensor.double().reshape(loss.shape))
    return x.grad


@register(
    "moreh.nll_loss_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.BINARY,
    device_operation="MorehNllLossBackwardDeviceOperation",
    golden=torch_golden(_golden_backward),
)
@ttnn_keywords("operations.moreh.nll_loss_backward", records=("compute_kernel_config",))
def moreh_nll_loss_backward(
    target_tensor: Tensor,
    output_grad_tensor: Tensor,
    reduction_mean: bool,
    *,
    weight_tensor: Tensor | None = None,
    input_grad_tensor: Tensor | None = None,
    divisor_tensor: Tensor | None = None,
    ignore_index: int = -100,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The input's gradient of a reduced loss (divided by ``divisor_tensor`` when ``reduction_mean``)."""
    op = "moreh.nll_loss_backward"
    mean = flag(op, "reduction_mean", reduction_mean)
    if mean and divisor_tensor is None:
        raise MeshnnValueError(f"ttnn.{label(op)}: divisor_tensor is required when reduction_mean is True")
    divisor = divisor_tensor if mean else None
    return _backward(op, target_tensor, output_grad_tensor, weight_tensor, input_grad_tensor, divisor, ignore_index,
                     compute_kernel_config, memory_config, per_element=False)  # fmt: skip


@register(
    "moreh.nll_loss_unreduced_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.BINARY,
    device_operation="MorehNllLossUnreducedBackwardDeviceOperation",
    golden=torch_golden(_golden_unreduced),
)
@ttnn_keywords("operations.moreh.nll_loss_unreduced_backward", records=("compute_kernel_config",))
def moreh_nll_loss_unreduced_backward(
    target_tensor: Tensor,
    output_grad_tensor: Tensor,
    *,
    weight_tensor: Tensor | None = None,
    input_grad_tensor: Tensor | None = None,
    ignore_index: int = -100,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The input's gradient of the per-element losses (one output gradient per element)."""
    op = "moreh.nll_loss_unreduced_backward"
    return _backward(op, target_tensor, output_grad_tensor, weight_tensor, input_grad_tensor, None, ignore_index,
                     compute_kernel_config, memory_config, per_element=True)  # fmt: skip
