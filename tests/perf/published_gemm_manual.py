"""GEMM_FLOPS.md's manually tuned tables ("All Data"): every traced row of the N150 (8x8 grid) and P150
(11x10 and 13x10 grids) tables, checked by the model on the program config the benchmark sets by hand.

Source: tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (2026-04), All Data: "N150 Manually Tuned
Configurations", "P150 Manually Tuned Configurations (13x10 grid)" and "(11x10 grid)": 156 rows each, 13
shapes x BF16 HiFi2 / HiFi4, BFP8 HiFi2 / LoFi, BFP4 LoFi x eager and traced; in0 block-sharded in L1 with
the output (the smaller shapes) or every operand DRAM-interleaved (the larger), in1 in DRAM; TFLOPs =
2*M*K*N over the host-timed op.  The program config (tests/ttnn/unit_tests/benchmarks/test_benchmark.py's
``matmul_shapes_*``) gives each core M/rows x N/columns tiles of the grid, as the model's 2-D program does
by default.  Only the traced rows are here: an eager row's host time is the benchmark loop's (189 us for the
N150's 512^3 whose device time is 9 us).  The rows :mod:`tests.perf.published` already names (its manual
figures, most of which set constants) are left to it; every row here is a check.
"""

from __future__ import annotations

from meshnn.perf import MathFidelity

