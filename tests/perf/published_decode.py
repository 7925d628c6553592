"""Published kernel times of decode-sized ops, and the model's value for each.

Sources: GALAXY = tt-metal models/demos/llama3_70b_galaxy/tests/tg_perf_unit_tests/
test_llama_ops_perf_TG_llama.py (6U Galaxy, unit tests of models/demos/llama3_70b_galaxy/tests/unit_tests/
test_llama_ops.py, whose parameters give the shapes); DECODER = models/demos/llama3_70b_galaxy/tests/
decoder_perf_targets_6u.json (the same ops inside the 70B decoder, batch 32, position 127; its model_tail:
the LM head and the on-device sampling after the last layer); SUBDEVICES
= models/demos/llama3_subdevices/tests/tg_perf_unit_tests/test_llama_ops_perf_TG_llama.py (2025-06, 4U
Galaxy); QWEN = the same directory's qwen_decoder_perf_targets_6u.json (2025-12: Qwen3-32B on the same 6U
Galaxy and code, 64 q and 8 kv heads of 128 over the mesh's 8 rows: 8 and 1 a device, as the 70B's,
batch 32, position 127); FLASH = tech_reports/FlashAttention/FlashDecode.md; LLMS = tech_reports/LLMs/llms.md; DRAM =
tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth.md (14 GT/s column: a Galaxy's DRAM).
"""

from __future__ import annotations

from meshnn.perf import (
    AttentionConfig,
    BufferType,
    Layout,
    MathFidelity,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    predict,
)

from .figure import Figure

