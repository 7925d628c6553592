"""The backward ops of ttnn's ternary ops: ``addcmul_bw``, ``addcdiv_bw``, ``where_bw`` and
``lerp_bw`` (a tensor or a number weight), one :class:`~meshnn.ops.backward.defs.GradDef` each
with ttnn's bindings.  ``addcdiv_bw`` is NaN or an infinity where the divisor is 0, as ttnn's is;
``where_bw`` sends the gradient to the operand the condition chose (nonzero: the first).

May import: numpy and the backward package.
"""

from __future__ import annotations

import numpy as np

from meshnn.ops.backward import goldens
from meshnn.ops.backward.binding import MEMORY_CONFIG, QUEUE_ID, Kind, a, k
from meshnn.ops.backward.defs import GRAD, REQUIRED_OUTPUTS, Form, GradDef, table

NAN, INF = np.float32(np.nan), np.float32(np.inf)
A, B, C = (a(f"input_tensor_{n}", Kind.TENSOR) for n in "abc")
NAMES = ("input_tensor_a", "input_tensor_b", "input_tensor_c")


def _three(*derivatives) -> tuple:
    return tuple(zip(derivatives, NAMES, strict=True))


def _addcdiv_b(g: np.ndarray, x: np.ndarray, t1: np.ndarray, t2: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(t2 == 0, np.where(g == 0, NAN, INF), g * np.float32(alpha) * (1 / t2))


def _addcdiv_c(g: np.ndarray, x: np.ndarray, t1: np.ndarray, t2: np.ndarray, alpha: float) -> np.ndarray:
    value = (-g * np.float32(alpha)) * t1 * (1 / (t2 * t2))
    return np.where(t2 == 0, np.where(g == 0, NAN, -INF), value)


def _same(g: np.ndarray, *rest: object, **params: object) -> np.ndarray:
    return g


_VALUE = (GRAD, A, B, C, a("alpha", Kind.NUMBER), MEMORY_CONFIG, QUEUE_ID)
_WHERE = (
    GRAD,
    A,
    B,
    C,
    MEMORY_CONFIG,
    REQUIRED_OUTPUTS,
    k("input_a_grad", Kind.TENSOR),
    k("input_b_grad", Kind.TENSOR),
    QUEUE_ID,
)

T = GradDef
DEFS = (
    T(
        "addcmul_bw",
        (
            Form(
                _VALUE,
                _three(
                    _same,
                    lambda g, x, t1, t2, alpha: g * t2 * np.float32(alpha),
                    lambda g, x, t1, t2, alpha: g * t1 * np.float32(alpha),
                ),
            ),
        ),
        goldens.ternary_value("addcmul"),
    ),
    T("addcdiv_bw", (Form(_VALUE, _three(_same, _addcdiv_b, _addcdiv_c)),), goldens.ternary_value("addcdiv")),
    T(
        "where_bw",
        (
            Form(
                _WHERE,
                (
                    (lambda g, c, x, y: np.where(c != 0, g, np.float32(0)), "input_tensor_b"),
                    (lambda g, c, x, y: np.where(c != 0, np.float32(0), g), "input_tensor_c"),
                ),
                ("input_a_grad", "input_b_grad"),
            ),
        ),
        goldens.where(),
    ),
    T(
        "lerp_bw",
        (
            Form(
                (GRAD, A, B, C, MEMORY_CONFIG, QUEUE_ID),
                _three(lambda g, x, y, w: g * (1 - w), lambda g, x, y, w: g * w, lambda g, x, y, w: g * (y - x)),
            ),
            Form(
                (GRAD, A, B, a("scalar", Kind.NUMBER), MEMORY_CONFIG, QUEUE_ID),
                (
                    (lambda g, x, y, scalar: g * np.float32(1 - scalar), "input_tensor_a"),
                    (lambda g, x, y, scalar: g * np.float32(scalar), "input_tensor_b"),
                ),
            ),
        ),
        goldens.lerp(),
    ),
)

OPS = table(DEFS)
"""The public ternary backward ops by name."""
