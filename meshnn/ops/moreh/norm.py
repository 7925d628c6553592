"""``ttnn.operations.moreh.norm(input, p, *, dim, keepdim, output, memory_config,
compute_kernel_config)`` and ``norm_backward(input, output, output_grad, p, *, dim, keepdim,
input_grad, memory_config, compute_kernel_config)``.

The p-norm over ``dim`` (None or ``[]``: every dim) as moreh composes it: ``|x|^p`` (a bfloat16
tensor), summed over the dims (:mod:`meshnn.ops.moreh.reduce`'s rule and accumulation, each
intermediate bfloat16), then ``^(1/p)``; ``p = 0`` counts the nonzero values, ``p = inf`` /
``-inf`` take the largest / smallest ``|x|``.  The output is shaped by moreh's reduction rule.
The gradient is ``output_grad * sign(x) * |x|^(p-1) / output^(p-1)`` (``output`` and
``output_grad`` may have the reduced shape with or without moreh's kept H / W).

May import: every layer below the ops and the ops' registry and moreh modules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.moreh.common import (
    bf16,
    dims_of,
    flag,
    fp32_dest,
    into_tensor,
    kept_shape,
    moreh_tensor,
    output_spec,
    reduce_axis,
    reduced_shape,
    run,
)
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _p(op: str, p: object) -> float:
    if isinstance(p, bool) or not isinstance(p, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.operations.moreh.{op}: p must be a number, got {p!r}")
    return float(p)


def norm_values(x: np.ndarray, p: float, dims: Sequence[int], rank: int, fp32: bool) -> np.ndarray:
    """The p-norm of ``(k, *shape)`` values over ``dims`` (kept as 1), as moreh composes it."""
    axes = tuple(d + 1 for d in dims)
    magnitude = np.abs(x)
    if math.isinf(p):
        return magnitude.max(axis=axes, keepdims=True) if p > 0 else magnitude.min(axis=axes, keepdims=True)
    powered = (magnitude != 0).astype(np.float64) if p == 0 else bf16(np.power(magnitude, p))
    for d in sorted(dims, reverse=True):
        powered = bf16(reduce_axis(powered, d + 1, d >= rank - 2, fp32))
    return powered if p == 0 else np.power(powered, 1.0 / p)


def _golden(torch, input, p, *, dim=None, keepdim=False, **_):
    dims = None if dim is None or dim == [] else dim
    return torch.linalg.vector_norm(input, ord=p, dim=dims, keepdim=keepdim)


@register(
    name="moreh.norm",
    kind=OpKind.REDUCTION,
    family=OpFamily.REDUCTION,
    device_operation="MorehNormOperation",
    golden=torch_golden(_golden),
)
def norm(
    input: Tensor,
    p: float,
    *,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    output: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The p-norm of ``input`` over ``dim``."""
    op = "norm"
    x = moreh_tensor(op, "input", input)
    order = _p(op, p)
    keep = flag(op, "keepdim", keepdim)
    fp32 = fp32_dest(op, compute_kernel_config)
    shape_in = tuple(x.shape)
    dims = dims_of(op, dim, len(shape_in))
    shape = reduced_shape(shape_in, dims, keep)
    into = into_tensor(op, "output", output, shape)
    spec = None if into is not None else output_spec(op, x, shape, memory_config)

    def compute(xs: list[np.ndarray]) -> np.ndarray:
        return norm_values(xs[0], order, dims, len(shape_in), fp32)

    attrs = {"p": order, "dim": tuple(dims), "keepdim": keep, "compute_kernel_config": compute_kernel_config}
    return run(op, [x], spec, into, compute, attrs)


def _reduced(op: str, name: str, tensor: Tensor, kept: tuple[int, ...]) -> None:
    if tensor.logical_volume() != int(np.prod(kept, dtype=np.int64)):
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: {name} of shape {list(tensor.shape)} does not hold the norm's {list(kept)}"
        )


@register(
    name="moreh.norm_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.BINARY,
    device_operation="MorehNormBackwardOperation",
    golden=None,
)
def norm_backward(
    input: Tensor,
    output: Tensor,
    output_grad: Tensor,
    p: float,
    *,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    input_grad: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The gradient of :func:`norm` with respect to ``input``."""
    op = "norm_backward"
    x = moreh_tensor(op, "input", input)
    y = moreh_tensor(op, "output", output)
    og = moreh_tensor(op, "output_grad", output_grad)
    order = _p(op, p)
    keep = flag(op, "keepdim", keepdim)
    fp32_dest(op, compute_kernel_config)
    shape = tuple(x.shape)
    dims = dims_of(op, dim, len(shape))
    kept = kept_shape(shape, dims)
    _reduced(op, "output", y, kept)
    _reduced(op, "output_grad", og, kept)
    into = into_tensor(op, "input_grad", input_grad, shape)
    spec = None if into is not None else output_spec(op, x, shape, memory_config)

    def compute(xs: list[np.ndarray]) -> np.ndarray:
        k = xs[0].shape[0]
        value, norm_, grad = xs[0], xs[1].reshape((k, *kept)), xs[2].reshape((k, *kept))
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.power(np.abs(value), order - 1.0) / np.power(norm_, order - 1.0)
        return grad * np.sign(value) * scale

    attrs = {"p": order, "dim": tuple(dims), "keepdim": keep, "compute_kernel_config": compute_kernel_config}
    return run(op, [x, y, og], spec, into, compute, attrs, ("input", "output", "output_grad"))
