"""Bad calls of ``ttnn.experimental.deepseek_prefill.rotary_embedding_indexed`` (stop 52): tt-metal's
refusals of layouts, ranks, the transformation matrix, the cluster axis and the KV length."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    def rope(x, c, s, t, kv=0, axis=1):
        return ttnn.experimental.deepseek_prefill.rotary_embedding_indexed(x, c, s, t, kv, axis)

    def trans(e):  # a single [1, 1, 32, 32] tile: a view of e.bfp8 (nothing allocated)
        return e.bfp8.reshape([1, 1, 32, 32])

    name = "experimental.deepseek_prefill.rotary_embedding_indexed"
    return [
        Case(name, "a ROW_MAJOR input", lambda e: rope(e.rm, e.heads, e.heads, trans(e)), VALUE, "input must be TILE"),
        Case(name, "a rank-3 input", lambda e: rope(e.a, e.heads, e.heads, trans(e)), VALUE, "input must be 4D"),
        Case(name, "a two-tile trans_mat", lambda e: rope(e.heads, e.heads, e.heads, e.heads), VALUE, "trans_mat"),
        Case(name, "sin of another dtype", lambda e: rope(e.heads, e.heads, e.bfp8.reshape([1, 1, 32, 32]), trans(e)),
             VALUE, "cos and sin"),
        Case(name, "cluster_axis 2", lambda e: rope(e.heads, e.heads, e.heads, trans(e), axis=2), VALUE,
             "cluster_axis"),
        Case(name, "kv_actual_global 16", lambda e: rope(e.heads, e.heads, e.heads, trans(e), kv=16), VALUE,
             "kv_actual_global"),
        Case(name, "kv_actual_global past the shard", lambda e: rope(e.heads, e.heads, e.heads, trans(e), kv=64),
             VALUE, "kv_actual_global"),
        Case(name, "a str kv_actual_global", lambda e: rope(e.heads, e.heads, e.heads, trans(e), kv="0"), TYPE,
             "kv_actual_global"),
        Case(name, "cos on the host", lambda e: rope(e.heads, e.host, e.heads, trans(e)), VALUE, "cos"),
    ]  # fmt: skip
