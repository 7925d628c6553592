"""The helper of ttnn's Python module ``ttnn.operations.activations`` that tt-metal's matmul and conv
tests import: ``get_golden_function_for_activation``, the torch reference of a fused activation given
as ttnn gives it (a ``UnaryOpType``, a ``UnaryWithParam``, an op's name, ``"<name>_approx"``, None).

May import: :mod:`meshnn.errors`, the ops' config and registry, and torch (when called).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops import golden_functions, registry
from meshnn.ops.config import UnaryOpType

_TORCH = {  # UnaryOpType -> (torch module path, function): the activations ttnn's map knows
    UnaryOpType.RELU: ("nn.functional", "relu"),
    UnaryOpType.RELU6: ("nn.functional", "relu6"),
    UnaryOpType.SILU: ("nn.functional", "silu"),
    UnaryOpType.MISH: ("nn.functional", "mish"),
    UnaryOpType.SIGMOID: ("nn.functional", "sigmoid"),
    UnaryOpType.HARDSIGMOID: ("nn.functional", "hardsigmoid"),
    UnaryOpType.TANH: ("nn.functional", "tanh"),
    UnaryOpType.LOG: ("", "log"),
    UnaryOpType.SOFTPLUS: ("nn.functional", "softplus"),
    UnaryOpType.GELU: ("nn.functional", "gelu"),
    UnaryOpType.SQRT: ("", "sqrt"),
}


def get_golden_function_for_activation(activation: object) -> Callable[..., Any] | None:
    """The torch function of ``activation``: None for None; a name (``"relu6"``, ``"gelu_approx"``)
    is the named op's golden function; a ``UnaryWithParam`` is its ``op_type``'s; a ``UnaryOpType``
    one of the eleven torch functions ttnn maps (others are refused, as ttnn refuses them)."""
    if activation is None:
        return None
    if isinstance(activation, str):
        name = activation.removesuffix("_approx")
        try:
            entry = registry.lookup(name)
        except MeshnnValueError:
            raise MeshnnValueError(f"Unsupported activation: {activation}") from None
        return golden_functions.get_golden_function(entry.function)
    activation = getattr(activation, "op_type", activation)
    if not isinstance(activation, UnaryOpType):
        raise MeshnnTypeError(f"{activation!r} is not supported as activation function")
    found = _TORCH.get(activation)
    if found is None:
        raise MeshnnValueError(f"{activation} is not supported as activation function")
    import torch

    module: Any = torch
    for part in filter(None, found[0].split(".")):
        module = getattr(module, part)
    return getattr(module, found[1])


TTNN_NAMES = {"get_golden_function_for_activation": get_golden_function_for_activation}
