"""A fused activation argument as ttnn's binding takes it: a ``ttnn.UnaryWithParam``, or what
nanobind converts to one implicitly (a ``UnaryOpType`` alone, or a ``(UnaryOpType, param)`` pair
whose param is a float, an int or a bool: ``(UnaryOpType.GELU, False)`` is GELU with param 0.0).

May import: :mod:`meshnn.errors` and the ops' config and unary tables.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError
from meshnn.ops.config import UnaryWithParam
from meshnn.ops.eltwise.unary_tables import UnaryOpType


def converted_activation(value: object) -> object:
    """``value`` as a UnaryWithParam when ttnn converts it to one; anything else unchanged."""
    if isinstance(value, UnaryOpType):
        return UnaryWithParam(value)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], UnaryOpType):
        return UnaryWithParam(value[0], value[1])
    return value


def activation_arg(owner: str, name: str, value: object) -> UnaryWithParam | None:
    """``value`` checked and converted: None, or a UnaryWithParam (from one of ttnn's forms)."""
    value = converted_activation(value)
    if value is None or isinstance(value, UnaryWithParam):
        return value
    raise MeshnnTypeError(
        f"{owner}: {name} must be a ttnn.UnaryWithParam, a UnaryOpType, a (UnaryOpType, param) pair or None, "
        f"got {value!r}"
    )