F = MathFidelity
L1, DRAM = True, False
DTYPES = {"BF16": "BFLOAT16", "BFP8": "BFLOAT8_B", "BFP4": "BFLOAT4_B"}
_DOC = "tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (2026-04), All Data: "
SOURCES = {
    "n150": _DOC + "N150 Manually Tuned Configurations",
    "p150": _DOC + "P150 Manually Tuned Configurations (11x10 grid)",
    "p150_13x10": _DOC + "P150 Manually Tuned Configurations (13x10 grid)",
}
GRIDS = {"n150": (8, 8), "p150": (11, 10), "p150_13x10": (13, 10)}
ROWS: dict[str, dict[tuple[str, F], tuple[tuple[int, int, int, bool, float], ...]]] = {
    "n150": {
        ("BF16", F.HiFi2): (
            (512, 512, 512, L1, 21.4), (512, 1024, 1024, L1, 37.89), (512, 1024, 2048, L1, 42.26),
            (1024, 1024, 1024, L1, 57.58), (1024, 1024, 2048, L1, 65.34), (1024, 2048, 2048, L1, 69.53),
            (2048, 2048, 2048, L1, 76.64), (2048, 2048, 3072, L1, 76.94), (2048, 3072, 3072, L1, 77.25),
            (3072, 3072, 3072, L1, 74.95), (3072, 3072, 4096, DRAM, 67.26), (3072, 4096, 4096, DRAM, 74.36),
            (3328, 2560, 2560, DRAM, 59.92), (4096, 4096, 4096, DRAM, 68.45), (8192, 8192, 8192, DRAM, 81.13),
            (16384, 16384, 16384, DRAM, 85.36),
        ),
        ("BF16", F.HiFi4): (
            (512, 512, 512, L1, 21.05), (512, 1024, 1024, L1, 36.51), (512, 1024, 2048, L1, 39.58),
            (1024, 1024, 1024, L1, 45.72), (1024, 1024, 2048, L1, 47.23), (1024, 2048, 2048, L1, 49.98),
            (2048, 2048, 2048, L1, 51.67), (2048, 2048, 3072, L1, 51.33), (2048, 3072, 3072, L1, 52.91),
            (3072, 3072, 3072, L1, 51.87), (3072, 3072, 4096, DRAM, 47.25), (3072, 4096, 4096, DRAM, 51.02),
            (3328, 2560, 2560, DRAM, 43.21), (4096, 4096, 4096, DRAM, 50.69), (8192, 8192, 8192, DRAM, 52.74),
            (16384, 16384, 16384, DRAM, 54.26),
        ),
        ("BFP8", F.HiFi2): (
            (512, 512, 512, L1, 24.87), (512, 1024, 1024, L1, 51.4), (512, 1024, 2048, L1, 62.93),
            (1024, 1024, 1024, L1, 77.97), (1024, 1024, 2048, L1, 86.89), (1024, 2048, 2048, L1, 93.8),
            (2048, 2048, 2048, L1, 96.41), (2048, 2048, 3072, L1, 98.13), (2048, 3072, 3072, L1, 99.82),
            (3072, 3072, 3072, L1, 99.92), (3072, 3072, 4096, L1, 100.15), (3328, 2560, 2560, DRAM, 85.63),
            (4096, 4096, 4096, DRAM, 94.7), (8192, 8192, 8192, DRAM, 100.01), (16384, 16384, 16384, DRAM, 102.44),
        ),
        ("BFP8", F.LoFi): (
            (512, 512, 512, L1, 23.88), (512, 1024, 1024, L1, 53.72), (512, 1024, 2048, L1, 67.09),
            (1024, 1024, 1024, L1, 92.8), (1024, 1024, 2048, L1, 111.9), (1024, 2048, 2048, L1, 124.1),
            (2048, 2048, 2048, L1, 138.1), (2048, 2048, 3072, L1, 139.27), (2048, 3072, 3072, L1, 142.08),
            (3072, 3072, 3072, L1, 141.72), (3072, 3072, 4096, L1, 143.95), (3328, 2560, 2560, DRAM, 111.74),
            (4096, 4096, 4096, DRAM, 140.53), (8192, 8192, 8192, DRAM, 155.56), (16384, 16384, 16384, DRAM, 163.19),
        ),
        ("BFP4", F.LoFi): (
            (512, 512, 512, L1, 26.86), (512, 1024, 1024, L1, 63.39), (512, 1024, 2048, L1, 83.25),
            (1024, 1024, 1024, L1, 116.22), (1024, 1024, 2048, L1, 144.0), (1024, 2048, 2048, L1, 166.09),
            (2048, 2048, 2048, L1, 183.06), (2048, 2048, 3072, L1, 185.15), (2048, 3072, 3072, L1, 191.17),
            (3072, 3072, 3072, L1, 195.8), (3072, 3072, 4096, L1, 196.95), (3072, 4096, 4096, L1, 194.3),
            (3328, 2560, 2560, DRAM, 163.92), (4096, 4096, 4096, L1, 196.81), (8192, 8192, 8192, DRAM, 195.91),
            (16384, 16384, 16384, DRAM, 199.72),
        ),
    },
    "p150_13x10": {
        ("BF16", F.HiFi2): (
            (640, 832, 832, L1, 66.71), (640, 1664, 1664, L1, 150.99), (640, 1664, 3328, L1, 188.21),
            (1280, 1664, 1664, L1, 247.36), (1280, 1664, 3328, L1, 272.27), (1280, 3328, 3328, L1, 291.55),
            (2560, 3328, 3328, L1, 309.68), (2560, 3328, 4992, L1, 313.16), (2560, 4992, 4992, L1, 317.61),
            (3840, 4992, 4992, L1, 316.66), (3840, 4992, 6656, DRAM, 267.85), (3840, 6656, 6656, DRAM, 283.24),
            (4160, 4160, 4160, DRAM, 266.43), (5120, 6656, 6656, DRAM, 281.79), (10240, 13312, 13312, DRAM, 285.26),
            (20480, 26624, 26624, DRAM, 239.31),
        ),
        ("BF16", F.HiFi4): (
            (640, 832, 832, L1, 65.75), (640, 1664, 1664, L1, 129.2), (640, 1664, 3328, L1, 142.01),
            (1280, 1664, 1664, L1, 147.14), (1280, 1664, 3328, L1, 155.04), (1280, 3328, 3328, L1, 161.02),
            (2560, 3328, 3328, L1, 166.46), (2560, 3328, 4992, L1, 167.35), (2560, 4992, 4992, L1, 168.55),
            (3840, 4992, 4992, L1, 168.22), (3840, 4992, 6656, DRAM, 154.89), (3840, 6656, 6656, DRAM, 159.7),
            (4160, 4160, 4160, DRAM, 158.29), (5120, 6656, 6656, DRAM, 160.95), (10240, 13312, 13312, DRAM, 150.73),
            (20480, 26624, 26624, DRAM, 141.19),
        ),
        ("BFP8", F.HiFi2): (
            (640, 832, 832, L1, 71.54), (640, 1664, 1664, L1, 173.46), (640, 1664, 3328, L1, 228.7),
            (1280, 1664, 1664, L1, 250.89), (1280, 1664, 3328, L1, 276.36), (1280, 3328, 3328, L1, 298.82),
            (2560, 3328, 3328, L1, 313.89), (2560, 3328, 4992, L1, 317.2), (2560, 4992, 4992, L1, 321.36),
            (3840, 4992, 4992, L1, 323.11), (3840, 4992, 6656, L1, 325.28), (4160, 4160, 4160, DRAM, 300.98),
            (5120, 6656, 6656, DRAM, 307.4), (10240, 13312, 13312, DRAM, 309.22), (20480, 26624, 26624, DRAM, 270.59),
        ),
        ("BFP8", F.LoFi): (
            (640, 832, 832, L1, 72.12), (640, 1664, 1664, L1, 176.44), (640, 1664, 3328, L1, 237.14),
            (1280, 1664, 1664, L1, 340.25), (1280, 1664, 3328, L1, 444.47), (1280, 3328, 3328, L1, 527.77),
            (2560, 3328, 3328, L1, 584.58), (2560, 3328, 4992, L1, 595.31), (2560, 4992, 4992, L1, 611.08),
            (3840, 4992, 4992, L1, 617.48), (3840, 4992, 6656, L1, 625.9), (4160, 4160, 4160, DRAM, 509.72),
            (5120, 6656, 6656, DRAM, 541.95), (10240, 13312, 13312, DRAM, 586.44), (20480, 26624, 26624, DRAM, 465.1),
        ),
        ("BFP4", F.LoFi): (
            (640, 832, 832, L1, 75.12), (640, 1664, 1664, L1, 188.03), (640, 1664, 3328, L1, 262.04),
            (1280, 1664, 1664, L1, 362.57), (1280, 1664, 3328, L1, 465.16), (1280, 3328, 3328, L1, 538.77),
            (2560, 3328, 3328, L1, 588.47), (2560, 3328, 4992, L1, 599.21), (2560, 4992, 4992, L1, 615.06),
            (3840, 4992, 4992, L1, 627.26), (3840, 4992, 6656, L1, 633.09), (3840, 6656, 6656, L1, 636.7),
            (4160, 4160, 4160, DRAM, 582.84), (5120, 6656, 6656, L1, 641.34), (10240, 13312, 13312, DRAM, 638.27),
            (20480, 26624, 26624, DRAM, 552.66),
        ),
    },
    "p150": {
        ("BF16", F.HiFi2): (
            (640, 704, 704, L1, 54.47), (640, 1408, 1408, L1, 124.76), (640, 1408, 2816, L1, 160.36),
            (1280, 1408, 1408, L1, 205.81), (1280, 1408, 2816, L1, 227.88), (1280, 2816, 2816, L1, 244.98),
            (2560, 2816, 2816, L1, 260.75), (2560, 2816, 4224, L1, 263.52), (2560, 4224, 4224, L1, 267.99),
            (3840, 4224, 4224, L1, 267.29), (3840, 4224, 5632, DRAM, 227.05), (3840, 5632, 5632, DRAM, 240.12),
            (4160, 3520, 3520, DRAM, 226.26), (5120, 5632, 5632, DRAM, 239.48), (10240, 11264, 11264, DRAM, 253.0),
            (20480, 22528, 22528, DRAM, 223.53),
        ),
        ("BF16", F.HiFi4): (
            (640, 704, 704, L1, 53.43), (640, 1408, 1408, L1, 107.26), (640, 1408, 2816, L1, 118.75),
            (1280, 1408, 1408, L1, 122.94), (1280, 1408, 2816, L1, 130.22), (1280, 2816, 2816, L1, 135.58),
            (2560, 2816, 2816, L1, 140.43), (2560, 2816, 4224, L1, 141.19), (2560, 4224, 4224, L1, 142.42),
            (3840, 4224, 4224, L1, 142.18), (3840, 4224, 5632, DRAM, 131.34), (3840, 5632, 5632, DRAM, 135.24),
            (4160, 3520, 3520, DRAM, 135.15), (5120, 5632, 5632, DRAM, 136.39), (10240, 11264, 11264, DRAM, 135.23),
            (20480, 22528, 22528, DRAM, 127.77),
        ),
        ("BFP8", F.HiFi2): (
            (640, 704, 704, L1, 57.71), (640, 1408, 1408, L1, 140.6), (640, 1408, 2816, L1, 188.38),
            (1280, 1408, 1408, L1, 205.29), (1280, 1408, 2816, L1, 229.26), (1280, 2816, 2816, L1, 249.64),
            (2560, 2816, 2816, L1, 263.67), (2560, 2816, 4224, L1, 266.43), (2560, 4224, 4224, L1, 270.65),
            (3840, 4224, 4224, L1, 272.48), (3840, 4224, 5632, L1, 274.33), (4160, 3520, 3520, DRAM, 256.96),
            (5120, 5632, 5632, DRAM, 259.92), (10240, 11264, 11264, DRAM, 268.38),
            (20480, 22528, 22528, DRAM, 246.58),
        ),
        ("BFP8", F.LoFi): (
            (640, 704, 704, L1, 58.39), (640, 1408, 1408, L1, 144.04), (640, 1408, 2816, L1, 195.49),
            (1280, 1408, 1408, L1, 279.46), (1280, 1408, 2816, L1, 368.66), (1280, 2816, 2816, L1, 439.55),
            (2560, 2816, 2816, L1, 489.49), (2560, 2816, 4224, L1, 497.8), (2560, 4224, 4224, L1, 512.72),
            (3840, 4224, 4224, L1, 519.69), (3840, 4224, 5632, L1, 526.97), (4160, 3520, 3520, DRAM, 432.24),
            (5120, 5632, 5632, DRAM, 458.62), (10240, 11264, 11264, DRAM, 498.95),
            (20480, 22528, 22528, DRAM, 436.03),
        ),
        ("BFP4", F.LoFi): (
            (640, 704, 704, L1, 59.89), (640, 1408, 1408, L1, 155.44), (640, 1408, 2816, L1, 219.63),
            (1280, 1408, 1408, L1, 297.46), (1280, 1408, 2816, L1, 383.78), (1280, 2816, 2816, L1, 446.24),
            (2560, 2816, 2816, L1, 491.48), (2560, 2816, 4224, L1, 500.74), (2560, 4224, 4224, L1, 515.57),
            (3840, 4224, 4224, L1, 526.8), (3840, 4224, 5632, L1, 532.25), (3840, 5632, 5632, L1, 536.2),
            (4160, 3520, 3520, DRAM, 495.26), (5120, 5632, 5632, L1, 540.69), (10240, 11264, 11264, DRAM, 541.95),
            (20480, 22528, 22528, DRAM, 502.03),
        ),
    },
}  # fmt: skip
"""Per system, per (dtype, fidelity): (M, K, N, in0 in L1, TFLOPs) of each traced row."""

