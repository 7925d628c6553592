"""GEMM_FLOPS.md's out-of-box P150 table on the 11x10 grid: every row, ttnn choosing the program
config itself.

Source: tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md as updated 2026-04 (PR #41382, firmware with
the 11x10 compute grid), "P150 Out of Box Results (11x10 grid)": 78 configurations, 13 sizes x BF16
HiFi2 / BFP8 LoFi / BFP4 LoFi x eager and traced; every operand DRAM-interleaved, no program config.
TFLOPs = 2*M*K*N over the host-timed op.  The model picks the program ttnn would
(:mod:`meshnn.perf.matmul_auto`) on a P150 and times it; no constant was fitted to these rows but the
three eager 640x704x704 ones, which set Blackhole's host dispatch
(:data:`meshnn.perf.hardware.BLACKHOLE`'s ``host_dispatch_ns``, 21 us: their middle).
"""

from __future__ import annotations

from meshnn.perf import MathFidelity

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
    "Blackhole's host dispatch is one figure fitted to their middle (21 us), which cannot meet all three"
)
_BLOCKS = (
    "ttnn's all-DRAM 2-D program with small per-core blocks over 4-tile K-blocks (1280x1408x2816: 4x8, the "
    "block of N150's missed 1024x1024x2048 rows; 640x1408xN: 2x4, 2x8): the model is too fast, as on the N150, "
    "where the time beyond the multiplies follows a cost per output tile per K-block the model lacks"
)
_MISSED = {
    ("BFLOAT16", False): {(640, 704, 704): _HOST, (1280, 1408, 2816): _BLOCKS},
    ("BFLOAT8_B", False): {(1280, 1408, 2816): _BLOCKS},
    ("BFLOAT8_B", True): {(1280, 1408, 2816): _BLOCKS},
    ("BFLOAT4_B", False): {
        (640, 704, 704): _HOST,
        (640, 1408, 1408): _BLOCKS,
        (640, 1408, 2816): _BLOCKS,
        (1280, 1408, 2816): _BLOCKS,
    },
    ("BFLOAT4_B", True): {(640, 1408, 1408): _BLOCKS, (640, 1408, 2816): _BLOCKS},
}
"""The rows the model misses by more than 15% (10 of the 78), each with why."""


def why(dtype: str, traced: bool, size: tuple[int, int, int]) -> str:
    """Why a row is outside the claim ('' for the rows the model meets)."""
    return _MISSED.get((dtype, traced), {}).get(size, "")


def fitted(dtype: str, fidelity: F, traced: bool, size: tuple[int, int, int]) -> bool:
    """The eager rows of the smallest size (every dtype) set Blackhole's host dispatch."""
    return not traced and size == SMALLEST


def rows() -> list[tuple[str, F, bool, tuple[int, int, int], float]]:
    """(dtype, fidelity, traced, (M, K, N), TFLOPs) of every row."""
    return [
        (dtype, fidelity, traced, size, tf)
        for (dtype, fidelity, traced), values in TFLOPS.items()
        for size, tf in zip(SIZES, values, strict=True)
    ]
