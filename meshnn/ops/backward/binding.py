"""Overloaded public functions, as ttnn's pybind11 bindings declare its backward and complex ops:
an op has one or more :class:`Overload` s, each a list of typed arguments (:class:`Arg`) in ttnn's
order with ttnn's defaults and keyword-only markers.  A call runs the first overload whose
arguments bind and whose values have the declared kinds (``mul_bw(grad, a, 2.0)`` takes the
scalar overload, ``mul_bw(grad, a, b)`` the tensor one); when none does, a MeshnnTypeError (a
TypeError, as pybind11 raises) names the op and the argument that did not fit.

A function of one overload carries that overload's ``inspect.Signature``; an overloaded one
documents every overload, as pybind11 does.  Every one keeps its overloads (``.overloads``).

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' signatures and the complex tensor.
"""

from __future__ import annotations

import enum
import inspect
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from meshnn.errors import MeshnnTypeError
from meshnn.formats.dtypes import DataType
from meshnn.ops.complex.tensor import ComplexTensor
from meshnn.ops.signatures import REQUIRED
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _number(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _int(v: object) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _bools(v: object) -> bool:
    return isinstance(v, list | tuple) and all(isinstance(b, bool) for b in v)


def _ints(v: object) -> bool:
    try:
        return not isinstance(v, str) and all(_int(d) for d in v)  # type: ignore[union-attr]
    except TypeError:
        return False


class Kind(enum.Enum):
    """What an argument takes: its test and the words an error uses for it."""

    TENSOR = ("a ttnn.Tensor", lambda v: isinstance(v, Tensor))
    COMPLEX = ("a ttnn.ComplexTensor", lambda v: isinstance(v, ComplexTensor))
    NUMBER = ("a number", _number)
    INT = ("an int", _int)
    STR = ("a str", lambda v: isinstance(v, str))
    INTS = ("a sequence of ints", _ints)
    BOOLS = ("a list of bools", _bools)
    MEMORY_CONFIG = ("a ttnn.MemoryConfig", lambda v: isinstance(v, MemoryConfig))
    DTYPE = ("a ttnn DataType", lambda v: isinstance(v, DataType))

    def __init__(self, words: str, test: Callable[[object], bool]) -> None:
        self.words = words
        self.test = test


@dataclass(frozen=True)
class Arg:
    """One argument: ttnn's name, its kind, its default (:data:`REQUIRED`: none; an optional
    argument's None is accepted besides its kind), and whether it may be given by position."""

    name: str
    kind: Kind
    default: Any = REQUIRED
    positional: bool = True
    optional: bool = False

    def accepts(self, value: object) -> bool:
        return (value is None and self.optional) or self.kind.test(value)


def a(name: str, kind: Kind, default: Any = REQUIRED, *, optional: bool = False) -> Arg:
    """A positional argument (None accepted when ``optional``)."""
    return Arg(name, kind, default, True, optional or default is None)


def k(name: str, kind: Kind, default: Any = None, *, optional: bool | None = None) -> Arg:
    """A keyword-only argument (None accepted when its default is None, or when ``optional``)."""
    return Arg(name, kind, default, False, default is None if optional is None else optional)


MEMORY_CONFIG = k("memory_config", Kind.MEMORY_CONFIG)
"""``memory_config=None``: the output's memory config (None: the incoming gradient's)."""
MEMORY_CONFIG_REQUIRED = k("memory_config", Kind.MEMORY_CONFIG, REQUIRED, optional=False)
"""``memory_config`` as ttnn's ComplexTensor overloads take it: required, by keyword."""
QUEUE_ID = k("queue_id", Kind.INT, 0)
"""``queue_id=0``: the command queue (ttnn's decorator takes it for every op)."""


@dataclass(frozen=True)
class Overload:
    """One of an op's bindings: its arguments in ttnn's order, and what it runs with them
    (``run(**every argument by name)``)."""

    args: tuple[Arg, ...]
    run: Callable[..., Any]

    @property
    def signature(self) -> inspect.Signature:
        params = []
        for arg in self.args:
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if arg.positional else inspect.Parameter.KEYWORD_ONLY
            default = inspect.Parameter.empty if arg.default is REQUIRED else arg.default
            params.append(inspect.Parameter(arg.name, kind, default=default))
        return inspect.Signature(params)

    def mismatch(self, values: dict[str, object]) -> Arg | None:
        """The first argument whose value is not of its kind (None: every one is)."""
        for arg in self.args:
            if not arg.accepts(values[arg.name]):
                return arg
        return None


def overloaded(name: str, overloads: Sequence[Overload], doc: str) -> Callable[..., Any]:
    """The public function ``ttnn.<name>`` of ``overloads`` (tried in order)."""
    bound = [(o, o.signature) for o in overloads]

    def function(*args: Any, **kwargs: Any) -> Any:
        failure = None
        for overload, signature in bound:
            try:
                call = signature.bind(*args, **kwargs)
            except TypeError as error:
                failure = failure or str(error)
                continue
            call.apply_defaults()
            wrong = overload.mismatch(call.arguments)
            if wrong is None:
                return overload.run(**call.arguments)
            if failure is None or not failure.startswith("ttnn."):
                value = call.arguments[wrong.name]
                words = wrong.kind.words + (" or None" if wrong.optional else "")
                failure = f"ttnn.{name}: {wrong.name} must be {words}, got {type(value).__name__} {value!r:.60}"
        if not failure.startswith("ttnn."):
            failure = f"ttnn.{name}: {failure}"
        raise MeshnnTypeError(f"{failure} (ttnn.{name} takes {_forms(name, bound)})")

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc + "\n\n" + "\n".join(f"{name}{s}" for _, s in bound)
    function.overloads = tuple(overloads)  # type: ignore[attr-defined]
    if len(bound) == 1:
        function.__signature__ = bound[0][1]  # type: ignore[attr-defined]
    return function


def _forms(name: str, bound: Sequence[tuple[Overload, inspect.Signature]]) -> str:
    return " or ".join(f"({', '.join(a.name for a in o.args if a.positional)}, ...)" for o, _ in bound)
