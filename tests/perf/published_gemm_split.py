"""GEMM_FLOPS.md's out-of-box tables split into the math thread's time and what the host times beyond
it: the measurements behind a 2-D matmul's output drain (:func:`meshnn.perf.matmul.output_drain_ns`).

Source: tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (2026-04, PR #41382), "N150 Out of Box Results"
and "P150 Out of Box Results (11x10 grid)", the traced rows.  Each row gives the host-timed time of a
call and two utilisations of the same ideal cycles: host-based (over that time) and device-based (over
the math thread's, TRISC1's, kernel duration, read from the device profiler by the benchmark,
tests/ttnn/unit_tests/benchmarks/test_benchmark.py).  So the math thread's time is the host time x
host utilisation / device utilisation, and the rest is what the device does after its math (the
traced gap before the call aside).  In ttnn's 2-D program that rest grows with the output's bytes, at
the same rate per byte for bfloat16, bfloat8_b and bfloat4_b: each core writes its output block once
its last K-block is done.  The BF16 rows in :data:`FIT` set ``matmul_drain_bytes_per_s``; the other
rows are checks (``python -m tests.perf.published_gemm_split`` prints each).
"""

from __future__ import annotations

from meshnn.perf import MathFidelity
from meshnn.perf.desc import MatmulConfig, MatmulProgram, OpDesc, OpFamily, TensorDesc
from meshnn.perf.matmul import chosen_config, output_drain_ns
from meshnn.perf.model import machine, op_to_op_ns, predict
from meshnn.perf.systems import Machine

from . import published_gemm_oob_p150_13

SOURCE = "tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (2026-04), out-of-box tables, traced rows"
Row = tuple[str, tuple[int, int, int], float, float, float]
"""(dtype, (M, K, N), host-timed ns per call, host-based utilisation %, device-based utilisation %)."""

