"""The gradients of moreh's products: ``ttnn.operations.moreh.matmul_backward``,
``bmm_backward`` and ``linear_backward``.  Each gradient asked for (``are_required_outputs``) is
one device op, written into the gradient tensor given (in place) or a new one, and ``None`` is
returned in the place of one not asked for:

- ``d input = output_grad @ other^T`` and ``d other = input^T @ output_grad``, each summed over the
  batch dims that were broadcast (a moreh_sum, one batch tile at a time);
- ``linear``: ``d input = output_grad @ weight``, ``d weight = output_grad^T @ input`` summed over
  every batch, ``d bias`` the sum of ``output_grad`` over every row (and every column for a
  one-value bias), 32 rows a tile.

Sums and products accumulate as the kernels' destination register does
(:mod:`meshnn.ops.moreh.common`).

May import: every layer below the ops and the ops' checks, config, launch, outputs, values,
registry and moreh modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.checks import same_mesh
from meshnn.ops.moreh.common import (
    BF16_BFP8,
    fp32_dest,
    into_tensor,
    moreh_tensor,
    output_spec,
    reduce_axis,
    run,
)
from meshnn.ops.moreh.matmul import aligned, product, product_shape
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def required(op: str, value: object, count: int) -> tuple[bool, ...]:
    """``are_required_outputs`` checked: ``count`` bools."""
    items = tuple(value) if isinstance(value, Sequence) and not isinstance(value, str) else None
    if items is None or len(items) != count or not all(isinstance(v, bool | np.bool_) for v in items):
        raise MeshnnTypeError(f"ttnn.operations.moreh.{op}: are_required_outputs must be {count} bools, got {value!r}")
    return tuple(bool(v) for v in items)


def reduced_to(values: np.ndarray, shape: Sequence[int], fp32: bool) -> np.ndarray:
    """``(k, *batch, r, c)`` values summed over the batch dims that ``shape`` has as 1 or lacks."""
    rank = values.ndim - 1
    target = (1,) * (rank - len(shape)) + tuple(shape)
    for axis in range(rank - 2):
        if target[axis] == 1 and values.shape[axis + 1] > 1:
            values = reduce_axis(values, axis + 1, False, fp32)
    return values.reshape((values.shape[0], *shape))


def grad_product(
    op: str,
    inputs: tuple[Tensor, Tensor],
    transposes: tuple[bool, bool],
    target: Tensor,
    into: object,
    memory_config: object,
    fp32: bool,
    name: str,
) -> Tensor:
    """One gradient: ``inputs[0] @ inputs[1]`` (transposed as asked) summed to ``target``'s shape."""
    shape = tuple(target.shape)
    grad = into_tensor(op, name, into, shape, BF16_BFP8)
    spec = None if grad is not None else output_spec(op, target, shape, memory_config)
    ta, tb = transposes
    full = product_shape(op, tuple(inputs[0].shape), tuple(inputs[1].shape), ta, tb)

    def compute(xs: list[np.ndarray]) -> np.ndarray:
        a, b = aligned(xs[0], len(full)), aligned(xs[1], len(full))
        a = np.swapaxes(a, -1, -2) if ta else a
        b = np.swapaxes(b, -1, -2) if tb else b
        return reduced_to(product(a, b, fp32), shape, fp32)

    attrs = {"transpose_input": ta, "transpose_other": tb, "gradient": name}
    return run(op, list(inputs), spec, grad, compute, attrs)


def _matmul_grads(op, names, output_grad, a_in, b_in, need, grads, memory_configs, config) -> list[Tensor | None]:
    og = moreh_tensor(op, "output_grad", output_grad, BF16_BFP8)
    a = moreh_tensor(op, names[0], a_in, BF16_BFP8)
    b = moreh_tensor(op, names[1], b_in, BF16_BFP8)
    same_mesh(f"operations.moreh.{op}", {"output_grad": og, names[0]: a, names[1]: b})
    fp32 = fp32_dest(op, config)
    expected = product_shape(op, tuple(a.shape), tuple(b.shape), False, False)
    if tuple(og.shape) != expected:
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: output_grad has shape {list(og.shape)}; the product's is {list(expected)}"
        )
    out: list[Tensor | None] = [None, None]
    if need[0]:
        out[0] = grad_product(op, (og, b), (False, True), a, grads[0], memory_configs[0], fp32, f"{names[0]}_grad")
    if need[1]:
        out[1] = grad_product(op, (a, og), (True, False), b, grads[1], memory_configs[1], fp32, f"{names[1]}_grad")
    return out


def _golden_product_grads(torch, output_grad, a, b, *, are_required_outputs=(True, True), **_):
    a = a.detach().clone().requires_grad_(are_required_outputs[0])
    b = b.detach().clone().requires_grad_(are_required_outputs[1])
    torch.matmul(a, b).backward(output_grad)
    return [a.grad, b.grad]


@register(
    name="moreh.matmul_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.MATMUL,
    device_operation="MorehMatmulOperation",
    golden=torch_golden(_golden_product_grads),
)
def matmul_backward(
    output_grad: Tensor,
    input_a: Tensor,
    input_b: Tensor,
    *,
    are_required_outputs: Sequence[bool] = (True, True),
    input_a_grad: Tensor | None = None,
    input_b_grad: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """``[d input_a, d input_b]`` of ``input_a @ input_b`` (None where not asked for)."""
    need = required("matmul_backward", are_required_outputs, 2)
    return _matmul_grads(
        "matmul_backward",
        ("input_a", "input_b"),
        output_grad,
        input_a,
        input_b,
        need,
        (input_a_grad, input_b_grad),
        (memory_config, memory_config),
        compute_kernel_config,
    )


@register(
    name="moreh.bmm_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.MATMUL,
    device_operation="MorehMatmulOperation",
    golden=torch_golden(_golden_product_grads),
)
def bmm_backward(
    output_grad: Tensor,
    input: Tensor,
    mat2: Tensor,
    *,
    are_required_outputs: Sequence[bool] = (True, True),
    input_grad: Tensor | None = None,
    mat2_grad: Tensor | None = None,
    input_grad_memory_config: MemoryConfig | None = None,
    mat2_grad_memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> list[Tensor | None]:
    """``[d input, d mat2]`` of ``bmm(input, mat2)`` (None where not asked for)."""
    need = required("bmm_backward", are_required_outputs, 2)
    for name, tensor in (("input", input), ("mat2", mat2)):
        if isinstance(tensor, Tensor) and len(tensor.shape) != 3:
            raise MeshnnValueError(
                f"ttnn.operations.moreh.bmm_backward: {name} must be rank 3, got {list(tensor.shape)}"
            )
    return _matmul_grads(
        "bmm_backward",
        ("input", "mat2"),
        output_grad,
        input,
        mat2,
        need,
        (input_grad, mat2_grad),
        (input_grad_memory_config, mat2_grad_memory_config),
        compute_kernel_config,
    )
