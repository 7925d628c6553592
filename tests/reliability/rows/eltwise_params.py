"""Bad parameters of the element-wise ops declared by tables: a parameter of the wrong type, an
unknown rounding mode, an in-place op whose second operand would grow the first."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    return [
        Case("leaky_relu", "negative_slope is a string", lambda e: ttnn.leaky_relu(e.a, "0.1"), TYPE, "negative_slope"),
        Case("elu", "alpha is None", lambda e: ttnn.elu(e.a, None), TYPE, "alpha"),
        Case("celu", "alpha given by position", lambda e: ttnn.celu(e.a, 2.0), TYPE, "positional"),
        Case("round", "decimals is a float", lambda e: ttnn.round(e.a, decimals=1.5), TYPE, "decimals"),
        Case("polygamma", "k is missing", lambda e: ttnn.polygamma(e.a), TYPE, "k"),
        Case("rdiv", "round_mode unknown", lambda e: ttnn.rdiv(e.a, 2.0, round_mode="ceil"), VALUE, "round_mode"),
        Case("softplus", "beta given by position", lambda e: ttnn.softplus(e.a, 2.0), TYPE, "positional"),
        Case(
            "gelu",
            "fast_and_approximate_mode is an int",
            lambda e: ttnn.gelu(e.a, fast_and_approximate_mode=1),
            TYPE,
            "fast_and_approximate_mode",
        ),
        Case("add_", "b broadcasts a to a larger shape", lambda e: ttnn.add_(e.row7, e.b), VALUE, "input_tensor_b"),
        Case(
            "atan2",
            "output_tensor is not taken",
            lambda e: ttnn.atan2(e.a, e.a, output_tensor=e.a2),
            TYPE,
            "output_tensor",
        ),
        Case(
            "subtract_",
            "activations of the wrong type",
            lambda e: ttnn.subtract_(e.a, e.a2, activations=[3]),
            TYPE,
            "activations",
        ),
    ]
