"""The FlashDecode report's long-context chart: decode attention's kernel time against the position read,
Llama-3.1-8B's attention split over 1, 2, 4 and 8 chips, as the program of its date ran it
(:mod:`meshnn.perf.flash_decode`).

tt-metal tech_reports/FlashAttention/FlashDecode.md, figure 5 (images/FlashDecode/flash_decode128k.png, #15276 of
2024-12-06): batch 1, head dim 128, a bfloat8_b cache, 32 q and 8 kv heads on an N150, 16 / 4 on an N300, 8 / 2 on
two N300s (4 chips), 4 / 1 on a T3000 (8 chips): each curve one chip's kernel, on the 8x8 grid with
``max_cores_per_head_batch`` the curve's cores over its kv heads.  The chart's test (test_sdpa_decode_perf's
``run_test_sdpa_decode_single_iter`` at #15276: HiFi4, exact exp, bfloat16 q sharded in L1) takes chunks of 128
positions up to position 1024, of 512 beyond (its ``get_chunk_size``): the curves' knees fall where every core
holds a chunk (8K, 16K and 32K for 16, 32 and 64 cores a head).  Values read off the chart's pixels (one pixel
6.9 us, 228 positions; the 128K column is the chart's last point, 127,965).
"""

from __future__ import annotations

from meshnn.perf import AttentionConfig, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.flash_decode import FLASH_DECODE_CHART, DecodeProgram, marked

from .figure import Figure

CURVES = (  # (legend, q heads, kv heads, cores a head, {position: us read off the chart})
    ("T3K 16 cores", 4, 1, 16, {8000: 165, 32000: 227, 64000: 313, 128000: 488}),
    ("T3K 32 cores", 4, 1, 32, {64000: 399, 128000: 498}),
    ("T3K 64 cores", 4, 1, 64, {31900: 601, 64000: 660, 128000: 756}),
    ("2xN300 16 cores", 8, 2, 8, {64000: 423}),
    ("2xN300 32 cores", 8, 2, 16, {64000: 375, 128000: 546}),
    ("2xN300 64 cores", 8, 2, 32, {64000: 498, 128000: 700}),
    ("N300 64 cores", 16, 4, 16, {64000: 588, 128000: 921}),
    ("N150 64 cores", 32, 8, 16, {64000: 856, 128000: 1550}),
)
FITTED = ("T3K 64 cores", 31900)
"""The figure :data:`meshnn.perf.flash_decode.SERIAL_MERGE`'s call set-up was fitted on (the curve's rise to it)."""


def chart_us(q_heads: int, kv_heads: int, cores_a_head: int, position: int) -> float:
    """One chip's decode attention at ``position`` as the chart's test ran it, in the program of its date."""
    q = TensorDesc((1, 1, 32, 128), logical_shape=(1, 1, q_heads, 128))
    cache = TensorDesc((1, kv_heads, 128 * 1024, 128), "BFLOAT8_B")
    chunk = 128 if position <= 1024 else 512
    config = AttentionConfig(32, chunk, True, position, cores_a_head)
    desc = OpDesc(OpFamily.SDPA_DECODE, (q, cache, cache), (q,), fidelity="HiFi4", core_grid=(8, 8), attention=config)
    return predict(marked(desc, DecodeProgram.SERIAL_MERGE), "n150", traced=True).kernel_ns / 1e3


def figures() -> list[Figure]:
    out = []
    for legend, q_heads, kv_heads, cores, points in CURVES:
        for position, value in points.items():
            out.append(
                Figure(
                    f"FlashDecode chart: {legend} (b1, {q_heads} qh, {kv_heads} kvh) at position {position}",
                    FLASH_DECODE_CHART,
                    value,
                    value,
                    "us",
                    lambda q=q_heads, k=kv_heads, c=cores, p=position: chart_us(q, k, c, p),
                    fitted=(legend, position) == FITTED,
                    group="decode ops",
                )
            )
    return out
