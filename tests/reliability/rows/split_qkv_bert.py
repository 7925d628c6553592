"""Bad calls of ``ttnn.experimental.split_query_key_value_and_split_heads`` (BERT-large's): a width
that does not split into 3 x num_heads heads, no heads, a grid of the wrong kind, a deallocated
input."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, Case

_GRID = ttnn.CoreCoord(8, 8)


def rows() -> list[Case]:
    op = ttnn.experimental.split_query_key_value_and_split_heads
    name = "experimental.split_query_key_value_and_split_heads"
    return [
        Case(name, "width not 3 x heads", lambda e: op(e.heads, _GRID), VALUE, "num_heads"),
        Case(name, "no heads", lambda e: op(e.heads, _GRID, num_heads=0), VALUE, "num_heads"),
        Case(name, "grid a string", lambda e: op(e.heads, "8x8"), TYPE, "compute_with_storage_grid_size"),
        Case(name, "input deallocated", lambda e: op(e.freed, _GRID), DEAD, "input_tensor"),
    ]
