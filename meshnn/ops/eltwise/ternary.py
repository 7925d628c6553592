"""The ternary element-wise ops of ttnn: ``where`` (tensors or numbers for either value),
``ttnn.experimental.where``, ``addcmul``, ``addcdiv``, ``lerp`` (a tensor or a number for the
weight) and ``mac`` (``a * b + c``).  Operands broadcast as numpy broadcasts; the output takes the
first value tensor's dtype (``where``'s true or false value, else the predicate's; the other ops'
``input_tensor_a``), computed in float32 (integers as integers where every operand is one) and
rounded once into it.

ttnn's rule kept here: ``addcdiv`` of a non-float32 tensor gives +-inf where the divisor is 0
(the sign of ``value * input_tensor_b``), never NaN.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' registry,
checks and outputs modules and the element-wise kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import QUEUE_ID, SUB_CORE_GRIDS, ttnn_keywords
from meshnn.ops.checks import broadcast_shape, device_input, same_mesh
from meshnn.ops.eltwise.kernel import elementwise, memory_config_of
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

Operand = Tensor | float | int


def ternary(
    op: str,
    operands: dict[str, object],
    compute: Callable[..., np.ndarray],
    *,
    dtype_from: tuple[str, ...],
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: object = None,
    queue_id: int = 0,
) -> Tensor:
    """``compute(*operands)`` element-wise: tensors (checked, on one mesh) are broadcast together,
    numbers passed as they are (int where every tensor is an integer one, else float32).  The
    output dtype is ``dtype``, else that of the first tensor named in ``dtype_from``."""
    tensors = _tensors(op, operands)
    first_name, first = next(iter(tensors.items()))
    mesh = same_mesh(op, tensors)
    shape: tuple[int, ...] = tuple(first.shape)
    for name, tensor in tensors.items():
        shape = _broadcast(op, name, first_name, shape, tensor)
    if dtype is None:
        dtype = next((tensors[k].dtype for k in dtype_from if k in tensors), first.dtype)
    memory_config = memory_config_of(memory_config, output_tensor)  # type: ignore[assignment]
    out = out_spec_like(first, shape=shape, dtype=dtype, memory_config=memory_config, op=op)
    integer = all(t.dtype.is_integer for t in tensors.values())
    order = list(tensors)

    names = list(operands)  # (the kernel holds the numbers, never a tensor: a trace keeps it)
    numbers = {k: v for k, v in operands.items() if k not in tensors}

    def run(*arrays: np.ndarray) -> np.ndarray:
        got = dict(zip(order, arrays, strict=True))
        values = [got[k] if k in got else _number(numbers[k], integer) for k in names]
        if not integer:
            values = [v.astype(np.float32, copy=False) if isinstance(v, np.ndarray) else v for v in values]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return compute(*values)

    return elementwise(op, list(tensors.values()), out, run, queue_id=queue_id, output_tensor=output_tensor, mesh=mesh)


def _tensors(op: str, operands: dict[str, object]) -> dict[str, Tensor]:
    """The tensor operands, checked; the others checked to be numbers."""
    tensors = {}
    for name, value in operands.items():
        if isinstance(value, Tensor):
            tensors[name] = device_input(op, name, value)
        elif isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.Tensor or a number, got {value!r}")
    if not tensors:
        raise MeshnnTypeError(f"ttnn.{op}: at least one operand must be a ttnn.Tensor")
    return tensors


def _broadcast(op: str, name: str, first: str, shape: tuple[int, ...], tensor: Tensor) -> tuple[int, ...]:
    try:
        return broadcast_shape(op, shape, tuple(tensor.shape))
    except MeshnnValueError:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} {list(tensor.shape)} does not broadcast with {first} {list(shape)}"
        ) from None


def _number(value: object, integer: bool) -> np.float32 | np.int64:
    if integer and float(value).is_integer():  # type: ignore[arg-type]
        return np.int64(value)  # type: ignore[call-overload]
    return np.float32(value)  # type: ignore[arg-type]


def _select(predicate: np.ndarray, true_value: np.ndarray, false_value: np.ndarray) -> np.ndarray:
    return np.where(predicate != 0, true_value, false_value)


# ------------------------------------------------------------------------------------- where


def _golden_where(t, predicate, true_value, false_value, **_):
    return t.where(predicate.bool(), true_value, false_value)


@register(kind=OpKind.TERNARY, family=OpFamily.BINARY, device_operation="TernaryDeviceOperation",
          golden=torch_golden(_golden_where))  # fmt: skip
@ttnn_keywords(sub_core_grids=SUB_CORE_GRIDS, queue_id=QUEUE_ID)
def where(
    predicate: Tensor,
    true_value: Operand,
    false_value: Operand,
    *,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.where``: ``true_value`` where ``predicate`` is non-zero, else ``false_value``
    (tensors of one mesh, broadcast, or numbers)."""
    if not isinstance(predicate, Tensor):
        raise MeshnnTypeError(f"ttnn.where: predicate must be a ttnn.Tensor, got {type(predicate).__name__}")
    operands = {"predicate": predicate, "true_value": true_value, "false_value": false_value}
    numbers = (true_value, false_value)
    scalars = not any(isinstance(v, Tensor) for v in numbers)
    floats = scalars and any(isinstance(v, float | np.floating) for v in numbers)
    integer_predicate = predicate.dtype in (DataType.INT32, DataType.UINT32)
    return ternary(
        "where",
        operands,
        _select,
        dtype_from=("true_value", "false_value"),
        # (tt-metal 2026's where_tss: an integer predicate with a float scalar is typecast to FLOAT32 first)
        dtype=DataType.FLOAT32 if floats and integer_predicate and output_tensor is None else None,
        memory_config=memory_config,
        output_tensor=output_tensor,
    )


@register("experimental.where", kind=OpKind.TERNARY, family=OpFamily.BINARY,
          device_operation="WhereDeviceOperation", golden=torch_golden(_golden_where))  # fmt: skip
@ttnn_keywords("experimental.where")
def experimental_where(
    condition: Tensor,
    true_value: Operand,
    false_value: Operand,
    *,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.experimental.where``: ``ttnn.where`` with an output ``dtype``."""
    if not isinstance(condition, Tensor):
        raise MeshnnTypeError(f"ttnn.experimental.where: condition must be a ttnn.Tensor, got {condition!r}")
    operands = {"condition": condition, "true_value": true_value, "false_value": false_value}
    return ternary(
        "experimental.where",
        operands,
        _select,
        dtype_from=("true_value", "false_value"),
        dtype=dtype,
        memory_config=memory_config,
        output_tensor=output_tensor,
    )
