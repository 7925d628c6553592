"""The arithmetic ternary ops of ttnn: ``addcmul`` (``a + value * b * c``), ``addcdiv``
(``a + value * b / c``), ``lerp`` (``input + weight * (end - input)``, the weight a tensor or a
number) and ``mac`` (``a * b + c``, or ``a * b + c`` of a tensor and two numbers), on the
ternary kernel of :mod:`meshnn.ops.eltwise.ternary`.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' registry and the ternary kernel.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.op_keywords import number, ttnn_keywords
from meshnn.ops.checks import device_input
from meshnn.ops.eltwise.ternary import ternary
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_TERNARY = {"kind": OpKind.TERNARY, "family": OpFamily.BINARY, "device_operation": "TernaryDeviceOperation"}


def _tensor(op: str, name: str, value: object) -> Tensor:
    if not isinstance(value, Tensor):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.Tensor, got {type(value).__name__}")
    return value


@register(**_TERNARY, golden=torch_golden(lambda t, a, b, c, *_, value=1.0, **k: t.addcmul(a, b, c, value=value)))
@ttnn_keywords()
def addcmul(
    input_a: Tensor,
    input_b: Tensor,
    input_c: Tensor,
    *,
    value: float = 1.0,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.addcmul``: ``input_a + value * input_b * input_c``."""
    operands = {
        n: _tensor("addcmul", n, v) for n, v in (("input_a", input_a), ("input_b", input_b), ("input_c", input_c))
    }
    number("addcmul", "value", value)
    scale = np.float32(value)
    return ternary(
        "addcmul",
        operands,
        lambda a, b, c: a + scale * (b * c),
        dtype_from=("input_a",),
        memory_config=memory_config,
        output_tensor=output_tensor,
    )


