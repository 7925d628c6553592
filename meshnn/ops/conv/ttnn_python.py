"""The helpers of ttnn's Python module ``ttnn.operations.conv2d`` that tt-metal's tests import:
``get_conv_output_dim`` and ``get_torch_act_func_from_string`` (a fused activation as a torch
function).  The module's other names (``Conv2dConfig``, ``prepare_conv_weights``...) are
meshnn's public ones.

May import: the conv package.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral
from typing import Any

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.conv.geometry import torch_module


def get_conv_output_dim(input: int, window: int, stride: int = 1, pad: int = 0, dilation: int = 1) -> int:
    """The output size of a conv along one dimension (``pad`` on each side), in elements:
    ``(input + 2 pad - dilation (window - 1) - 1) // stride + 1`` (not positive when the window does
    not fit, as ttnn gives it).  Arguments must be ints; ``window``, ``stride`` and ``dilation``
    positive, ``input`` and ``pad`` not negative (ttnn's stride 0 is a ZeroDivisionError)."""
    named = {"input": input, "window": window, "stride": stride, "pad": pad, "dilation": dilation}
    for name, value in named.items():
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise MeshnnTypeError(f"get_conv_output_dim: {name} must be an int, got {value!r}")
        least, word = (1, "positive") if name in ("window", "stride", "dilation") else (0, "non-negative")
        if value < least:
            raise MeshnnValueError(f"get_conv_output_dim: {name} must be {word}, got {value}")
    return (input + 2 * pad - dilation * (window - 1) - 1) // stride + 1


_TORCH_ACTIVATIONS = {
    "relu": ("nn.functional", "relu"),
    "silu": ("nn.functional", "silu"),
    "mish": ("nn.functional", "mish"),
    "sigmoid": ("nn.functional", "sigmoid"),
    "hardsigmoid": ("nn.functional", "hardsigmoid"),
    "tanh": ("nn.functional", "tanh"),
    "log": ("", "log"),
    "softplus": ("nn.functional", "softplus"),
    "gelu": ("nn.functional", "gelu"),
    "sqrt": ("", "sqrt"),
}


def get_torch_act_func_from_string(activation: Any) -> Callable[..., Any] | None:
    """The torch function of a fused activation (a ``ttnn.UnaryWithParam``), None for None."""
    if activation is None:
        return None
    op_type = getattr(activation, "op_type", None)
    if op_type is None:
        raise MeshnnValueError(f"activation {activation!r} is not a ttnn.UnaryWithParam or None")
    found = _TORCH_ACTIVATIONS.get(op_type.value)
    if found is None:
        raise MeshnnValueError(f"activation {op_type} has no torch function here")
    module: Any = torch_module()
    for part in filter(None, found[0].split(".")):
        module = getattr(module, part)
    return getattr(module, found[1])


TTNN_NAMES = {
    "get_conv_output_dim": get_conv_output_dim,
    "get_torch_act_func_from_string": get_torch_act_func_from_string,
}
