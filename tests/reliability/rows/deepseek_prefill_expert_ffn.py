"""Bad calls of ``ttnn.experimental.deepseek_prefill.routed_expert_ffn``, ``unified_routed_expert_ffn`` and
``unified_routed_expert_moe`` (stop 52): tt-metal's refusals of dtypes, shapes, tables, the output and the
expert lists (the table's mesh is a Wormhole T3000: the unified FFN's 11x8 grid is refused last)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    ds = "experimental.deepseek_prefill"

    def ffn(x, w, **kw):
        return ttnn.experimental.deepseek_prefill.routed_expert_ffn(x, w, w, w, **kw)

    def unified(x, w, counts, table, local=0, **kw):
        return ttnn.experimental.deepseek_prefill.unified_routed_expert_ffn(x, w, w, w, counts, table, local, **kw)

    def moe(e, gates, ups, downs):
        return ttnn.experimental.deepseek_prefill.unified_routed_expert_moe(e.bfp8, e.ids, e.ids, e.ids, gates, ups,
                                                                            downs, 32)  # fmt: skip

    def square(e):  # a [32, 32] bfloat8_b tile: a view of e.bfp8 (nothing allocated)
        return e.bfp8.reshape([32, 32])

    return [
        Case(f"{ds}.routed_expert_ffn", "a float32 x", lambda e: ffn(e.a, e.a), VALUE, "BFLOAT16 or BFLOAT8_B"),
        Case(f"{ds}.routed_expert_ffn", "x on the host", lambda e: ffn(e.host, e.a), VALUE, "x"),
        Case(f"{ds}.routed_expert_ffn", "a str compute config",
             lambda e: ffn(e.bfp8, e.bfp8, compute_kernel_config="x"), TYPE, "compute_kernel_config"),
        Case(f"{ds}.unified_routed_expert_ffn", "a bfloat16 x", lambda e: unified(e.heads, e.heads, e.ids, e.ids),
             VALUE, "x must be BFLOAT8_B"),
        Case(f"{ds}.unified_routed_expert_ffn", "weights of another K", lambda e: unified(
            square(e), e.heads.reshape([64, 32]), e.ids, e.ids), VALUE, "must match gate/up's K dim"),
        Case(f"{ds}.unified_routed_expert_ffn", "float32 counts", lambda e: unified(square(e), square(e), e.rm, e.ids),
             VALUE, "counts must be UINT32"),
        Case(f"{ds}.unified_routed_expert_ffn", "local_expert_id past the table",
             lambda e: unified(square(e), square(e), e.ids, e.ids, local=7), VALUE, "local_expert_id"),
        Case(f"{ds}.unified_routed_expert_ffn", "offsets without an output",
             lambda e: unified(square(e), square(e), e.ids, e.ids, expert_region_offsets=e.ids), VALUE,
             "requires optional_output"),
        Case(f"{ds}.unified_routed_expert_ffn", "a Wormhole grid", lambda e: unified(square(e), square(e), e.ids,
             e.ids), VALUE, "11x8 compute grid"),
        Case(f"{ds}.unified_routed_expert_moe", "lists of other lengths", lambda e: moe(e, [e.bfp8], [], []), VALUE,
             "same length"),
        Case(f"{ds}.unified_routed_expert_moe", "no experts", lambda e: moe(e, [], [], []), VALUE, "at least one"),
        Case(f"{ds}.unified_routed_expert_moe", "a tensor for a list", lambda e: moe(e, e.bfp8, [], []), TYPE,
             "gate_projs"),
    ]  # fmt: skip
