"""Bad calls of ttnn's distributed-context functions (the table's meshes are open, so the context
exists)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, Case


def rows() -> list[Case]:
    return [
        Case("Rank", "a float", lambda e: ttnn.Rank(0.5), TYPE, "value"),
        Case("Size", "a string", lambda e: ttnn.Size("2"), TYPE, "value"),
        Case(
            "distributed_context_allgather_int",
            "a float",
            lambda e: ttnn.distributed_context_allgather_int(1.0),
            TYPE,
            "value",
        ),
    ]
