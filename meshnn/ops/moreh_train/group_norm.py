"""moreh's group norm: ``ttnn.operations.moreh.group_norm`` and ``group_norm_backward`` over an
``(N, C, H, W)`` input in ``num_groups`` groups of ``C / num_groups`` channels.

``group_norm(input, num_groups, eps=1e-5, gamma=None, beta=None, *, are_required_outputs=(True,
False, False), output, mean, rstd, memory_config, mean_memory_config, rstd_memory_config,
compute_kernel_config)`` returns ``[output, mean, rstd]``: ``output = (x - mean) * rstd * gamma[c]
+ beta[c]`` with each ``(n, group)``'s mean and ``rstd = 1 / sqrt(var + eps)`` (biased variance).
The output is always made (or written in place); mean and rstd when given or required by
``are_required_outputs``, new ones ``(1, 1, N, num_groups)``.

``group_norm_backward(output_grad, input, mean, rstd, num_groups, *, are_required_outputs=(True,
False, False), gamma, input_grad, gamma_grad, beta_grad, input_grad_memory_config,
gamma_grad_memory_config, beta_grad_memory_config, compute_kernel_config)`` returns
``[input_grad, gamma_grad, beta_grad]``, each computed when required (written in place when
given, else new: the input's shape, ``(1, 1, 1, C)`` for gamma's and beta's), None otherwise.

ttnn's rules: every tensor BFLOAT16 and TILE; ``C`` (and gamma's / beta's last dim) divisible by
``num_groups``; mean's and rstd's last dim ``num_groups``.  Computed in float64 and rounded once
into each output's dtype.

May import: every layer below the ops, the ops' outputs, registry and this package's arguments and
norm_math.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.moreh_train.arguments import (
    kernel_config,
    label,
    memory_config_arg,
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
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


def _required(op: str, value: object) -> tuple[bool, bool, bool]:
    if not isinstance(value, Sequence) or len(value) != 3 or not all(isinstance(v, bool) for v in value):
        raise MeshnnTypeError(f"ttnn.{label(op)}: are_required_outputs must be three bools, got {value!r}")
    return tuple(value)  # type: ignore[return-value]


def _groups(op: str, x: Tensor, num_groups: object, named: dict[str, Tensor | None]) -> int:
    """``num_groups`` checked against the input's channels and the given tensors, as ttnn checks them."""
    groups = uint(op, "num_groups", num_groups)
    if len(x.shape) != 4:
        raise MeshnnValueError(f"ttnn.{label(op)}: input must be (N, C, H, W), got {list(x.shape)}")
    if groups == 0 or x.shape[1] % groups:
        raise MeshnnValueError(f"ttnn.{label(op)}: input_shape[1] must be divisible by num_groups ({groups})")
    for name, t in named.items():
        if t is None:
            continue
        if name in ("mean", "rstd") and t.shape[-1] != groups:
            raise MeshnnValueError(f"ttnn.{label(op)}: {name}_shape[-1] must match num_groups ({groups})")
        if name not in ("mean", "rstd") and t.shape[-1] != x.shape[1]:
            raise MeshnnValueError(f"ttnn.{label(op)}: {name}_shape[-1] must be C = {x.shape[1]}, got {list(t.shape)}")
    return groups


def _grouped(v: np.ndarray, groups: int) -> np.ndarray:
    """``(k, N, C, H, W)`` values as ``(k, N * groups, C / groups * H * W)`` rows."""
    k, n = v.shape[0], v.shape[1]
    return v.astype(np.float64).reshape(k, n * groups, -1)


def _spec(like: Tensor, shape: list[int], config: object, op: str) -> TensorSpec:
    return out_spec_like(like, shape=shape, memory_config=config, op=label(op))


def _golden(torch, input, num_groups, eps=1e-5, gamma=None, beta=None, **_):
    x = input.double()
    c = x.shape[1]
    g = None if gamma is None else gamma.double().reshape(c)
    b = None if beta is None else beta.double().reshape(c)
    rows = x.reshape(x.shape[0], num_groups, -1)
    mean = rows.mean(-1)
    rstd = (rows.var(-1, unbiased=False) + eps).rsqrt()
    return [torch.nn.functional.group_norm(x, num_groups, g, b, eps), mean, rstd]


