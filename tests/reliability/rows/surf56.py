"""Bad calls found by stop 56's sample of tt-metal's tests: the generic reductions that still refuse
INT32 (every one but max / min, which tt-metal 2026 runs on its SFPU path)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, Case


def rows() -> list[Case]:
    return [
        Case("sum", "an int32 input", lambda e: ttnn.sum(e.i32, dim=-1), TYPE, "INT32 is supported for MAX/MIN"),
        Case("mean", "an int32 input", lambda e: ttnn.mean(e.i32), TYPE, "input_tensor"),
        Case("var", "an int32 input", lambda e: ttnn.var(e.i32, dim=0), TYPE, "input_tensor"),
    ]
