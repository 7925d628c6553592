"""moreh's reductions and their gradients, shared by ``sum`` and ``mean``
(:mod:`meshnn.ops.moreh.sum`, :mod:`meshnn.ops.moreh.mean`).

A reduction over several dims is one device op per dim, highest dim first (each result rounded
into the dtype before the next reads it), shaped by moreh's rule
(:func:`~meshnn.ops.moreh.common.reduced_shape`).  A gradient spreads ``output_grad`` (any shape
holding the reduced volume: moreh's, or torch's with the reduced H / W dropped too) over the
input's shape, divided by the reduced volume for a mean.

May import: every layer below the ops and the ops' registry and moreh.common modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
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
from meshnn.tensor.tensor import Tensor


def reduction(
    op: str,
    input: object,
    dim: object,
    keepdim: object,
    output: object,
    memory_config: object,
    compute_kernel_config: object,
    *,
    dtypes: Sequence[DataType],
    mean: bool,
) -> Tensor:
    """The sum (``mean``: the mean) of ``input`` over ``dim`` (see the module docstring)."""
    x = moreh_tensor(op, "input", input, dtypes)
    keep = flag(op, "keepdim", keepdim)
    fp32 = fp32_dest(op, compute_kernel_config)
    in_shape = tuple(x.shape)
    dims = dims_of(op, dim, len(in_shape))
    shape = reduced_shape(in_shape, dims, keep)
    into = into_tensor(op, "output", output, shape, dtypes)
    spec = None if into is not None else output_spec(op, x, shape, memory_config)
    integer = not x.dtype.is_float
    rank = len(in_shape)

    def compute(xs: list[np.ndarray]) -> np.ndarray:
        values = xs[0]
        for d in reversed(dims):
            if integer:
                values = values.sum(axis=d + 1, keepdims=True, dtype=np.int64)
                continue
            values = reduce_axis(values, d + 1, d >= rank - 2, fp32)
            if mean:
                values = values / in_shape[d]
            values = bf16(values) if d != dims[0] else values  # an intermediate tensor: bfloat16
        return values

    attrs = {"dim": tuple(dims), "keepdim": keep, "compute_kernel_config": compute_kernel_config}
    return run(op, [x], spec, into, compute, attrs)


def spread(
    op: str,
    output_grad: object,
    in_shape: Sequence[int] | None,
    like: Tensor | None,
    dim_keepdim: tuple[object, bool],
    input_grad: object,
    memory_config: object,
    divide: bool,
) -> Tensor:
    """``output_grad`` spread over ``in_shape`` (divided by the reduced volume when ``divide``);
    ``dim_keepdim``: the forward's ``dim`` and ``keepdim``."""
    dim, keep = dim_keepdim
    og = moreh_tensor(op, "output_grad", output_grad)
    grad_tensor = into_tensor(op, "input_grad", input_grad, tuple(input_grad.shape)) if input_grad is not None else None
    shape = tuple(in_shape) if in_shape is not None else tuple(grad_tensor.shape) if grad_tensor is not None else None
    if shape is None:
        raise MeshnnValueError(f"ttnn.operations.moreh.{op}: the input's shape is needed (input or input_grad)")
    if grad_tensor is not None and tuple(grad_tensor.shape) != shape:
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: input_grad has shape {list(grad_tensor.shape)}; the input's is {list(shape)}"
        )
    dims = dims_of(op, dim, len(shape))
    kept = kept_shape(shape, dims)
    if og.logical_volume() != int(np.prod(kept, dtype=np.int64)):
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: output_grad of shape {list(og.shape)} does not hold the reduction of "
            f"{list(shape)} over dims {dims}"
        )
    volume = int(np.prod([shape[d] for d in dims], dtype=np.int64))
    spec = None if grad_tensor is not None else output_spec(op, like or og, shape, memory_config)

    def compute(xs: list[np.ndarray]) -> np.ndarray:
        values = xs[0].reshape((xs[0].shape[0], *kept))
        if divide:
            values = values / volume
        return np.broadcast_to(values, (values.shape[0], *shape))

    return run(op, [og], spec, grad_tensor, compute, {"dim": tuple(dims), "keepdim": keep})
