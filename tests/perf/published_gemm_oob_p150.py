"""GEMM_FLOPS.md's out-of-box P150 table on the 11x10 grid: every row, ttnn choosing the program
config itself.

Source: tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md as updated 2026-04 (PR #41382, firmware with
the 11x10 compute grid), "P150 Out of Box Results (11x10 grid)": 78 configurations, 13 sizes x BF16
HiFi2 / BFP8 LoFi / BFP4 LoFi x eager and traced; every operand DRAM-interleaved, no program config.
TFLOPs = 2*M*K*N over the host-timed op.  The model picks the program ttnn would
(:mod:`meshnn.perf.matmul_auto`) on a P150 and times it; the constants fitted to these rows: the three
eager 640x704x704 ones set Blackhole's host dispatch (:data:`meshnn.perf.hardware.BLACKHOLE`'s
``host_dispatch_ns``, 21 us: their middle), and nine BF16 traced rows' host and device times set its
matmul output drain (:mod:`tests.perf.published_gemm_split`).
"""

from __future__ import annotations

from meshnn.perf import MathFidelity

from .published_gemm_oob_p150_13 import EAGER_CHECKED, HOST_CHECKED
from .published_gemm_split import FIT as DRAIN_FIT

F = MathFidelity
SOURCE = "tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (2026-04), P150 Out of Box Results (11x10 grid)"
SIZES = (
    (640, 704, 704), (640, 1408, 1408), (640, 1408, 2816), (1280, 1408, 1408), (1280, 1408, 2816),
    (1280, 2816, 2816), (2560, 2816, 2816), (2560, 2816, 4224), (2560, 4224, 4224), (3840, 4224, 4224),
    (3840, 4224, 5632), (3840, 5632, 5632), (5120, 5632, 5632),
)  # fmt: skip
TFLOPS = {  # (dtype, fidelity, traced): TFLOPs per size, in SIZES' order
    ("BFLOAT16", F.HiFi2, False): (
        37.75, 87.79, 107.57, 120.19, 138.53, 186.82, 198.9, 208.34, 232.66, 232.59, 230.25, 238.79, 239.38,
    ),
    ("BFLOAT16", F.HiFi2, True): (
        40.39, 91.41, 110.02, 122.69, 140.03, 187.78, 199.83, 209.22, 233.04, 232.92, 230.53, 239.05, 239.51,
    ),
    ("BFLOAT8_B", F.LoFi, False): (
        29.84, 116.28, 151.55, 179.1, 227.7, 324.89, 369.49, 389.89, 433.33, 449.06, 444.13, 465.24, 469.09,
    ),
    ("BFLOAT8_B", F.LoFi, True): (
        48.64, 120.88, 154.82, 185.78, 233.49, 333.74, 377.0, 396.1, 441.4, 454.88, 449.74, 469.21, 471.99,
    ),
    ("BFLOAT4_B", F.LoFi, False): (
        24.81, 99.24, 161.69, 195.7, 263.48, 362.56, 419.06, 447.44, 480.62, 497.18, 491.63, 507.66, 514.13,
    ),
    ("BFLOAT4_B", F.LoFi, True): (
        54.37, 139.58, 193.04, 237.55, 300.28, 392.67, 434.8, 462.67, 495.18, 506.57, 498.23, 512.81, 517.45,
    ),
}  # fmt: skip

SMALLEST = (640, 704, 704)
"""Its eager rows (16.81, 21.26, 25.57 us a call) set Blackhole's host dispatch: fitted, not checks."""

_HOST = (
    "host-bound eager rows of one shape in three dtypes (16.81, 21.26, 25.57 us a call, the kernels 12-18 us): "
    "Blackhole's host dispatch is one figure fitted to their middle (21 us), which cannot meet all three.  "
    + HOST_CHECKED
)
_HOST_BFP4 = (
    "host-bound: 25.57 us a call, as the bfloat4_b eager row of the smallest shape (640x704x704) takes, 7.4 us above "
    "its traced row (18.18 us, met); Blackhole's host dispatch is one figure (21 us) fitted to the three dtypes' "
    "smallest eager rows (16.81, 21.26, 25.57 us), which cannot meet the bfloat4_b ones.  " + EAGER_CHECKED
)
_EAGER_2X8 = (
    "an eager row measured 5.1 us a call above its traced row (31.39 against 26.29 us, met), where the model's eager "
    "call hides the host's dispatch (21 us on Blackhole) behind the previous call's kernel.  " + EAGER_CHECKED
)
_EAGER = (
    "an eager row measured 4.5-4.7 us a call above its traced row (1280x1408x1408: 25.9 against 21.4 us; "
    "1280x1408x2816: 38.5 against 33.8), where the model's eager call hides the host's dispatch (21 us on Blackhole) "
    "behind the previous call's kernel; the traced rows are met.  " + EAGER_CHECKED
)
_MISSED = {
    ("BFLOAT16", False): {(640, 704, 704): _HOST},
    ("BFLOAT4_B", False): {
        (640, 704, 704): _HOST,
        (640, 1408, 1408): _HOST_BFP4,
        (640, 1408, 2816): _EAGER_2X8,
        (1280, 1408, 1408): _EAGER,
        (1280, 1408, 2816): _EAGER,
    },
}
"""The rows the model misses by more than 15% (6 of the 78), each with why.  The traced 2-row bfloat4_b rows
(640x1408x1408, 640x1408x2816: +19%, +21%) are met since Blackhole's senders wait out each block's multicast
(:func:`meshnn.perf.matmul.multicast_flush_cycles`: +10%, +8%).  Before a 2-D program's output
drain was timed (:func:`meshnn.perf.matmul.output_drain_ns`), 1280x1408x2816 missed in three more rows
(+16% to +18%); timing it moved 1280x1408x1408 BFLOAT4_B eager out (+13% to +24%)."""


def why(dtype: str, traced: bool, size: tuple[int, int, int]) -> str:
    """Why a row is outside the claim ('' for the rows the model meets)."""
    return _MISSED.get((dtype, traced), {}).get(size, "")


def fitted(dtype: str, fidelity: F, traced: bool, size: tuple[int, int, int]) -> bool:
    """The eager rows of the smallest size (every dtype) set Blackhole's host dispatch; the BF16 traced 2-D rows
    of :data:`tests.perf.published_gemm_split.FIT` set its matmul output drain."""
    return (not traced and size == SMALLEST) or (traced and dtype == "BFLOAT16" and size in DRAIN_FIT["p150"])


def rows() -> list[tuple[str, F, bool, tuple[int, int, int], float]]:
    """(dtype, fidelity, traced, (M, K, N), TFLOPs) of every row."""
    return [
        (dtype, fidelity, traced, size, tf)
        for (dtype, fidelity, traced), values in TFLOPS.items()
        for size, tf in zip(SIZES, values, strict=True)
    ]
