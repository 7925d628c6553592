"""Bad calls of ``ttnn.experimental.deepseek_prefill``'s MoE routing ops: ``masked_bincount``,
``offset_cumsum`` and the gate ``moe_grouped_topk``.  ``e.a`` / ``e.a2`` are float32 TILE [1, 3, 40]
per device of the 2x4 ``e.mesh``; ``e.ids`` uint32 ROW_MAJOR [1, 7]; ``e.moe[1]`` uint16 ROW_MAJOR
[2, 1, 2, 2] (interleaved); ``e.i32`` int32 TILE."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, DRAM_MC, TYPE, VALUE, WRONG_MESH, Case

BINCOUNT = "experimental.deepseek_prefill.masked_bincount"
CUMSUM = "experimental.deepseek_prefill.offset_cumsum"
GATE = "experimental.deepseek_prefill.moe_grouped_topk"


def _bincount(e, ids=None, mask=None, n=7, per_token=2):
    ds = ttnn.experimental.deepseek_prefill
    return ds.masked_bincount(e.moe[1] if ids is None else ids, e.i32 if mask is None else mask, n, per_token)


def _flat_ids(e):
    """``e.moe[1]`` viewed as [4, 2] uint16: 2-D, but interleaved."""
    return ttnn.reshape(e.moe[1], (4, 2))


def _cumsum(e, tensor=None, axis=1, links=1, per_chip=7, memory_config=DRAM_MC, **kwargs):
    ds = ttnn.experimental.deepseek_prefill
    return ds.offset_cumsum(e.ids if tensor is None else tensor, axis, links, per_chip, memory_config, **kwargs)


def _gate(e, scores=None, bias=None, **kwargs):
    ds = ttnn.experimental.deepseek_prefill
    kwargs.setdefault("n_groups", 1)
    return ds.moe_grouped_topk(e.a if scores is None else scores, e.a2 if bias is None else bias, **kwargs)


def rows() -> list[Case]:
    return [
        *_gate_rows(),
        Case(BINCOUNT, "float32 ids", lambda e: _bincount(e, ids=e.rm), VALUE, "input_tensor"),
        Case(BINCOUNT, "rank-4 ids", lambda e: _bincount(e), VALUE, "2D"),
        Case(BINCOUNT, "interleaved ids", lambda e: _bincount(e, ids=_flat_ids(e)), VALUE, "HEIGHT_SHARDED"),
        Case(BINCOUNT, "ids on the host", lambda e: _bincount(e, ids=e.host), VALUE, "input_tensor"),
        Case(BINCOUNT, "deallocated ids", lambda e: _bincount(e, ids=e.freed), DEAD, "input_tensor"),
        Case(BINCOUNT, "mask on another mesh", lambda e: _bincount(e, mask=e.other), WRONG_MESH, "expert_mask"),
        Case(BINCOUNT, "n_routed_experts -1", lambda e: _bincount(e, n=-1), TYPE, "n_routed_experts"),
        Case(BINCOUNT, "num_experts_per_token a str", lambda e: _bincount(e, per_token="2"), TYPE,
             "num_experts_per_token"),
        Case(CUMSUM, "float32 histograms", lambda e: _cumsum(e, tensor=e.rm), VALUE, "input_tensor"),
        Case(CUMSUM, "int32 histograms", lambda e: _cumsum(e, tensor=e.i32), VALUE, "input_tensor"),
        Case(CUMSUM, "a [7, 1] histogram", lambda e: _cumsum(e, tensor=ttnn.reshape(e.ids, (7, 1)), per_chip=1),
             VALUE, "n_routed_experts"),
        Case(CUMSUM, "7 experts in chips of 2", lambda e: _cumsum(e, per_chip=2), VALUE, "experts_per_chip"),
        Case(CUMSUM, "experts_per_chip 0", lambda e: _cumsum(e, per_chip=0), VALUE, "experts_per_chip"),
        Case(CUMSUM, "cluster_axis 2", lambda e: _cumsum(e, axis=2), VALUE, "cluster_axis"),
        Case(CUMSUM, "num_links 0", lambda e: _cumsum(e, links=0), VALUE, "num_links"),
        Case(CUMSUM, "memory_config a str", lambda e: _cumsum(e, memory_config="L1"), TYPE, "memory_config"),
        Case(CUMSUM, "use_l1_small_for_semaphores a str",
             lambda e: _cumsum(e, use_l1_small_for_semaphores="yes"), TYPE, "use_l1_small_for_semaphores"),
        Case(CUMSUM, "histograms on the host", lambda e: _cumsum(e, tensor=e.host), VALUE, "input_tensor"),
    ]  # fmt: skip


def _gate_rows() -> list[Case]:
    return [
        Case(GATE, "bfloat16 scores", lambda e: _gate(e, scores=e.a_bf16), VALUE, "scores"),
        Case(GATE, "ROW_MAJOR bias", lambda e: _gate(e, bias=e.rm), VALUE, "bias"),
        Case(GATE, "bias of another shape", lambda e: _gate(e, bias=e.b), VALUE, "same shape"),
        Case(GATE, "40 experts (not whole tiles)", lambda e: _gate(e), VALUE, "multiple of the tile width"),
        Case(GATE, "n_groups 4", lambda e: _gate(e, n_groups=4), VALUE, "n_groups"),
        Case(GATE, "n_activated_experts -1", lambda e: _gate(e, n_activated_experts=-1), TYPE, "n_activated_experts"),
        Case(GATE, "route_scale a str", lambda e: _gate(e, route_scale="2"), TYPE, "route_scale"),
        Case(GATE, "stable_sort 1", lambda e: _gate(e, stable_sort=1), TYPE, "stable_sort"),
        Case(GATE, "memory_config a str", lambda e: _gate(e, memory_config="L1"), TYPE, "memory_config"),
        Case(GATE, "bias on another mesh", lambda e: _gate(e, bias=e.other), WRONG_MESH, "bias"),
        Case(GATE, "scores on the host", lambda e: _gate(e, scores=e.host), VALUE, "scores"),
    ]
