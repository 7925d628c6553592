"""GEMM_FLOPS.md's manually tuned P150 tables at their two largest shapes, split into the math thread's time
and what the host times beyond it: the device-time checks behind the largest shape's misses.

Source: tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (2026-04, PR #41382, commit 62931bdb59), All Data:
"P150 Manually Tuned Configurations (13x10 grid)" and "(11x10 grid)", the traced rows of the shapes the
benchmark builds from (1024, 1024, 1024) and (2048, 2048, 2048) on each grid (10240 and 20480 rows): every
operand DRAM-interleaved, the program config test_benchmark.py sets by hand (8x8-tile output blocks, 16x16 in
bfloat4_b, over 16-tile K-blocks).  Each row gives the host-timed ns of a call and two utilisations of the same
ideal cycles: host-based (over that time at the benchmark's fixed 1.35 GHz) and device-based (over the math
thread's, TRISC1's, kernel duration in cycles), so the math thread lasts host ns x host / device utilisation
at 1.35 GHz, as :mod:`tests.perf.published_gemm_split` reads the out-of-box tables.  Every figure is a check
(no constant was fitted to these rows): the model's kernel less its output drain against that math thread.

What they show: the model meets every math thread within 3.2%.  At 10240 rows the host-timed call is 0.3-10.9%
above its math thread, at 20480 rows 9.7-33.2% (13x10: 17.7-33.2%, 11x10: 9.7-20.6%), with the same per-core
loop at both sizes (the same output block, K-block and multiplies a block, so the same bytes a cycle) and the
same cycles per multiply (device utilisation 82.5-94.4%).  The excess grows with the call's length (5-24 ms
against 41-206 ms) and the grid's cores, and at one shape it orders by the bytes each core receives a math
cycle (its in0 and in1 blocks over the block's multiplies): 13x10 at 20480 rows, math thread / host 0.75 in
bfloat16 HiFi2 and bfloat8_b LoFi (16-17 B), 0.83 in bfloat16 HiFi4 and bfloat8_b HiFi2 (8-8.5 B), 0.85 in
bfloat4_b LoFi (4.5 B: 16x16-tile output blocks); 11x10: 0.83, 0.89-0.90, 0.91.  A rate that binds would cost
the same share at both sizes; a clock held below 1.35 GHz under sustained load (the firmware's power, current and
thermal limits), which the host's time sees and the math thread's cycles do not, gives this pattern.  The N150's
manual table does not show it (8192 rows: math thread / host 0.91-0.93; 16384 rows, 44-162 ms a call: 0.90-0.91).
"""

from __future__ import annotations

from meshnn.perf import MathFidelity

from .figure import Figure
from .published_gemm_manual import DTYPES, GRIDS, in0_block_w

F = MathFidelity
SOURCE = "tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (2026-04), All Data: P150 Manually Tuned, device utilisation"
Row = tuple[str, F, tuple[int, int, int], float, float, float]
"""(dtype, fidelity, (M, K, N), host-timed ns per call, host-based and device-based utilisation %)."""

