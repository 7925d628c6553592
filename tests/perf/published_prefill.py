"""Published kernel times of prefill-sized ops (one user's 128-token prompt), and the model's value.

Source: PREFILL = tt-metal models/demos/llama3_70b_galaxy/tests/perf_targets/prefill_128.json (the
2026-06 tree; every value as added 2025-05-20, 1a8c965487, under llama3_subdevices/, the directory renamed
2025-07-31; PREFILL_4K: prefill_4096.json, the same layer at 4096 tokens, every value as added 2025-07-24,
62ec08a997): the device kernel time of every op of one Llama-3.1-70B decoder layer's
prefill of 128 tokens on a Galaxy (batch 1), as tests/test_prefill_device_perf.py measures it (a non-collective
op's first call, eager, the longest of the 32 chips' times: merge_device_rows).  The
shapes are llama_attention.py's forward_prefill on a device of the 8x4 mesh: 8 q heads and 1 kv head
of 128 (num_devices_per_group = n_kv_heads = 8), the fused QKV row in bfloat8_b (ccl_dtype), q and k
cast to bfloat16 for the rotary embedding and back to bfloat8_b for the cache and attention (v, created in
bfloat8_b, is cast to bfloat8_b too: a typecast of its own).  The same directory's prefill_8192.json to
prefill_131072.json are not used: each repeats prefill_4096.json's figures op for op.
"""

from __future__ import annotations

from meshnn.perf import AttentionConfig, OpDesc, OpFamily, TensorDesc, predict

from .figure import Figure
from .published_rotary import rotary_figures

