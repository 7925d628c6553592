"""A flash-attention K-chunk step counted as the kernel runs it (meshnn/perf/sdpa_step.py): subblocks,
block-operation passes, float32 accumulation, and the circular buffers that bound the chunk sizes."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn
from meshnn.perf import AttentionConfig, MathFidelity, OpDesc, OpFamily, TensorDesc, arch_perf, predict
from meshnn.perf.attention import fits_l1
from meshnn.perf.sdpa_step import circular_buffer_bytes, step_cycles, subblock
from meshnn.perf.systems import machine

WH = arch_perf("wormhole_b0")


def test_subblocks_follow_the_factory():
    assert subblock(2, 4, 8, halve=False) == (2, 4)  # a full-width row of 2 grows to 4 rows: 8 tiles
    assert subblock(8, 8, 8, halve=False) == (8, 1)  # as wide as the destination: one row
    assert subblock(8, 8, 8, halve=True) == (4, 2)  # today's QK rule: half as wide, two rows
    assert subblock(4, 8, 4, halve=False) == (4, 1)  # float32 accumulation: 4 destination tiles
    assert subblock(16, 8, 8, halve=False) == (8, 1)  # wider than the destination: one row of 8


def test_a_step_costs_its_multiplies_and_its_passes():
    bf16 = (2048, 2048, 2048)
    one = step_cycles(WH, MathFidelity.HiFi2, (4, 2, 2), bf16, False)
    # twice the K chunk: the score tiles and multiplies double, the output and row passes do not
    two = step_cycles(WH, MathFidelity.HiFi2, (4, 4, 2), bf16, False)
    assert one < two < 2 * one
    # float32 accumulation packs 32-bit datums: every pass that packs costs more
    assert step_cycles(WH, MathFidelity.HiFi2, (4, 2, 2), bf16, True) > one
    # more fidelity phases: more cycles a multiply
    assert step_cycles(WH, MathFidelity.HiFi4, (4, 2, 2), bf16, False) > one
    # bfloat8_b operands feed faster than bfloat16 ones
    assert step_cycles(WH, MathFidelity.HiFi2, (4, 2, 2), (1088, 1088, 1088), False) < one


def chart_call(dtype: str, q: int, k: int) -> OpDesc:
    x, mask = TensorDesc((1, 8, 16384, 256), dtype), TensorDesc((1, 1, 16384, 16384), dtype)
    config = AttentionConfig(q_chunk=q, k_chunk=k, causal=True)
    return OpDesc(OpFamily.SDPA, (x, x, x, mask), (x,), fidelity="HiFi2", core_grid=(8, 8), attention=config)


def test_the_circular_buffers_bound_the_chunks():
    # head dim 256 (8 tiles), q and k chunks of 256 rows (8 tiles), Q double-buffered, with the mask
    bf16 = circular_buffer_bytes((8, 8, 8), (2048, 2048, 2048, 2048, 2048), True)
    bfp8 = circular_buffer_bytes((8, 8, 8), (1088, 1088, 1088, 1088, 1088), True)
    assert (bf16, bfp8) == (1_658_880, 1_105_920)
    n150 = machine("n150", (1, 1))  # 1,393,312 B of L1 above the reserved base
    assert not fits_l1(chart_call("BFLOAT16", 256, 256), n150)
    assert fits_l1(chart_call("BFLOAT8_B", 256, 256), n150)
    assert fits_l1(chart_call("BFLOAT16", 256, 128), n150)


def test_the_capture_carries_float32_accumulation(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(
        rng.standard_normal((1, 2, 128, 64)).astype(np.float32),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
    )
    config = ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 8), q_chunk_size=64, k_chunk_size=64)
    fp32 = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, fp32_dest_acc_en=True)
    with ttnn.perf_capture() as capture:
        ttnn.transformer.scaled_dot_product_attention(x, x, x, is_causal=True, program_config=config)
        ttnn.transformer.scaled_dot_product_attention(
            x, x, x, is_causal=True, program_config=config, compute_kernel_config=fp32
        )
    plain, accumulated = capture.recorder(mesh).records
    assert not plain.desc.attention.fp32_dest and accumulated.desc.attention.fp32_dest
    assert 0 < plain.prediction.kernel_ns < accumulated.prediction.kernel_ns
    assert predict(accumulated.desc, "n150").kernel_ns > 0
