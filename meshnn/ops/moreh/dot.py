"""``ttnn.operations.moreh.dot`` and ``dot_backward``: the inner product of two 1-D tensors (shape
``[1, 1, 1, W]``: every dim but the last 1), and its gradients.

``dot`` sums the products 32 at a time into the destination register (as moreh's reductions,
:mod:`meshnn.ops.moreh.common`); its output is ``[1, 1, 1, 1]`` of the input's dtype (``dtype`` is
recorded: moreh's spec takes the input's).  ``dot_backward`` writes ``output_grad * other`` into
``input_grad`` and ``output_grad * input`` into ``other_grad``, whichever are given (in place; at
least one), and returns them.

May import: every layer below the ops and the ops' checks, registry and moreh.common modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.ops.checks import same_mesh
from meshnn.ops.moreh.common import BF16_BFP8, fp32_dest, into_tensor, moreh_tensor, output_spec, reduce_axis, run
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _vector(op: str, name: str, tensor: object) -> Tensor:
    checked = moreh_tensor(op, name, tensor, BF16_BFP8)
    if len(checked.shape) != 4 or any(d != 1 for d in tuple(checked.shape)[:-1]):
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: Invalid input tensor dimensions. ({name} must be [1, 1, 1, W], got "
            f"{list(checked.shape)})"
        )
    return checked


def _pair(op: str, input: object, other: object) -> tuple[Tensor, Tensor]:
    a, b = _vector(op, "input", input), _vector(op, "other", other)
    same_mesh(f"operations.moreh.{op}", {"input": a, "other": b})
    if a.shape[-1] != b.shape[-1]:
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: Shape without padding must be the same. ({list(a.shape)} and {list(b.shape)})"
        )
    return a, b


@register(
    name="moreh.dot",
    kind=OpKind.REDUCTION,
    family=OpFamily.REDUCTION,
    device_operation="MorehDotOperation",
    golden=torch_golden(lambda torch, a, b, **_: torch.dot(a.reshape(-1), b.reshape(-1)).reshape(1, 1, 1, 1)),
)
def dot(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    output: Tensor | None = None,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The inner product of two ``[1, 1, 1, W]`` tensors, as a ``[1, 1, 1, 1]`` tensor."""
    op = "dot"
    a, b = _pair(op, input_tensor_a, input_tensor_b)
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.operations.moreh.dot: dtype must be a ttnn DataType, got {dtype!r}")
    fp32 = fp32_dest(op, compute_kernel_config)
    shape = (1, 1, 1, 1)
    into = into_tensor(op, "output", output, shape, None)
    spec = None if into is not None else output_spec(op, a, shape, memory_config)

    def compute(xs: list[np.ndarray]) -> np.ndarray:
        return reduce_axis(xs[0] * xs[1], 4, True, fp32)

    attrs = {"dtype": dtype or a.dtype, "compute_kernel_config": compute_kernel_config}
    return run(op, [a, b], spec, into, compute, attrs)


def _scaled(xs: list[np.ndarray]) -> np.ndarray:
    """``output_grad`` (one value per device) times a ``[1, 1, 1, W]`` tensor."""
    return xs[0].reshape(xs[0].shape[0], 1, 1, 1, 1) * xs[1]


def _golden_backward(torch, output_grad, input, other, **_):
    return [output_grad.reshape(()) * other, output_grad.reshape(()) * input]


@register(
    name="moreh.dot_backward",
    kind=OpKind.BACKWARD,
    family=OpFamily.BINARY,
    device_operation="MorehDotBackwardOperation",
    golden=torch_golden(_golden_backward),
)
def dot_backward(
    output_grad: Tensor,
    input: Tensor,
    other: Tensor,
    *,
    input_grad: Tensor | None = None,
    other_grad: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
) -> list[Tensor | None]:
    """``[d input, d other]`` of ``dot(input, other)``, written into the gradients given."""
    op = "dot_backward"
    og = moreh_tensor(op, "output_grad", output_grad, BF16_BFP8)
    if og.logical_volume() != 1:
        raise MeshnnValueError(f"ttnn.operations.moreh.{op}: Invalid value type (output_grad must hold one value)")
    a, b = _pair(op, input, other)
    if input_grad is None and other_grad is None:
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{op}: Invalid number of output tensors (give input_grad or other_grad)"
        )
    shape = tuple(a.shape)
    out: list[Tensor | None] = [None, None]
    for i, (name, grad, factor) in enumerate((("input_grad", input_grad, b), ("other_grad", other_grad, a))):
        if grad is None:
            continue
        into = into_tensor(op, name, grad, shape, BF16_BFP8)
        out[i] = run(op, [og, factor], None, into, _scaled, {"gradient": name, "memory_config": memory_config})
    return out