PREFILL = "tt-metal models/demos/llama3_70b_galaxy/tests/perf_targets/prefill_128.json (70B on a Galaxy, 128 tokens)"
PREFILL_4K = (
    "tt-metal models/demos/llama3_70b_galaxy/tests/perf_targets/prefill_4096.json (the same layer, 4096 tokens)"
)
GROUP = "prefill ops"
ROTARY = "RotaryEmbeddingLlamaDeviceOperation"
ROTARY_MISS = (
    "the program runs on 4 cores (batch x sequence tiles: rotary_embedding_llama_program_factory.cpp), but its "
    "reader runs on every core of the grid and first reads the one-tile transformation matrix, DRAM-interleaved: the "
    "grid's 72 reads of that one page queue at one bank (5.7 us at a bank's 26 GB/s share, modelled: q was -67%, k "
    "-78%); a row's tiles are packed four times (x @ T, the two products, the sum: stop 47c, q -48% -> -34%, k -38% "
    "-> -35%) and a core's rows run through the reader / compute / writer pipeline of two-row buffers, the first "
    "row's waited read and the last row's waited write overlapping nothing (meshnn.perf.rotary.pipeline_cycles, stop "
    "55: q -34% -> -29%, k -35% -> -24%).  Checked for stop 56: the 128-token targets date from 2025-05-20 (tt-metal "
    "1a8c965487, llama3_subdevices' test_prefill_device_perf.py running unit_tests/test_llama_decoder_prefill.py "
    "eager, on the 4U Galaxy CI of then), and the program then (its factory, reader, compute and writer kernels at "
    "1a8c965487) is the one modelled; each non-collective op's figure is its first call's kernel time, the max over "
    "the 32 chips (merge_device_rows).  A row is counted per tile as x @ T at HiFi4 (64 cycles), the sin and cos "
    "products (32 each), the add (8), each of the four stages' two operand tiles (29 cycles) and four 2 KB packs (32 "
    "each): 381 cycles; the reader's 4 input tiles a row (with sin's and cos's 4 each on a user's first rows) and "
    "one wait, the writer's 4 tiles and one wait.  The same count meets the same program on one row of 2 tiles in a "
    "2026-03 build (tt-metal #39572's table, one eager call on one chip: 10.07 us all DRAM against 9.48, 4.23 with "
    "the matrix sharded against 3.80: tests/perf/published_rotary.py), so the matrix's queue and a row's read / "
    "compute / write hold there; here k's one row of 4 tiles a core measures 14.2 us against 10.8 and q's 7 further "
    "rows 2.3 us each against the count's 1.5 (its compute: the rows' reads, 0.7 us waited, and writes, 0.3, are "
    "shorter).  What differs from the 2026 check is the 2025-05 build, the max over 32 chips against one, and the 4U "
    "Galaxy (the Llama unit-op targets run 9-15% longer on 4U than on 6U: test_llama_ops_perf_TG_llama.py's two "
    "columns; meshnn times a Galaxy chip by 6U figures): none of these is a program fact the model can count.  The "
    "program timed is that of the figures' date: today's writer first zero-fills a row of tiles with scalar stores "
    "on every core (tt-metal #43790, 2026-05), which the figures predate"
)
WRITE_FIT = (4096, "typecast q bfloat8_b -> bfloat16 (8 heads)")
"""The row that set Wormhole's ``dram_page_write_bytes_per_s`` (:mod:`meshnn.perf.hardware`): the unary writer
flushes each page before the next, and bfloat8_b -> bfloat16 at 4096 tokens, which writes the larger tiles, takes
30% longer than bfloat16 -> bfloat8_b of the same tensor (q: 85.0 against 65.6 us); k's twin is a check."""
ROTARY_4K = (
    "at 4096 tokens the program runs 64 cores of 2 sequence rows (k: 2 rows a core; q: 16, over 8, so its reader "
    "re-reads sin and cos for every row, RELOAD_IMPL, which the model counts); measured 36.2 and 186.9 us, the model "
    "24.4 and 141.7 (with the grid's 72 reads of the transformation matrix's one page, 5.7 us; both DRAM-bound, so "
    "the row pipeline of stop 55 does not move them).  Checked for stop 56: these targets date from 2025-07-24 "
    "(tt-metal 62ec08a997: text_demo.py's prefill profile between signposts, run on 6U and 4U CI, one file for both; "
    "each op's first call, the max over the 32 chips), the program the same as at 128 tokens.  The model streams q's "
    "33.6 MB (its input, sin and cos once per head, its output) at the Galaxy's interleaved rate, 250 GB/s; "
    "measured, after the same 7.7 us of launch and matrix queue, q moves them at 187 GB/s and k its 4.2 MB at 147 "
    "GB/s.  The same layer's DRAM-streaming typecasts fall short of the model too (q bfloat16 -> bfloat8_b: 12.8 MB "
    "at 202 GB/s measured, 232 modelled, -12.7%, a check): that shortfall alone, applied here, would leave q at -13% "
    "and k at -25%; the rest is this program's -- each core waits on every row's 12 reads (24 KB, one barrier) and "
    "on every row's 4 writes, where the model takes the grid's reads as always in flight -- and k's 2 rows a core "
    "also leave their first read and last row's compute and write (about 3 us) outside the DRAM time; not modelled: "
    "no published figure gives the interleaved rate for readers that wait on every 24 KB"
)

SDPA_MISS = (
    "one Q chunk of 64 rows a core (16 of the 70 cores: batch 1, the 8 heads, then 2 Q chunks; not balanced: the "
    "core holding the second chunk runs both its K-chunk steps, as the model counts); measured 30.3 us.  Since "
    "stop 56 a step is counted as the kernel runs it (meshnn.perf.sdpa_step: 32 tile multiplies at HiFi4 fed by "
    "subblock; the block operations' passes on its 4 score tiles, 8 output tiles and 2 statistics rows, at the "
    "pass rate the FlashAttention chart set; with the layer's fp32_dest_acc_en, 4 destination tiles and each "
    "packed tile's 32-bit datums): 8.8k cycles, where stop 55 had 5.5k; with the launch and the exposed first "
    "reads and last write (4.6 us) the model gives 22.2 us (-48% -> -27%) and the 4096-token figure -9%.  The "
    "missing 8.1 us, about 4 us a step, is not found: checked for stop 56 at the program of the targets' date "
    "(tt-metal 96da09ddb9, 2025-07: sdpa_program_factory.cpp, compute_common.hpp): the score tiles' exp is "
    "always the fast approximation (sub_exp_block_bcast_cols_inplace: exp_tile<true, true>), the layer's "
    "exp_approx_mode=False reaching only the exp of the rows' maxima (2 tiles a step).  What is left is 4 us a "
    "step here (9 us at 4096 tokens, beside 16x the score tiles), where the kernel's step calls some 12 to 14 "
    "block operations, each with its init (unpacker and packer reconfiguration, the engine's program) and "
    "circular-buffer hand-offs.  Tried for stop 56: a set-up "
    "of 4,000 cycles a step, with the chart's two constants refitted on their two figures (the feed scale "
    "0.36 -> 0, the pass 67.2 -> 64.5 cycles), keeps all 36 chart figures within 10% and gives this figure 29.6 "
    "us (-2%) and the 4096-token one -8%: the chart cannot tell the set-up from the operands' feed (any set-up "
    "from 0 to 4,000 cycles meets it), and no published figure of a block operation's init was found to set it "
    "by, so it is not taken (fitting it here would tune a constant to a check figure)"
)


