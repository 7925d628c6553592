"""Bad calls of ``ttnn.experimental.deepseek_prefill.extract`` / ``insert`` (stop 52): tt-metal's
refusals of the data tensors, the per-expert tables and the scalars."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def _global(e):
    """A valid [32, 32] bfloat8_b TILE DRAM tensor: a view of the table's ``e.bfp8`` (nothing allocated)."""
    return e.bfp8.reshape([32, 32])


def rows() -> list[Case]:
    def extract(g, s, c, t, local=0, most=32):
        ds = ttnn.experimental.deepseek_prefill
        return ds.extract(g, s, c, t, local_expert_id=local, max_dispatched_tokens_per_expert=most)

    def insert(g, x, s, c, t, local=0):
        return ttnn.experimental.deepseek_prefill.insert(g, x, s, c, t, local_expert_id=local)

    name = "experimental.deepseek_prefill.extract"
    put = "experimental.deepseek_prefill.insert"
    return [
        Case(name, "a float32 global", lambda e: extract(e.w, e.ids, e.ids, e.ids), VALUE, "BFLOAT8_B or BFLOAT16"),
        Case(name, "a rank-3 global", lambda e: extract(e.bfp8, e.ids, e.ids, e.ids), VALUE, "must be 2D"),
        Case(name, "a host global", lambda e: extract(e.host, e.ids, e.ids, e.ids), VALUE, "global_tensor"),
        Case(name, "a float32 start", lambda e: extract(_global(e), e.rm, e.ids, e.ids), VALUE, "start must be UINT32"),
        Case(name, "a rank-3 counts", lambda e: extract(_global(e), e.ids, e.a, e.ids), VALUE, "counts must be"),
        Case(name, "local_expert_id past the table", lambda e: extract(_global(e), e.ids, e.ids, e.ids, local=7),
             VALUE, "local_expert_id"),
        Case(name, "a str local_expert_id", lambda e: extract(_global(e), e.ids, e.ids, e.ids, local="0"), TYPE,
             "local_expert_id"),
        Case(name, "max tokens 0", lambda e: extract(_global(e), e.ids, e.ids, e.ids, most=0), VALUE,
             "max_dispatched_tokens_per_expert"),
        Case(name, "max tokens 40", lambda e: extract(_global(e), e.ids, e.ids, e.ids, most=40), VALUE,
             "max_dispatched_tokens_per_expert"),
        Case(put, "a rank-4 local", lambda e: insert(_global(e), e.heads, e.ids, e.ids, e.ids), VALUE, "local_tensor"),
        Case(put, "a bfloat16 local", lambda e: insert(_global(e), e.heads.reshape([64, 32]), e.ids, e.ids, e.ids),
             VALUE, "same dtype"),
        Case(put, "a host start", lambda e: insert(_global(e), _global(e), e.host, e.ids, e.ids), VALUE, "start"),
    ]  # fmt: skip
