"""Bad calls of tt-metal 2026-06's routing / top-k ops (issue 30, stop 53): gpt-oss's
``experimental.topk_router_gpt``, ``experimental.topk_large_indices`` and DeepSeek-V3.2's
``experimental.indexer_score`` with ``IndexerScoreProgramConfig``.  ``e.mesh`` is a Wormhole 2x4 (both
Blackhole-only ops refuse it); ``e.heads`` bfloat16 TILE [1, 2, 32, 32] per device, ``e.nhwc``
bfloat16 ROW_MAJOR, ``e.a`` float32 TILE, ``e.other_heads`` bfloat16 TILE on another mesh."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, WRONG_MESH, Case

ROUTER = "experimental.topk_router_gpt"
LARGE = "experimental.topk_large_indices"
INDEXER = "experimental.indexer_score"
CONFIG = "IndexerScoreProgramConfig"


def _router(e, x=None, w=None, b=None, **kwargs):
    x = e.heads if x is None else x
    return ttnn.experimental.topk_router_gpt(x, weight_tensor=w or e.heads, bias_tensor=b or e.heads, **kwargs)


def _indexer(e, q=None, k=None, w=None, **kwargs):
    op = ttnn.experimental.indexer_score
    return op(e.heads if q is None else q, e.heads if k is None else k, e.heads if w is None else w, **kwargs)


def rows() -> list[Case]:
    return [
        Case(ROUTER, "k 0", lambda e: _router(e, k=0), VALUE, "k"),
        Case(ROUTER, "k 33", lambda e: _router(e, k=33), VALUE, "k"),
        Case(ROUTER, "k negative", lambda e: _router(e, k=-4), TYPE, "k"),
        Case(ROUTER, "num_experts 64", lambda e: _router(e, num_experts=64), VALUE, "num_experts"),
        Case(ROUTER, "float32 input", lambda e: _router(e, x=e.a), VALUE, "input_tensor"),
        Case(ROUTER, "ROW_MAJOR weight", lambda e: _router(e, w=e.nhwc), VALUE, "weight_tensor"),
        Case(ROUTER, "bias on the host", lambda e: _router(e, b=e.host), VALUE, "bias_tensor"),
        Case(ROUTER, "deallocated input", lambda e: _router(e, x=e.freed), DEAD, "input_tensor"),
        Case(ROUTER, "weight on another mesh", lambda e: _router(e, w=e.other_heads), WRONG_MESH, "weight_tensor"),
        Case(ROUTER, "a rank-4 input", lambda e: _router(e), VALUE, "input_tensor"),
        Case(LARGE, "k 24", lambda e: ttnn.experimental.topk_large_indices(e.nhwc, k=24), VALUE, "k"),
        Case(LARGE, "k 2064", lambda e: ttnn.experimental.topk_large_indices(e.nhwc, k=2064), VALUE, "k"),
        Case(LARGE, "k a str", lambda e: ttnn.experimental.topk_large_indices(e.nhwc, k="16"), TYPE, "k"),
        Case(LARGE, "a Wormhole device", lambda e: ttnn.experimental.topk_large_indices(e.nhwc, k=16), VALUE,
             "Blackhole"),
        Case(LARGE, "input on the host", lambda e: ttnn.experimental.topk_large_indices(e.host, k=16), VALUE,
             "input_tensor"),
        Case(LARGE, "deallocated input", lambda e: ttnn.experimental.topk_large_indices(e.freed, k=16), DEAD,
             "input_tensor"),
        Case(INDEXER, "chunk_start_idx negative", lambda e: _indexer(e, chunk_start_idx=-32), TYPE, "chunk_start_idx"),
        Case(INDEXER, "program_config a dict", lambda e: _indexer(e, program_config={}), TYPE, "program_config"),
        Case(INDEXER, "compute_kernel_config a str", lambda e: _indexer(e, compute_kernel_config="HiFi2"), TYPE,
             "compute_kernel_config"),
        Case(INDEXER, "a Wormhole device", lambda e: _indexer(e), VALUE, "Blackhole"),
        Case(INDEXER, "q on the host", lambda e: _indexer(e, q=e.host), VALUE, "q"),
        Case(INDEXER, "deallocated weights", lambda e: _indexer(e, w=e.freed), DEAD, "weights"),
        Case(INDEXER, "k on another mesh", lambda e: _indexer(e, k=e.other_heads), WRONG_MESH, "k"),
        Case(CONFIG, "q_chunk_size negative", lambda e: ttnn.IndexerScoreProgramConfig(q_chunk_size=-32), TYPE,
             "q_chunk_size"),
        Case(CONFIG, "head_group_size a float", lambda e: ttnn.IndexerScoreProgramConfig(head_group_size=1.0), TYPE,
             "head_group_size"),
    ]  # fmt: skip
