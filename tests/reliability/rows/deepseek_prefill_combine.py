"""Bad calls of ``ttnn.experimental.deepseek_prefill``'s ``dispatch``, ``combine`` and
``post_combine_reduce``.  ``e.heads`` is bfloat16 TILE [1, 2, 32, 32] per device of the 2x4 ``e.mesh``;
``e.nhwc`` bfloat16 ROW_MAJOR [1, 4, 4, 32]; ``e.rm`` float32 ROW_MAJOR [1, 3, 40]; ``e.moe[0]`` bfloat16
ROW_MAJOR [2, 1, 2, 32] and ``e.moe[1]`` uint16 ROW_MAJOR [2, 1, 2, 2]; ``e.ids`` uint32 ROW_MAJOR [1, 7];
``e.i32`` int32 TILE."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, WRONG_MESH, Case

REDUCE = "experimental.deepseek_prefill.post_combine_reduce"
DISPATCH = "experimental.deepseek_prefill.dispatch"
COMBINE = "experimental.deepseek_prefill.combine"
SIZES = {"dispatch_group_size": 2, "experts_per_chip": 1, "num_routed_experts": 7, "num_experts_per_tok": 2,
         "metadata_len": 5, "max_dispatch_buffer_token_size": 64}  # fmt: skip


def _dispatch(e, x=None, w=None, ids=None, offsets=None, table=None, **kwargs):
    args = (e.moe[0] if x is None else x, e.moe[0] if w is None else w, e.moe[1] if ids is None else ids,
            e.ids if offsets is None else offsets, e.ids if table is None else table)  # fmt: skip
    return ttnn.experimental.deepseek_prefill.dispatch(*args, **{**SIZES, **kwargs})


def _combine(e, buffer=None, meta=None, counts=None, **kwargs):
    kwargs = {"dispatch_group_size": 2, "experts_per_chip": 1, "num_experts_per_tok": 2, "seq_len_per_chip": 2,
              **kwargs}  # fmt: skip
    args = (
        e.moe[0] if buffer is None else buffer,
        e.ids if meta is None else meta,
        e.ids if counts is None else counts,
    )
    return ttnn.experimental.deepseek_prefill.combine(*args, e.ids, **kwargs)


def _reduce(e, combine=None, weights=None, *args, **kwargs):
    kwargs.setdefault("expert_dim", 2)
    ds = ttnn.experimental.deepseek_prefill
    return ds.post_combine_reduce(
        e.nhwc if combine is None else combine, e.nhwc if weights is None else weights, *args, **kwargs
    )


def rows() -> list[Case]:
    return [
        *_exchange_rows(),
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


def _exchange_rows() -> list[Case]:
    return [
        Case(DISPATCH, "cluster_axis 1", lambda e: _dispatch(e, cluster_axis=1), VALUE, "cluster_axis"),
        Case(DISPATCH, "num_links 5", lambda e: _dispatch(e, num_links=5), VALUE, "num_links"),
        Case(DISPATCH, "topology a str", lambda e: _dispatch(e, topology="Ring"), TYPE, "topology"),
        Case(DISPATCH, "float32 tokens", lambda e: _dispatch(e, x=e.rm), VALUE, "input_tensor"),
        Case(DISPATCH, "TILE weights", lambda e: _dispatch(e, w=e.a_bf16), VALUE, "weights_tensor"),
        Case(DISPATCH, "uint32 dispatch table", lambda e: _dispatch(e), VALUE, "expert_dispatch_table_tensor"),
        Case(DISPATCH, "memory_config a str", lambda e: _dispatch(e, memory_config="DRAM"), TYPE, "memory_config"),
        Case(DISPATCH, "max_dispatch_buffer_token_size -1", lambda e: _dispatch(e, max_dispatch_buffer_token_size=-1),
             TYPE, "max_dispatch_buffer_token_size"),
        Case(DISPATCH, "tokens on another mesh", lambda e: _dispatch(e, x=e.other), WRONG_MESH, "weights_tensor|mesh"),
        Case(COMBINE, "uint32 metadata", lambda e: _combine(e), VALUE, "dispatched_metadata"),
        Case(COMBINE, "float32 buffer", lambda e: _combine(e, buffer=e.rm), VALUE, "dispatched_buffer"),
        Case(COMBINE, "TILE counts", lambda e: _combine(e, counts=e.i32), VALUE, "expert_token_counts"),
        Case(COMBINE, "cluster_axis 1", lambda e: _combine(e, cluster_axis=1), VALUE, "cluster_axis"),
        Case(COMBINE, "init_zeros a str", lambda e: _combine(e, init_zeros="yes"), TYPE, "init_zeros"),
        Case(COMBINE, "memory_config a str", lambda e: _combine(e, memory_config="L1"), TYPE, "memory_config"),
        Case(COMBINE, "buffer on the host", lambda e: _combine(e, buffer=e.host), VALUE, "dispatched_buffer"),
    ]  # fmt: skip
