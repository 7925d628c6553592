"""Fused activations of the binary ops: ttnn's ``input_tensor_a_activations``,
``input_tensor_b_activations`` (applied to the operands before the op) and ``activations`` (to its
result), all in the same float32 computation, so the output is rounded once (as on device, where
they run on the values in the compute registers).  Each is a list of ``ttnn.UnaryOpType``,
``ttnn.UnaryWithParam`` (:mod:`meshnn.ops.config`) or unary op names.

May import: :mod:`meshnn.errors`, :mod:`meshnn.ops.config` and :mod:`meshnn.ops.eltwise.functions`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.config import UnaryOpType, UnaryWithParam
from meshnn.ops.eltwise.functions import UNARY

_ACTIVATION_PARAMS = {"gelu": ("approximate",), "softplus": ("beta", "threshold")}

Activation = tuple[str, tuple[tuple[str, object], ...]]
"""A fused activation, normalised: its UNARY name and keyword parameters (hashable, for plans)."""


def activation_steps(op: str, argument: str, value: object) -> tuple[Activation, ...]:
    """``value`` (None, or one or a list of UnaryOpType, UnaryWithParam or unary op names) as the
    activations :func:`activated` applies, in order; a clear error for anything else."""
    if value is None:
        return ()
    items = value if isinstance(value, list | tuple) else [value]
    steps = []
    for item in items:
        if isinstance(item, str) and item.lower() in UNARY:
            item = UnaryWithParam(UnaryOpType(item.lower()))
        elif isinstance(item, UnaryOpType):
            item = UnaryWithParam(item)
        if not isinstance(item, UnaryWithParam):
            raise MeshnnTypeError(
                f"ttnn.{op}: {argument} must hold ttnn.UnaryOpType, ttnn.UnaryWithParam or unary op names "
                f"({sorted(UNARY)}), got {item!r}"
            )
        name = item.op_type.value
        names = _ACTIVATION_PARAMS.get(name, ())
        if len(item.params) > len(names):
            raise MeshnnValueError(
                f"ttnn.{op}: {argument}: {item.op_type} takes {len(names)} parameter(s) {list(names)}, "
                f"got {list(item.params)}"
            )
        params = tuple(zip(names, item.params, strict=False))
        if name == "gelu":
            params = tuple((k, bool(v)) for k, v in params)
        steps.append((name, params))
    return tuple(steps)


def apply_steps(steps: tuple[Activation, ...], x: np.ndarray | np.float32) -> np.ndarray:
    """``x`` through each activation of ``steps`` in turn (float32)."""
    return _apply(steps, x)


def _apply(steps: tuple[Activation, ...], x: np.ndarray | np.float32) -> np.ndarray:
    if steps and (not isinstance(x, np.ndarray) or x.ndim == 0):
        x = np.full(1, x, np.float32)  # a scalar operand: one value that broadcasts (the steps need arrays)
    for name, params in steps:
        x = UNARY[name](x, **dict(params))
    return x


@functools.cache
def activated(
    function: Callable[[np.ndarray, np.ndarray], np.ndarray],
    pre_a: tuple[Activation, ...],
    pre_b: tuple[Activation, ...],
    post: tuple[Activation, ...],
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``post(function(pre_a(a), pre_b(b)))`` (one per combination: the binary ops' ``_numeric`` caches on it)."""

    def fused(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        result = function(_apply(pre_a, x), _apply(pre_b, y))
        if post and result.dtype == bool:  # a comparison's 0 / 1, as float32 before its activations
            result = result.astype(np.float32)
        return _apply(post, result)

    return fused
