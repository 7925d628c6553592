"""ttnn's operation hooks: code run before and after each top-level op call.

Every op the registry declares is published through :func:`public`, a thin wrapper that costs one
check of two lists while no hook is registered.  With hooks, a call made from outside any other op
(a *top-level* call, as ttnn counts them: an op that ``ttnn.linear`` calls inside itself is not
one) runs each pre-operation hook with ``(operation, args, kwargs)`` before the op and each
post-operation hook with ``(operation, args, kwargs, output)`` after it; ``operation`` is the public
op (``ttnn.exp``), the arguments as the caller gave them.  A hook must return None (ttnn raises
RuntimeError otherwise: a :class:`~meshnn.errors.MeshnnError` here).  ttnn's comparison mode
(:mod:`meshnn.capture.comparison`) is such a pair of hooks.

Layer: mesh (beside :mod:`meshnn.mesh.op_keywords`: an error's call site skips these wrappers).
May import: :mod:`meshnn.errors`.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

from meshnn.errors import MeshnnError, MeshnnTypeError

PreHook = Callable[[Any, tuple, dict], None]
PostHook = Callable[[Any, tuple, dict, Any], None]

PRE_OPERATION_HOOKS: list[PreHook] = []
POST_OPERATION_HOOKS: list[PostHook] = []
_STATE = threading.local()  # ``inside``: this thread is running a hooked top-level call
_PUBLIC: dict[Callable[..., Any], Callable[..., Any]] = {}  # each function's one wrapper
_WRAPPERS: set[types.CodeType] = set()  # the wrapper's code (one object, shared)


def public(function: Callable[..., Any]) -> Callable[..., Any]:
    """The public form of an op's ``function`` (the same object for the same function): calls run
    the hooks when any is registered.  A callable that is not a plain function (a class, a
    builtin) is returned as it is."""
    if not isinstance(function, types.FunctionType) or getattr(function, "__meshnn_unhooked__", None):
        return function
    made = _PUBLIC.get(function)
    if made is None:

        @functools.wraps(function)
        def made(*args: Any, **kwargs: Any) -> Any:
            if PRE_OPERATION_HOOKS or POST_OPERATION_HOOKS:
                return _hooked(made, function, args, kwargs)
            return function(*args, **kwargs)

        made.__meshnn_unhooked__ = function  # type: ignore[attr-defined]
        _PUBLIC[function] = made
        _WRAPPERS.add(made.__code__)
    return made


def is_wrapper(code: types.CodeType) -> bool:
    """Whether ``code`` is the hooks' wrapper (a frame an error's call site looks through)."""
    return code in _WRAPPERS


def _hooked(operation: Any, function: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    if getattr(_STATE, "inside", False):  # an op called by another: not top level
        return function(*args, **kwargs)
    _STATE.inside = True
    try:
        for hook in tuple(PRE_OPERATION_HOOKS):
            _returned_none(hook, hook(operation, args, kwargs))
        output = function(*args, **kwargs)
        for hook in tuple(POST_OPERATION_HOOKS):
            _returned_none(hook, hook(operation, args, kwargs, output))
        return output
    finally:
        _STATE.inside = False


def _returned_none(hook: object, value: object) -> None:
    if value is not None:
        raise MeshnnError(f"Operation hook {hook!r} returned {value!r} but must return None")


def register_pre_operation_hook(hook: PreHook) -> contextlib.AbstractContextManager[None]:
    """``ttnn.register_pre_operation_hook``: run ``hook(operation, args, kwargs)`` before each
    top-level op inside the ``with`` block (a hook that is not callable is refused here)."""
    return _registered(PRE_OPERATION_HOOKS, _callable(hook, "register_pre_operation_hook"))


def register_post_operation_hook(hook: PostHook) -> contextlib.AbstractContextManager[None]:
    """``ttnn.register_post_operation_hook``: run ``hook(operation, args, kwargs, output)`` after
    each top-level op inside the ``with`` block (a hook that is not callable is refused here)."""
    return _registered(POST_OPERATION_HOOKS, _callable(hook, "register_post_operation_hook"))


def _callable(hook: Any, name: str) -> Any:
    if not callable(hook):
        raise MeshnnTypeError(f"ttnn.{name}: the hook must be callable, got {hook!r}")
    return hook


@contextlib.contextmanager
def _registered(hooks: list, hook: Callable[..., None]) -> Iterator[None]:
    hooks.append(hook)
    try:
        yield
    finally:
        hooks.remove(hook)