GALAXY = "tt-metal models/demos/llama3_70b_galaxy/tests/tg_perf_unit_tests/test_llama_ops_perf_TG_llama.py (6U)"
DECODER = "tt-metal models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json"
QWEN = "tt-metal models/demos/llama3_70b_galaxy/tests/qwen_decoder_perf_targets_6u.json (Qwen3-32B decoder)"
SUBDEVICES = "tt-metal models/demos/llama3_subdevices/tests/tg_perf_unit_tests/test_llama_ops_perf_TG_llama.py (4U)"
FLASH = "tt-metal tech_reports/FlashAttention/FlashDecode.md"
LLMS = "tt-metal tech_reports/LLMs/llms.md, 4.6.1 Data movement"
DRAM14 = "tt-metal tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth.md, 14 GT/s column"
H = dict(buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
W = dict(buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)


def us(desc: OpDesc, system: str = "galaxy") -> float:
    return predict(desc, system, traced=True).kernel_ns / 1e3


def sdpa_decode(users=8, kv_len=128) -> OpDesc:
    """b=8, 8 q heads, 1 kv head of 128, a paged bfloat8_b cache of 4096 positions, cur_pos 127, 8x4 grid."""
    q = TensorDesc((1, users, 32, 128), logical_shape=(1, users, 8, 128), **H)
    cache = TensorDesc((users * 4096 // 32, 1, 32, 128), "BFLOAT8_B")
    table = TensorDesc((users, 128), "INT32", layout=Layout.ROW_MAJOR)
    config = AttentionConfig(k_chunk=0, causal=False, kv_len=kv_len)
    return OpDesc(
        OpFamily.SDPA_DECODE, (q, cache, cache, table), (q,), fidelity="HiFi2", core_grid=(8, 4), attention=config
    )


def create_heads() -> OpDesc:
    """8 users (of 32), 8 q heads + 1 kv head of 128."""
    x = TensorDesc((1, 1, 32, 1280), **W)
    q = TensorDesc((1, 8, 32, 128), logical_shape=(1, 8, 8, 128), **H)
    kv = TensorDesc((1, 8, 32, 128), logical_shape=(1, 8, 1, 128), **H)
    return OpDesc(OpFamily.HEADS_DECODE, (x,), (q, kv, kv))


def concat_heads() -> OpDesc:
    """8 heads (padded to 32) of 128, 32 users."""
    x = TensorDesc((1, 32, 32, 128), logical_shape=(1, 32, 8, 128), **H)
    return OpDesc(OpFamily.CONCAT_HEADS_DECODE, (x,), (TensorDesc((1, 1, 32, 1024), **W),))


def update_cache() -> OpDesc:
    """paged_fused_update_cache: k and v (timed as one op over 2 heads), 8 users, head 128, bfloat8_b cache."""
    cache = TensorDesc((128, 2, 64, 128), "BFLOAT8_B")
    new = TensorDesc((1, 8, 32, 128), logical_shape=(1, 8, 2, 128), **H)
    return OpDesc(OpFamily.KV_UPDATE, (cache, new), ())


def mul_silu(width: int = 512) -> OpDesc:
    """[1, 1, 32, width] bfloat8_b, width-sharded one tile per core, x silu(y): the unit test's 512 on 16 cores;
    the 70B decoder's 960 on 30 (REDUCE_SCATTER_OUT_MEMCFG at eb1e2e59a7: FF1's [32, 3840] reduce-scattered over 4
    devices, [32, 32] shards on 30 cores of the sub-core grids)."""
    x = TensorDesc((1, 1, 32, width), "BFLOAT8_B", **W)
    return OpDesc(OpFamily.BINARY, (x, x), (x,), unary_ops=("silu",), core_grid=(width // 32, 1))


def temperature_mul() -> OpDesc:
    """The 70B sampling's temperature: the gathered [1, 1, 32, 256] bfloat16 top-k values times the bfloat16
    reciprocals, both in DECODE_SAMPLING_INPUT_MEMCFG (8 cores of [32, 32]), binary_ng (sampling.py at 7f36e28e80)."""
    x = TensorDesc((1, 1, 32, 256), **W)
    return OpDesc(OpFamily.BINARY, (x, x), (x,), op_code="BinaryNgDeviceOperation", core_grid=(8, 1))


def rotary_qk() -> OpDesc:
    """rotary_embedding_llama_fused_qk: batch 8, 8 q heads (and 1 kv), head 128, one user per core."""
    q = TensorDesc((1, 8, 32, 128), logical_shape=(1, 8, 8, 128), **H)
    cos = TensorDesc((1, 8, 32, 128), **H)
    trans = TensorDesc((1, 1, 32 * 16, 32), **H)
    code = "RotaryEmbeddingLlamaFusedQKDeviceOperation"
    return OpDesc(OpFamily.BINARY, (q, cos, cos, trans), (q,), op_code=code, core_grid=(8, 2))


def embeddings() -> OpDesc:
    """32 ids into a [128256, 2048] bfloat16 table, tilized, width-sharded on 16 cores."""
    ids = TensorDesc((1, 32), "UINT32", layout=Layout.ROW_MAJOR)
    table = TensorDesc((128256, 2048), layout=Layout.ROW_MAJOR)
    return OpDesc(OpFamily.EMBEDDING, (ids, table), (TensorDesc((1, 1, 32, 2048), **W),), core_grid=(8, 2))


def topk(vocab_share: int):
    """The model tail's local top-32 of 32 users' logits, ``vocab_share`` values a device (the padded vocabulary
    over the mesh's 8 rows: 128K for the 70B, 155648 for Qwen3-32B), bfloat16, its uint16 indices tensor, on
    the tail's top-k sub-grid (1,0)-(3,9) (model_config.py's ``sub_core_grid_topk``)."""

    def desc() -> OpDesc:
        x, ids = TensorDesc((1, 1, 32, vocab_share), "BFLOAT16"), TensorDesc((1, 1, 32, vocab_share), "UINT16")
        outs = (TensorDesc((1, 1, 32, 32), "BFLOAT16"), TensorDesc((1, 1, 32, 32), "UINT16"))
        return OpDesc(OpFamily.COPY, (x, ids), outs, op_code="TopKDeviceOperation", core_grid=(3, 10))

    return desc


def flash_decode_gbps() -> float:
    """The best of FlashDecode.md's configurations (batch 8/16/32, head 64/128/256, 1 kv head, 8 q
    heads, 128k positions, bfloat8_b cache) in the report's GB/s: 2 x batch x head_dim x kv_len / t."""
    best = 0.0
    for users in (8, 16, 32):
        for d in (64, 128, 256):
            q = TensorDesc((1, users, 32, d), logical_shape=(1, users, 8, d))
            k = TensorDesc((users, 1, 128 * 1024, d), "BFLOAT8_B")
            config = AttentionConfig(k_chunk=0, causal=False, kv_len=128 * 1024)
            p = predict(OpDesc(OpFamily.SDPA_DECODE, (q, k, k), (q,), fidelity="HiFi2", attention=config), "n150")
            best = max(best, 2 * users * d * 128 * 1024 / p.kernel_ns)
    return best


def matmul_gbps(k: int, n: int, *, sharded: bool, system: str = "n150", mesh=None) -> float:
    """Achieved DRAM GB/s of a decode matmul (32 rows in L1, a bfloat8_b weight, HiFi2)."""
    a = TensorDesc((1, 1, 32, k), **W)
    memory = MemoryLayout.WIDTH_SHARDED if sharded else MemoryLayout.INTERLEAVED
    w = TensorDesc((1, 1, k, n), "BFLOAT8_B", memory=memory)
    out = TensorDesc((1, 1, 32, n), **W)
    config = MatmulConfig(MatmulProgram.DRAM_SHARDED if sharded else MatmulProgram.MULTICAST_1D)
    desc = OpDesc(OpFamily.MATMUL, (a, w), (out,), fidelity=MathFidelity.HiFi2, matmul=config)
    return predict(desc, system, mesh_shape=mesh).dram_bytes_per_s / 1e9


QWEN_ROTARY = (
    "Qwen's q and k reach the op row-major (llama_attention.py at the figure's date, tt-metal d554814e39, 2025-12-03: "
    "the qk_norm path views them to [1, 1, 64, 128], tilizes, norms, then to_layout ROW_MAJOR and back to [1, 8, 8, "
    "128]; the 70B's come straight from llama_rs_create_heads as tiles), so the fused op runs its row-major kernel "
    "(rotary_embedding_llama_sharded_row_major.cpp at that date: one wrapped tile a core, the same four stages one "
    "tile each, a fresh mul_tiles_init for the cos product) on the same 16 cores, everything L1-sharded, HiFi4, "
    "float32 accumulation off (no compute config, as the 70B's); 4 tile-stages a core for the 70B's 16, yet 2.612 us "
    "against the 70B decoder's 2.234 (met).  Checked for stop 56: both are traced, each layer's call the mean over "
    "the 32 chips (test_decoder_device_perf.py: merge_device_rows, whose collective test is always true since "
    "2bb3ccbaba; stop 57), averaged over the mid layers; both targets give the cores' kernel starts 1.55-1.57 us "
    "apart (first_to_last_start, the first chip's row alone: not to be taken from the mean, Qwen's mul + silu has "
    "1.84 of it against a 0.79 mean kernel); the Qwen targets are 5 months later and its other decode ops run "
    "longer too (SDPA decode 8.83 against 8.06 us, +10%; paged update 4.55 against 4.45) -- the 4U Qwen file's "
    "rotary (2234.18 ns) is the 70B's 6U figure copied, not a measurement.  What costs the row-major call more is "
    "not its tile work (a quarter of the tiled call's), and the model, which times these calls as their launch and "
    "a few tile operations, has nothing that grows as the tiles shrink.  Checked for stop 57, not settled: at the "
    "70B's date (7f36e28e80) llama_rs_create_heads gives q and k shards of [num_heads, head_dim] = [8, 128] "
    "(llama_reduce_scatter_create_heads_device_op.cpp, compute_output_specs), which a TILE tensor's tile-aligned "
    "shard check refuses (tensor_layout.cpp, validate_shard_spec) and from which the fused op's tiled path would "
    "count 8 / 32 = 0 head tiles (q_n_heads_t); an [8, 128] shard is one wrapped tile in the row-major form, and "
    "the Galaxy unit tests hold a row-major fused case beside the tiled one (test_llama_ops.py: "
    "test_llama_tg_RowMajorRotaryEmbeddingLlamaFusedQK): the 70B's call may run Qwen's kernel on the same one "
    "tile a core, which would leave the two figures 17% apart for the same work"
)

DECODER_0716 = (
    "tt-metal models/demos/llama3_subdevices/tests/decoder_perf_targets_6u.json at 7f36e28e80 (2025-07-16), "
    "model_tail BinaryNgDeviceOperation_0 (Temerature_Scaling; gone from the json since b63abae491, 2025-08-01)"
)
TEMPERATURE_MISS = (
    "the model: a data-movement program's launch on 8 cores (0.42 us: meshnn.perf.page_programs) and a compute "
    "kernel's start (0.22: meshnn.perf.latency compute_start_cycles, fitted on the same json's last residual add, "
    "the legacy binary on 16 cores, 4 tiles a core, 0.85), then one bfloat16 tile's unpack and multiply (0.04): 0.68 "
    "against 0.58 (+16%).  Checked for stop 57: both operands and the output are the 8 cores' own [32, 32] shards, so "
    "the program moves nothing over the NoC; fitted on both tail figures the start would be 161 cycles (each +-6%), "
    "but the Galaxy's one-tile mul + silu rows, whose silu is counted (meshnn.perf.traffic.SILU_SLOTS), would take "
    "the Qwen unit test's to -16%.  What the binary_ng program (this one) starts faster than the legacy binary is "
    "not found"
)

ROTARY_MISS = (
    "not the decoder's configuration.  Checked for stop 56 at the figures' dates (the unit's 6U 3.58 set 2025-07-18, "
    "tt-metal 24c8bbd2ec; the decoder's 2.234 on 2025-07-16, 7f36e28e80): the same program (the fused factory and "
    "its compute kernel unchanged between them), the same tiles (q and k one user a core, [32, 128]: 4 tiles, four "
    "stages each) on 16 cores (the unit's (0,0)-(7,1); the decoder's 16 of the sub-core grids from (1,0)), sin, "
    "cos and the matrix L1 height-sharded on those cores in both (tt_transformers' RotarySetup in the unit test, "
    "TtLlamaRotarySetup in the decoder); but the unit test (tests/tt_eager/.../test_rotary_embedding_llama.py) passes "
    "HiFi4 with fp32_dest_acc_en=True (head_dim <= 128; its packer_l1_acc=True does not reach this program's compute "
    "config) where the decoder takes the op's default (HiFi4, float32 accumulation off), and it times one eager call "
    "(run_device_perf, 3 runs averaged) where the decoder's is traced (the mean over 32 chips, averaged over 9 "
    "layers).  The 4U columns show the same gap (unit 3.92, decoder 2.49 us: +1.43, as 6U's +1.35): a fixed "
    "difference of the two set-ups, not noise.  A 4-tile stage fits a half of the destination registers in either "
    "format, so float32 accumulation adds no acquire; what it costs is not found: the ISA's Dst description gives no "
    "rate change for 32-bit mode, and tt-metal's conv tilize table (a copy through the destination, "
    "conv2d_op_program_factory_common.cpp) gives 61 -> 68 cycles a bfloat16 tile with it, 0.1 us over this call's "
    "16 tile-stages, not 1.35 us; the model's op description does not carry the setting (meshnn.ops.costs records "
    "it for norms only)"
)


def decode_figures() -> list[Figure]:
    """The decode ops' figures: fitted ones set meshnn/perf/latency.py's constants."""
    g = "decode ops"
    rows = [
        ("SDPA decode, b=8 1 kv head pos 127 (unit)", GALAXY, 8.18, sdpa_decode, True, ""),
        ("SDPA decode, the same in the 70B decoder", DECODER, 8.063, sdpa_decode, False, ""),
        ("nlp_create_qkv_heads_decode 8 users 8+1 heads", SUBDEVICES, 8.32, create_heads, True, ""),
        ("nlp_concat_heads_decode 8 heads 32 users", SUBDEVICES, 6.07, concat_heads, True, ""),
        ("paged_fused_update_cache 8 users (unit)", GALAXY, 3.67, update_cache, True, ""),
        ("paged_fused_update_cache, in the 70B decoder", DECODER, 4.452, update_cache, True, ""),
        ("binary mul + silu 32x512 bfloat8_b (unit)", GALAXY, 2.5, mul_silu, False, ""),
        ("binary mul + silu, in the 70B decoder", DECODER, 2.374, lambda: mul_silu(960), False, ""),
        ("rotary_embedding_llama_fused_qk, in the 70B decoder", DECODER, 2.234, rotary_qk, False, ""),
        ("embedding 32 ids x 2048 (unit)", GALAXY, 3.3, embeddings, False, ""),
        ("rotary_embedding_llama_fused_qk batch 8 (unit)", GALAXY, 3.58, rotary_qk, False, ROTARY_MISS),
        ("SDPA decode, in the Qwen3-32B decoder", QWEN, 8.832, sdpa_decode, False, ""),
        ("paged_fused_update_cache, in the Qwen3-32B decoder", QWEN, 4.545, update_cache, False, ""),
        ("rotary_embedding_llama_fused_qk, in the Qwen3-32B decoder", QWEN, 2.612, rotary_qk, False, QWEN_ROTARY),
        ("topk k=32 of 32 x 16384, the 70B's model tail", DECODER, 179.98, topk(131072 // 8), True, ""),
        ("temperature mul 32x256 on 8 cores, 70B tail", DECODER_0716, 0.582, temperature_mul, False, TEMPERATURE_MISS),
        ("topk k=32 of 32 x 19456, the Qwen3-32B model tail", QWEN, 198.184, topk(155648 // 8), False, ""),
    ]
    out = [
        Figure(name, src, pub, pub, "us", lambda f=f: us(f()), covered=not why, why_not=why, fitted=fit, group=g)
        for name, src, pub, f, fit, why in rows
    ]
    out.append(Figure("FlashDecode up to 180 GB/s (128k, best config)", FLASH, 180, 180, "GB/s", flash_decode_gbps,
                      group="decode ops"))  # fmt: skip
    return out


def bandwidth_figures() -> list[Figure]:
    """Decode matmuls' DRAM rates: llms.md's rules of thumb, and the 14 GT/s column on a Galaxy."""
    g = "DRAM"
    out = [
        Figure("decode matmul DRAM-sharded ~240 GB/s (4096x14336)", LLMS, 240, 240, "GB/s",
               lambda: matmul_gbps(4096, 14336, sharded=True), group=g),
        Figure("decode matmul DRAM-interleaved ~190 GB/s (4096x14336)", LLMS, 190, 190, "GB/s",
               lambda: matmul_gbps(4096, 14336, sharded=False), group=g),
    ]  # fmt: skip
    for k, n, low, high, what in ((8192, 1280, 247, 294, "Llama3-70B"), (8192, 3584, 247, 294, "Llama3-70B"),
                                  (4096, 14336, 267, 300, "Mixtral8x7B")):  # fmt: skip
        out.append(
            Figure(f"{what} decode matmul {k}x{n} at 14 GT/s {low}-{high} GB/s", DRAM14, low, high, "GB/s",
                   lambda k=k, n=n: matmul_gbps(k, n, sharded=True, system="galaxy", mesh=(1, 8)), group=g)
        )  # fmt: skip
    return out
