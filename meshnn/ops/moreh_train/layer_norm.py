"""moreh's layer norm: ``ttnn.operations.moreh.layer_norm`` and ``layer_norm_backward``, over the
last ``normalized_dims`` dims.

``layer_norm(input, normalized_dims, eps=1e-5, gamma=None, beta=None, *, output, mean, rstd,
memory_config, compute_kernel_config)`` returns ``[output, mean, rstd]``: ``output =
(x - mean) * rstd * gamma + beta`` with each row's mean and ``rstd = 1 / sqrt(var + eps)`` (the
biased variance).  ``output`` is written in place when given, else new (input's shape and dtype,
TILE, ``memory_config``); ``mean`` / ``rstd`` are written only when given (None otherwise), each
holding one value per row (``input``'s leading dims).

``layer_norm_backward(output_grad, input, mean, rstd, normalized_dims, *, gamma, input_grad,
gamma_grad, beta_grad, memory_config, compute_kernel_config)`` returns ``[input_grad, gamma_grad,
beta_grad]``, each written only when given (None otherwise), from the forward's ``mean`` and
``rstd``: ``input_grad = rstd * (g - mean(g) - xhat * mean(g * xhat))`` with ``g = output_grad *
gamma`` and ``xhat = (x - mean) * rstd``; ``gamma_grad = sum(output_grad * xhat)`` and
``beta_grad = sum(output_grad)`` over the rows.

ttnn's rules: every tensor BFLOAT16 and TILE; ``0 < normalized_dims <= rank``; gamma, beta and
their gradients hold the normalized dims' values, mean and rstd one value per row.  Computed in
float64 and rounded once into each output's dtype.

May import: every layer below the ops, the ops' outputs, registry and this package's arguments and
norm_math.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.moreh_train.arguments import (
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
from meshnn.ops.moreh_train.norm_math import normalized, row_input_grad, row_stats
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _dims(op: str, x: Tensor, normalized_dims: object) -> tuple[int, int]:
    """``(rows, values per row)`` of ``x`` normalized over its last ``normalized_dims`` dims."""
    nd = uint(op, "normalized_dims", normalized_dims)
    if nd == 0:
        raise MeshnnValueError(f"ttnn.{label(op)}: normalized_dims should > 0. Got {nd}")
    if nd > len(x.shape):
        raise MeshnnValueError(f"ttnn.{label(op)}: normalized_dims should <= input rank ({len(x.shape)}). Got: {nd}")
    shape = list(x.shape)
    return int(np.prod(shape[: len(shape) - nd])), int(np.prod(shape[len(shape) - nd :]))


def _sized(op: str, named: dict[str, Tensor | None], size: int, what: str) -> None:
    for name, t in named.items():
        if t is not None and int(np.prod(t.shape)) != size:
            raise MeshnnValueError(f"ttnn.{label(op)}: {name} {list(t.shape)} must hold {size} values ({what})")


def _golden(torch, input, normalized_dims, eps=1e-5, gamma=None, beta=None, **_):
    shape = tuple(input.shape[len(input.shape) - normalized_dims :])
    x = input.double()
    g = None if gamma is None else gamma.double().reshape(shape)
    b = None if beta is None else beta.double().reshape(shape)
    dims = list(range(-normalized_dims, 0))
    mean = x.mean(dim=dims)
    rstd = (x.var(dim=dims, unbiased=False) + eps).rsqrt()
    return [torch.nn.functional.layer_norm(x, shape, g, b, eps), mean, rstd]


@register("moreh.layer_norm", kind=OpKind.NORMALIZATION, family=OpFamily.NORM,
          device_operation="MorehLayerNormOperation", golden=torch_golden(_golden))  # fmt: skip
@ttnn_keywords("operations.moreh.layer_norm", records=("compute_kernel_config",))
def moreh_layer_norm(
    input: Tensor,
    normalized_dims: int,
    eps: float = 1e-5,
    gamma: Tensor | None = None,
    beta: Tensor | None = None,
    *,
    output: Tensor | None = None,
    mean: Tensor | None = None,
    rstd: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """The layer norm and (when given tensors for them) its mean and rstd (see the module's text)."""
    op = "moreh.layer_norm"
    x = moreh_tensor(op, "input", input)
    rows, size = _dims(op, x, normalized_dims)
    eps = number(op, "eps", eps)
    named = {n: optional_tensor(op, n, t) for n, t in (("gamma", gamma), ("beta", beta), ("output", output),
                                                        ("mean", mean), ("rstd", rstd))}  # fmt: skip
    _sized(op, {"gamma": named["gamma"], "beta": named["beta"]}, size, "the normalized dims'")
    _sized(op, {"mean": named["mean"], "rstd": named["rstd"]}, rows, "one per row")
    if named["output"] is not None and tuple(named["output"].shape) != tuple(x.shape):
        raise MeshnnValueError(f"ttnn.{label(op)}: output is {list(named['output'].shape)}; input is {list(x.shape)}")
    kernel_config(op, compute_kernel_config)
    mesh = one_mesh(op, {"input": x, **named})
    spec = out_spec_like(x, memory_config=memory_config, op=label(op))
    out, m, r = outputs_for(mesh, x, [spec, None, None], [named["output"], named["mean"], named["rstd"]])
    g, b = named["gamma"], named["beta"]
    inputs = [t for t in (x, g, b) if t is not None]

    has_g, has_b, has_m, has_r = (t is not None for t in (g, b, m, r))  # (flags: the compute holds no tensor)

    def compute(values: list[np.ndarray]) -> list[np.ndarray]:
        k = values[0].shape[0]
        xs = values[0].astype(np.float64).reshape(k, rows, size)
        mu, rs = row_stats(xs, eps)
        y = normalized(xs, mu, rs)
        rest = iter(values[1:])
        if has_g:
            y = y * next(rest).astype(np.float64).reshape(k, 1, size)
        if has_b:
            y = y + next(rest).astype(np.float64).reshape(k, 1, size)
        return [y] + ([mu] if has_m else []) + ([rs] if has_r else [])

    targets = [t for t in (out, m, r) if t is not None]
    attrs = {"normalized_dims": normalized_dims, "eps": eps, "memory_config": spec.memory_config}
    run_elementwise(op, mesh, inputs, targets, compute, attrs)  # type: ignore[arg-type]
    return [out, m, r]


def _golden_backward(torch, output_grad, input, mean, rstd, normalized_dims, *, gamma=None, **_):
    shape = tuple(input.shape[len(input.shape) - normalized_dims :])
    x = input.double().detach().requires_grad_(True)
    g = None if gamma is None else gamma.double().reshape(shape).requires_grad_(True)
    b = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.layer_norm(x, shape, g, b).backward(output_grad.double())
    return [x.grad, None if g is None else g.grad, b.grad]


@register(
    "moreh.layer_norm_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.NORM,
    device_operation="MorehLayerNormBackwardInputGradOperation",
    golden=torch_golden(_golden_backward),
)
@ttnn_keywords("operations.moreh.layer_norm_backward", records=("compute_kernel_config",))
def moreh_layer_norm_backward(
    output_grad: Tensor,
    input: Tensor,
    mean: Tensor,
    rstd: Tensor,
    normalized_dims: int,
    *,
    gamma: Tensor | None = None,
    input_grad: Tensor | None = None,
    gamma_grad: Tensor | None = None,
    beta_grad: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """The gradients given tensors for, written in place (see the module's text)."""
    op = "moreh.layer_norm_backward"
    dy, x = moreh_tensor(op, "output_grad", output_grad), moreh_tensor(op, "input", input)
    mu, rs = moreh_tensor(op, "mean", mean), moreh_tensor(op, "rstd", rstd)
    rows, size = _dims(op, x, normalized_dims)
    if tuple(dy.shape) != tuple(x.shape):
        raise MeshnnValueError(
            f"ttnn.{label(op)}: output_grad {list(dy.shape)} must have input's shape {list(x.shape)}"
        )
    given = (("gamma", gamma), ("input_grad", input_grad), ("gamma_grad", gamma_grad), ("beta_grad", beta_grad))
    named = {n: optional_tensor(op, n, t) for n, t in given}
    _sized(op, {"mean": mu, "rstd": rs}, rows, "one per row")
    _sized(op, {"input_grad": named["input_grad"]}, rows * size, "input's")
    _sized(op, {n: named[n] for n in ("gamma", "gamma_grad", "beta_grad")}, size, "the normalized dims'")
    kernel_config(op, compute_kernel_config)
    mesh = one_mesh(op, {"output_grad": dy, "input": x, "mean": mu, "rstd": rs, **named})
    targets = [named[n] for n in ("input_grad", "gamma_grad", "beta_grad")]
    if all(t is None for t in targets):
        return [None, None, None]
    g = named["gamma"]

    wanted, has_g = [t is not None for t in targets], g is not None  # (flags: the compute holds no tensor)

    def compute(values: list[np.ndarray]) -> list[np.ndarray]:
        k = values[0].shape[0]
        dys, xs = (v.astype(np.float64).reshape(k, rows, size) for v in values[:2])
        m, r = (v.astype(np.float64).reshape(k, rows, 1) for v in values[2:4])
        out = []
        if wanted[0]:
            dyg = dys if not has_g else dys * values[4].astype(np.float64).reshape(k, 1, size)
            out.append(row_input_grad(xs, dyg, m, r))
        if wanted[1]:
            out.append((dys * normalized(xs, m, r)).sum(axis=1))
        if wanted[2]:
            out.append(dys.sum(axis=1))
        return out

    inputs = [dy, x, mu, rs] + ([g] if g is not None else [])
    attrs = {"normalized_dims": normalized_dims, "memory_config": memory_config}
    run_elementwise(op, mesh, inputs, [t for t in targets if t is not None], compute, attrs)  # type: ignore[arg-type]
    return targets
