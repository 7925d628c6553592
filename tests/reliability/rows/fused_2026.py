"""Bad calls of tt-metal 2026's fused ops that its documentation examples use (stop 47): the
minimal matmul's split and addcmul forms, the DiT RMS norm with its activation, randn."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    mm = ttnn.experimental
    return [
        Case("experimental.minimal_matmul_split", "chunks not tile-aligned",
             lambda e: mm.minimal_matmul_split(e.a, e.w, chunks=5), VALUE, "chunks"),
        Case("experimental.minimal_matmul_split", "dim other than -1",
             lambda e: mm.minimal_matmul_split(e.a, e.w, chunks=1, dim=0), VALUE, "dim"),
        Case("experimental.dit_minimal_matmul_addcmul_fused", "base of another shape",
             lambda e: mm.dit_minimal_matmul_addcmul_fused(e.a, e.w, 1.0, e.a, e.a), VALUE, "addcmul_input_tensor1"),
        Case("experimental.rotate_half", "a width of one tile",
             lambda e: mm.rotate_half(e.heads), VALUE, "multiple of 64"),
        Case("randn", "an integer dtype", lambda e: ttnn.randn([2, 2], e.mesh, dtype=ttnn.int32), TYPE, "dtype"),
        Case("experimental.dit_rms_norm_unary_fused", "unknown activation",
             lambda e: mm.dit_rms_norm_unary_fused(e.a, activation="swish"), TYPE, "activation"),
    ]  # fmt: skip
