"""Fused activations of the binary ops: ttnn's ``input_tensor_a_activations``,
``input_tensor_b_activations`` (applied to the operands before the op) and ``activations`` (to its
result), all in the same float32 computation, so the output is rounded once (as on device, where
they run on the values in the compute registers).  Each is a list of ``ttnn.UnaryOpType``,
``ttnn.UnaryWithParam`` (:mod:`meshnn.ops.config`) or unary op names.

May import: :mod:`meshnn.errors`, :mod:`meshnn.ops.config` and :mod:`meshnn.ops.eltwise.unary_tables`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.config import UnaryOpType, UnaryWithParam
from meshnn.ops.eltwise.unary_tables import BY_MEMBER, DEFS, UNARY
from meshnn.ops.signatures import REQUIRED

Activation = tuple[str, tuple[tuple[str, object], ...]]
"""A fused activation, normalised: its unary definition's name and keyword parameters (hashable,
for plans)."""

FUSABLE = frozenset(d.name for d in BY_MEMBER.values() if d.public)
"""The public unary ops that are ``UnaryOpType`` members: the names an activation may be given by."""


def activation_steps(op: str, argument: str, value: object) -> tuple[Activation, ...]:
    """``value`` (None, or one or a list of UnaryOpType, UnaryWithParam or unary op names) as the
    activations :func:`activated` applies, in order; a clear error for anything else.  A
    ``UnaryWithParam``'s params map onto the unary op's parameters in ttnn's order."""
    if value is None:
        return ()
    items = value if isinstance(value, list | tuple) else [value]
    steps = []
    for item in items:
        if isinstance(item, str) and item.lower() in FUSABLE:
            item = UnaryWithParam(UnaryOpType(item.lower()))
        elif isinstance(item, UnaryOpType):
            item = UnaryWithParam(item)
        if not isinstance(item, UnaryWithParam):
            raise MeshnnTypeError(
                f"ttnn.{op}: {argument} must hold ttnn.UnaryOpType, ttnn.UnaryWithParam or unary op names "
                f"({sorted(FUSABLE)}), got {item!r}"
            )
        steps.append(_step(op, argument, item))
    return tuple(steps)


def _step(op: str, argument: str, item: UnaryWithParam) -> Activation:
    """One activation: its unary definition and the UnaryWithParam's params by parameter name."""
    defn = DEFS.get(item.op_type.value)
    if defn is None:
        raise MeshnnValueError(f"ttnn.{op}: {argument}: {item.op_type} has no computation in meshnn as an activation")
    names = [p.name for p in defn.params]
    given = item.params
    if len(given) == len(names) + 1 and "fast_and_approximate_mode" in defn.hardware:
        given = given[:-1]  # the SFPU's approximation flag (EXP's param0): meshnn computes exactly either way
    if len(given) > len(names):
        raise MeshnnValueError(
            f"ttnn.{op}: {argument}: {item.op_type} takes {len(names)} parameter(s) {names}, got {list(given)}"
        )
    missing = [p.name for p in defn.params[len(given) :] if p.default is REQUIRED]
    if missing:
        raise MeshnnValueError(f"ttnn.{op}: {argument}: {item.op_type} needs its parameter(s) {missing}")
    params = tuple(zip(names, given, strict=False))
    if defn.name == "power_iterative":  # its exponent's rule (the others' params are any floats)
        for param, value in zip(defn.params, given, strict=False):
            param.check(op, param.name, value)  # type: ignore[misc]
    if defn.name == "gelu":
        params = tuple((k, bool(v)) for k, v in params)
    return defn.name, params


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