def us(desc: OpDesc) -> float:
    return predict(desc, "galaxy", mesh_shape=(8, 4), traced=True).kernel_ns / 1e3


def heads(n: int, tokens: int, dtype: str = "BFLOAT16") -> TensorDesc:
    """``n`` heads of 128 of a ``tokens``-token prompt: [1, n, tokens, 128]."""
    return TensorDesc((1, n, tokens, 128), dtype)


def typecast(n: int, tokens: int, source: str, dest: str) -> OpDesc:
    return OpDesc(OpFamily.TYPECAST, (heads(n, tokens, source),), (heads(n, tokens, dest),))


def rotary(n: int, tokens: int) -> OpDesc:
    x, cos = heads(n, tokens), TensorDesc((1, 1, tokens, 128))
    return OpDesc(OpFamily.BINARY, (x, cos, cos, TensorDesc((1, 1, 32, 32))), (x,), op_code=ROTARY)


def sdpa(tokens: int) -> OpDesc:
    """Causal, q bfloat8_b (8 heads), k and v bfloat8_b (1 head), HiFi4 with float32 accumulation on the 7x10
    grid, chunks of 64 rows below 2048 tokens and 256 from there (model_config.py at the targets' date:
    SDPA_PROGCFG, and compute_kernel_config_hifi4, fp32_dest_acc_en=True, which llama_attention.py passes)."""
    q, kv, chunk = heads(8, tokens, "BFLOAT8_B"), heads(1, tokens, "BFLOAT8_B"), 256 if tokens >= 2048 else 64
    config = AttentionConfig(q_chunk=chunk, k_chunk=chunk, causal=True, fp32_dest=True)
    return OpDesc(OpFamily.SDPA, (q, kv, kv), (q,), fidelity="HiFi4", core_grid=(7, 10), attention=config)