@register("moreh.group_norm", kind=OpKind.NORMALIZATION, family=OpFamily.NORM,
          device_operation="MorehGroupNormOperation", golden=torch_golden(_golden))  # fmt: skip
@ttnn_keywords("operations.moreh.group_norm", records=("compute_kernel_config",))
def moreh_group_norm(
    input: Tensor,
    num_groups: int,
    eps: float = 1e-5,
    gamma: Tensor | None = None,
    beta: Tensor | None = None,
    *,
    are_required_outputs: Sequence[bool] = (True, False, False),
    output: Tensor | None = None,
    mean: Tensor | None = None,
    rstd: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    mean_memory_config: MemoryConfig | None = None,
    rstd_memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """The group norm and, when required or given, its mean and rstd (see the module's text)."""
    op = "moreh.group_norm"
    x = moreh_tensor(op, "input", input)
    eps = number(op, "eps", eps)
    required = _required(op, are_required_outputs)
    given = (("gamma", gamma), ("beta", beta), ("output", output), ("mean", mean), ("rstd", rstd))
    named = {n: optional_tensor(op, n, t) for n, t in given}
    groups = _groups(op, x, num_groups, {n: named[n] for n in ("gamma", "beta", "mean", "rstd")})
    if named["output"] is not None and tuple(named["output"].shape) != tuple(x.shape):
        raise MeshnnValueError(f"ttnn.{label(op)}: output is {list(named['output'].shape)}; input is {list(x.shape)}")
    memory_config_arg(op, "mean_memory_config", mean_memory_config)
    memory_config_arg(op, "rstd_memory_config", rstd_memory_config)
    kernel_config(op, compute_kernel_config)
    mesh = one_mesh(op, {"input": x, **named})
    stats = [1, 1, x.shape[0], groups]
    specs = [_spec(x, list(x.shape), memory_config, op)]
    specs += [
        _spec(x, stats, c, op) if r else None
        for r, c in zip(required[1:], (mean_memory_config, rstd_memory_config), strict=True)
    ]
    out, m, r = outputs_for(mesh, x, specs, [named["output"], named["mean"], named["rstd"]])
    g, b = named["gamma"], named["beta"]

    has_g, has_b, has_m, has_r = (t is not None for t in (g, b, m, r))  # (flags: the compute holds no tensor)

    def compute(values: list[np.ndarray]) -> list[np.ndarray]:
        k, shape = values[0].shape[0], values[0].shape[1:]
        rows = _grouped(values[0], groups)
        mu, rs = row_stats(rows, eps)
        y = normalized(rows, mu, rs).reshape(k, *shape)
        rest = iter(values[1:])
        if has_g:
            y = y * next(rest).astype(np.float64).reshape(k, 1, -1, 1, 1)
        if has_b:
            y = y + next(rest).astype(np.float64).reshape(k, 1, -1, 1, 1)
        return [y] + ([mu] if has_m else []) + ([rs] if has_r else [])

    inputs = [t for t in (x, g, b) if t is not None]
    targets = [t for t in (out, m, r) if t is not None]
    attrs = {"num_groups": groups, "eps": eps, "are_required_outputs": required, "memory_config": memory_config}
    run_elementwise(op, mesh, inputs, targets, compute, attrs)  # type: ignore[arg-type]
    return [out, m, r]


def _golden_backward(torch, output_grad, input, mean, rstd, num_groups, *, gamma=None, **_):
    x = input.double().detach().requires_grad_(True)
    c = x.shape[1]
    g = torch.ones(c, dtype=torch.float64) if gamma is None else gamma.double().reshape(c)
    g = g.detach().requires_grad_(True)
    b = torch.zeros(c, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.group_norm(x, num_groups, g, b).backward(output_grad.double())
    return [x.grad, g.grad, b.grad]


def _backward_compute(groups: int, has_gamma: bool, wanted: tuple[bool, bool, bool]):
    """The backward's kernel arithmetic over ``[dy, x, mean, rstd(, gamma)]`` values."""

    def compute(values: list[np.ndarray]) -> list[np.ndarray]:
        k, shape = values[0].shape[0], values[0].shape[1:]
        dy, x = values[0].astype(np.float64), _grouped(values[1], groups)
        m, r = (v.astype(np.float64).reshape(k, -1, 1) for v in values[2:4])
        out = []
        if wanted[0]:
            dyg = dy * values[4].astype(np.float64).reshape(k, 1, -1, 1, 1) if has_gamma else dy
            out.append(row_input_grad(x, _grouped(dyg, groups), m, r))
        if wanted[1]:
            xhat = normalized(x, m, r).reshape(k, *shape)
            out.append((dy * xhat).sum(axis=(1, 3, 4)))
        if wanted[2]:
            out.append(dy.sum(axis=(1, 3, 4)))
        return out

    return compute


@register(
    "moreh.group_norm_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.NORM,
    device_operation="MorehGroupNormBackwardInputGradOperation",
    golden=torch_golden(_golden_backward),
)
@ttnn_keywords("operations.moreh.group_norm_backward", records=("compute_kernel_config",))
def moreh_group_norm_backward(
    output_grad: Tensor,
    input: Tensor,
    mean: Tensor,
    rstd: Tensor,
    num_groups: int,
    *,
    are_required_outputs: Sequence[bool] = (True, False, False),
    gamma: Tensor | None = None,
    input_grad: Tensor | None = None,
    gamma_grad: Tensor | None = None,
    beta_grad: Tensor | None = None,
    input_grad_memory_config: MemoryConfig | None = None,
    gamma_grad_memory_config: MemoryConfig | None = None,
    beta_grad_memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """The required gradients (see the module's text)."""
    op = "moreh.group_norm_backward"
    dy, x = moreh_tensor(op, "output_grad", output_grad), moreh_tensor(op, "input", input)
    mu, rs = moreh_tensor(op, "mean", mean), moreh_tensor(op, "rstd", rstd)
    wanted = _required(op, are_required_outputs)
    given = (("gamma", gamma), ("input_grad", input_grad), ("gamma_grad", gamma_grad), ("beta_grad", beta_grad))
    named = {n: optional_tensor(op, n, t) for n, t in given}
    groups = _groups(
        op, x, num_groups, {"mean": mu, "rstd": rs, **{n: named[n] for n in ("gamma", "gamma_grad", "beta_grad")}}
    )
    for name, t in (("output_grad", dy), ("input_grad", named["input_grad"])):
        if t is not None and tuple(t.shape) != tuple(x.shape):
            raise MeshnnValueError(f"ttnn.{label(op)}: {name} {list(t.shape)} must have input's shape {list(x.shape)}")
    kernel_config(op, compute_kernel_config)
    mesh = one_mesh(op, {"output_grad": dy, "input": x, "mean": mu, "rstd": rs, **named})
    if not any(wanted):
        return [None, None, None]
    channels = [1, 1, 1, x.shape[1]]
    configs = (input_grad_memory_config, gamma_grad_memory_config, beta_grad_memory_config)
    shapes = (list(x.shape), channels, channels)
    specs = [_spec(x, s, c, op) if w else None for w, s, c in zip(wanted, shapes, configs, strict=True)]
    outs = [named[n] if w else None for w, n in zip(wanted, ("input_grad", "gamma_grad", "beta_grad"), strict=True)]
    results = outputs_for(mesh, x, specs, outs)
    g = named["gamma"]
    inputs = [dy, x, mu, rs] + ([g] if g is not None else [])
    attrs = {"num_groups": groups, "are_required_outputs": wanted}
    compute = _backward_compute(groups, g is not None, wanted)
    run_elementwise(op, mesh, inputs, [t for t in results if t is not None], compute, attrs)  # type: ignore[arg-type]
    return results
