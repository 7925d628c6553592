"""The backward ops of ttnn's binary ops (``add_bw``, ``mul_bw``, ``div_bw``, ``atan2_bw``,
``min_bw``...), one :class:`~meshnn.ops.backward.defs.GradDef` each with ttnn's overloads: two
tensors (two gradients, with ``are_required_outputs`` and preallocated outputs where ttnn has
them), a tensor and a number (one gradient), two ComplexTensors (:mod:`meshnn.ops.complex.grads`).

The derivatives are ttnn's composites' in float32: ``div_bw`` is NaN or an infinity where the
divisor is 0, ``min_bw`` / ``max_bw`` split the gradient in halves where the operands tie,
``remainder_bw`` / ``fmod_bw`` give ``-grad * floor(a / b)`` / ``-grad * trunc(a / b)`` for ``b``.

May import: numpy, the backward package and the complex gradients.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.ops.backward import goldens
from meshnn.ops.backward.binding import MEMORY_CONFIG, QUEUE_ID, Kind, a, k
from meshnn.ops.backward.defs import GRAD, Form, GradDef, binary, number, table, with_scalar
from meshnn.ops.backward.unary_activations import APPROXIMATE, check_approximate, gelu_derivative
from meshnn.ops.backward.unary_math import ROUNDING, check_round_mode
from meshnn.ops.complex import grads as complex_grads
from meshnn.tensor.tensor import Tensor

NAN, INF = np.float32(np.nan), np.float32(np.inf)
OTHER = ("input_tensor", "other_tensor")  # the operand names of ttnn's tensor-tensor overloads
OPTIONAL = ("input_grad", "other_grad")
AB_GRADS = ("input_a_grad", "input_b_grad")


def _same(g: np.ndarray, *rest: Any, **params: Any) -> np.ndarray:
    return g


def _negated(g: np.ndarray, *rest: Any, **params: Any) -> np.ndarray:
    return -g


def _div_scalar(g: np.ndarray, x: np.ndarray, scalar: float, **modes: str | None) -> np.ndarray:
    if any(mode is not None for mode in modes.values()):
        return np.zeros_like(g)
    if scalar == 0:
        return np.where(g == 0, NAN, np.sign(g) * INF)
    return g * np.float32(1 / scalar)


def _div_a(g: np.ndarray, x: np.ndarray, y: np.ndarray, **modes: str | None) -> np.ndarray:
    if any(mode is not None for mode in modes.values()):
        return np.zeros_like(g)
    return np.where(y == 0, np.where(g == 0, NAN, np.sign(g) * INF), g * (1 / y))


def _div_b(g: np.ndarray, x: np.ndarray, y: np.ndarray, **modes: str | None) -> np.ndarray:
    if any(mode is not None for mode in modes.values()):
        return np.zeros_like(g)
    at_zero = np.where((g == 0) | (x == 0), NAN, np.sign(x) * -INF * np.sign(g))
    return np.where(y == 0, at_zero, -g * (x * (1 / (y * y))))


def _xlogy_a(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    log = np.where((x == 0) & (y <= 0), np.float32(0), np.where(y < 0, NAN, np.log(y)))
    return g * log


def _xlogy_b(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(y == 0, np.sign(g) * INF, g * (x * (1 / y)))


def _atan2(of_a: bool):
    """atan2_bw: grad * b / (a^2 + b^2) for a, -grad * a / (a^2 + b^2) for b; NaN where both are 0."""

    def derivative(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        scale = g / (x * x + y * y)
        value = (y if of_a else -x) * scale
        return np.where((x == 0) & (y == 0), NAN, value)

    return derivative


def _min_max(first: bool, of_max: bool):
    """min_bw / max_bw: the whole gradient to the operand chosen, half to each at a tie."""

    def derivative(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        mine, theirs = (x, y) if first else (y, x)
        wins = mine > theirs if of_max else mine < theirs
        return g * wins + (g * np.float32(0.5)) * (x == y)

    return derivative


def no_block_float(op: str, given: dict[str, Any]) -> None:
    """ttnn's logaddexp composites refuse bfloat8_b / bfloat4_b operands."""
    for name, value in given.items():
        if isinstance(value, Tensor) and value.dtype.is_block_float:
            raise MeshnnValueError(f"ttnn.{op}: {name} is {value.dtype}; BFLOAT8_B / BFLOAT4_B are not supported")