def prefill_figures() -> list[Figure]:
    """The prefill ops' figures at 128 and 4096 tokens: checks, and misses shown with why."""
    b16, b8 = "BFLOAT16", "BFLOAT8_B"
    rows = [  # tokens, name, published us, op, why outside the claim ("" for a check)
        (128, "typecast q bfloat8_b -> bfloat16 (8 heads)", 4.378, typecast(8, 128, b8, b16), ""),
        (128, "typecast k bfloat8_b -> bfloat16 (1 head)", 2.092, typecast(1, 128, b8, b16), ""),
        (128, "typecast k bfloat16 -> bfloat8_b (1 head)", 2.037, typecast(1, 128, b16, b8), ""),
        (128, "typecast v bfloat8_b -> bfloat8_b (1 head)", 1.898, typecast(1, 128, b8, b8), ""),
        (128, "typecast q bfloat16 -> bfloat8_b (8 heads)", 3.906, typecast(8, 128, b16, b8), ""),
        (128, "rotary_embedding_llama q (8 heads)", 30.278, rotary(8, 128), ROTARY_MISS),
        (128, "rotary_embedding_llama k (1 head)", 14.203, rotary(1, 128), ROTARY_MISS),
        (128, "scaled_dot_product_attention (causal)", 30.324, sdpa(128), SDPA_MISS),
        (4096, "typecast q bfloat8_b -> bfloat16 (8 heads)", 84.974, typecast(8, 4096, b8, b16), ""),
        (4096, "typecast k bfloat8_b -> bfloat16 (1 head)", 12.772, typecast(1, 4096, b8, b16), ""),
        (4096, "typecast k bfloat16 -> bfloat8_b (1 head)", 10.182, typecast(1, 4096, b16, b8), ""),
        (4096, "typecast v bfloat8_b -> bfloat8_b (1 head)", 7.877, typecast(1, 4096, b8, b8), ""),
        (4096, "typecast q bfloat16 -> bfloat8_b (8 heads)", 65.570, typecast(8, 4096, b16, b8), ""),
        (4096, "rotary_embedding_llama q (8 heads)", 186.934, rotary(8, 4096), ROTARY_4K),
        (4096, "rotary_embedding_llama k (1 head)", 36.217, rotary(1, 4096), ROTARY_4K),
        (4096, "scaled_dot_product_attention (causal)", 1713.781, sdpa(4096), ""),
    ]
    figures = [
        Figure(
            f"70B prefill {tokens}: {name}", PREFILL if tokens == 128 else PREFILL_4K, pub, pub, "us",
            lambda d=desc: us(d), covered=not why, why_not=why, fitted=(tokens, name) == WRITE_FIT, group=GROUP,
        )
        for tokens, name, pub, desc, why in rows
    ]  # fmt: skip
    return figures + heads_figures() + rotary_figures()


def create_heads(tokens: int) -> OpDesc:
    qkv = TensorDesc((1, 1, tokens, 1280), "BFLOAT8_B")
    q, kv = TensorDesc((1, 8, tokens, 128), "BFLOAT8_B"), TensorDesc((1, 1, tokens, 128), "BFLOAT8_B")
    return OpDesc(OpFamily.COPY, (qkv,), (q, kv, kv), op_code="NlpCreateHeadsDeviceOperation")


def concat_heads(tokens: int) -> OpDesc:
    """The layer's SDPA output, put back side by side: bfloat8_b, as the SDPA ran on q typecast to
    bfloat8_b and returns q's dtype (llama3_70b_galaxy/tt/llama_attention.py as of the perf targets'
    date, 2025-07; ring-distributed SDPA, whose output holds a quarter of the sequence, came in 2025-09)."""
    heads, out = TensorDesc((1, 8, tokens, 128), "BFLOAT8_B"), TensorDesc((1, 1, tokens, 1024), "BFLOAT8_B")
    return OpDesc(OpFamily.COPY, (heads,), (out,), op_code="NLPConcatHeadsDeviceOperation")


def heads_figures() -> list[Figure]:
    """nlp_create_qkv_heads / nlp_concat_heads (meshnn.perf.heads): 4 cores of tiles read one at a time
    at 128 tokens (the concat fitted the round trip), the whole grid at 4096."""
    rows = [  # name, source, published us, op, fitted, why outside the claim
        ("70B prefill 128: nlp_create_qkv_heads 8 + 1 + 1 heads", PREFILL, 21.994, create_heads(128), False, ""),
        ("70B prefill 128: nlp_concat_heads 8 heads", PREFILL, 17.667, concat_heads(128), True, ""),
        ("70B prefill 4096: nlp_create_qkv_heads 8 + 1 + 1 heads", PREFILL_4K, 63.63, create_heads(4096), False, ""),
        ("70B prefill 4096: nlp_concat_heads 8 heads", PREFILL_4K, 49.77, concat_heads(4096), False, ""),
    ]
    return [
        Figure(
            name, source, pub, pub, "us", lambda d=desc: us(d), covered=not why, why_not=why, fitted=fitted,
            group=GROUP,
        )
        for name, source, pub, desc, fitted, why in rows
    ]  # fmt: skip
