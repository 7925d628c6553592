"""ttnn's complex ops: ``ttnn.complex_tensor(real, imag)`` makes a :class:`ComplexTensor`;
``real``, ``imag``, ``angle``, ``is_real``, ``is_imag`` return a real tensor, ``conj`` and
``polar`` a ComplexTensor, and ``ttnn.abs`` / ``ttnn.reciprocal`` take a ComplexTensor too (as
ttnn's overloads do).  Their ComplexTensor forms take ``memory_config`` by keyword and require it,
as ttnn's bindings do.

As in ttnn, ``real`` and ``imag`` return the part itself (no copy; both parts are checked to be
usable device tensors) and ``conj`` shares the real part; ``angle`` is atan2(imag, real),
``polar`` reads (abs, angle) pairs, ``is_real`` / ``is_imag`` are 1.0 where the imaginary / real
part is zero.

May import: numpy, the ops' registry, the complex package and the backward package's binding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import meshnn.ops.eltwise.unary  # noqa: F401 - declares ttnn.abs and ttnn.reciprocal, overloaded here
from meshnn.ops.backward.binding import MEMORY_CONFIG_REQUIRED, QUEUE_ID, Kind, Overload, a, overloaded
from meshnn.ops.backward.run import checked_inputs
from meshnn.ops.complex.parts import complex_result, operands, real_result
from meshnn.ops.complex.tensor import ComplexTensor
from meshnn.ops.registry import DeviceWork, OpKind, add, overload, torch_golden
from meshnn.perf.desc import OpFamily

INPUT = a("input_tensor", Kind.COMPLEX)
_COMPLEX_ONLY = (INPUT, MEMORY_CONFIG_REQUIRED, QUEUE_ID)


def _declare(name: str, run: Any, golden: Any, doc: str, **perf: Any) -> Any:
    function = overloaded(name, [Overload(_COMPLEX_ONLY, run)], doc)
    perf = {"family": OpFamily.BINARY, "modelled": False, **perf}
    add(name, function, kind=OpKind.COMPLEX, golden=torch_golden(golden), **perf)
    return function


def _same_part(op: str, index: int):
    def run(input_tensor: ComplexTensor, memory_config: Any, queue_id: int = 0) -> Any:
        checked_inputs(op, operands({"input_tensor": input_tensor})[0])
        return input_tensor[index]

    return run


def _real_op(op: str, f):
    def run(input_tensor: ComplexTensor, memory_config: Any, queue_id: int = 0) -> Any:
        return real_result(op, {"input_tensor": input_tensor}, f, memory_config, queue_id=queue_id)

    return run


def _conj(input_tensor: ComplexTensor, memory_config: Any, queue_id: int = 0) -> ComplexTensor:
    checked_inputs("conj", operands({"input_tensor": input_tensor})[0])
    imag = real_result("conj", {"imag": input_tensor.imag}, np.negative, memory_config, queue_id=queue_id)
    return ComplexTensor((input_tensor.real, imag))


def _polar(input_tensor: ComplexTensor, memory_config: Any, queue_id: int = 0) -> ComplexTensor:
    def f(z: np.ndarray) -> np.ndarray:
        return z.real * np.cos(z.imag) + np.complex64(1j) * (z.real * np.sin(z.imag))

    return complex_result("polar", {"input_tensor": input_tensor}, f, memory_config, queue_id=queue_id)


def _reciprocal(input_tensor: ComplexTensor, memory_config: Any, queue_id: int = 0) -> ComplexTensor:
    def f(z: np.ndarray) -> np.ndarray:
        inv = 1 / (z.real * z.real + z.imag * z.imag)
        return z.real * inv - np.complex64(1j) * (z.imag * inv)

    return complex_result("reciprocal", {"input_tensor": input_tensor}, f, memory_config, queue_id=queue_id)


_ABS = _real_op("abs", lambda z: np.hypot(z.real, z.imag))
_UNARY = {"family": OpFamily.UNARY, "modelled": True}  # one unary device operation

real = _declare(
    "real", _same_part("real", 0), lambda t, x, *a, **k: t.real(x), "``ttnn.real``: the real part (itself)."
)
imag = _declare(
    "imag", _same_part("imag", 1), lambda t, x, *a, **k: t.imag(x), "``ttnn.imag``: the imaginary part (itself)."
)
angle = _declare(
    "angle",
    _real_op("angle", lambda z: np.arctan2(z.imag, z.real)),
    lambda t, x, *a, **k: t.angle(x),
    "``ttnn.angle``: atan2(imag, real).",
)
is_real = _declare(
    "is_real",
    _real_op("is_real", lambda z: (z.imag == 0).astype(np.float32)),
    lambda t, x, *a, **k: t.isreal(x),
    "``ttnn.is_real``: 1.0 where the imaginary part is zero, else 0.0.",
    **_UNARY,
)
is_imag = _declare(
    "is_imag",
    _real_op("is_imag", lambda z: (z.real == 0).astype(np.float32)),
    lambda t, x, *a, **k: x.real == 0,
    "``ttnn.is_imag``: 1.0 where the real part is zero, else 0.0.",
    **_UNARY,
)
conj = _declare(
    "conj", _conj, lambda t, x, *a, **k: t.conj(x), "``ttnn.conj``: the conjugate (the real part shared).", **_UNARY
)
polar = _declare("polar", _polar, lambda t, x, *a, **k: t.polar(x.real, x.imag), "``ttnn.polar``: abs e^(i angle).")


def complex_tensor(real: Any, imag: Any) -> ComplexTensor:
    """``ttnn.complex_tensor(real, imag)``: the ComplexTensor of two real tensors of one shape."""
    return ComplexTensor((real, imag))


add(
    "complex_tensor",
    complex_tensor,
    kind=OpKind.COMPLEX,
    family=OpFamily.COPY,
    modelled=False,
    runs=DeviceWork.HOST,
    golden=torch_golden(lambda t, real, imag, *a, **k: t.complex(real, imag)),
)


def _takes_complex(*args: Any, **kwargs: Any) -> bool:
    first = args[0] if args else kwargs.get("input_tensor")
    return isinstance(first, ComplexTensor)


def _overloaded(name: str, run: Any) -> Any:
    return overloaded(name, [Overload(_COMPLEX_ONLY, run)], f"``ttnn.{name}`` of a ttnn.ComplexTensor.")


overload("abs", _takes_complex, _overloaded("abs", _ABS))
overload("reciprocal", _takes_complex, _overloaded("reciprocal", _reciprocal))
