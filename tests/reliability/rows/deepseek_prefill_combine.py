"""Bad calls of ``ttnn.experimental.deepseek_prefill.post_combine_reduce``.  ``e.heads`` is bfloat16
TILE [1, 2, 32, 32] per device of the 2x4 ``e.mesh``; ``e.nhwc`` bfloat16 ROW_MAJOR [1, 4, 4, 32];
``e.rm`` float32 ROW_MAJOR [1, 3, 40]; ``e.moe[1]`` uint16 ROW_MAJOR; ``e.i32`` int32 TILE."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, WRONG_MESH, Case

REDUCE = "experimental.deepseek_prefill.post_combine_reduce"


def _reduce(e, combine=None, weights=None, *args, **kwargs):
    kwargs.setdefault("expert_dim", 2)
    ds = ttnn.experimental.deepseek_prefill
    return ds.post_combine_reduce(
        e.nhwc if combine is None else combine, e.nhwc if weights is None else weights, *args, **kwargs
    )


def rows() -> list[Case]:
    return [
        Case(REDUCE, "indices without a table", lambda e: _reduce(e, None, None, e.moe[1]), VALUE,
             "expert_dispatch_table"),
        Case(REDUCE, "float32 combine", lambda e: _reduce(e, combine=e.rm, weights=e.rm, expert_dim=1), VALUE,
             "combine_output"),
        Case(REDUCE, "TILE combine", lambda e: _reduce(e, combine=e.heads, weights=e.heads), VALUE, "combine_output"),
        Case(REDUCE, "expert_dim 4 of rank 4", lambda e: _reduce(e, expert_dim=4), VALUE, "expert_dim"),
        Case(REDUCE, "expert_dim 1 (not before the embedding)", lambda e: _reduce(e, expert_dim=1), VALUE,
             "expert_dim"),
        Case(REDUCE, "weights of another rank", lambda e: _reduce(e, weights=e.rm), VALUE, "weights rank"),
        Case(REDUCE, "4 tokens (not 32s)", lambda e: _reduce(e), VALUE, "tokens"),
        Case(REDUCE, "expert_dim -1", lambda e: _reduce(e, expert_dim=-1), TYPE, "expert_dim"),
        Case(REDUCE, "output_memory_config a str", lambda e: _reduce(e, output_memory_config="L1"), TYPE,
             "output_memory_config"),
        Case(REDUCE, "combine on the host", lambda e: _reduce(e, combine=e.host), VALUE, "combine_output"),
        Case(REDUCE, "weights on another mesh", lambda e: _reduce(e, weights=e.other), WRONG_MESH, "weights"),
    ]  # fmt: skip
