"""Bad calls of ``ttnn.experimental.deepseek_prefill.per_token_cast_to_fp8`` / ``per_token_cast_back``
(stop 52): tt-metal's refusals of layouts, memory configs, dtypes and (the table's mesh is a
Wormhole T3000) the arch."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import L1_MC, TYPE, VALUE, Case


def rows() -> list[Case]:
    def to_fp8(*args, **kwargs):
        return ttnn.experimental.deepseek_prefill.per_token_cast_to_fp8(*args, **kwargs)

    def back(*args, **kwargs):
        return ttnn.experimental.deepseek_prefill.per_token_cast_back(*args, **kwargs)

    cast = "experimental.deepseek_prefill.per_token_cast_to_fp8"
    undo = "experimental.deepseek_prefill.per_token_cast_back"
    return [
        Case(cast, "a TILE input", lambda e: to_fp8(e.a), VALUE, "ROW_MAJOR"),
        Case(cast, "a host input", lambda e: to_fp8(e.host), VALUE, "input_tensor"),
        Case(cast, "an L1 output", lambda e: to_fp8(e.rm, memory_config=L1_MC), VALUE, "DRAM interleaved"),
        Case(cast, "a str memory config", lambda e: to_fp8(e.rm, memory_config="DRAM"), TYPE, "memory_config"),
        Case(cast, "a Wormhole mesh", lambda e: to_fp8(e.rm), VALUE, "Blackhole"),
        Case(undo, "a TILE e4m3", lambda e: back(e.a, e.rm), VALUE, "input_e4m3 must be ROW_MAJOR"),
        Case(undo, "a host scale", lambda e: back(e.rm, e.host), VALUE, "input_scale"),
        Case(undo, "a str output dtype", lambda e: back(e.rm, e.rm, output_dtype="bf16"), TYPE, "output_dtype"),
        Case(undo, "a Wormhole mesh", lambda e: back(e.rm, e.rm), VALUE, "Blackhole"),
        Case(undo, "scale on another mesh", lambda e: back(e.rm, e.other), VALUE, "input_scale"),
    ]  # fmt: skip
