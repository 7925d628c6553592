"""The gradients of ttnn's complex ops: ``polar_bw``, ``conj_bw``, ``real_bw``, ``imag_bw``,
``angle_bw``, and the ComplexTensor overloads of ``abs_bw``, ``reciprocal_bw``, ``add_bw``,
``sub_bw``, ``mul_bw`` and ``div_bw`` (forms the backward tables list beside the real ones).

Each returns a list of ComplexTensors, with ttnn's conventions: the gradient of a complex input
is conj-linear in the incoming gradient (``mul_bw``: grad * conj(other)); zero where ``abs`` /
``angle`` have no derivative (at 0); NaN where ``reciprocal_bw`` / ``div_bw`` divide by 0.  As in
ttnn, ``add_bw`` and ``sub_bw`` return the incoming gradient itself as the input's gradient.

May import: numpy, the complex package and the backward package's binding, defs and goldens.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from meshnn.ops.backward import goldens
from meshnn.ops.backward.binding import MEMORY_CONFIG_REQUIRED, QUEUE_ID, Kind, a
from meshnn.ops.backward.defs import Form, GradDef, table
from meshnn.ops.complex.parts import complex_result
from meshnn.ops.complex.tensor import ComplexTensor
from meshnn.ops.registry import OpKind

NAN = np.float32(np.nan)
J = np.complex64(1j)


def _nan_where_zero(z: np.ndarray, value: np.ndarray) -> np.ndarray:
    return np.where((z.real == 0) & (z.imag == 0), np.complex64(NAN + 1j * NAN), value)


def _unary_form(op: str, grad_kind: Kind, f: Any) -> Form:
    """``(grad_tensor, input_tensor, *, memory_config)`` of a ComplexTensor input: one gradient
    ``f(grad, input)``."""

    def run(grad_tensor: Any, input_tensor: ComplexTensor, memory_config: Any, queue_id: int = 0) -> list:
        named = {"grad_tensor": grad_tensor, "input_tensor": input_tensor}
        return [complex_result(op, named, f, memory_config, queue_id=queue_id)]

    args = (a("grad_tensor", grad_kind), a("input_tensor", Kind.COMPLEX), MEMORY_CONFIG_REQUIRED, QUEUE_ID)
    return Form(args, run=run)


def _abs(g: np.ndarray, z: np.ndarray) -> np.ndarray:
    r = np.hypot(z.real, z.imag)
    return np.where(r == 0, np.complex64(0), g * (z / r))


def _reciprocal(g: np.ndarray, z: np.ndarray) -> np.ndarray:
    inv = 1 / z
    return _nan_where_zero(z, -g * np.conj(inv * inv))


def _angle(g: np.ndarray, z: np.ndarray) -> np.ndarray:
    inv = 1 / (z.real * z.real + z.imag * z.imag)
    value = g * (-z.imag * inv) + J * (g * z.real * inv)
    return np.where((z.real == 0) & (z.imag == 0), np.complex64(0), value)


def _polar(g: np.ndarray, z: np.ndarray) -> np.ndarray:
    result = z.real * np.cos(z.imag) + J * (z.real * np.sin(z.imag))
    r = np.hypot(result.real, result.imag)
    sign = np.where(r == 0, np.complex64(0), result / r)
    return np.real(np.conj(g) * sign) + J * np.real(np.conj(g) * (result * J))


ABS = _unary_form("abs_bw", Kind.TENSOR, _abs)
RECIPROCAL = _unary_form("reciprocal_bw", Kind.COMPLEX, _reciprocal)


def _binary_form(op: str, fa: Any, fb: Any, *, alpha: bool = False) -> Form:
    """``(grad_tensor, input_tensor_a, input_tensor_b, [alpha], *, memory_config)`` of
    ComplexTensors: the gradients ``fa(grad, a, b[, alpha])`` and ``fb(...)`` (``fa`` None: the
    incoming gradient itself, as ttnn returns it)."""

    def run(grad_tensor: Any, input_tensor_a: Any, input_tensor_b: Any, memory_config: Any, **rest: Any) -> list:
        queue_id = rest.pop("queue_id", 0)
        named = {"grad_tensor": grad_tensor, "input_tensor_a": input_tensor_a, "input_tensor_b": input_tensor_b}
        grads = []
        for f in (fa, fb):
            if f is None:
                grads.append(grad_tensor)
                continue
            grads.append(
                complex_result(op, named, lambda g, x, y, f=f: f(g, x, y, **rest), memory_config, queue_id=queue_id)
            )
        return grads

    operands = tuple(a(n, Kind.COMPLEX) for n in ("grad_tensor", "input_tensor_a", "input_tensor_b"))
    extra = (a("alpha", Kind.NUMBER),) if alpha else ()
    return Form((*operands, *extra, MEMORY_CONFIG_REQUIRED, QUEUE_ID), run=run)


def _div_b(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _nan_where_zero(y, -g * np.conj(x / y / y))


ADD = _binary_form("add_bw", None, lambda g, x, y, alpha: g * np.float32(alpha), alpha=True)
SUB = _binary_form("sub_bw", None, lambda g, x, y, alpha: g * -np.float32(alpha), alpha=True)
MUL = _binary_form("mul_bw", lambda g, x, y: g * np.conj(y), lambda g, x, y: g * np.conj(x))
DIV = _binary_form("div_bw", lambda g, x, y: _nan_where_zero(y, g / np.conj(y)), _div_b)

C = GradDef
_KIND = {"kind": OpKind.COMPLEX}

DEFS = (
    C(
        "polar_bw",
        (_unary_form("polar_bw", Kind.COMPLEX, _polar),),
        goldens.complex_parts(lambda t, z, *a, **k: t.polar(z.real, z.imag)),
        **_KIND,
    ),
    C(
        "conj_bw",
        (_unary_form("conj_bw", Kind.COMPLEX, lambda g, z: np.conj(g)),),
        goldens.complex_parts(lambda t, z, *a, **k: t.conj(z)),
        **_KIND,
    ),
    C(
        "real_bw",
        (_unary_form("real_bw", Kind.TENSOR, lambda g, z: g + 0 * J),),
        goldens.complex_parts(lambda t, z, *a, **k: t.real(z)),
        **_KIND,
    ),
    C(
        "imag_bw",
        (_unary_form("imag_bw", Kind.TENSOR, lambda g, z: J * g),),
        goldens.complex_parts(lambda t, z, *a, **k: t.imag(z)),
        **_KIND,
    ),
    C(
        "angle_bw",
        (_unary_form("angle_bw", Kind.TENSOR, _angle),),
        goldens.complex_parts(lambda t, z, *a, **k: t.angle(z)),
        **_KIND,
    ),
)

OPS = table(DEFS)
"""The public complex backward ops by name."""
