"""moreh's SGD optimizer: ``ttnn.operations.moreh.sgd``, one step of torch's ``SGD`` on one
parameter.

``sgd(param_in, grad, momentum_buffer_in=None, param_out=None, momentum_buffer_out=None, lr=1e-3,
momentum=0, dampening=0, weight_decay=0, nesterov=False, *, momentum_initialized,
param_out_memory_config, momentum_buffer_out_memory_config, compute_kernel_config)``; with ``g``
the gradient:

- ``g += weight_decay * param``;
- with a ``momentum``: the buffer ``b = momentum * b_in + (1 - dampening) * g`` once initialized
  (``momentum_initialized``: ``momentum_buffer_in`` holds it), else ``b = g``; then
  ``g = g + momentum * b`` (``nesterov``) or ``g = b``;
- ``param -= lr * g``.

Returns ``[param_out, momentum_buffer_out]``: given ones written in place, the others new TILE
tensors of ``param_in``'s shape and dtype in their memory configs (default param_in's); no
momentum buffer (None) when ``momentum`` is 0 and none is given.

ttnn's rules: every tensor BFLOAT16, TILE, of ``param_in``'s shape.  Computed in float64 and
rounded once into each output's dtype.

May import: every layer below the ops, the ops' outputs, registry and this package's arguments.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.moreh_train.arguments import (
    flag,
    kernel_config,
    label,
    moreh_tensor,
    number,
    one_mesh,
    optional_tensor,
    outputs_for,
    run_elementwise,
)
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def sgd_values(values: list[np.ndarray], hyper: dict) -> list[np.ndarray]:
    """One step from ``[param, grad(, buffer)]`` values: ``[param(, buffer)]`` in float64."""
    param, grad = values[0].astype(np.float64), values[1].astype(np.float64)
    grad = grad + hyper["weight_decay"] * param
    if hyper["momentum"] == 0.0:
        return [param - hyper["lr"] * grad]
    if hyper["momentum_initialized"]:
        buffer = hyper["momentum"] * values[2].astype(np.float64) + (1.0 - hyper["dampening"]) * grad
    else:
        buffer = grad
    step = grad + hyper["momentum"] * buffer if hyper["nesterov"] else buffer
    return [param - hyper["lr"] * step, buffer]


def _golden(torch, param_in, grad, momentum_buffer_in=None, param_out=None, momentum_buffer_out=None, lr=1e-3,
            momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, *, momentum_initialized, **_):  # fmt: skip
    hyper = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
             "nesterov": nesterov, "momentum_initialized": momentum_initialized}  # fmt: skip
    tensors = [param_in, grad] + ([momentum_buffer_in] if momentum_buffer_in is not None else [])
    out = sgd_values([t.double().numpy() for t in tensors], hyper)
    return [torch.from_numpy(a) for a in out] + ([None] if len(out) == 1 else [])


def _checked(op: str, named: dict[str, object]) -> dict[str, Tensor | None]:
    """Every tensor BFLOAT16 TILE of param_in's shape (the optional ones may be None)."""
    tensors = {n: (moreh_tensor if n in ("param_in", "grad") else optional_tensor)(op, n, t) for n, t in named.items()}
    shape = tuple(tensors["param_in"].shape)  # type: ignore[union-attr]
    for name, t in tensors.items():
        if t is not None and tuple(t.shape) != shape:
            raise MeshnnValueError(f"ttnn.{label(op)}: {name} is {list(t.shape)}; param_in is {list(shape)}")
    return tensors


@register(
    "moreh.sgd",
    kind=OpKind.BACKWARD,
    family=OpFamily.BINARY,
    device_operation="MorehSgdOperation",
    golden=torch_golden(_golden),
)
@ttnn_keywords("operations.moreh.sgd", records=("compute_kernel_config",))
def moreh_sgd(
    param_in: Tensor,
    grad: Tensor,
    momentum_buffer_in: Tensor | None = None,
    param_out: Tensor | None = None,
    momentum_buffer_out: Tensor | None = None,
    lr: float = 1e-3,
    momentum: float = 0,
    dampening: float = 0,
    weight_decay: float = 0,
    nesterov: bool = False,
    *,
    momentum_initialized: bool,
    param_out_memory_config: MemoryConfig | None = None,
    momentum_buffer_out_memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """One SGD step (see the module's text)."""
    op = "moreh.sgd"
    scalars = (("lr", lr), ("momentum", momentum), ("dampening", dampening), ("weight_decay", weight_decay))
    hyper: dict = {n: number(op, n, v) for n, v in scalars}
    hyper["nesterov"] = flag(op, "nesterov", nesterov)
    hyper["momentum_initialized"] = flag(op, "momentum_initialized", momentum_initialized)
    named = {"param_in": param_in, "grad": grad, "momentum_buffer_in": momentum_buffer_in, "param_out": param_out,
             "momentum_buffer_out": momentum_buffer_out}  # fmt: skip
    t = _checked(op, named)
    moving = hyper["momentum"] != 0.0
    if moving and hyper["momentum_initialized"] and t["momentum_buffer_in"] is None:
        raise MeshnnValueError(f"ttnn.{label(op)}: momentum_buffer_in is required when momentum_initialized is True")
    kernel_config(op, compute_kernel_config)
    mesh = one_mesh(op, t)
    param = t["param_in"]
    spec = out_spec_like(param, memory_config=param_out_memory_config, op=label(op))  # type: ignore[arg-type]
    buffer_spec = out_spec_like(param, memory_config=momentum_buffer_out_memory_config, op=label(op))  # type: ignore[arg-type]
    specs = [spec, buffer_spec if moving else None]
    results = outputs_for(mesh, param, specs, [t["param_out"], t["momentum_buffer_out"]])  # type: ignore[arg-type]
    reads_buffer = moving and hyper["momentum_initialized"]
    inputs = [param, t["grad"]] + ([t["momentum_buffer_in"]] if reads_buffer else [])
    written = results if moving else results[:1]
    attrs = {**hyper, "param_out_memory_config": spec.memory_config}
    run_elementwise(op, mesh, inputs, written, lambda v: sgd_values(v, hyper), attrs)  # type: ignore[arg-type]
    return results
