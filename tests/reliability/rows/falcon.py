"""Bad calls of Falcon-7B's decode attention ops: ``attn_matmul`` (a deallocated input, a grid of the
wrong kind, two KV heads), ``attn_matmul_from_cache`` (no tokens, ``transpose_hw`` not a bool),
``group_attn_matmul`` (users that do not match), ``nlp_create_qkv_heads_falcon7b`` (a shape other
than ``[b, 1, s, 4672]``, a ROW_MAJOR input)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, Case

_GRID = ttnn.CoreCoord(8, 4)


def rows() -> list[Case]:
    x = ttnn.experimental
    am, amc, gam = "experimental.attn_matmul", "experimental.attn_matmul_from_cache", "experimental.group_attn_matmul"
    heads = "experimental.nlp_create_qkv_heads_falcon7b"
    return [
        Case(
            am,
            "a deallocated",
            lambda e: x.attn_matmul(e.freed, e.heads, compute_with_storage_grid_size=_GRID),
            DEAD,
            "input_tensor_a",
        ),
        Case(
            am,
            "grid is a list",
            lambda e: x.attn_matmul(e.heads, e.heads, compute_with_storage_grid_size=[8]),
            TYPE,
            "compute_with_storage_grid_size",
        ),
        Case(
            am,
            "two KV heads",
            lambda e: x.attn_matmul(e.heads, e.heads, compute_with_storage_grid_size=_GRID),
            VALUE,
            "kv_heads",
        ),
        Case(
            amc,
            "no tokens",
            lambda e: x.attn_matmul_from_cache(
                e.heads, e.heads, num_tokens=0, transpose_hw=True, compute_with_storage_grid_size=_GRID
            ),
            VALUE,
            "num_tokens",
        ),
        Case(
            amc,
            "transpose_hw a string",
            lambda e: x.attn_matmul_from_cache(
                e.heads, e.heads, num_tokens=32, transpose_hw="yes", compute_with_storage_grid_size=_GRID
            ),
            TYPE,
            "transpose_hw",
        ),
        Case(
            gam,
            "users do not match",
            lambda e: x.group_attn_matmul(e.heads, e.heads, compute_with_storage_grid_size=_GRID),
            VALUE,
            "users",
        ),
        Case(heads, "not [b, 1, s, 4672]", lambda e: x.nlp_create_qkv_heads_falcon7b(e.heads), VALUE, "input shape"),
        Case(heads, "ROW_MAJOR input", lambda e: x.nlp_create_qkv_heads_falcon7b(e.rm), VALUE, "TILE"),
    ]
