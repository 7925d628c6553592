"""ttnn's golden-function calls: ``ttnn.get_golden_function`` (the torch reference of an op),
``ttnn.attach_golden_function`` (set it) and ``ttnn.register_python_operation`` (declare a Python
function as an op, with its reference).  They read and write the op registry's entries
(:mod:`meshnn.ops.registry`); the pre/post-processing hooks live on the op's function, as in ttnn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.registry import OpKind, add, entry_of
from meshnn.perf.desc import OpFamily

F = TypeVar("F", bound=Callable[..., Any])


def get_golden_function(operation: object) -> Callable[..., Any]:
    """``ttnn.get_golden_function``: the torch reference attached to ``operation``."""
    golden = getattr(operation, "golden_function", None)
    if golden is None:
        entry = entry_of(operation)
        golden = entry.golden if entry is not None else None
    if golden is None:
        name = getattr(operation, "__name__", repr(operation))
        if entry_of(operation) is None and not callable(operation):
            raise MeshnnTypeError(f"ttnn.get_golden_function: {name} is not a ttnn operation")
        raise MeshnnValueError(f"ttnn.get_golden_function: ttnn.{name} has no golden function")
    return golden


def attach_golden_function(
    operation: object,
    golden_function: Callable[..., Any],
    *,
    preprocess_golden_function_inputs: Callable[..., Any] | None = None,
    postprocess_golden_function_outputs: Callable[..., Any] | None = None,
) -> None:
    """``ttnn.attach_golden_function``: make ``golden_function`` the reference of ``operation``
    (the pre/post-processing hooks are kept as ttnn keeps them, on the function)."""
    if not callable(golden_function):
        raise MeshnnTypeError(f"ttnn.attach_golden_function: golden_function must be callable, got {golden_function!r}")
    if not callable(operation):
        raise MeshnnTypeError(f"ttnn.attach_golden_function: operation must be a ttnn operation, got {operation!r}")
    try:
        operation.golden_function = golden_function  # type: ignore[attr-defined]
        operation.preprocess_golden_function_inputs = preprocess_golden_function_inputs  # type: ignore[attr-defined]
        operation.postprocess_golden_function_outputs = postprocess_golden_function_outputs  # type: ignore[attr-defined]
    except AttributeError:
        raise MeshnnTypeError(f"ttnn.attach_golden_function: cannot attach to {operation!r}") from None


def register_python_operation(
    *,
    name: str,
    golden_function: Callable[..., Any] | None = None,
    is_cpp_operation: bool = False,
    is_method: bool = False,
    preprocess_golden_function_inputs: Callable[..., Any] | None = None,
    postprocess_golden_function_outputs: Callable[..., Any] | None = None,
    doc: str | None = None,
) -> Callable[[F], F]:
    """``ttnn.register_python_operation``: declare a Python function as the op ``name`` (``ttnn.x``
    or ``x``), with its golden function.  A name already declared is refused."""
    if not isinstance(name, str) or not name:
        raise MeshnnTypeError(f"ttnn.register_python_operation: name must be a str, got {name!r}")
    short = name.removeprefix("ttnn.")

    def decorate(function: F) -> F:
        if doc is not None:
            function.__doc__ = doc
        function = add(short, function, kind=OpKind.PYTHON, family=OpFamily.COPY, golden=golden_function).function
        function.preprocess_golden_function_inputs = preprocess_golden_function_inputs  # type: ignore[attr-defined]
        function.postprocess_golden_function_outputs = postprocess_golden_function_outputs  # type: ignore[attr-defined]
        return function  # the op as published (its calls run the operation hooks)

    return decorate
