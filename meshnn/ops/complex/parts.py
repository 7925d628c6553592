"""Element-wise computation on complex tensors as ttnn does it: a complex result is computed from
the operands' real and imaginary parts (float32, as numpy complex64) and its two parts are written
as two real tensors, each rounded once into the output dtype; a real result (abs, angle) is one.

May import: numpy, the complex tensor and the backward package's element-wise runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from meshnn.ops.backward.run import Result, results
from meshnn.ops.complex.tensor import ComplexTensor
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

Complex = Callable[..., np.ndarray]
"""``f(*values)``: over the operands' values (complex64 for a ComplexTensor operand, float32 for a
real one), returns the result's values (complex or real)."""


def operands(named: Mapping[str, Tensor | ComplexTensor]) -> tuple[dict[str, Tensor], list[tuple[str, bool]]]:
    """The real tensors behind ``named`` operands (``<name>.real`` / ``<name>.imag`` for a
    ComplexTensor), and each operand's name and whether it is complex."""
    tensors: dict[str, Tensor] = {}
    kinds: list[tuple[str, bool]] = []
    for name, value in named.items():
        if isinstance(value, ComplexTensor):
            tensors[f"{name}.real"], tensors[f"{name}.imag"] = value.real, value.imag
            kinds.append((name, True))
        else:
            tensors[name] = value
            kinds.append((name, False))
    return tensors, kinds


def _values(kinds: list[tuple[str, bool]], f: Complex) -> Callable[..., np.ndarray]:
    """``f`` over the parts' arrays (pairs joined into complex64)."""

    def run(*arrays: np.ndarray) -> np.ndarray:
        values, i = [], 0
        for _, is_complex in kinds:
            if is_complex:
                values.append(arrays[i] + np.complex64(1j) * arrays[i + 1])
                i += 2
            else:
                values.append(arrays[i])
                i += 1
        return f(*values)

    return run


def complex_result(
    op: str,
    named: Mapping[str, Tensor | ComplexTensor],
    f: Complex,
    memory_config: MemoryConfig | None,
    *,
    queue_id: int = 0,
) -> ComplexTensor:
    """The ComplexTensor ``f(*operands)``, of the first operand's shape."""
    tensors, kinds = operands(named)
    values = _values(kinds, f)
    first = next(iter(tensors))
    parts = [
        Result(lambda *arrays: np.real(values(*arrays)), first),
        Result(lambda *arrays: np.imag(values(*arrays)), first),
    ]
    real, imag = results(op, tensors, parts, memory_config=memory_config, queue_id=queue_id)
    return ComplexTensor((real, imag))  # type: ignore[arg-type]


def real_result(
    op: str,
    named: Mapping[str, Tensor | ComplexTensor],
    f: Complex,
    memory_config: MemoryConfig | None,
    *,
    queue_id: int = 0,
) -> Tensor:
    """The real tensor ``f(*operands)``, of the first operand's shape."""
    tensors, kinds = operands(named)
    values = _values(kinds, f)
    (out,) = results(op, tensors, [Result(values, next(iter(tensors)))], memory_config=memory_config, queue_id=queue_id)
    return out  # type: ignore[return-value]