ROWS: dict[str, tuple[Row, ...]] = {
    "p150_13x10": (
        ("BF16", F.HiFi2, (10240, 13312, 13312), 12722597.12, 79.37, 85.15),
        ("BF16", F.HiFi2, (20480, 26624, 26624), 121321547.03, 66.58, 88.66),
        ("BF16", F.HiFi4, (10240, 13312, 13312), 24077782.63, 83.87, 92.98),
        ("BF16", F.HiFi4, (20480, 26624, 26624), 205641906.26, 78.56, 94.44),
        ("BFP8", F.HiFi2, (10240, 13312, 13312), 11736917.50, 86.03, 89.05),
        ("BFP8", F.HiFi2, (20480, 26624, 26624), 107297601.70, 75.29, 90.53),
        ("BFP8", F.LoFi, (10240, 13312, 13312), 6188557.15, 81.58, 82.53),
        ("BFP8", F.LoFi, (20480, 26624, 26624), 62425124.65, 64.70, 86.21),
        ("BFP4", F.LoFi, (10240, 13312, 13312), 5686080.46, 88.79, 89.29),
        ("BFP4", F.LoFi, (20480, 26624, 26624), 52535061.84, 76.88, 90.45),
    ),
    "p150": (
        ("BF16", F.HiFi2, (10240, 11264, 11264), 10270605.09, 83.19, 85.14),
        ("BF16", F.HiFi2, (20480, 22528, 22528), 92995870.11, 73.50, 88.62),
        ("BF16", F.HiFi4, (10240, 11264, 11264), 19214992.52, 88.93, 92.94),
        ("BF16", F.HiFi4, (20480, 22528, 22528), 162690668.11, 84.03, 94.40),
        ("BFP8", F.HiFi2, (10240, 11264, 11264), 9682013.99, 88.25, 89.01),
        ("BFP8", F.HiFi2, (20480, 22528, 22528), 84302687.64, 81.08, 90.51),
        ("BFP8", F.LoFi, (10240, 11264, 11264), 5207881.93, 82.03, 82.51),
        ("BFP8", F.LoFi, (20480, 22528, 22528), 47675237.66, 71.68, 86.16),
        ("BFP4", F.LoFi, (10240, 11264, 11264), 4794666.77, 89.10, 89.38),
        ("BFP4", F.LoFi, (20480, 22528, 22528), 41407389.64, 82.54, 90.51),
    ),
}
"""Per system (its grid in :data:`tests.perf.published_gemm_manual.GRIDS`), the traced rows of its 10240- and
20480-row shapes."""


def math_thread_ns(row: Row) -> float:
    """The math thread's (TRISC1's) kernel duration of ``row`` at 1.35 GHz: host ns x host / device utilisation."""
    _, _, _, host_ns, host_util, device_util = row
    return host_ns * host_util / device_util


def model_math_thread_ns(system: str, row: Row) -> float:
    """The model's kernel of ``row`` on the program the benchmark sets (a 2-D program over the table's grid,
    its K-blocks: :func:`tests.perf.published_gemm_manual.in0_block_w`), less its output drain."""
    from meshnn.perf import MatmulConfig, MatmulProgram, OpDesc, OpFamily, TensorDesc, predict
    from meshnn.perf.matmul import output_drain_ns
    from meshnn.perf.model import machine

    from .published_gemm_oob_p150_13 import P150_13X10

    dtype, fidelity, (m, k, n) = DTYPES[row[0]], row[1], row[2]
    target = P150_13X10 if system == "p150_13x10" else system
    grid = GRIDS[system]
    tensors = TensorDesc((1, 1, m, k), dtype), TensorDesc((1, 1, k, n), dtype)
    config = MatmulConfig(MatmulProgram.MULTICAST_2D, grid, in0_block_w=in0_block_w(grid, dtype, m, k, n))
    desc = OpDesc(OpFamily.MATMUL, tensors, (TensorDesc((1, 1, m, n), dtype),), fidelity=fidelity, matmul=config)
    return predict(desc, target, traced=True).kernel_ns - output_drain_ns(desc, machine(target))


def figures() -> list[Figure]:
    """One check a row: its math thread (us) against the model's kernel less its drain."""
    out = []
    for system, rows in ROWS.items():
        label = system.upper().replace("_", " ")
        for row in rows:
            dtype, fidelity, (m, k, n) = DTYPES[row[0]], row[1], row[2]
            measured = math_thread_ns(row) / 1e3

            def model(s=system, r=row) -> float:
                return model_math_thread_ns(s, r) / 1e3

            name = f"{label} manually tuned {m}x{k}x{n} {dtype} {fidelity.name} DRAM (traced): math thread"
            out.append(Figure(name, SOURCE, measured, measured, "us", model, group="matmul"))
    return out