N150: tuple[Row, ...] = (
    ("BFLOAT16", (512, 512, 512), 19965.17, 10.26, 17.82),
    ("BFLOAT16", (512, 1024, 1024), 115242.00, 7.11, 9.00),
    ("BFLOAT16", (512, 1024, 2048), 140731.33, 11.64, 16.70),
    ("BFLOAT16", (1024, 1024, 1024), 68984.03, 23.75, 41.64),
    ("BFLOAT16", (1024, 1024, 2048), 113062.86, 28.98, 56.61),
    ("BFLOAT16", (1024, 2048, 2048), 159676.07, 41.04, 60.49),
    ("BFLOAT16", (2048, 2048, 2048), 298922.06, 43.85, 66.74),
    ("BFLOAT16", (2048, 2048, 3072), 450646.88, 43.63, 70.07),
    ("BFLOAT16", (2048, 3072, 3072), 576856.14, 51.12, 71.30),
    ("BFLOAT16", (3072, 3072, 3072), 886178.02, 49.92, 58.19),
    ("BFLOAT16", (3072, 3072, 4096), 1142554.28, 51.62, 60.97),
    ("BFLOAT16", (3072, 4096, 4096), 1458785.53, 53.91, 59.41),
    ("BFLOAT16", (4096, 4096, 4096), 2008533.48, 52.21, 59.46),
    ("BFLOAT8_B", (512, 512, 512), 14207.36, 7.21, 11.28),
    ("BFLOAT8_B", (512, 1024, 1024), 72386.26, 5.66, 7.03),
    ("BFLOAT8_B", (512, 1024, 2048), 86517.33, 9.47, 13.13),
    ("BFLOAT8_B", (1024, 1024, 1024), 40965.08, 20.00, 33.54),
    ("BFLOAT8_B", (1024, 1024, 2048), 66068.17, 24.80, 45.07),
    ("BFLOAT8_B", (1024, 2048, 2048), 89848.04, 36.47, 52.97),
    ("BFLOAT8_B", (2048, 2048, 2048), 155975.82, 42.02, 63.73),
    ("BFLOAT8_B", (2048, 2048, 3072), 235431.19, 41.75, 67.18),
    ("BFLOAT8_B", (2048, 3072, 3072), 297122.00, 49.63, 69.28),
    ("BFLOAT8_B", (3072, 3072, 3072), 438799.86, 50.41, 69.84),
    ("BFLOAT8_B", (3072, 3072, 4096), 577411.65, 51.07, 71.69),
    ("BFLOAT8_B", (3072, 4096, 4096), 729207.99, 53.92, 62.60),
    ("BFLOAT8_B", (4096, 4096, 4096), 927324.30, 56.54, 64.35),
    ("BFLOAT4_B", (512, 512, 512), 12259.48, 8.35, 14.47),
    ("BFLOAT4_B", (512, 1024, 1024), 56591.03, 7.24, 8.70),
    ("BFLOAT4_B", (512, 1024, 2048), 61962.60, 13.22, 17.28),
    ("BFLOAT4_B", (1024, 1024, 1024), 27215.48, 30.10, 44.84),
    ("BFLOAT4_B", (1024, 1024, 2048), 44860.84, 36.52, 55.64),
    ("BFLOAT4_B", (1024, 2048, 2048), 63495.64, 51.61, 65.21),
    ("BFLOAT4_B", (2048, 2048, 2048), 114889.14, 57.04, 73.89),
    ("BFLOAT4_B", (2048, 2048, 3072), 173368.45, 56.70, 75.34),
    ("BFLOAT4_B", (2048, 3072, 3072), 231659.41, 63.65, 77.88),
    ("BFLOAT4_B", (3072, 3072, 3072), 336377.62, 65.75, 79.74),
    ("BFLOAT4_B", (3072, 3072, 4096), 439398.29, 67.12, 80.73),
    ("BFLOAT4_B", (3072, 4096, 4096), 558745.86, 70.37, 81.68),
    ("BFLOAT4_B", (4096, 4096, 4096), 746693.61, 70.21, 82.24),
)
P150: tuple[Row, ...] = (
    ("BFLOAT16", (640, 704, 704), 15704.63, 13.28, 18.49),
    ("BFLOAT16", (640, 1408, 1408), 27759.08, 30.06, 41.64),
    ("BFLOAT16", (640, 1408, 2816), 46129.23, 36.18, 51.34),
    ("BFLOAT16", (1280, 1408, 1408), 41365.62, 40.34, 61.35),
    ("BFLOAT16", (1280, 1408, 2816), 72484.02, 46.04, 75.97),
    ("BFLOAT16", (1280, 2816, 2816), 108106.14, 61.74, 80.38),
    ("BFLOAT16", (2560, 2816, 2816), 203180.31, 65.70, 85.06),
    ("BFLOAT16", (2560, 2816, 4224), 291085.24, 68.79, 86.13),
    ("BFLOAT16", (2560, 4224, 4224), 392005.44, 76.62, 87.03),
    ("BFLOAT16", (3840, 4224, 4224), 588295.46, 76.59, 80.38),
    ("BFLOAT16", (3840, 4224, 5632), 792543.89, 75.80, 80.63),
    ("BFLOAT16", (3840, 5632, 5632), 1019048.69, 78.60, 80.27),
    ("BFLOAT16", (5120, 5632, 5632), 1356115.34, 78.75, 80.52),
    ("BFLOAT8_B", (640, 704, 704), 13041.50, 8.00, 10.16),
    ("BFLOAT8_B", (640, 1408, 1408), 20992.76, 19.87, 24.75),
    ("BFLOAT8_B", (640, 1408, 2816), 32780.17, 25.45, 32.84),
    ("BFLOAT8_B", (1280, 1408, 1408), 27318.00, 30.54, 43.30),
    ("BFLOAT8_B", (1280, 1408, 2816), 43470.86, 38.39, 60.90),
    ("BFLOAT8_B", (1280, 2816, 2816), 60827.73, 54.87, 72.48),
    ("BFLOAT8_B", (2560, 2816, 2816), 107693.67, 61.98, 80.57),
    ("BFLOAT8_B", (2560, 2816, 4224), 153751.37, 65.12, 82.30),
    ("BFLOAT8_B", (2560, 4224, 4224), 206961.63, 72.57, 84.39),
    ("BFLOAT8_B", (3840, 4224, 4224), 301239.49, 74.78, 85.82),
    ("BFLOAT8_B", (3840, 4224, 5632), 406239.03, 73.94, 86.54),
    ("BFLOAT8_B", (3840, 5632, 5632), 519182.68, 77.14, 80.60),
    ("BFLOAT8_B", (5120, 5632, 5632), 688164.23, 77.60, 80.74),
    ("BFLOAT4_B", (640, 704, 704), 11668.21, 8.94, 10.81),
    ("BFLOAT4_B", (640, 1408, 1408), 18179.42, 22.95, 26.89),
    ("BFLOAT4_B", (640, 1408, 2816), 26290.42, 31.74, 37.89),
    ("BFLOAT4_B", (1280, 1408, 1408), 21364.69, 39.05, 49.94),
    ("BFLOAT4_B", (1280, 1408, 2816), 33802.99, 49.37, 65.60),
    ("BFLOAT4_B", (1280, 2816, 2816), 51698.68, 64.56, 75.13),
    ("BFLOAT4_B", (2560, 2816, 2816), 93379.02, 71.48, 81.50),
    ("BFLOAT4_B", (2560, 2816, 4224), 131630.90, 76.06, 83.09),
    ("BFLOAT4_B", (2560, 4224, 4224), 184483.53, 81.41, 85.14),
    ("BFLOAT4_B", (3840, 4224, 4224), 270500.18, 83.28, 86.88),
    ("BFLOAT4_B", (3840, 4224, 5632), 366706.85, 81.91, 87.32),
    ("BFLOAT4_B", (3840, 5632, 5632), 475039.48, 84.31, 88.12),
    ("BFLOAT4_B", (5120, 5632, 5632), 627701.28, 85.07, 88.86),
)
ROWS = {"n150": N150, "p150": P150, "p150_13x10": published_gemm_oob_p150_13.traced_rows()}
FIT = {
    "n150": ((512, 512, 512), (1024, 1024, 1024), (1024, 1024, 2048), (1024, 2048, 2048), (2048, 2048, 2048),
             (2048, 2048, 3072), (2048, 3072, 3072)),
    "p150": ((640, 704, 704), (640, 1408, 1408), (640, 1408, 2816), (1280, 1408, 1408), (1280, 1408, 2816),
             (1280, 2816, 2816), (2560, 2816, 2816), (2560, 2816, 4224), (2560, 4224, 4224)),
}  # fmt: skip
"""The BF16 rows that set each arch's drain rate: ttnn's 2-D program with per-core blocks that fit L1
whole (larger ones are split into output blocks, and an earlier block's writes overlap later math)."""
FIDELITY = {"BFLOAT16": MathFidelity.HiFi2, "BFLOAT8_B": MathFidelity.LoFi, "BFLOAT4_B": MathFidelity.LoFi}


