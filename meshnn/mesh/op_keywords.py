"""ttnn's keyword arguments on meshnn's public functions: an unknown one is refused, and the ones
that only matter on hardware are checked and recorded for the ops the call launches.

ttnn's Python bindings raise TypeError on a keyword they do not know, and a config argument that
only matters on hardware (``sub_core_grids``, ``compute_kernel_config``, ``use_multicore``,
``num_workers_per_link``...) changes nothing a simulated op computes.  A public function wears
:func:`ttnn_keywords`, which declares the keywords ttnn's binding has that the function's own
signature does not, each a :class:`Keyword` (ttnn's default and the check of a given value), and
names those of its own signature that are hardware-only (``records``).  A call then

1. refuses a keyword that is neither in the signature nor declared: :class:`MeshnnTypeError` (a
   TypeError) naming the function, the keyword and the nearest known one, before anything runs;
   arguments that do not bind (a missing or extra positional one) are a MeshnnTypeError too;
2. checks each declared keyword given (a wrong type is a MeshnnTypeError naming it; a value meshnn
   cannot honour, such as a preallocated ``output_tensor`` where meshnn allocates its own, is a
   MeshnnValueError naming it), again before anything runs;
3. runs the function without the declared keywords, while :func:`recorded` returns every declared
   or ``records`` keyword the caller gave, by ttnn's names.  :func:`meshnn.ops.launch.launch`
   merges them into each launched op's ``attrs`` (the op's own attrs win), so an observer of
   :mod:`meshnn.mesh.observers` reads them back.  A nested call adds its own to the outer call's
   for its duration.

Only keywords the caller gave are recorded (a default is the signature's, readable there).

Layer: mesh.  Imports :mod:`meshnn.errors` and :mod:`meshnn.device.core` (``sub_core_grids``).
"""

from __future__ import annotations

import contextvars
import difflib
import functools
import inspect
import numbers
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError

F = TypeVar("F", bound=Callable[..., Any])
Check = Callable[[str, str, object], None]
"""``check(op, keyword, value)``: returns when ``value`` is acceptable, raises a MeshnnError naming
``ttnn.<op>`` and ``keyword`` otherwise."""

_NOTHING: Mapping[str, object] = types.MappingProxyType({})
_GIVEN: contextvars.ContextVar[Mapping[str, object]] = contextvars.ContextVar("meshnn_op_keywords", default=_NOTHING)


def _any(op: str, keyword: str, value: object) -> None:
    """Every value is acceptable (a ttnn type meshnn does not model)."""


@dataclass(frozen=True)
class Keyword:
    """A keyword argument of ttnn's that the function's own signature does not have: ttnn's
    ``default`` and the ``check`` of a value given."""

    default: object = None
    check: Check = field(default=_any)


_WRAPPERS: set[types.CodeType] = set()  # the code of ttnn_keywords's wrapper (one object, shared)


def public_name(frame: types.FrameType) -> str | None:
    """The ttnn name of the public function whose :func:`ttnn_keywords` wrapper runs in ``frame``
    (None for another frame): where an error names the call the user made."""
    return frame.f_locals.get("name") if frame.f_code in _WRAPPERS else None  # type: ignore[return-value]


def recorded() -> Mapping[str, object]:
    """The hardware-only keywords given to the public calls now running on this thread (empty
    outside one), by ttnn's names."""
    return _GIVEN.get()


# --------------------------------------------------------------------------------- the checks


def optional(*types: type, what: str) -> Check:
    """None or an instance of ``types`` (``what`` says which, for the message)."""

    def check(op: str, keyword: str, value: object) -> None:
        if value is not None and not isinstance(value, types):
            raise MeshnnTypeError(f"ttnn.{op}: {keyword} must be {what} or None, got {value!r}")

    return check


def flag(op: str, keyword: str, value: object) -> None:
    """A bool (None too: ttnn's optional flags take it)."""
    if value is not None and not isinstance(value, bool):
        raise MeshnnTypeError(f"ttnn.{op}: {keyword} must be a bool, got {value!r}")