def _addcdiv(value: float, saturate: bool):
    scale = np.float32(value)

    def compute(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        factor = scale * (b / c)
        result = a + factor
        if saturate:  # ttnn's non-float32 addcdiv: +-inf where c is 0 (0 where value * b is 0)
            result = np.where(c == 0, np.sign(factor) * np.float32(np.inf), result)
        return result

    return compute


@register(**_TERNARY, golden=torch_golden(lambda t, a, b, c, *_, value=1.0, **k: t.addcdiv(a, b, c, value=value)))
@ttnn_keywords()
def addcdiv(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    input_tensor_c: Tensor,
    *,
    value: float,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``ttnn.addcdiv``: ``input_tensor_a + value * input_tensor_b / input_tensor_c``."""
    names = ("input_tensor_a", "input_tensor_b", "input_tensor_c")
    operands = {
        n: _tensor("addcdiv", n, v)
        for n, v in zip(names, (input_tensor_a, input_tensor_b, input_tensor_c), strict=True)
    }
    if value is None:
        raise MeshnnTypeError("ttnn.addcdiv: value must be a number, got None")
    number("addcdiv", "value", value)
    saturate = input_tensor_a.dtype.name != "FLOAT32"
    return ternary(
        "addcdiv", operands, _addcdiv(value, saturate), dtype_from=("input_tensor_a",), memory_config=memory_config
    )


def _golden_lerp(t, input, end, weight, **_):
    if t.is_tensor(weight):
        weight = weight.to(input.dtype)
    return t.lerp(input, end.to(input.dtype), weight)


@register(**_TERNARY, golden=torch_golden(_golden_lerp))
@ttnn_keywords()
def lerp(input: Tensor, end: Tensor, weight: Tensor | float, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.lerp``: ``input + weight * (end - input)``; ``end`` (and a tensor ``weight``) must
    have ``input``'s dtype."""
    _tensor("lerp", "input", input)
    _tensor("lerp", "end", end)
    for name, other in (("end", end), ("weight", weight)):
        if isinstance(other, Tensor) and other.is_allocated() and input.is_allocated() and other.dtype != input.dtype:
            raise MeshnnValueError(f"ttnn.lerp: {name} has dtype {other.dtype}; it must have input's {input.dtype}")
    if not isinstance(weight, Tensor):
        number("lerp", "weight", weight)
    operands = {"input": input, "end": end, "weight": weight}
    return ternary(
        "lerp", operands, lambda x, e, w: x + w * (e - x), dtype_from=("input",), memory_config=memory_config
    )


@register(**_TERNARY, golden=torch_golden(lambda t, a, b, c, **k: t.add(t.mul(a, b), c)))
@ttnn_keywords()
def mac(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor | float,
    input_tensor_c: Tensor | float,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``ttnn.mac``: ``input_tensor_a * input_tensor_b + input_tensor_c`` (b and c both tensors,
    or both numbers: ttnn's two overloads)."""
    _tensor("mac", "input_tensor_a", input_tensor_a)
    if isinstance(input_tensor_b, Tensor) != isinstance(input_tensor_c, Tensor):
        raise MeshnnTypeError("ttnn.mac: input_tensor_b and input_tensor_c must both be tensors or both numbers")
    operands = {"input_tensor_a": input_tensor_a, "input_tensor_b": input_tensor_b, "input_tensor_c": input_tensor_c}
    return ternary(
        "mac", operands, lambda a, b, c: a * b + c, dtype_from=("input_tensor_a",), memory_config=memory_config
    )


def _golden_snake_beta(t, x, alpha, beta, *_, **k):
    wide = x.float()
    s = t.sin(alpha.float() * wide)
    return (wide + (s * s) / beta.float()).to(x.dtype)


def _check_snake_beta(x: Tensor, alpha: Tensor, beta: Tensor) -> None:
    """tt-metal's checks of snake_beta (its ``v1``), each a RuntimeError as its TT_FATAL is."""
    fail = "ttnn.snake_beta requires"
    if x.dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise MeshnnValueError(f"{fail} a BFLOAT16 or FLOAT32 input, got {x.dtype}")
    if alpha.dtype != x.dtype or beta.dtype != x.dtype:
        raise MeshnnValueError(f"{fail} alpha.dtype == beta.dtype == input.dtype, got {alpha.dtype}, {beta.dtype}")
    if any(t.layout is not Layout.TILE for t in (x, alpha, beta)):
        raise MeshnnValueError(f"{fail} tile layout for all inputs")
    shape, ab = tuple(x.shape), tuple(alpha.shape)
    if len(shape) < 2:
        raise MeshnnValueError(f"{fail} input rank >= 2, got rank {len(shape)} (shape {list(shape)})")
    if ab != tuple(beta.shape):
        raise MeshnnValueError(f"{fail} alpha.shape == beta.shape, got {list(ab)} vs {list(beta.shape)}")
    if shape[-1] != ab[-1]:
        raise MeshnnValueError(f"{fail} input.W == alpha.W, got {shape[-1]} vs {ab[-1]}")
    if ab != shape and (len(ab) > len(shape) or any(d != 1 for d in ab[:-1])):
        raise MeshnnValueError(
            f"{fail} alpha/beta to either match input shape exactly or have non-1 size only on the last dim "
            f"(input {list(shape)}, alpha {list(ab)})"
        )


@register(**_TERNARY, golden=torch_golden(_golden_snake_beta))
@ttnn_keywords()
def snake_beta(
    input_tensor: Tensor,
    alpha: Tensor,
    beta: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.snake_beta`` (newer ttnn, tt-metal 2026-06): ``x + sin(alpha * x)^2 / beta`` in float32,
    rounded once; ``alpha`` and ``beta`` of the input's shape or a row of its width."""
    operands = {"input_tensor": input_tensor, "alpha": alpha, "beta": beta}
    tensors = {n: device_input("snake_beta", n, _tensor("snake_beta", n, v)) for n, v in operands.items()}
    _check_snake_beta(*tensors.values())

    def compute(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        s = np.sin(a * x)
        return x + (s * s) / b

    return ternary(
        "snake_beta",
        operands,
        compute,
        dtype_from=("input_tensor",),
        memory_config=memory_config,
        output_tensor=output_tensor,
    )
