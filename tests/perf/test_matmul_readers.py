"""How fast the DRAM serves a matmul's interleaved reads (meshnn/perf/traffic.py: interleaved_rate):
Blackhole's interleaved figure (344 GB/s) is eight readers, one a bank on arbitrary cores, whose
overlapping routes cap them (tt-metal tech_reports/Saturating_DRAM_bandwidth/
Saturating_DRAM_bandwidth_Blackhole.md); a 2-D program's senders are more readers than that, and the
banks serve them at their own rate (the bank-adjacent 500 GB/s) at the tile's transfer efficiency
where that is higher: a bfloat16 tile's, not a bfloat8_b one's.  Wormhole's figure is already 64
readers' on its 12 banks (test_dram_bandwidth.py's 8x8 grid): no Wormhole matmul gets more."""

from __future__ import annotations

import dataclasses

import pytest

from meshnn.perf import MathFidelity, MatmulConfig, MatmulProgram, OpDesc, OpFamily, TensorDesc, machine, predict
from meshnn.perf.matmul import chosen_config, dram_readers
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import interleaved_rate, transfer_efficiency

from . import published_gemm_split as split

N150, P150 = machine("n150"), machine("p150")


def mm(m: int, k: int, n: int, dtype: str, config: MatmulConfig | None = None) -> OpDesc:
    a, b, out = TensorDesc((1, 1, m, k), dtype), TensorDesc((1, 1, k, n), dtype), TensorDesc((1, 1, m, n), dtype)
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=MathFidelity.HiFi2, matmul=config or MatmulConfig())


def with_readers(m: Machine, readers: int) -> Machine:
    """``m`` with an interleaved figure measured with ``readers`` reader cores."""
    arch = dataclasses.replace(m.system.arch, dram_interleaved_readers=readers)
    return dataclasses.replace(m, system=dataclasses.replace(m.system, arch=arch))


def test_a_2d_programs_readers_are_its_senders_the_other_programs_every_core():
    two_d = mm(640, 1408, 1408, "BFLOAT16", MatmulConfig(MatmulProgram.MULTICAST_2D, (11, 10), 2, 4))
    assert dram_readers(two_d, P150, 110) == 20  # 10 in0 senders down the left column, 11 in1 along the top
    assert dram_readers(two_d, P150, 12) == 12  # no more readers than cores with work
    one_d = mm(32, 4096, 4096, "BFLOAT16", MatmulConfig(MatmulProgram.MULTICAST_1D, (11, 10), 1, 4))
    assert dram_readers(one_d, P150, 110) == 110


def test_more_readers_than_blackhole_figures_eight_get_the_banks_rate_for_a_bfloat16_tile():
    arch = P150.system.arch
    assert arch.dram_interleaved_readers == 8 and N150.system.arch.dram_interleaved_readers == 64
    banks = P150.system.dram_sharded_bytes_per_s * transfer_efficiency(arch, 2048)
    assert banks == pytest.approx(500e9 * 57.7 / 60.9)
    assert interleaved_rate(P150, 2048, 20) == pytest.approx(banks)
    assert interleaved_rate(P150, 2048, 8) == P150.system.dram_interleaved_bytes_per_s  # the figure's own eight
    assert interleaved_rate(P150, 1088, 20) == P150.system.dram_interleaved_bytes_per_s  # 65% of 500 is less
    assert interleaved_rate(N150, 2048, 15) == N150.system.dram_interleaved_bytes_per_s  # 64 readers' figure
    assert interleaved_rate(N150, 2048, 70) == N150.system.dram_interleaved_bytes_per_s  # a Galaxy chip's 70 too


def test_a_blackhole_bfloat16_2d_matmul_reads_faster_a_wormhole_one_does_not():
    desc = chosen_config(mm(640, 1408, 1408, "BFLOAT16"), P150)
    fast, kept = predict(desc, P150), predict(desc, with_readers(P150, 64))  # a many-reader figure: kept
    assert fast.memory_ns == pytest.approx(kept.memory_ns * 344e9 / (500e9 * 57.7 / 60.9))
    assert fast.kernel_ns < kept.kernel_ns
    wh = chosen_config(mm(1024, 1024, 1024, "BFLOAT16"), N150)
    readers = dram_readers(wh, N150, 64)
    assert readers == 15  # its figure is 64 readers' on 12 banks: Wormhole's interleaved rate
    assert interleaved_rate(N150, 2048, readers) == N150.system.dram_interleaved_bytes_per_s
    assert interleaved_rate(with_readers(N150, 8), 2048, readers) == pytest.approx(267e9)


def test_the_small_bfloat16_math_threads_are_met_with_the_banks_rate():
    """GEMM_FLOPS' P150 out-of-box bfloat16 rows whose DRAM side bounds the model (2-row blocks, both
    grids): their math thread was 15-26% under the model's at 344 GB/s; at the banks' rate each is
    within 8%.  The same rows in bfloat8_b (1088 B tiles) keep 344 GB/s and stay met."""
    rows = [("p150", (640, 704, 704)), ("p150", (640, 1408, 1408)), ("p150_13x10", (640, 832, 832))]
    rows += [("p150_13x10", (640, 1664, 1664)), ("p150_13x10", (640, 1664, 3328))]
    for system, size in rows:
        for dtype in ("BFLOAT16", "BFLOAT8_B"):
            row = next(r for r in split.two_d_rows(system) if r[0] == dtype and r[1] == size)
            error = split.model_math_thread_ns(system, row) / split.math_thread_ns(row) - 1
            assert abs(error) <= 0.08, (system, size, dtype, error)
