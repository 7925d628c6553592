"""Bad calls of ``ttnn.experimental.deepseek_moe_reduce_scatter`` (a ring of 8 summing the 8
last-dim pieces of each device's tensor).  ``e.mesh`` is 2x4; ``e.heads`` is bfloat16 TILE [1, 2,
32, 32] per device in DRAM, interleaved (not the ND-sharded L1 pieces the op takes)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, Case

OP = "experimental.deepseek_moe_reduce_scatter"


def _rs(e, pieces=None, **kwargs):
    pieces = [e.heads] * 8 if pieces is None else pieces
    options = {"output_memory_config": ttnn.L1_MEMORY_CONFIG, "dim": 3, **kwargs}
    return ttnn.experimental.deepseek_moe_reduce_scatter(pieces, **options)


def rows() -> list[Case]:
    return [
        Case(OP, "one tensor, not a list", lambda e: _rs(e, e.heads), TYPE, "input_tensors"),
        Case(OP, "seven pieces", lambda e: _rs(e, [e.heads] * 7), VALUE, "8 input tensors"),
        Case(OP, "a piece deallocated", lambda e: _rs(e, [e.heads] * 7 + [e.freed]), DEAD, "input_tensors"),
        Case(OP, "output_memory_config a string", lambda e: _rs(e, output_memory_config="L1"), TYPE, "output_memory"),
        Case(OP, "a Linear topology", lambda e: _rs(e, topology=ttnn.Topology.Linear), VALUE, "Ring"),
        Case(OP, "num_links 0", lambda e: _rs(e, num_links=0), VALUE, "num_links"),
        Case(OP, "pieces in DRAM", lambda e: _rs(e), VALUE, "L1"),
    ]