def _exp_sum(base: float, of_a: bool):
    def derivative(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        d = (y - x) if of_a else (x - y)
        return g / (1 + (np.exp(d) if base == math.e else np.power(np.float32(base), d)))

    return derivative


def _remainder_b(rounding: str):
    def derivative(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        q = x / y
        return -g * (np.floor(q) if rounding == "floor" else np.trunc(q))

    return derivative


def _bias_gelu_tensors() -> Form:
    d = lambda g, x, y, approximate: gelu_derivative(g, x + y, approximate)  # noqa: E731
    return binary(d, d, APPROXIMATE, check=check_approximate)


B = GradDef
_ALPHA = number("alpha", 1.0)

DEFS = (
    B(
        "mul_bw",
        (
            with_scalar(lambda g, x, scalar: g * np.float32(scalar), out=True),
            binary(lambda g, x, y: g * y, lambda g, x, y: g * x, names=OTHER, outputs=OPTIONAL),
            complex_grads.MUL,
        ),
        goldens.two(lambda t, x, y, *a, **k: t.mul(x, y), lambda t, x, y, *a, **k: t.mul(x, y)),
    ),
    B(
        "add_bw",
        (
            with_scalar(_same, out=True),
            binary(_same, _same, names=OTHER, outputs=OPTIONAL),
            complex_grads.ADD,
        ),
        goldens.two(lambda t, x, y, *a, **k: t.add(x, y), lambda t, x, y, alpha=1.0, **k: t.add(x, y, alpha=alpha)),
    ),
    B(
        "sub_bw",
        (
            with_scalar(_same, out=True),
            binary(_same, _negated, names=OTHER, outputs=OPTIONAL),
            complex_grads.SUB,
        ),
        goldens.two(lambda t, x, y, *a, **k: t.sub(x, y), lambda t, x, y, alpha=1.0, **k: t.sub(x, y, alpha=alpha)),
    ),
    B(
        "div_bw",
        (
            with_scalar(_div_scalar, *ROUNDING, out=True, check=check_round_mode),
            binary(_div_a, _div_b, *ROUNDING, names=OTHER, outputs=OPTIONAL, check=check_round_mode),
            complex_grads.DIV,
        ),
        goldens.two(
            lambda t, x, y, value=None, *a, **k: t.div(x, y, rounding_mode=goldens.rounding_of(value, k)),
            lambda t, x, y, *a, **k: t.div(x, y),
        ),
    ),
    B(
        "remainder_bw",
        (with_scalar(_same), binary(_same, _remainder_b("floor"))),
        goldens.two(lambda t, x, y, *a, **k: t.remainder(x, y)),
    ),
    B(
        "fmod_bw",
        (with_scalar(_same), binary(_same, _remainder_b("trunc"))),
        goldens.two(lambda t, x, y, *a, **k: t.fmod(x, y)),
    ),
    B(
        "assign_bw",
        (
            Form(
                (GRAD, a("input_tensor", Kind.TENSOR), MEMORY_CONFIG, k("input_a_grad", Kind.TENSOR), QUEUE_ID),
                ((_same, "input_tensor"),),
                ("input_a_grad",),
            ),
            binary(_same, _same, outputs=AB_GRADS),
        ),
        goldens.assign(),
    ),
    B(
        "atan2_bw",
        (binary(_atan2(True), _atan2(False)),),
        goldens.two(lambda t, x, y, *a, **k: t.atan2(x, y)),
    ),
    B(
        "addalpha_bw",
        (binary(_same, lambda g, x, y, alpha: g * np.float32(alpha), a("alpha", Kind.NUMBER, 1.0), outputs=AB_GRADS),),
        goldens.two(lambda t, x, y, alpha=None, *a, **k: t.add(x, y) if alpha is None else t.add(x, y, alpha=alpha)),
    ),
    B(
        "subalpha_bw",
        (binary(_same, lambda g, x, y, alpha: -g * np.float32(alpha), a("alpha", Kind.NUMBER, 1.0), outputs=OPTIONAL),),
        goldens.two(lambda t, x, y, alpha=None, *a, **k: t.sub(x, y) if alpha is None else t.sub(x, y, alpha=alpha)),
    ),
    B("xlogy_bw", (binary(_xlogy_a, _xlogy_b),), goldens.two(lambda t, x, y, *a, **k: t.xlogy(x, y))),
    B(
        "hypot_bw",
        (binary(lambda g, x, y: g * (x / np.hypot(x, y)), lambda g, x, y: g * (y / np.hypot(x, y))),),
        goldens.two(lambda t, x, y, *a, **k: t.hypot(x, y)),
    ),
    B(
        "ldexp_bw",
        (binary(lambda g, x, y: g * np.exp2(y), lambda g, x, y: x * (g * np.exp2(y) * np.float32(math.log(2)))),),
        goldens.two(lambda t, x, y, *a, **k: t.ldexp(x, y)),
    ),
    B(
        "logaddexp_bw",
        (binary(_exp_sum(math.e, True), _exp_sum(math.e, False), check=no_block_float),),
        goldens.two(lambda t, x, y, *a, **k: t.logaddexp(x, y)),
    ),
    B(
        "logaddexp2_bw",
        (binary(_exp_sum(2.0, True), _exp_sum(2.0, False), check=no_block_float),),
        goldens.two(lambda t, x, y, *a, **k: t.logaddexp2(x, y)),
    ),
    B(
        "squared_difference_bw",
        (binary(lambda g, x, y: 2 * (g * (x - y)), lambda g, x, y: -2 * (g * (x - y))),),
        goldens.two(lambda t, x, y, *a, **k: t.square(t.sub(x, y))),
    ),
    B(
        "rsub_bw",
        (binary(_negated, _same, outputs=OPTIONAL),),
        goldens.two(lambda t, x, y, *a, **k: t.rsub(x, y)),
    ),
    B(
        "min_bw",
        (binary(_min_max(True, False), _min_max(False, False)),),
        goldens.two(lambda t, x, y, *a, **k: t.min(x, y)),
    ),
    B(
        "max_bw",
        (binary(_min_max(True, True), _min_max(False, True)),),
        goldens.two(lambda t, x, y, *a, **k: t.max(x, y)),
    ),
    B(
        "bias_gelu_bw",
        (
            _bias_gelu_tensors(),
            Form(
                (GRAD, a("input_tensor", Kind.TENSOR), a("bias", Kind.NUMBER), APPROXIMATE, MEMORY_CONFIG, QUEUE_ID),
                (
                    (
                        lambda g, x, bias, approximate: gelu_derivative(g, x + np.float32(bias), approximate),
                        "input_tensor",
                    ),
                ),
                check=check_approximate,
            ),
        ),
        goldens.bias_gelu(),
    ),
)

OPS = table(DEFS)
"""The public binary backward ops by name."""