def system_machine(system: str) -> Machine:
    """The machine of a table: ``"n150"``, ``"p150"`` (11x10) or ``"p150_13x10"`` (the P150 with a 13x10 grid)."""
    if system == "p150_13x10":
        return machine(published_gemm_oob_p150_13.P150_13X10)
    return machine(system)


def math_thread_ns(row: Row) -> float:
    """The math thread's (TRISC1's) kernel duration of ``row``: host time x host / device utilisation."""
    _, _, host_ns, host_util, device_util = row
    return host_ns * host_util / device_util


def measured_drain_ns(system: str, row: Row) -> float:
    """What the host times beyond the math thread, less the traced op-to-op gap before the call."""
    gap = op_to_op_ns(system_machine(system).system.arch, traced=True, previous_kernel_ns=None)
    return row[2] - math_thread_ns(row) - gap


def desc(row: Row) -> OpDesc:
    """The row's matmul as ttnn runs it out of the box: all DRAM-interleaved, no program config."""
    dtype, (m, k, n), *_ = row
    a, b, out = TensorDesc((1, 1, m, k), dtype), TensorDesc((1, 1, k, n), dtype), TensorDesc((1, 1, m, n), dtype)
    return OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=FIDELITY[dtype], matmul=MatmulConfig())


def two_d_rows(system: str) -> list[Row]:
    """The rows of ``system`` whose program is ttnn's 2-D multicast program (the others are 1-D)."""
    m = system_machine(system)
    return [r for r in ROWS[system] if chosen_config(desc(r), m).matmul.program is MatmulProgram.MULTICAST_2D]


def fitted_rate(system: str) -> float:
    """Output bytes over measured drain (bytes/s) summed over the rows of :data:`FIT`."""
    rows = [r for r in ROWS[system] if r[0] == "BFLOAT16" and r[1] in FIT.get(system, ())]
    total = sum(desc(r).outputs[0].nbytes for r in rows)
    return total / sum(measured_drain_ns(system, r) for r in rows) * 1e9


