"""A 2-D matmul program's output drain (meshnn/perf/matmul.py: output_drain_ns): each core writes its
DRAM-interleaved output block once its last K-block is done, after the math, and the 2-D program's in0
stream runs behind the math.  GEMM_FLOPS.md's out-of-box tables show both: their device utilisation
(the math thread's duration) against their host-timed time (tests/perf/published_gemm_split.py)."""

from __future__ import annotations

import statistics

import pytest

from meshnn.perf import (
    Bound,
    BufferType,
    MathFidelity,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    machine,
    predict,
)
from meshnn.perf.matmul import activation_stream_cycles, chosen_config, output_drain_ns, partials_cycles
from meshnn.perf.traffic import operand_cycles

from . import published_gemm_split as split

N150, P150 = machine("n150"), machine("p150")


def mm(m: int, k: int, n: int, dtype: str = "BFLOAT16", out: TensorDesc | None = None) -> OpDesc:
    a, b = TensorDesc((1, 1, m, k), dtype), TensorDesc((1, 1, k, n), dtype)
    outputs = (out or TensorDesc((1, 1, m, n), dtype),)
    return OpDesc(OpFamily.MATMUL, (a, b), outputs, fidelity=MathFidelity.HiFi2, matmul=MatmulConfig())


def test_a_2d_program_drains_its_dram_output_after_its_math():
    desc = chosen_config(mm(2048, 2048, 2048), N150)
    assert desc.matmul.program is MatmulProgram.MULTICAST_2D
    arch = N150.system.arch
    drain = desc.outputs[0].nbytes / arch.matmul_drain_bytes_per_s * 1e9
    assert output_drain_ns(desc, N150) == pytest.approx(drain)  # 8 MiB at 77.4 GB/s: 108 us
    p = predict(desc, N150, traced=True)
    assert p.fixed_ns == pytest.approx(arch.op_launch_ns + arch.matmul_fill_ns)
    assert p.drain_ns == pytest.approx(drain)
    assert p.kernel_ns == pytest.approx(max(p.compute_ns, p.memory_ns) + p.fixed_ns + drain)
    inputs = sum(t.nbytes for t in desc.inputs)
    assert p.dram_bytes == inputs  # the output is not also read beside the inputs


def test_only_a_2d_program_with_an_interleaved_dram_output_drains():
    l1_out = TensorDesc((1, 1, 2048, 2048), buffer=BufferType.L1)
    in_l1 = mm(2048, 2048, 2048, out=l1_out)
    assert chosen_config(in_l1, N150).matmul is not None
    two_d_in_l1 = OpDesc(
        OpFamily.MATMUL, in_l1.inputs, (l1_out,), matmul=MatmulConfig(MatmulProgram.MULTICAST_2D, (8, 8), 8, 8)
    )
    assert output_drain_ns(two_d_in_l1, N150) == 0
    sharded = TensorDesc((1, 1, 2048, 2048), memory=MemoryLayout.BLOCK_SHARDED)
    assert output_drain_ns(OpDesc(OpFamily.MATMUL, in_l1.inputs, (sharded,), matmul=two_d_in_l1.matmul), N150) == 0
    one_d = chosen_config(mm(512, 1024, 1024), N150)
    assert one_d.matmul.program is MatmulProgram.MULTICAST_1D and output_drain_ns(one_d, N150) == 0
    dram_sharded = OpDesc(
        OpFamily.MATMUL,
        in_l1.inputs,
        (TensorDesc((1, 1, 2048, 2048)),),
        matmul=MatmulConfig(MatmulProgram.DRAM_SHARDED),
    )
    assert output_drain_ns(dram_sharded, N150) == 0


def test_the_2d_in0_stream_runs_behind_the_math():
    """512^3 on 64 cores: each core's 2x2 block of multiplies is shorter than its row's in0 stream; at 2048^3
    the math (with its partial sums between K blocks) is the longer: the time is the larger of the two, never
    their sum."""
    arch = N150.system.arch
    for size, stream_longer in (((512, 512, 512), True), ((2048, 2048, 2048), False)):
        desc = chosen_config(mm(*size), N150)
        per_core = (desc.matmul.per_core_m, desc.matmul.per_core_n)
        k_tiles = size[1] // 32
        per_multiply = 32 + operand_cycles(arch, 2048)
        math_cycles = per_core[0] * per_core[1] * k_tiles * per_multiply
        math_cycles += partials_cycles(desc, N150, per_core[0] * per_core[1], k_tiles, per_multiply)
        stream = activation_stream_cycles(desc, N150, size[0] // 32, k_tiles)
        assert (stream > math_cycles) is stream_longer
        assert predict(desc, N150).compute_ns == pytest.approx(arch.cycles_ns(max(math_cycles, stream)))


@pytest.mark.parametrize("system", ["n150", "p150"])
def test_the_drain_rate_is_the_fit_of_the_bf16_rows(system):
    rate = machine(system).system.arch.matmul_drain_bytes_per_s
    assert split.fitted_rate(system) == pytest.approx(rate, rel=0.005)


@pytest.mark.parametrize("dtype", ["BFLOAT8_B", "BFLOAT4_B"])
def test_the_drain_is_the_same_per_byte_in_the_block_float_formats(dtype):
    """The checks: on the N150, the BF16 rows' sizes in bfloat8_b and bfloat4_b drain at a median within 15% of
    the rate the BF16 rows set (the drain grows with the output's bytes, whatever the format)."""
    rows = [r for r in split.N150 if r[0] == dtype and r[1] in split.FIT["n150"]]
    rates = [split.desc(r).outputs[0].nbytes / split.measured_drain_ns("n150", r) * 1e9 for r in rows]
    assert len(rates) == len(split.FIT["n150"])
    assert statistics.median(rates) == pytest.approx(N150.system.arch.matmul_drain_bytes_per_s, rel=0.15)


def test_the_math_thread_of_mid_sized_2d_blocks_is_the_models_kernel_less_its_drain():
    """The device side of the same rows: blocks of 4x8 to 8x12 tiles per core (N150, every format), whose
    math thread the model's tile multiplies, fill and launch meet within 10%."""
    checked = 0
    for row in split.two_d_rows("n150"):
        config = chosen_config(split.desc(row), N150).matmul
        if (config.per_core_m, config.per_core_n) in {(4, 8), (8, 8), (8, 12)}:
            model, measured = split.model_math_thread_ns("n150", row), split.math_thread_ns(row)
            assert model == pytest.approx(measured, rel=0.10), row
            checked += 1
    assert checked == 15


def test_a_call_its_drain_outlasts_is_bound_by_dram_not_dispatch():
    """1024^3 in bfloat16, traced: 27 us of drain after 22 us of multiplies (or in0 stream) and 8 us of fill
    and launch: DRAM-bound; eager, the host's 49 us dispatch outweighs it all."""
    desc = chosen_config(mm(1024, 1024, 1024), N150)
    traced = predict(desc, N150, traced=True)
    assert traced.drain_ns > max(traced.compute_ns, traced.memory_ns) > traced.fixed_ns + traced.gap_ns
    assert traced.bound is Bound.DRAM
    assert predict(desc, N150).bound is Bound.DISPATCH
