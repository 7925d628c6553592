"""All unary definitions, and ``ttnn.UnaryOpType`` made from them.

``UnaryOpType`` has every member of ttnn's enum (``ttnn/cpp/.../unary_op_types.hpp``, in its
order); a member's value is the name of the definition that computes it (the public op's name,
such as ``"reciprocal"`` for ``RECIP``), or its own name in lower case where meshnn has no
computation for it (``TYPECAST``, ``DROPOUT``...: refused as a fused activation, by name).

May import: the unary tables.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import numpy as np

from meshnn.ops.eltwise.unary_activations import ACTIVATIONS, MEMBERS_ONLY
from meshnn.ops.eltwise.unary_defs import UnaryDef
from meshnn.ops.eltwise.unary_math import MATH

UNARY_DEFS: tuple[UnaryDef, ...] = (*MATH, *ACTIVATIONS, *MEMBERS_ONLY)
"""Every unary definition: the public ops, then the members that are only fused activations."""

TTNN_MEMBERS = [
    "EXP",
    "RECIP",
    "GELU",
    "RELU",
    "SQRT",
    "SIGMOID",
    "LOG",
    "LOG1P",
    "TANH",
    "LOG2",
    "LOG10",
    "SIN",
    "COS",
    "COSH",
    "SINH",
    "ABS",
    "ABS_INT32",
    "SIGN",
    "SQUARE",
    "EQZ",
    "NEZ",
    "GTZ",
    "LTZ",
    "GEZ",
    "LEZ",
    "RELU_MAX",
    "RELU_MIN",
    "POWER",
    "POWER_ITERATIVE",
    "LEAKY_RELU",
    "ELU",
    "EXP2",
    "HEAVISIDE",
    "EXPM1",
    "SIGNBIT",
    "ASIN",
    "ACOS",
    "ACOSH",
    "RSQRT",
    "RELU6",
    "ATAN",
    "ASINH",
    "ATANH",
    "ERF",
    "ERFC",
    "ISINF",
    "ISPOSINF",
    "ISNEGINF",
    "ISNAN",
    "LOGICAL_NOT_UNARY",
    "ISFINITE",
    "ERFINV",
    "I0",
    "I1",
    "TAN",
    "RSUB",
    "RDIV",
    "SILU",
    "SOFTPLUS",
    "IDENTITY",
    "NEG",
    "ADD_UNARY_SFPU",
    "SUB_UNARY_SFPU",
    "MUL_UNARY_SFPU",
    "DIV_UNARY_SFPU",
    "UNARY_NE",
    "UNARY_EQ",
    "UNARY_GT",
    "UNARY_LT",
    "UNARY_GE",
    "UNARY_LE",
    "TILED_PROD",
    "TYPECAST",
    "BITCAST",
    "BITWISE_XOR",
    "BITWISE_NOT",
    "BITWISE_AND",
    "BITWISE_OR",
    "RIGHT_SHIFT",
    "FLOOR",
    "CEIL",
    "TRUNC",
    "FRAC",
    "ROUND",
    "LEFT_SHIFT",
    "REMAINDER",
    "FMOD",
    "DROPOUT",
    "FILL",
    "PRELU_SFPU",
    "ZERO_POINT",
    "ALT_COMPLEX_ROTATE90",
    "MISH",
    "HARDMISH",
    "MAXIMUM",
    "MINIMUM",
    "TANHSHRINK",
    "THRESHOLD",
    "SOFTSHRINK",
    "HARDSHRINK",
    "HARDTANH",
    "HARDSIGMOID",
    "HARDSWISH",
    "WHERE_TSS",
    "SOFTSIGN",
    "CELU",
    "CLAMP_TSS",
    "SELU",
    "RPOW",
    "CBRT",
    "LOGSIGMOID",
    "LOGIT",
    "XIELU",
    "LGAMMA",
    "DIGAMMA",
    "POLYGAMMA",
]
"""ttnn's UnaryOpType members, in its order (a closed set, tt-metal 2026-06: ttnn 2025-11's and
``POWER_ITERATIVE``, ``BITCAST`` and the six after ``CBRT``)."""

DEFS: dict[str, UnaryDef] = {d.name: d for d in UNARY_DEFS}
UNARY: dict[str, Callable[..., np.ndarray]] = {d.name: d.compute for d in UNARY_DEFS}
"""Each unary definition's name -> its numeric function (kernels look it up when they run)."""
BY_MEMBER: dict[str, UnaryDef] = {d.member: d for d in UNARY_DEFS if d.member}

UnaryOpType = enum.Enum(  # type: ignore[misc]
    "UnaryOpType",
    [(m, BY_MEMBER[m].name if m in BY_MEMBER else m.lower()) for m in TTNN_MEMBERS],
    module="meshnn",
)
UnaryOpType.__doc__ = (
    "``ttnn.UnaryOpType``: the unary ops a binary op or a matmul can fuse as an activation; each "
    "member's value names the unary op that computes it."
)
UnaryOpType.__qualname__ = "UnaryOpType"
