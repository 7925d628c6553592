"""moreh's Adam optimizers: ``ttnn.operations.moreh.adam`` and ``adamw``, one step of torch's
``Adam`` / ``AdamW`` on one parameter.

``adam(param_in, grad, exp_avg_in, exp_avg_sq_in, *, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8,
weight_decay=0.0, step=0, amsgrad=False, max_exp_avg_sq_in, param_out, exp_avg_out,
exp_avg_sq_out, max_exp_avg_sq_out, memory_config, compute_kernel_config)``; ``adamw`` takes
``lr`` .. ``amsgrad`` positionally too, with ``weight_decay=0.01``.  With ``g`` the gradient:

- Adam adds ``weight_decay * param`` to ``g``; AdamW scales the parameter by ``1 - lr * weight_decay``;
- ``m = beta1 * m + (1 - beta1) * g``; ``v = beta2 * v + (1 - beta2) * g**2``;
- with ``amsgrad``, ``v_max = max(v_max, v)`` takes ``v``'s place below;
- ``param -= lr / (1 - beta1**step) * m / (sqrt(v) / sqrt(1 - beta2**step) + eps)``.

Returns ``[param_out, exp_avg_out, exp_avg_sq_out, max_exp_avg_sq_out]``: each output given is
written in place, the others are new TILE tensors of ``param_in``'s shape and dtype in
``memory_config`` (default param_in's); ``max_exp_avg_sq_out`` is None unless ``amsgrad`` (or given).
``amsgrad`` needs ``max_exp_avg_sq_in``.  Step 0 divides by zero, as the device does.

ttnn's rules: every tensor TILE; adam's BFLOAT16, adamw's BFLOAT16 or BFLOAT8_B; every tensor of
``param_in``'s shape.  ttnn's program cache keys the step without ``lr`` and ``step`` (runtime
arguments), so meshnn's program record leaves them out too.  Computed in float64 and rounded once
into each output's dtype.

May import: every layer below the ops, the ops' outputs, registry and this package's arguments.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.moreh_train.arguments import (
    BF16,
    flag,
    kernel_config,
    label,
    moreh_tensor,
    number,
    one_mesh,
    optional_tensor,
    outputs_for,
    run_elementwise,
    uint,
)
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

ADAMW_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B)
_INPUTS = ("param_in", "grad", "exp_avg_in", "exp_avg_sq_in", "max_exp_avg_sq_in")
_OUTPUTS = ("param_out", "exp_avg_out", "exp_avg_sq_out", "max_exp_avg_sq_out")


def adam_values(values: list[np.ndarray], hyper: dict, decoupled: bool) -> list[np.ndarray]:
    """One step from ``[param, grad, m, v(, v_max)]`` values: ``[param, m, v(, v_max)]`` in float64."""
    param, grad, m, v = (a.astype(np.float64) for a in values[:4])
    lr, beta1, beta2, eps, wd, step = (hyper[k] for k in ("lr", "beta1", "beta2", "eps", "weight_decay", "step"))
    if decoupled:
        param = param * (1.0 - lr * wd)
    else:
        grad = grad + wd * param
    m = beta1 * m + (1.0 - beta1) * grad
    v = beta2 * v + (1.0 - beta2) * grad * grad
    with np.errstate(divide="ignore", invalid="ignore"):
        correction1, correction2 = 1.0 - beta1**step, 1.0 - beta2**step
        results = [m, v]
        second = v
        if hyper["amsgrad"]:
            second = np.maximum(values[4].astype(np.float64), v)
            results.append(second)
        denom = np.sqrt(second) / np.sqrt(correction2) + eps
        return [param - lr / correction1 * m / denom, *results]


def _golden(decoupled: bool):
    def body(torch, param_in, grad, exp_avg_in, exp_avg_sq_in, *args, **kwargs):
        names = ("lr", "beta1", "beta2", "eps", "weight_decay", "step", "amsgrad")
        defaults = dict(zip(names, (0.001, 0.9, 0.999, 1e-8, 0.01 if decoupled else 0.0, 0, False), strict=True))
        hyper = {**defaults, **dict(zip(names, args, strict=False)), **{k: kwargs[k] for k in names if k in kwargs}}
        tensors = [param_in, grad, exp_avg_in, exp_avg_sq_in]
        if hyper["amsgrad"]:
            tensors.append(kwargs["max_exp_avg_sq_in"])
        out = adam_values([t.double().numpy() for t in tensors], hyper, decoupled)
        return [torch.from_numpy(a) for a in out]

    return torch_golden(body)


def _step(op: str, tensors: tuple, hyper: dict, given: tuple, memory_config, compute_kernel_config, dtypes,
          decoupled: bool) -> list[Tensor | None]:  # fmt: skip
    """Check everything, then run the step (see the module's text)."""
    hyper = {k: number(op, k, v) for k, v in hyper.items() if k not in ("step", "amsgrad")} | {
        "step": uint(op, "step", hyper["step"]),
        "amsgrad": flag(op, "amsgrad", hyper["amsgrad"]),
    }
    ins = [optional_tensor(op, n, t, dtypes) for n, t in zip(_INPUTS, tensors, strict=True)]
    if any(t is None for t in ins[:4]):
        moreh_tensor(op, _INPUTS[[t is None for t in ins].index(True)], None)  # raises, naming it
    if hyper["amsgrad"] and ins[4] is None:
        raise MeshnnValueError(f"ttnn.{label(op)}: max_exp_avg_sq_in is required when amsgrad is True")
    outs = [optional_tensor(op, n, t, dtypes) for n, t in zip(_OUTPUTS, given, strict=True)]
    param = ins[0]
    for name, t in zip(_INPUTS + _OUTPUTS, ins + outs, strict=True):
        if t is not None and tuple(t.shape) != tuple(param.shape):
            raise MeshnnValueError(f"ttnn.{label(op)}: {name} is {list(t.shape)}; param_in is {list(param.shape)}")
    kernel_config(op, compute_kernel_config)
    mesh = one_mesh(op, dict(zip(_INPUTS + _OUTPUTS, ins + outs, strict=True)))
    spec = out_spec_like(param, memory_config=memory_config, op=label(op))
    specs = [spec, spec, spec, spec if hyper["amsgrad"] else None]
    results = outputs_for(mesh, param, specs, outs)
    inputs = [t for t in (ins if hyper["amsgrad"] else ins[:4]) if t is not None]
    written = results[: 4 if hyper["amsgrad"] else 3]
    attrs = {k: v for k, v in hyper.items() if k not in ("lr", "step")} | {"memory_config": spec.memory_config}
    run_elementwise(op, mesh, inputs, written, lambda v: adam_values(v, hyper, decoupled), attrs)  # type: ignore[arg-type]
    return results


_KW = {"kind": OpKind.BACKWARD, "family": OpFamily.BINARY}


@register("moreh.adam", device_operation="MorehAdamOperation", golden=_golden(False), **_KW)
@ttnn_keywords("operations.moreh.adam", records=("compute_kernel_config",))
def moreh_adam(
    param_in: Tensor,
    grad: Tensor,
    exp_avg_in: Tensor,
    exp_avg_sq_in: Tensor,
    *,
    lr: float = 0.001,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    step: int = 0,
    amsgrad: bool = False,
    max_exp_avg_sq_in: Tensor | None = None,
    param_out: Tensor | None = None,
    exp_avg_out: Tensor | None = None,
    exp_avg_sq_out: Tensor | None = None,
    max_exp_avg_sq_out: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """One Adam step (see the module's text)."""
    hyper = {"lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "weight_decay": weight_decay, "step": step,
             "amsgrad": amsgrad}  # fmt: skip
    tensors = (param_in, grad, exp_avg_in, exp_avg_sq_in, max_exp_avg_sq_in)
    given = (param_out, exp_avg_out, exp_avg_sq_out, max_exp_avg_sq_out)
    return _step("moreh.adam", tensors, hyper, given, memory_config, compute_kernel_config, BF16, False)


@register("moreh.adamw", device_operation="MorehAdamWDeviceOperation", golden=_golden(True), **_KW)
@ttnn_keywords("operations.moreh.adamw", records=("compute_kernel_config",))
def moreh_adamw(
    param_in: Tensor,
    grad: Tensor,
    exp_avg_in: Tensor,
    exp_avg_sq_in: Tensor,
    lr: float = 0.001,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 1e-2,
    step: int = 0,
    amsgrad: bool = False,
    *,
    max_exp_avg_sq_in: Tensor | None = None,
    param_out: Tensor | None = None,
    exp_avg_out: Tensor | None = None,
    exp_avg_sq_out: Tensor | None = None,
    max_exp_avg_sq_out: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """One AdamW step (decoupled weight decay; see the module's text)."""
    hyper = {"lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "weight_decay": weight_decay, "step": step,
             "amsgrad": amsgrad}  # fmt: skip
    tensors = (param_in, grad, exp_avg_in, exp_avg_sq_in, max_exp_avg_sq_in)
    given = (param_out, exp_avg_out, exp_avg_sq_out, max_exp_avg_sq_out)
    return _step("moreh.adamw", tensors, hyper, given, memory_config, compute_kernel_config, ADAMW_DTYPES, True)
