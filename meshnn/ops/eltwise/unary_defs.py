"""What declares a unary element-wise op: :class:`UnaryDef`, one line of a table per op, from which
:mod:`meshnn.ops.eltwise.unary` makes the public function (ttnn's signature), its registry entry
(golden function, perf family) and its ``ttnn.UnaryOpType`` member.

May import: numpy and the op signatures (:mod:`meshnn.ops.signatures`), the keyword checks of
:mod:`meshnn.mesh.op_keywords` and the perf model's families.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import Keyword, count, flag, number
from meshnn.ops.signatures import REQUIRED, Param, kw

Compute = Callable[..., np.ndarray]
"""``compute(x, **params)``: the op over a float32 array (int64 for an integer op's integer
input), returning an array of x's shape (float, integer or bool)."""
Golden = Callable[..., Any]
"""``golden(torch, input, **params)``: the torch reference (torch passed in: imported at the call)."""


@dataclass(frozen=True)
class UnaryDef:
    """One unary op.  ``params``: ttnn's parameters after the input (positional ones first, in
    ttnn's order; keyword-only ones via :func:`~meshnn.ops.signatures.kw`), passed to ``compute``
    by name.  ``member``: its ``ttnn.UnaryOpType`` member when it can be fused as an activation
    (then a ``UnaryWithParam``'s params map onto ``params`` in order).  ``integer``: integer inputs
    are computed as integers (else as float32 and cast back).  ``public``: a ttnn op of its own
    (False: only a ``UnaryOpType`` member, such as ``ADD_UNARY_SFPU``).  ``hardware``: keywords
    ttnn's binding has that only matter on a device (checked and recorded).  ``device_operation``:
    tt-metal's device operation when it is not ``UnaryDeviceOperation`` (a composite op);
    ``operator``: the Tensor operator it serves (``neg`` for ``-a``).  ``dtypes``: the input
    dtypes ttnn takes (None: all).  ``even_width``: the op pairs neighbours along the last
    dimension, which must be even.  ``round_params``: the number parameters are rounded to a
    bfloat16 input's precision before use (hardshrink's threshold, compared with bfloat16 values
    as torch compares them; softshrink keeps its float one).  ``vector_mode``: the op takes the
    SFPU's ``vector_mode`` parameter: 4 (RC) computes every element, 2 (C) only the left 16
    columns of each 32-wide tile (faces 0 and 2), the others passing through unchanged."""

    name: str
    compute: Compute
    golden: Golden | None = None
    params: tuple[Param, ...] = ()
    member: str | None = None
    integer: bool = False
    public: bool = True
    hardware: dict[str, Keyword] = field(default_factory=dict)
    device_operation: str = ""
    operator: str | None = None
    dtypes: frozenset[DataType] | None = None
    even_width: bool = False
    round_params: bool = False
    vector_mode: bool = False


def f(name: str, default: Any = REQUIRED) -> Param:
    """A positional float parameter."""
    return Param(name, default, check=_real if default is not None else _real_or_none)


def i(name: str, default: Any = REQUIRED) -> Param:
    """A positional int parameter."""
    return Param(name, default, check=_int)


def kwf(name: str, default: Any) -> Param:
    """A keyword-only float parameter."""
    return kw(name, default, check=_real)


def kwi(name: str, default: int) -> Param:
    """A keyword-only int parameter."""
    return kw(name, default, check=_int)


def kwb(name: str, default: bool) -> Param:
    """A keyword-only bool parameter."""
    return kw(name, default, check=_bool)


def _real(op: str, name: str, value: object) -> None:
    if value is None:
        from meshnn.errors import MeshnnTypeError

        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a number, got None")
    number(op, name, value)


def _real_or_none(op: str, name: str, value: object) -> None:
    number(op, name, value)


def _int(op: str, name: str, value: object) -> None:
    if isinstance(value, int | np.integer) and not isinstance(value, bool) and value < 0:
        return  # a negative int (a diagonal, decimals)
    count(op, name, value)


def _bool(op: str, name: str, value: object) -> None:
    flag(op, name, value)


def _round_mode(op: str, name: str, value: object) -> None:
    if value is not None and value not in ("trunc", "floor"):
        from meshnn.errors import MeshnnValueError

        raise MeshnnValueError(f"ttnn.{op}: {name} must be None, 'trunc' or 'floor', got {value!r}")


ROUND_MODE = kw("round_mode", None, check=_round_mode)
"""torch's rounding modes of a division (keyword-only, as ttnn binds it)."""
ROUNDING_MODE = kw("rounding_mode", None, check=_round_mode)
"""Newer ttnn's name of ``round_mode`` (2026's ``div``, ``rdiv`` and their gradients)."""


def one_rounding_mode(op: str, round_mode: str | None, rounding_mode: str | None) -> str | None:
    """The rounding mode asked of ``ttnn.<op>``: ``round_mode`` (ttnn 0.81) or ``rounding_mode``
    (newer ttnn's name of the same keyword); both given must agree."""
    if round_mode is not None and rounding_mode is not None and round_mode != rounding_mode:
        from meshnn.errors import MeshnnValueError

        raise MeshnnValueError(
            f"ttnn.{op}: round_mode {round_mode!r} and rounding_mode {rounding_mode!r} disagree (give one)"
        )
    return round_mode if round_mode is not None else rounding_mode


APPROX = {"fast_and_approximate_mode": Keyword(False, flag)}
"""The SFPU's approximation switch: meshnn computes in float32 either way."""
