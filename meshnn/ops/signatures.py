"""Public functions made from a declaration of ttnn's signature: ops declared in tables (a few
hundred element-wise ops) get real Python functions with ttnn's parameter names, order and
defaults, which ``inspect.signature``, ``help()`` and ttnn's keyword checks read like any other.

A :class:`Param` is one parameter; :func:`make_function` builds ``name(<params>)`` that calls
``call(**{every parameter: its value})``.  The function is compiled from a generated ``def``, as
``collections.namedtuple`` builds its classes, so binding costs nothing beyond a plain call.

May import: :mod:`meshnn.errors`.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from meshnn.errors import MeshnnTypeError

REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()
"""The default of a parameter the caller must give."""

Check = Callable[[str, str, object], None]
"""``check(op, parameter, value)``: returns when the value is acceptable, raises a MeshnnError
naming ``ttnn.<op>`` and the parameter otherwise (the checks of :mod:`meshnn.mesh.op_keywords`)."""


@dataclass(frozen=True)
class Param:
    """One parameter: its ttnn name, its default (:data:`REQUIRED`: none), whether it may be
    given by position (ttnn's keyword-only parameters come after the ``*``), and the check of a
    value given (None: any value)."""

    name: str
    default: Any = REQUIRED
    positional: bool = True
    check: Check | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or keyword.iskeyword(self.name):
            raise MeshnnTypeError(f"Param: {self.name!r} is not a parameter name")


def kw(name: str, default: Any = None, check: Check | None = None) -> Param:
    """A keyword-only parameter (after ttnn's ``*``)."""
    return Param(name, default, positional=False, check=check)


def make_function(
    name: str,
    params: Sequence[Param],
    call: Callable[..., Any],
    doc: str = "",
    *,
    plain: Callable[..., Any] | None = None,
) -> Callable[..., Any]:
    """``def name(<params>): return call(**every parameter)``, with ``params`` in ttnn's order.
    ``plain``: what the call comes to when every parameter with a default has it (the very
    object: ``is``), given the required ones by position; the function calls it then, without
    the keywords ``call`` would be handed."""
    seen: set[str] = set()
    parts: list[str] = []
    star = False
    namespace: dict[str, Any] = {"_call": call, "_plain": plain}
    for i, p in enumerate(params):
        if p.name in seen:
            raise MeshnnTypeError(f"make_function {name}: parameter {p.name!r} is declared twice")
        seen.add(p.name)
        if not p.positional and not star:
            parts.append("*")
            star = True
        if p.positional and star:
            raise MeshnnTypeError(f"make_function {name}: positional parameter {p.name!r} after a keyword-only one")
        if p.default is REQUIRED:
            parts.append(p.name)
        else:
            namespace[f"_d{i}"] = p.default
            parts.append(f"{p.name}=_d{i}")
    body = ", ".join(f"{p.name}={p.name}" for p in params)
    source = f"def {name}({', '.join(parts)}):\n"
    defaults = [f"{p.name} is _d{i}" for i, p in enumerate(params) if p.default is not REQUIRED]
    if plain is not None and defaults:
        required = ", ".join(p.name for p in params if p.default is REQUIRED)
        source += f"    if {' and '.join(defaults)}:\n        return _plain({required})\n"
    source += f"    return _call({body})\n"
    exec(compile(source, f"<ttnn.{name}>", "exec"), namespace)
    function = namespace[name]
    function.__doc__ = doc
    function.__qualname__ = name
    function.__module__ = getattr(call, "__module__", __name__)
    return function