_OUT_BLOCKS = (
    "the largest shape: the model meets its math thread within 6%, and the host-timed call is 18-33% above the "
    "math thread's cycles at 1.35 GHz (0-11% for the 10240-row shapes' 5-24 ms calls; these take 48-206 ms, the "
    "benchmark's 105 calls 5-22 s): a clock below 1.35 GHz in such runs (the firmware's power, current and "
    "temperature throttlers) would give it, which the model, timing an op at its nominal clock, has no figure for; "
    "the re-reads of in0 and in1 for each of its 8 x 8 output blocks (4 x 4 in bfloat4_b), not timed by the model, "
    "would not bound it at the model's rates (senders 8-27 ms, DRAM 8-42 ms, multiplies 40-175 ms).  Checked for "
    "stop 56: the benchmark's 10240-row shapes run the same per-core loop (8x8-tile output blocks over 16-tile "
    "K-blocks, 16 blocks a core against 64: tests/ttnn/unit_tests/benchmarks/test_benchmark.py at 62931bdb59), at "
    "the same math cycles (device utilisation 82.5-93.0% against 86.2-94.4%), yet their host-timed calls sit "
    "0.6-10.9% above those cycles at 1.35 GHz, these 18-33%, and 13x10's 130 cores more than 11x10's 110 in every "
    "format (20480 rows: 0.75-0.85 of the clock against 0.83-0.91): the cost grows with the run's length and its "
    "cores, as a power or thermal clock limit would, not with the reads (the program's re-reads of in0 and in1 "
    "come to 20 GB in bfloat16, 166 GB/s over its 121 ms, half Blackhole's arbitrary-placement 344 GB/s; a "
    "sender's 872 MB take 16 ms at its 40 B a cycle).  The benchmark sets throttle_level NO_THROTTLE, so the "
    "matmul's own math throttle is off; the firmware's clock under load has no published figure.  Checked for "
    "stop 57 (tests/perf/published_gemm_manual_split.py, 20 figures from the tables' device utilisation): the model "
    "meets the math thread of every 10240- and 20480-row call on both grids within 3.2%, and at 20480 rows on 13x10 "
    "the math thread / host falls with the bytes each core receives a math cycle (0.75 at 16-17 B in bfloat16 HiFi2 "
    "and bfloat8_b LoFi, 0.83 at 8-8.5 B, 0.85 at 4.5 B in bfloat4_b) where the 10240-row calls, the same loop at "
    "the same rate, keep 0.90-1.00: a load-dependent clock over a long run, not a rate; the N150's 16384-row calls "
    "(44-162 ms) keep 0.90-0.91.  Its config here keeps the core's block whole; given the benchmark's output "
    "blocks (meshnn.perf.matmul_out_blocks: re-reads, boundary waits, only the last block drained after the math) "
    "its device time stays met and this host-timed row moves 1.5-1.8 points further out, as would the 11x10 "
    "twins' bfloat16 HiFi2 and bfloat8_b LoFi rows (+15.2 / +16.5%): the drain the whole block keeps stands in "
    "for part of the clock's cost"
)
_TWO_ROWS_L1 = (
    "2-row blocks a core in bfloat4_b, in0 in L1: the model's in1 sender stream (its columns read at one core's "
    "rate, each block's multicast flushed) falls 11% short of the math thread (17.4 us), and the call ends 8% after "
    "the average core's: together 15% under; its 11x10 twin (640x1408x1408) is met.  Checked for stop 56: both "
    "twins' math threads grow with K alone (15.05 us over 44 K tiles, 17.42 over 52: 0.34 us, about 455 cycles, a "
    "K tile; the same 2x4-tile block a core, 4-tile K-blocks), so a K-block costs about 1,820 cycles where the "
    "model's in1 sender spends 370 reading its 16 tiles, 150 waiting out their multicast and, were a DRAM round "
    "trip added a block, 445 more: the model holds the twins by a fixed fill and launch (8 us) that the "
    "measurements do not show, which meets the 44-tile twin (+8.8%) and not the 52-tile one"
)
MISSED: dict[tuple[str, str, F, tuple[int, int, int]], str] = {
    **{
        ("p150_13x10", d, f, (20480, 26624, 26624)): _OUT_BLOCKS
        for d, f in (("BF16", F.HiFi2), ("BF16", F.HiFi4), ("BFP8", F.HiFi2), ("BFP8", F.LoFi), ("BFP4", F.LoFi))
    },
    ("p150_13x10", "BFP4", F.LoFi, (640, 1664, 1664)): _TWO_ROWS_L1,
}
"""The traced rows the model misses by more than 15%, each with why.  The 11x10 grid's 20480x22528x22528
bfloat8_b LoFi row, of the same class, sits at +15.0% since the rows' K blocks were timed (stop 49: +15.1%
before; :func:`in0_block_w`): inside the line by 0.02%, its cause (the clock) still not modelled."""


