"""What decode-sized ops cost beyond their bytes and tile math: the set-up a program pays before its
first tile moves, the NoC's small transfers and the RISC-V loops of ops without a compute kernel.

A decode step's ops move kilobytes, so their time is made of latencies, not bandwidth.  Each figure
here is either a hardware figure (tt-npe's NoC model) or fitted to one published kernel time of a
decode op, named in its source; the figures that check them are in tests/perf/published.py.
Wormhole's figures were measured on a 6U Galaxy (Wormhole chips at 1 GHz); Blackhole takes the same
cycles at its own clock (no Blackhole decode-op measurement was found), as its sources say.
Units: ``_ns`` nanoseconds (Wormhole, 1 cycle = 1 ns), ``_cycles`` chip clock cycles.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from meshnn.device.arch import Arch

GALAXY_OPS = (
    "tt-metal: models/demos/llama3_70b_galaxy/tests/tg_perf_unit_tests/test_llama_ops_perf_TG_llama.py, "
    "6U Galaxy expected kernel durations"
)
SUBDEVICE_OPS = (
    "tt-metal: models/demos/llama3_subdevices/tests/tg_perf_unit_tests/test_llama_ops_perf_TG_llama.py "
    "(2025-06), 4U Galaxy expected kernel durations"
)
NPE = "tt-npe: tt_npe/cpp/include/device_models/wormhole_b0.hpp"
FLASH = "tt-metal: tech_reports/FlashAttention/FlashAttention.md, figure 6 (images/image3.png)"
GALAXY_TAIL = "tt-metal: models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json, model_tail"
COMPUTE_START_CYCLES = 217.0
COMPUTE_START_SOURCE = (
    f"fitted: {GALAXY_TAIL} at 7f36e28e80 (2025-07-16): BinaryDeviceOperation_Last_Residual 849.7 ns, the legacy "
    "eltwise binary add of [32, 2048] bfloat8_b and bfloat16, both and the output width-sharded on the same 16 cores "
    "(4 tiles a core), so its reader and writer only reserve and push their own shards (no NoC transfer): less the "
    "data-movement launch on 16 cores (meshnn.perf.page_programs.launch_cycles: 512 cycles) and its 4 tiles' unpack "
    "and add (122 cycles), 217 cycles for what a compute kernel adds to a program's first-start-to-last-end time "
    "(its TRISCs' unpack / math / pack configuration and the first tile's way through them).  Checked by the same "
    "json's temperature mul (BinaryNgDeviceOperation, one bfloat16 tile a core on 8 cores, L1-sharded: 582 ns "
    "measured, 675 modelled, +16%: outside, tests/perf/published_decode.py) and the Galaxy's one-tile mul + silu "
    "figures (their silu counted in tt-llk's SFPU instructions: meshnn.perf.traffic.SILU_SLOTS).  Blackhole takes "
    "the same cycles"
)


@dataclass(frozen=True, slots=True)
class OpLatency:
    """Latency figures of one architecture's decode-sized ops; ``sources`` names each one's origin."""

    arch: Arch
    dram_read_latency_cycles: float  # a core's first read from DRAM until its data lands
    face_row_ns: float  # one 16-element row of a tile face moved core to core (32 B for bfloat16)
    sdpa_decode_setup_ns: float  # flash decode: q, positions and page table read, stats set up, output written
    create_heads_setup_ns: float  # nlp_create_qkv_heads_decode beyond its face rows
    concat_heads_setup_ns: float  # nlp_concat_heads_decode beyond its face rows
    cache_update_setup_ns: float  # paged_update_cache: positions and page table read per user
    riscv_cycles_per_element: float  # argmax's scalar loop on a data-movement core
    single_use_weight_tile_cycles: float  # a matmul multiply whose weight tile is used once (decode)
    tile_round_trip_cycles: float  # one DRAM tile read a core issues and waits for before the next
    noc_write_latency_cycles: float  # a core's write to its neighbour, issued until it lands
    sdpa_feed_scale: float  # flash attention's matmuls: a multiply's operand feed over a GEMM's operand rate
    sdpa_pass_cycles: float  # flash attention's block operations: one tile from L1 through the engine and back
    topk_instruction_cycles: float  # ttnn.topk: one counted SFPU instruction of its sort, the tile moves folded in
    topk_insertion_tile_cycles: float  # ttnn.topk's single-core program: a row's tile moves beyond its sort
    sharded_norm_stats_ns: float  # a norm sharded across cores by width: the cores' statistics gathered and sent back
    compute_start_cycles: float  # a compute program's start beyond the data-movement launch (its TRISCs' part)
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def cycles_ns(self, cycles: float, clock_hz: float) -> float:
        return cycles * 1e9 / clock_hz

    def read_trip_cycles(self, in_dram: bool) -> float:
        """The round trip of one tile read a core issues and waits for (cycles, before its bytes): from DRAM
        ``tile_round_trip_cycles``; from another core's L1 the NoC's far-end latency, ``dram_read_latency_cycles``."""
        return self.tile_round_trip_cycles if in_dram else self.dram_read_latency_cycles

    def missing_sources(self) -> list[str]:
        """Figures without a source (a test keeps this empty)."""
        return [f.name for f in fields(self) if f.name not in ("arch", "sources") and f.name not in self.sources]


WORMHOLE_B0 = OpLatency(
    arch=Arch.WORMHOLE_B0,
    dram_read_latency_cycles=270.0,
    face_row_ns=10.0,
    sdpa_decode_setup_ns=4140.0,
    create_heads_setup_ns=5520.0,
    concat_heads_setup_ns=1510.0,
    cache_update_setup_ns=1380.0,
    riscv_cycles_per_element=10.0,
    single_use_weight_tile_cycles=36.0,
    tile_round_trip_cycles=445.0,
    noc_write_latency_cycles=50.0,
    sdpa_feed_scale=0.36,
    sdpa_pass_cycles=67.2,
    topk_instruction_cycles=2.406,
    topk_insertion_tile_cycles=8800.0,
    sharded_norm_stats_ns=5130.0,
    compute_start_cycles=COMPUTE_START_CYCLES,
    sources={
        "dram_read_latency_cycles": f"{NPE}: DRAM read latency 70-270 cycles (the far end: a decode op's first "
        "read waits for a bank across the chip)",
        "face_row_ns": "fitted with the two heads set-ups: a 32 B face row per transfer, several in flight "
        f"(tt-npe's single-transfer rate, 5.5 B/cycle per 128 B, would give 23 ns); {SUBDEVICE_OPS}: "
        "NLPConcatHeadsDecodeDeviceOperation 6.07 us",
        "sdpa_decode_setup_ns": f"fitted: {GALAXY_OPS}: ScaledDotProductAttentionDecode 8.18 us (b=8, 8 q heads, "
        "1 kv head, 4096-position bfloat8_b cache at position 127, 8x4 grid), less its launch and tile work",
        "create_heads_setup_ns": f"fitted: {SUBDEVICE_OPS}: NLPCreateHeadsDecodeDeviceOperation 8.32 us (8 users "
        "of 32, 8 q heads + 1 kv head of 128), less its launch and face rows",
        "concat_heads_setup_ns": f"fitted: {SUBDEVICE_OPS}: NLPConcatHeadsDecodeDeviceOperation 6.07 us (8 heads "
        "padded to 32, head_dim 128, 32 users), less its launch and face rows",
        "cache_update_setup_ns": f"fitted: {GALAXY_OPS}: PagedUpdateCacheDeviceOperation 3.67 us (fused k and v, "
        "8 users, 1 head of 128, bfloat8_b cache, block 64) and the same op in the decoder, 4.45 us (tt-metal: "
        "models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json): their mean, less its launch and "
        "tile rewrites",
        "single_use_weight_tile_cycles": "fitted: the Llama-3.2-1B and 3B decode rows of tt-metal models/"
        "tt_transformers/PERF.md (N150, N300, T3K; jointly with meshnn.perf.host's per-token host time), bounded "
        "above by tech_reports/Saturating_DRAM_bandwidth: Llama3-70B decode matmuls reach 239-260 GB/s (a weight "
        "tile of 1088 B at a bank's 22 GB/s is 49 ns: a bfloat8_b multiply must not cost more than ~40 cycles); "
        "bfloat4_b LoFi decode matmuls are compute-bound on it (8B's performance mode, 2x fewer bytes than its "
        "accuracy mode, is only 1.12x faster: PERF.md); refitted 40 -> 36 (the six rows' RMS error, the host's "
        "figure re-averaged at each value: 8.21% at 36, 8.27% at 40, 8.32% at 32) when the decode matmuls' partial "
        "sums between K blocks were timed (meshnn.perf.matmul.partials_cycles: the 1B's FF1 / FF3 and LM head, in "
        "blocks of one tile, wait on the packer's 64-cycle accumulate) and the attention's matmuls accumulated in "
        "float32 as tt_transformers' compute_kernel_config_hifi2 does; Blackhole takes the same figure",
        "tile_round_trip_cycles": "fitted: tt-metal models/demos/llama3_70b_galaxy/tests/perf_targets/"
        "prefill_128.json: NLPConcatHeadsDeviceOperation 17.667 us (8 heads of 128, 128 tokens: 4 cores of 32 "
        "bfloat8_b tiles, each read and waited for alone: nlp_concat_heads' reader; bfloat8_b because the layer's "
        "SDPA runs on q typecast to bfloat8_b and returns q's dtype: llama3_70b_galaxy/tt/llama_attention.py at the "
        "file's date), less its launch and each tile's transfer at the NoC's rate for a 1088 B tile: 445 cycles a "
        "read, beyond tt-npe's 70-270 cycles of NoC latency the DRAM bank's access; checked by nlp_create_qkv_heads "
        "in the same file and both ops at 4096 tokens (tests/perf/published_prefill.py)",
        "sdpa_feed_scale": f"fitted with sdpa_pass_cycles: {FLASH}: causal bfloat16 at 16K tokens, head dim 64 "
        "(23.2 TFLOPs) and 256 (39.8), on an N150's 8x8 grid, the model at its best chunk sizes of those whose "
        "circular buffers fit a core's L1 (HiFi2, ttnn's default then): a K-chunk step as the kernel of the report's "
        "commit runs it (meshnn.perf.sdpa_step: the two matmuls' multiplies at the engine's phases and their "
        "operands fed by subblock, the block operations on score tiles, output tiles and statistics rows); was 1.72x "
        "a GEMM's whole multiply with 400 cycles a score tile (no output or row passes; k 64 everywhere); checked by "
        "the chart's other 34 figures and the Galaxy's prefill SDPA (tests/perf/published_sdpa.py, "
        "published_prefill.py): 0.36 (a subblock's operand tiles are shared by its multiplies and fed beside the "
        "math, where the GEMM's rate was fitted to whole tiles a multiply)",
        "sdpa_pass_cycles": f"fitted with sdpa_feed_scale (the same two figures of {FLASH}): a block operation's tile "
        "(sdpa.cpp at tt-metal 0f7aa9b: each tile unpacked from L1, operated on, packed back, most with a "
        "destination acquire and release a tile): 67.2 cycles",
        "topk_instruction_cycles": f"fitted: {GALAXY_TAIL}: TopK_0 179.98 us (the 70B's logits, 32 users x 16384 "
        "values a device of the 128K padded vocabulary, k 32, on the (1,0)-(3,9) sub-grid: 16 local cores of 32 "
        "tiles, then one core of 16), less its launch and reads: 177,984 cycles for the 73,984 SFPU instructions "
        "meshnn.perf.topk_sfpu counts on its busiest path (a local core's 16 pair sorts and 5 bitonic rounds, then "
        "the final core's 4 rounds); was 3,708 cycles a sorted tile (the same fit), which took a single-core tile "
        "(a full 64-value sort each) for a multi-core one; checked by the Qwen3-32B tail's TopK_0 "
        "(tests/perf/published_decode.py)",
        "topk_insertion_tile_cycles": "fitted: tt-metal issue #43933 (DeepSeek-V3's sampling on a Wormhole Galaxy, "
        "its 70-core grid; 2026-05-08): TopKDeviceOperation on one core 8,995.514 us for 32 users x 16,160 values a "
        "device (the 129,280-token vocabulary over the mesh's 8 columns: make_deepseek_sampling_args), k 32, not a "
        "power of two, so the single-core program (topk.cpp), whose counted insertion sorts take 4,550 us: 8,800 "
        "cycles a tile of the row beyond them, its two rounds through the destination registers (its value and "
        "index tiles transposed and packed; then the kept and the new tiles copied in, sorted, the four packed; "
        "each round waiting for the last, with their format reconfigurations), which the multi-core fit's figure "
        "does not hold; checked by tt-metal PR #38509 (gpt-oss-120B on a Galaxy, 2026-02-25): its sampling step "
        "with the single-core top-k of 32 x 25,152 values ~14 ms (the model: 14.0 ms; tests/perf/test_topk.py), and by "
        "the uint16 rows of perf_model.py (QwQ-32B on a T3000, 19,008 values a chip: +13% -> +1%; the 8B's two "
        "64,128-value halves on an N150, model_targets.yaml: +33% -> -6%).  Not taken with uint32 indices (a row "
        "of 65,535 values or more): the one such measurement, Ministral-8B's N300 row (65,536 a chip), is met "
        "without it (+3%) and missed with it (-27%); why the 32-bit index tiles move cheaper is not found",
        "noc_write_latency_cycles": f"{NPE}: get_write_latency: 40 cycles' start-up + 10 a router hop; one hop "
        "(the ring matmul's neighbours: meshnn.perf.ring_matmul); Blackhole taken as the same cycles",
        "sharded_norm_stats_ns": "fitted: tt-metal models/demos/deepseek_v3/tests/fused_op_unit_tests/"
        "mla_deepseek_perf_and_pcc_tests.py, q_norm: LayerNormDeviceOperation 7.33 us (rms_norm of [32, 1536] "
        "width-sharded over 16 cores of a TG chip, 3 tiles a core), less the cores' tiles and the launch (2.2 us): "
        "5.13 us for the sharded program's cross-core statistics (reader_mcast_sender_unary_sharded_ln.cpp: "
        "each core's partial signalled to the sender, a tile gathered from every core, combined, multicast back, "
        "the normalise pass waiting for it), the same whatever the tiles a core; checked by kv_norm ([32, 512], one "
        "tile a core: 6.68 us measured, 7.20 modelled)",
        "compute_start_cycles": COMPUTE_START_SOURCE,
        "riscv_cycles_per_element": "an estimate, uncalibrated: tt-metal's argmax kernels (reduction/argmax/"
        "device/kernels) compare each element in a scalar loop on a data-movement RISC-V (a volatile L1 "
        "load and a bfloat16 compare in software)",
    },
)

_BH_NOTE = " Blackhole: the Wormhole figure's cycles at 1.35 GHz (no Blackhole decode-op measurement found)"

BLACKHOLE = replace(
    WORMHOLE_B0,
    arch=Arch.BLACKHOLE,
    face_row_ns=WORMHOLE_B0.face_row_ns / 1.35,
    sdpa_decode_setup_ns=WORMHOLE_B0.sdpa_decode_setup_ns / 1.35,
    create_heads_setup_ns=WORMHOLE_B0.create_heads_setup_ns / 1.35,
    concat_heads_setup_ns=WORMHOLE_B0.concat_heads_setup_ns / 1.35,
    cache_update_setup_ns=WORMHOLE_B0.cache_update_setup_ns / 1.35,
    sharded_norm_stats_ns=WORMHOLE_B0.sharded_norm_stats_ns / 1.35,
    sources={name: text + _BH_NOTE for name, text in WORMHOLE_B0.sources.items()},
)

LATENCIES: dict[Arch, OpLatency] = {WORMHOLE_B0.arch: WORMHOLE_B0, BLACKHOLE.arch: BLACKHOLE}


def op_latency(arch: Arch | str) -> OpLatency:
    """The latency figures of ``arch`` (an :class:`Arch` or its value)."""
    return LATENCIES[arch if isinstance(arch, Arch) else Arch(arch)]
