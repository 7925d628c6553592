"""Bad calls of ``ttnn.experimental.broadcast_to``: each refused, naming what is wrong, before
anything is allocated."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    op = "experimental.broadcast_to"
    to = ttnn.experimental.broadcast_to
    return [
        Case(op, "a dim neither 1 nor the target's", lambda e: to(e.a, [2, 4, 40]), VALUE, "cannot be broadcast"),
        Case(op, "fewer dims than the input", lambda e: to(e.a, [3, 40]), VALUE, "more dims"),
        Case(op, "five dims", lambda e: to(e.a, [1, 1, 1, 3, 40]), VALUE, "at most 4D"),
        Case(op, "a negative size", lambda e: to(e.a, [-1, 3, 40]), VALUE, "non-negative"),
        Case(op, "shape of strings", lambda e: to(e.a, ["1", "3", "40"]), TYPE, "output_shape"),
        Case(op, "row-major input", lambda e: to(e.rm, [2, 3, 40]), VALUE, "TILE"),
        Case(op, "bfloat8_b input", lambda e: to(e.bfp8, [2, 8, 32, 32]), TYPE, "only bfloat16, float32"),
        Case(op, "input on the host", lambda e: to(e.host, [8, 3, 40]), VALUE, "input"),
        Case(op, "output of another shape", lambda e: to(e.a, [1, 3, 40], output=e.b), VALUE, "output"),
        Case(op, "output on another mesh", lambda e: to(e.a, [1, 3, 40], output=e.other), VALUE, "mesh"),
    ]
