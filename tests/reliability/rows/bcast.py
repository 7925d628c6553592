"""Bad calls of ``ttnn.bcast``: each refused, naming the argument, before anything is allocated."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    add, h = ttnn.BcastOpMath.ADD, ttnn.BcastOpDim.H
    return [
        Case("bcast", "math_op a string", lambda e: ttnn.bcast(e.a, e.a, "ADD", h), TYPE, "math_op"),
        Case("bcast", "dim an int", lambda e: ttnn.bcast(e.a, e.a, add, 0), TYPE, "dim"),
        Case("bcast", "input_b row-major", lambda e: ttnn.bcast(e.a, e.rm, add, h), VALUE, "input_b"),
        Case("bcast", "input_b on the host", lambda e: ttnn.bcast(e.a, e.a.cpu(), add, h), VALUE, "input_b"),
    ]
