"""``ttnn.get_fallback_function``: an op's torch reference run on ttnn tensors, as ttnn's decorators
run it: the inputs' tensors read back to torch (or the op's own ``preprocess_golden_function_inputs``),
the golden function called, its torch output(s) made ttnn tensors of the first input tensor's dtype,
layout and device (or the op's own ``postprocess_golden_function_outputs``).

May import: :mod:`meshnn.ops.registry` and the tensor layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from meshnn.ops.golden_functions import get_golden_function
from meshnn.tensor.interop import from_torch, to_torch
from meshnn.tensor.storage import StorageType
from meshnn.tensor.tensor import Tensor


def _to_torch(value: Any) -> Any:
    if isinstance(value, Tensor):
        return to_torch(value)
    if isinstance(value, list | tuple):
        return type(value)(_to_torch(v) for v in value)
    return value


def _first_tensor(value: Any) -> Tensor | None:
    if isinstance(value, Tensor):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list | tuple) else ()
    for item in items:
        found = _first_tensor(item)
        if found is not None:
            return found
    return None


def default_preprocess_golden_function_inputs(function_args: tuple, function_kwargs: dict) -> tuple[tuple, dict]:
    """ttnn's default: every ttnn tensor among the arguments (in lists and tuples too) read back to torch."""
    return _to_torch(tuple(function_args)), {key: _to_torch(value) for key, value in function_kwargs.items()}


def default_postprocess_golden_function_outputs(output: Any, function_args: Any, function_kwargs: Any) -> Any:
    """``ttnn.decorators.default_postprocess_golden_function_outputs``: a golden function's torch
    output(s) as ttnn tensors of the first input tensor's dtype, layout and device."""
    first = _first_tensor((function_args, function_kwargs))
    dtype = first.dtype if first is not None else None
    layout = first.layout if first is not None else None
    device = first.device() if first is not None and first.storage_type() == StorageType.DEVICE else None

    def convert(value: Any) -> Any:
        if isinstance(value, list | tuple):
            return type(value)(convert(v) for v in value)
        return from_torch(value, dtype=dtype, layout=layout, device=device)

    return convert(output)


def get_fallback_function(operation: object) -> Callable[..., Any]:
    """``ttnn.get_fallback_function(operation)``: a function that runs ``operation``'s golden (torch)
    function on ttnn tensors and gives ttnn tensors back; raises as ``ttnn.get_golden_function`` when
    the op has none (checked when asked, before anything runs)."""
    golden = get_golden_function(operation)

    def fallback_function(*function_args: Any, **function_kwargs: Any) -> Any:
        preprocess = getattr(operation, "preprocess_golden_function_inputs", None)
        postprocess = getattr(operation, "postprocess_golden_function_outputs", None)
        args, kwargs = (preprocess or default_preprocess_golden_function_inputs)(function_args, function_kwargs)
        output = golden(*args, **kwargs)
        return (postprocess or default_postprocess_golden_function_outputs)(output, function_args, function_kwargs)

    return fallback_function