def rows(system: str) -> list[tuple[str, F, tuple[int, int, int], bool, float, str]]:
    """(dtype, fidelity, (M, K, N), in0 in L1, TFLOPs, why outside the claim or '') of ``system``'s rows."""
    return [
        (DTYPES[dtype], fidelity, (m, k, n), l1, tf, MISSED.get((system, dtype, fidelity, (m, k, n)), ""))
        for (dtype, fidelity), values in ROWS[system].items()
        for m, k, n, l1, tf in values
    ]


_BENCH_SHAPES = {  # test_benchmark.py's matmul_shapes_<dtype>: (m, k, n) before the grid scales them: in0_block_w_div
    "BFLOAT16": {
        (64, 64, 64): 1, (64, 128, 128): 1, (64, 128, 256): 1, (128, 128, 128): 1, (128, 128, 256): 1,
        (128, 256, 256): 1, (256, 256, 256): 1, (256, 256, 384): 1, (256, 384, 384): 2, (384, 384, 384): 4,
        (384, 384, 512): 2, (384, 512, 512): 2, (416, 320, 320): 1, (512, 512, 512): 1, (1024, 1024, 1024): 2,
        (2048, 2048, 2048): 4,
    },
    "BFLOAT8_B": {
        (64, 64, 64): 1, (64, 128, 128): 1, (64, 128, 256): 1, (128, 128, 128): 1, (128, 128, 256): 1,
        (128, 256, 256): 1, (256, 256, 256): 1, (256, 256, 384): 1, (256, 384, 384): 1, (384, 384, 384): 2,
        (384, 384, 512): 2, (416, 320, 320): 1, (512, 512, 512): 1, (1024, 1024, 1024): 2, (2048, 2048, 2048): 4,
    },
    "BFLOAT4_B": {
        (64, 64, 64): 1, (64, 128, 128): 1, (64, 128, 256): 1, (128, 128, 128): 1, (128, 128, 256): 1,
        (128, 256, 256): 1, (256, 256, 256): 1, (256, 256, 384): 1, (256, 384, 384): 1, (384, 384, 384): 1,
        (384, 384, 512): 1, (384, 512, 512): 2, (416, 320, 320): 1, (512, 512, 512): 2, (1024, 1024, 1024): 2,
        (2048, 2048, 2048): 4,
    },
}  # fmt: skip


def in0_block_w(grid: tuple[int, int], dtype: str, m: int, k: int, n: int) -> int | None:
    """The K tiles of one inner block the benchmark gives ``(m, k, n)`` on ``grid``: ``K / gx / 32 /
    in0_block_w_div`` (tests/ttnn/unit_tests/benchmarks/test_benchmark.py's manual loop, its shapes scaled by
    the grid: M by its rows, K and N by its columns), so the model times the partial sums between those blocks
    (:func:`meshnn.perf.matmul.partials_cycles`); None for a shape its lists do not hold."""
    gx, gy = grid
    div = _BENCH_SHAPES[dtype].get((m // gy, k // gx, n // gx))
    return None if div is None or k % (gx * 32 * div) else k // gx // 32 // div
