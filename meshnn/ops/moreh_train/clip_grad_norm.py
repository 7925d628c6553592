"""moreh's gradient clipping: ``ttnn.operations.moreh.clip_grad_norm``, torch's
``clip_grad_norm_`` over a list of gradient tensors.

``clip_grad_norm(inputs, max_norm, norm_type=2.0, error_if_nonfinite=False, *, total_norm,
memory_config, compute_kernel_config)``:

1. the total norm ``(sum over every input of sum(|e|**p))**(1/p)`` for ``p = norm_type`` (``inf``:
   the largest ``|e|``, ``-inf`` the smallest, 0 the count of non-zeros, as torch), written into
   ``total_norm`` when given, else a new ``[1, 1]`` TILE tensor of the inputs' dtype, and returned;
2. with ``error_if_nonfinite``, a NaN ``norm_type`` is refused before anything runs, and a total
   that is not finite (read back from the device, as ttnn reads it) after step 1, before any input
   changes (a new total tensor is freed first);
3. every input scaled in place by ``min(max_norm / (total + 1e-6), 1)``, from the total as its
   tensor holds it (rounded into its dtype).

ttnn's rules: every tensor BFLOAT16 and TILE, on one device mesh.  The sums are in float64, each
result rounded once into its tensor's dtype.  Errors are RuntimeErrors (ttnn's TT_FATAL), the
non-finite one with torch's text.

May import: every layer below the ops, the ops' outputs, registry and this package's arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.moreh_train.arguments import (
    flag,
    kernel_config,
    label,
    memory_config_arg,
    moreh_tensor,
    number,
    one_mesh,
    optional_tensor,
    outputs_for,
    run_elementwise,
)
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.readback import decoded_shards
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "moreh.clip_grad_norm"


def norm_of(values: Sequence[np.ndarray], p: float) -> np.ndarray:
    """The ``p``-norm over every element of ``(k, ...)`` arrays together, per device: ``(k,)``."""
    flat = np.concatenate([np.abs(v.astype(np.float64)).reshape(v.shape[0], -1) for v in values], axis=1)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if p == math.inf:
            return flat.max(axis=1)
        if p == -math.inf:
            return flat.min(axis=1)
        if p == 0:
            return (flat != 0).sum(axis=1).astype(np.float64)
        return np.power(np.power(flat, p).sum(axis=1), 1.0 / p)


def _message(norm_type: float) -> str:
    return (
        f"ttnn.{label(OP)}: The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
        "cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
        "`error_if_nonfinite=False`"
    )


def _golden(torch, inputs, max_norm, norm_type=2.0, error_if_nonfinite=False, **_):
    grads = [t.double() for t in inputs]
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in inputs:
        g.mul_(coef.to(g.dtype))
    return total


def _inputs(inputs: object) -> list[Tensor]:
    if not isinstance(inputs, Sequence) or isinstance(inputs, str) or not inputs:
        raise MeshnnTypeError(f"ttnn.{label(OP)}: inputs must be a non-empty list of tensors, got {inputs!r}")
    return [moreh_tensor(OP, f"inputs[{i}]", t) for i, t in enumerate(inputs)]


@register(OP, kind=OpKind.REDUCTION, family=OpFamily.REDUCTION,
          device_operation="MorehClipGradNormStep1Operation", golden=torch_golden(_golden))  # fmt: skip
@ttnn_keywords("operations.moreh.clip_grad_norm", records=("compute_kernel_config",))
def moreh_clip_grad_norm(
    inputs: Sequence[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    *,
    total_norm: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The total norm of ``inputs``, each scaled in place to clip it (see the module's text)."""
    grads = _inputs(inputs)
    max_norm, p = number(OP, "max_norm", max_norm), number(OP, "norm_type", norm_type)
    strict = flag(OP, "error_if_nonfinite", error_if_nonfinite)
    given = optional_tensor(OP, "total_norm", total_norm, ())
    if given is not None and int(np.prod(given.shape)) != 1:
        raise MeshnnValueError(f"ttnn.{label(OP)}: total_norm must hold one value, got {list(given.shape)}")
    config = memory_config_arg(OP, "memory_config", memory_config)
    kernel_config(OP, compute_kernel_config)
    if strict and math.isnan(p):
        raise MeshnnError(_message(p))
    mesh = one_mesh(OP, {**{f"inputs[{i}]": g for i, g in enumerate(grads)}, "total_norm": given})
    first = grads[0]
    spec = TensorSpec([1, 1], first.dtype, first.layout, memory_config=config or first.spec.memory_config)
    (total,) = outputs_for(mesh, first, [spec], [given])
    attrs = {"norm_type": p, "memory_config": spec.memory_config}
    run_elementwise(OP, mesh, grads, [total], lambda v: [norm_of(v, p)], attrs)  # type: ignore[list-item]
    if strict and not all(np.isfinite(s).all() for s in decoded_shards(total)):  # type: ignore[arg-type]
        if given is None:
            total.deallocate()  # type: ignore[union-attr]
        raise MeshnnError(_message(p))

    def scaled(values: list[np.ndarray]) -> list[np.ndarray]:
        k = values[0].shape[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            coef = np.minimum(max_norm / (values[0].astype(np.float64).reshape(k) + 1e-6), 1.0)
        return [v.astype(np.float64) * coef.reshape((k, *([1] * (v.ndim - 1)))) for v in values[1:]]

    run_elementwise(OP, mesh, [total, *grads], grads, scaled, {"max_norm": max_norm, "stage": "scale"})  # type: ignore[list-item]
    return total  # type: ignore[return-value]
