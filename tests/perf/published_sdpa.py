"""Published prefill-attention throughputs: FlashAttention on one Wormhole chip.

Source: FLASH = tt-metal tech_reports/FlashAttention/FlashAttention.md, section 4, figure 6 (its
images/image3.png; the values are printed on the bars): causal scaled_dot_product_attention on an N150,
the hidden dim fixed at 2048 (heads = 2048 / head dim), sequence lengths 512 to 16K with the batch set so
that every call holds 16K tokens, bfloat16 and bfloat8_b inputs and outputs, in TFLOPs counted as
2 x batch x seqlen^2 x heads x head dim.  The report sweeps the chunk sizes ("they should be swept for a
given input size"), so the model takes its best of q and k chunks of 64 to 512 rows among those whose
circular buffers fit a core's L1 (meshnn.perf.attention.fits_l1); the compute config is ttnn's default for
the op then (sdpa.cpp at the report's commit: HiFi2, approximate exp, no float32 accumulation), on the
N150's 8x8 grid.  The report does not say which config its runs used: the unit test in the tree at its
commit passes HiFi2 with fp32_dest_acc_en=True (then float32 intermediates, 4096-B tiles, and 4 destination
tiles); with that flag and today's constants the model meets 15 of the 36, not refitted.  The op as the
chart ran it (tt-metal at the report's commit, 0f7aa9b of 2024-09-04:
tests/tt_eager/.../test_scaled_dot_product_attention.py and the sdpa reader, reader_interleaved.cpp) was
given a causal mask, ``[b, 1, s, s]`` in the inputs' dtype, and read the mask tiles of the K chunks crossing
each Q chunk's diagonal from DRAM (today's kernel makes the mask in L1): the figures carry that mask.  The
two bfloat16 16K figures of head dims 64 and 256 set :attr:`OpLatency.sdpa_feed_scale` and
:attr:`OpLatency.sdpa_pass_cycles` (meshnn.perf.sdpa_step); the other 34 check them.  Until stop 56 five
bfloat8_b figures were outside (head dim 64 at 512 and 1K tokens +30% and +22%, head dim 256 from 4K tokens
-16% to -17%), the step timed as its multiplies (1.72x a GEMM's) and 400 cycles a score tile, k chunks of
64 everywhere: the step's block operations on the output accumulator and the statistics (which larger K
chunks share among more score tiles) and the L1 bound on the chunks (at head dim 256, q 256 x k 256 needs
1,658,880 B in bfloat16 and 1,105,920 B in bfloat8_b, 1,393,312 B free: only bfloat8_b takes the larger K
chunk) bring them to +6%, -2%, -6%, -7%, -8%.
"""

from __future__ import annotations

from meshnn.perf import AttentionConfig, OpDesc, OpFamily, TensorDesc, machine, predict
from meshnn.perf.attention import fits_l1

from .figure import Figure

FLASH = "tt-metal tech_reports/FlashAttention/FlashAttention.md, figure 6 (causal, N150)"
GROUP = "prefill ops"
SEQUENCES = (512, 1024, 2048, 4096, 8192, 16384)
CHART = {  # (dtype, head dim): TFLOPs at each of SEQUENCES
    ("BFLOAT16", 64): (11.9, 17.3, 20.0, 21.7, 22.6, 23.2),
    ("BFLOAT8_B", 64): (14.4, 18.1, 20.9, 22.5, 23.5, 24.0),
    ("BFLOAT16", 128): (14.9, 22.2, 29.5, 32.9, 34.9, 35.9),
    ("BFLOAT8_B", 128): (22.3, 28.1, 32.4, 35.0, 36.5, 37.3),
    ("BFLOAT16", 256): (17.1, 25.3, 32.3, 36.7, 38.8, 39.8),
    ("BFLOAT8_B", 256): (28.6, 39.4, 45.5, 49.9, 52.2, 53.4),
}
FITTED = {("BFLOAT16", 64, 16384), ("BFLOAT16", 256, 16384)}
CHUNKS = (64, 128, 256, 512)


def sdpa(dtype: str, head_dim: int, seq: int, q_chunk: int, k_chunk: int) -> OpDesc:
    heads, batch = 2048 // head_dim, 16384 // seq
    x, mask = TensorDesc((batch, heads, seq, head_dim), dtype), TensorDesc((batch, 1, seq, seq), dtype)
    config = AttentionConfig(q_chunk=q_chunk, k_chunk=k_chunk, causal=True)
    return OpDesc(OpFamily.SDPA, (x, x, x, mask), (x,), fidelity="HiFi2", core_grid=(8, 8), attention=config)


def model_tflops(dtype: str, head_dim: int, seq: int) -> float:
    """The model's throughput at its best chunk sizes, in the report's FLOPs."""
    flops = 2 * (16384 // seq) * seq * seq * (2048 // head_dim) * head_dim
    n150 = machine("n150", (1, 1))
    calls = (sdpa(dtype, head_dim, seq, q, k) for q in CHUNKS for k in CHUNKS if q <= seq and k <= seq)
    best_ns = min(predict(d, n150, traced=True).kernel_ns for d in calls if fits_l1(d, n150))
    return flops / best_ns / 1e3


def flash_figures() -> list[Figure]:
    out = []
    for (dtype, head_dim), values in CHART.items():
        for seq, tflops in zip(SEQUENCES, values, strict=True):
            name = f"FlashAttention N150: causal {dtype.lower()}, head dim {head_dim}, {seq} tokens"
            model = lambda d=dtype, h=head_dim, s=seq: model_tflops(d, h, s)  # noqa: E731
            fitted = (dtype, head_dim, seq) in FITTED
            out.append(Figure(name, FLASH, tflops, tflops, "TFLOPs", model, True, "", fitted, GROUP))
    return out