_SMALLEST = (
    "the smallest 2-D call (2x2 tiles a core) in bfloat4_b: the model's in0 stream (2.4 us at one sender's rate for "
    "576 B tiles) outlasts its multiplies (1.3 us) and comes on top of Wormhole's fill and launch (6.7 us, fitted to "
    "the manual 512^3 rows, whose in0 is in L1): 9.1 us where the math thread measures 7.1; the same count meets "
    "the bfloat16 and bfloat8_b calls (in0 streams of 5.5 and 3.5 us: +6%, +13%), so what the bfloat4_b call "
    "saves beyond its shorter stream (its first blocks' reads, or the senders' per-transfer rate at 576 B) is not "
    "found.  Checked for stop 56: the manual table's twin (512^3 BFP4 LoFi traced, in0 in L1: 9.99 us, utilisation "
    "10.25 / 14.38) has a math thread of 7.12 us, this row's 7.07: reading in0 from DRAM costs this block nothing.  "
    "Taking the launch (2.0 us) out of the model's math thread, as if TRISC1's zone began after it, would meet this "
    "row (+0.4%) but move 2 N150 and 5 P150 math threads out (-15.6..-22.7%): the measured zones hold the launch, "
    "so it is not that; nor the senders' per-transfer rate (without the 576 B tile's derating the stream is 1.5 us and "
    "the row +16%)"
)
BLOCK_4X4_CHECKED = (
    "Checked for stop 56: the manual table's twin (1024^3 BF16 HiFi2 traced, in0 block-sharded in L1, the same 4x4 "
    "block over 4-tile K-blocks: 37.29 us, utilisation 43.93 / 47.79) has a math thread of 34.3 us, 5.1 us under "
    "this row's 39.3, where the model gives the twin 33.9 (its one-row subblocks, 54 cycles a multiply) and this "
    "row 30.9 (4x2 subblocks, 47 cycles): streaming in0 from DRAM costs this block about 8 us that the model hides "
    "behind the multiplies.  Counting each block's multicast (32 KB at the NoC's 30 B a cycle, 1.1 us) into the "
    "Wormhole senders' period as Blackhole's flush is (sender_flushes_multicast) would meet the three 1024^3 BF16 "
    "rows (+23.2 / +17.5 / -21.4% -> +11.2 / +6.0 / -5.3%) but move 20 met rows out (the manual 512x1024 L1 rows "
    "to -20..-29%, the N150 out-of-box math threads at 1024x1024x2048 and 1024x2048x2048 to +17..+33%), and a "
    "double-buffered pipeline with reads r, multicasts m and multiplies c per block runs at max(c, r, (c + m) / 2), "
    "which has no stall here (r 2.7, m 1.1, c 3.0 us): not a constant to move.  Nor the NoC's links: the 16 "
    "senders' DRAM responses and their multicasts, routed as tt-npe routes them (in0 on NoC 1, in1 on NoC 0: "
    "matmul_multicore_reuse_mcast_2d_program_factory.cpp at 62931bdb59; the soc descriptor's bank endpoints), put "
    "at most 699 KB on one link, 23 us at 30 B a cycle"
)
_BLOCK_4X4 = (
    "4x4 tiles a core in bfloat16: the model's multiplies, partial sums, fill and launch (30.9 us) fall 21% short of "
    "the math thread (39.3 us), where the same block in bfloat8_b and bfloat4_b is within 15% and the 4x8 to 8x12 "
    "blocks within 8% in every format: its in0 and in1 senders' streams (21.8 us each at one core's rate) run "
    "about as long as its multiplies (24.2 us), and what such a balanced pipeline loses per K-block is not modelled.  "
    + BLOCK_4X4_CHECKED
)
MISSED = {
    "n150": {
        ("BFLOAT4_B", (512, 512, 512)): _SMALLEST,
        ("BFLOAT16", (1024, 1024, 1024)): _BLOCK_4X4,
    },
    "p150": {},
    "p150_13x10": {},
}
"""The math-thread figures the model misses by more than 15%, each with why."""


def model_math_thread_ns(system: str, row: Row) -> float:
    """The model's kernel of ``row`` less its output drain: what the math thread's duration measures."""
    m = system_machine(system)
    chosen = chosen_config(desc(row), m)
    return predict(chosen, m).kernel_ns - output_drain_ns(chosen, m)


def main() -> None:
    for system in ROWS:
        arch = system_machine(system).system.arch
        rate = arch.matmul_drain_bytes_per_s / 1e9
        fit = f"fitted {fitted_rate(system) / 1e9:.1f} GB/s" if system in FIT else "no rows fitted"
        print(f"{system}: drain {fit}, the model's {rate:.1f}")
        for row in two_d_rows(system):
            mark = "*" if row[0] == "BFLOAT16" and row[1] in FIT.get(system, ()) else " "
            chosen = chosen_config(desc(row), system_machine(system))
            model, meas = output_drain_ns(chosen, system_machine(system)), measured_drain_ns(system, row)
            thread, model_thread = math_thread_ns(row), model_math_thread_ns(system, row)
            print(
                f"{mark}{row[0]:10} {'x'.join(map(str, row[1])):16} math thread {thread / 1e3:7.1f} us, model "
                f"{model_thread / 1e3:7.1f} ({model_thread / thread - 1:+4.0%});  drain {meas / 1e3:6.1f} us, model "
                f"{model / 1e3:6.1f} ({model / meas - 1:+4.0%})"
            )


if __name__ == "__main__":
    main()