def count(op: str, keyword: str, value: object) -> None:
    """None or an int >= 0 (a bool is not a count)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"ttnn.{op}: {keyword} must be an int or None, got {value!r}")
    if value < 0:
        raise MeshnnValueError(f"ttnn.{op}: {keyword} must be >= 0, got {value}")


def number(op: str, keyword: str, value: object) -> None:
    """None or a real number (numpy's scalars too; a bool is not one)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise MeshnnTypeError(f"ttnn.{op}: {keyword} must be a number, got {value!r}")


def choice(*allowed: str) -> Check:
    """One of the strings ``allowed``."""

    def check(op: str, keyword: str, value: object) -> None:
        if not isinstance(value, str):
            raise MeshnnTypeError(f"ttnn.{op}: {keyword} must be a str, got {value!r}")
        if value not in allowed:
            raise MeshnnValueError(f"ttnn.{op}: {keyword} must be one of {list(allowed)}, got {value!r}")

    return check


def only(default: object, why: str, check: Check = _any) -> Keyword:
    """A keyword meshnn takes at ttnn's ``default`` only (checked by ``check`` first); another value
    is a MeshnnValueError naming it and saying ``why``."""

    def only_default(op: str, keyword: str, value: object) -> None:
        check(op, keyword, value)
        if not _same(value, default):
            raise MeshnnValueError(f"ttnn.{op}: {keyword}={value!r} is not supported by meshnn: {why}")

    return Keyword(default, only_default)


def _same(value: object, default: object) -> bool:
    """``value`` is ``default``, or equal to it as a plain number or string (a tensor is never
    compared: its ``==`` is an op)."""
    if value is default:
        return True
    plain = bool | int | float | str
    return isinstance(default, plain) and isinstance(value, plain) and value == default


SUB_CORE_GRIDS = Keyword(None, optional(CoreRangeSet, what="a ttnn.CoreRangeSet"))
QUEUE_ID = Keyword(0, count)
NO_OUTPUT_TENSOR = only(None, "it allocates the output itself; drop output_tensor")


# ------------------------------------------------------------------------------- the decorator


def _refusal(op: str, keyword: str, known: frozenset[str]) -> MeshnnTypeError:
    near = difflib.get_close_matches(keyword, sorted(known), n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return MeshnnTypeError(
        f"ttnn.{op}() got an unexpected keyword argument {keyword!r}{hint}; it takes: {', '.join(sorted(known))}"
    )


def _binding(op: str, error: TypeError) -> MeshnnTypeError:
    """Python's own TypeError of a call whose arguments did not bind (a missing or extra
    positional argument), as ttnn's bindings raise it: a TypeError naming ``ttnn.<op>``."""
    text = str(error)
    text = text.split("() ", 1)[1] if "() " in text else text
    return MeshnnTypeError(f"ttnn.{op}() {text}")


def _signature(function: Callable[..., Any], added: Mapping[str, object]) -> inspect.Signature:
    """``function``'s signature with the keyword-only parameters ``added`` (name: default) in place
    of its ``**kwargs`` (the call takes no other keyword)."""
    params = inspect.signature(function).parameters.values()
    head = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
    extra = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d) for n, d in added.items()]
    return inspect.Signature([*head, *extra])


def ttnn_keywords(
    op: str | None = None,
    *,
    records: tuple[str, ...] = (),
    takes: Mapping[str, object] | None = None,
    **declared: Keyword,
) -> Callable[[F], F]:
    """Give a public function ttnn's keyword arguments (see the module's text).

    ``op``: the ttnn name for messages (default: the function's name).  ``records``: keywords of
    the function's own signature that are hardware-only, recorded when given.  ``takes``: keywords
    (name: default) the function reads from its own ``**kwargs`` (which it must have then).
    ``declared``: the keywords ttnn has that the signature does not."""

    def decorate(function: F) -> F:
        params = inspect.signature(function).parameters
        own = {n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        has_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
        if (takes is not None) != has_kwargs or own & declared.keys() or not set(records) <= own:
            raise TypeError(f"ttnn_keywords on {function.__name__}: takes, records or declared do not fit it")
        name = op or function.__name__
        known = frozenset(own | set(takes or ()) | declared.keys())
        recorded_own = frozenset(records)

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            given: dict[str, object] = {}
            for key in tuple(kwargs):
                spec = declared.get(key)
                if spec is not None:
                    value = kwargs.pop(key)
                    spec.check(name, key, value)
                    given[key] = value
                elif key in recorded_own:
                    given[key] = kwargs[key]
                elif key not in known:
                    raise _refusal(name, key, known)
            token = _GIVEN.set({**_GIVEN.get(), **given}) if given else None
            try:
                return function(*args, **kwargs)
            except TypeError as error:
                if error.__traceback__ is not None and error.__traceback__.tb_next is None:
                    raise _binding(name, error) from None  # the arguments did not bind: no frame ran
                raise
            finally:
                if token is not None:
                    _GIVEN.reset(token)

        _WRAPPERS.add(call.__code__)
        added = {n: k.default for n, k in declared.items()} | dict(takes or {})
        call.__signature__ = _signature(function, added)  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return decorate
