"""The 6U Galaxy decoder's and model tail's per-op kernel times that no other figure uses, and the model's value
for each (one Wormhole chip of the 8x4 mesh, traced; every figure a check, none fitted).

Sources (tt-metal 2026-06): LLAMA = models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json, QWEN = the
same directory's qwen_decoder_perf_targets_6u.json.  Each value is a ``kernel_duration`` (ns) of
test_decoder_device_perf.py: the traced decode step's device profile, the average over the 32 chips of each call
(merge_device_rows means to average collectives and take other ops' max, but its test ``"AllGather" in op_name or
... or "AllReduce" or ...`` is always true, at 7f36e28e80, d554814e39 and 2026-06 alike: every op is averaged),
averaged over the decoder's mid layers ("decoder") or over the calls after the last layer ("model_tail": the final
norm, the LM head, on-device sampling), checked within a 5% margin.  Dates (the mirror's history, through the
rename of llama3_subdevices on 2025-07-31, ebcfbec674): the 70B's values were set on 2025-07-16 (7f36e28e80,
"Updating 6u perf targets llama 70b"), its QKV matmul's 7082 ns on 2025-07-21 (eb1e2e59a7), the fused FF1/FF3
matmul + reduce-scatter's 17498 ns on 2025-07-24 (f2255f4251, "Adding Batched matmul support": the FF1 matmul,
8515 ns alone, joined the FF3 matmul + FF1 reduce-scatter, 9292 ns); Qwen3-32B's on 2025-12-03 (d554814e39).
The ops are built from the model code at those dates (llama3_subdevices/tt/ at 7f36e28e80; llama3_70b_galaxy/tt/
and qwen_model_config.py at d554814e39, whose decode configs are unchanged at 2026-06):

- the ring matmuls (model_config.py's ``matmul_1d_ring_config``: 24 cores of PREFETCHER_NOC1_GRID, in1 streamed
  by the DRAM prefetcher into a global circular buffer in L1, gather_in0, one hop core): the gather-in0 program
  takes its K block from in0's shard width (matmul_op_multi_core_reuse_mcast_1d_program_factory.cpp: ``in0_block_w
  = Kt_pad / num_cores``) and each core multiplies only the K its shard holds (``unpadded_in0_shard_widths``), so
  each is :func:`~tests.perf.published_galaxy_units.ring_matmul` of the weight's K (QKV 2048, DO 1024: the
  attention's 8 heads of 128, where the program config says 1280; FF2 3584) in shards of the padded input;
  mid layers take bfloat8_b activations (llama_decoder.py: "layer 0 has a bfloat16 input while other layers use
  bfloat8"), the weights are bfloat8_b (the 70B's FF1/FF3 bfloat4_b, LoFi: ``LlamaOptimizations.performance``,
  bfp4_mlp), HiFi2 with float32 accumulation (``compute_kernel_config_hifi2``), QKV's output bfloat16 untilized;
  Qwen's prefetched MLP weights are bfloat16 whatever the optimizations say (llama_mlp.py at d554814e39:
  ``dtype=type if not args.is_qwen else ttnn.bfloat16``);
- RMSAllGather (``fused_rms_minimal``): the residual add, each device's sum of squares, its all-gather over the 4
  devices of axis 1 (ring, 1 link) and the normalisation, in one program (rms_allgather_pf.cpp at 7f36e28e80), with
  the wait for its peers' statistics holding their arrival skew (the norms follow an all_reduce on axis 0); the
  model's value is what ``meshnn perf`` times a captured call as (:func:`rms_all_gather_us`: the capture records a
  NORM with the call's collective config, timed by meshnn.perf.rms_all_gather as that one program);
- Matmul_RS (``llama_rs_matmul``: the FF1 and FF3 matmuls on the ring cores, FF1's output reduce-scattered over
  axis 1 by other cores while FF3 runs; captured as one row: :func:`matmul_rs_us`);
- the LM head: ``matmul_1d_ring_lm_head_config`` (24 ring cores, K 2048, N 16896 padded, 22 tiles a core; in1
  DRAM-sharded two cores' columns a bank, no prefetcher), bfloat8_b, HiFi2, float32 accumulation off;
- sampling (llama3_subdevices/tt/sampling.py at 7f36e28e80): the logits cast to bfloat16 on the 50 cores of
  ``sub_core_grids`` ((1,0)-(3,9), (5,0)-(6,9)), top-32 (a figure of published_decode), the values and their uint16
  indices all-gathered over the 8 devices of axis 0 (ring, 1 link, DRAM, [1, 1, 32, 256] each), the indices cast
  uint16 -> uint32 -> int32, offset by each device's vocabulary start, untilized, sampled; Qwen's (models/common/
  sampling/tt_sampling.py at d554814e39) the same calls on its 19456 logits a device, one index cast (uint16 ->
  int32).  The sampling op itself and plus_one are not figures: meshnn marks both estimated
  (meshnn/ops/sampling.py: modelled=False).
- programs of the figures' dates: the typecasts on ``sub_core_grids`` ran the sub-grid factory's one output block a
  core until tt-metal #41547 (2026-04-10: :class:`meshnn.perf.tile_ops.TypecastProgram`), and the 70B's
  sharded_to_interleaved of 2025-07 waited after each tile's write, before #27430 (2025-09-04:
  :class:`meshnn.perf.page_programs.S2IProgram`), and the 70B's top-32 all_gathers ran the relay program of
  2025-07, until #25063 (2025-07-23: :class:`meshnn.perf.dated_collectives.GatherProgram`); each such call is marked
  so in its op desc's attributes.
"""

from __future__ import annotations

from meshnn.perf import (
    BufferType,
    CollectiveConfig,
    Layout,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    predict,
)
from meshnn.perf.dated_collectives import GATHER_PROGRAM_ATTRIBUTE, GatherProgram
from meshnn.perf.page_programs import S2I_PROGRAM_ATTRIBUTE, S2IProgram
from meshnn.perf.tile_ops import TYPECAST_PROGRAM_ATTRIBUTE, TypecastProgram

from . import published_ccl_ci as ccl
from .figure import Figure
from .published_galaxy_decoder_why import FITTED, WHY
from .published_galaxy_units import B4, B8, B16, F, W, kernel_us, mul_silu, ring_matmul

_DIR = "tt-metal models/demos/llama3_70b_galaxy/tests/"
LLAMA = _DIR + "decoder_perf_targets_6u.json, {} (70B, 6U Galaxy)"
QWEN = _DIR + "qwen_decoder_perf_targets_6u.json, {} (Qwen3-32B, 6U Galaxy)"
DRAM, L1 = BufferType.DRAM, BufferType.L1
SUB_CORES = (5, 10)
"""``sub_core_grids``: (1,0)-(3,9) and (5,0)-(6,9), 50 cores (timed as a 5 x 10 grid)."""


def _dram(shape, dtype=B16, layout=Layout.TILE) -> TensorDesc:
    return TensorDesc(shape, dtype, layout, DRAM, MemoryLayout.INTERLEAVED)


def ring_us(k: int, n: int, dtypes: tuple[str, str, str], fidelity: F = F.HiFi2, fp32: bool = True) -> float:
    """A decoder ring matmul: in0 [32, k] over 24 cores (its shard ``ceil(k / 24)`` rounded to a tile), n padded
    to 24 shards of whole tiles."""
    return kernel_us(ring_matmul(k, n, dtypes, fidelity, fp32))


def matmul_rs_us(k: int, fidelity: F, weight: str, fp32: bool) -> float:
    """``llama_rs_matmul`` with a second weight as ``meshnn perf`` captures it (one Matmul_RS row: tests/ops/
    test_llama_rs_matmul.py) and meshnn.perf.rs_matmul times it (rs_matmul_program_factory.cpp at f2255f4251): FF1
    then FF3 ([32, k] x [k, 3840 padded], bfloat8_b out) on the 24 ring cores, the LlamaReduceScatter of FF1's
    [32, 3840] over the 4 devices of axis 1 (ring, 4 links) on its own cores beside FF3, one launch."""
    product = ring_matmul(k, 3840, (B8, weight, B8), fidelity, fp32)
    (a, w), out = product.inputs, product.outputs[0]
    scattered = TensorDesc((1, 1, 32, 960), B8, **W)
    config = CollectiveConfig(ccl.R, cluster_axis=1, num_links=4)
    desc = OpDesc(OpFamily.REDUCE_SCATTER, (a, w, w, out), (out, out, scattered), op_code="Matmul_RS",
                  fidelity=fidelity, matmul=product.matmul, collective=config)  # fmt: skip
    return predict(desc, ccl._g6(), traced=True).kernel_ns / 1e3


def rms_all_gather_us(width: int, grid: tuple[int, int], residual: bool) -> float:
    """``fused_rms_minimal`` as ``meshnn perf`` captures it (a NORM, op code RMSAllGather, with the call's collective
    config: axis 1, ring, 1 link) on the 6U Galaxy: a [32, width] bfloat8_b row width-sharded over ``grid``, the
    decoder's bfloat16 residual (added in the op) or none (the tail's final norm), gamma row-major in DRAM; timed
    by meshnn.perf.rms_all_gather (pre-add, statistics, their gather over 4 devices, gamma, norm: one launch)."""
    x = TensorDesc((1, 1, 32, width), B8, **W)
    weight = TensorDesc((1, 1, width // 32, 32), layout=Layout.ROW_MAJOR)
    res = (TensorDesc((1, 1, 32, width), B16, **W),) if residual else ()
    config = CollectiveConfig(ccl.R, cluster_axis=1, num_links=1)
    desc = OpDesc(OpFamily.NORM, (x, *res, weight), (x,), op_code="RMSAllGather", core_grid=grid, collective=config)
    return predict(desc, ccl._g6(), traced=True).kernel_ns / 1e3


def all_gather_concat_us() -> float:
    """AllGatherConcat as ``meshnn perf`` captures it (family ALL_GATHER, op code AllGatherConcat): SDPA decode's
    [1, 8, 32, 128] bfloat16 (8 users, 8 heads padded to a tile, height-sharded) gathered over the 4 devices of
    axis 1 (ring, GALAXY_NUM_LINKS 4), its heads then concatenated into [32, 1024] width-sharded on 16 cores; timed
    by meshnn.perf.gather_concat: the Llama sharded multicast gather of the input, then the concat's reads, tilize
    and write after the last packet."""
    h = dict(buffer=L1, memory=MemoryLayout.HEIGHT_SHARDED)
    part, out = TensorDesc((1, 8, 32, 128), B16, **h), TensorDesc((1, 1, 32, 1024), B16, **W)
    config = CollectiveConfig(ccl.R, cluster_axis=1, num_links=4)
    desc = OpDesc(OpFamily.ALL_GATHER, (part,), (out,), op_code="AllGatherConcat", collective=config,
                  name="ttnn.experimental.all_gather_concat")  # fmt: skip
    return predict(desc, ccl._g6(), traced=True).kernel_ns / 1e3


def lm_head_us(k: int, n_padded: int) -> float:
    """The decode LM head: [32, k] bfloat8_b on 24 ring cores x [k, n_padded] bfloat8_b DRAM-sharded, HiFi2,
    float32 accumulation off, bfloat8_b out."""
    tiles = n_padded // 24 // 32
    a = TensorDesc((1, 1, 32, k), B8, **W)
    b = TensorDesc((1, 1, k, n_padded), B8, buffer=DRAM, memory=MemoryLayout.WIDTH_SHARDED)
    out = TensorDesc((1, 1, 32, n_padded), B8, **W)
    config = MatmulConfig(
        MatmulProgram.MULTICAST_1D,
        (8, 3),
        per_core_m=1,
        per_core_n=tiles,
        mcast_in0=False,
        in0_block_w=-(-k // (24 * 32)),
        packer_l1_acc=True,
        fp32_acc=False,
        gather_in0=True,
        hop_cores=1,
    )
    return kernel_us(OpDesc(OpFamily.MATMUL, (a, b), (out,), fidelity=F.HiFi2, matmul=config))


def sub_grid_cores(tiles: int, cores: int = 50) -> int:
    """The cores the sub-core-grid typecast program runs on: the most, up to ``cores``, that split ``tiles`` evenly
    (typecast_program_factory.cpp at 7f36e28e80: ``ncores`` decremented until it divides ``ntiles``)."""
    return next(n for n in range(cores, 0, -1) if tiles % n == 0)


def typecast_us(width: int, source: str, dest: str) -> float:
    """``ttnn.typecast`` of a [1, 1, 32, width] DRAM-interleaved tensor on ``sub_core_grids``: one block of
    ``tiles / cores`` tiles a core (the unary reader and writer, one tile at a time), as the sub-grid program ran
    until tt-metal #41547 (2026-04-10)."""
    cores = sub_grid_cores(width // 32)
    x, y = _dram((1, 1, 32, width), source), _dram((1, 1, 32, width), dest)
    mark = ((TYPECAST_PROGRAM_ATTRIBUTE, TypecastProgram.SUBGRID_BLOCK.value),)
    return kernel_us(OpDesc(OpFamily.TYPECAST, (x,), (y,), core_grid=(cores, 1), attributes=mark))


def untilize_us() -> float:
    """``ttnn.untilize(use_multicore=True)`` of the [1, 1, 32, 256] int32 global indices on ``sub_core_grids``."""
    x = _dram((1, 1, 32, 256), "INT32")
    out = _dram((1, 1, 32, 256), "INT32", Layout.ROW_MAJOR)
    return kernel_us(OpDesc(OpFamily.UNTILIZE, (x,), (out,), core_grid=SUB_CORES))


def offset_add_us() -> float:
    """``ttnn.add`` of the int32 device offsets (DRAM) and the gathered int32 indices (one [32, 32] shard on each of
    8 cores: DECODE_SAMPLING_INPUT_MEMCFG), int32 out in L1."""
    sharded = TensorDesc((1, 1, 32, 256), "INT32", buffer=L1, memory=MemoryLayout.WIDTH_SHARDED)
    desc = OpDesc(OpFamily.BINARY, (_dram((1, 1, 32, 256), "INT32"), sharded), (sharded,), core_grid=(8, 1))
    return kernel_us(desc)


def copy_us(code: str, source: TensorDesc, dest: TensorDesc, grid: tuple[int, int], attributes=()) -> float:
    """A layout change (``code``: InterleavedToSharded, ShardedToInterleaved, Reshard) on ``grid``."""
    return kernel_us(OpDesc(OpFamily.COPY, (source,), (dest,), op_code=code, core_grid=grid, attributes=attributes))


def logits_to_dram_us(width: int, dated: bool = False) -> float:
    """The all-reduced logits [32, width] bfloat8_b on 32 cores (LM_HEAD_OUT_RING_RESHARD_MEMCFG) to DRAM;
    ``dated``: by the writer of the 70B's figures (2025-07: a write barrier after each tile, before tt-metal #27430)."""
    x = TensorDesc((1, 1, 32, width), B8, **W)
    mark = ((S2I_PROGRAM_ATTRIBUTE, S2IProgram.BARRIER_A_TILE.value),) if dated else ()
    return copy_us("ShardedToInterleavedDeviceOperation", x, _dram((1, 1, 32, width), B8), (8, 4), mark)


def lm_head_buffer_us(vocab_share: int = 16384) -> float:
    """The LM head all-reduce's persistent buffer from DRAM to 32 L1 shards (llama_ccl.py: ``vocab_share / 32 x 4``
    wide a shard, bfloat8_b): [32, 65536] for the 70B, [32, 77824] for Qwen."""
    x = (1, 1, 32, vocab_share * 4)
    return copy_us("InterleavedToShardedDeviceOperation", _dram(x, B8), TensorDesc(x, B8, **W), (8, 4))


def _sharded(shape, dtype=B16) -> TensorDesc:
    return TensorDesc(shape, dtype, buffer=L1, memory=MemoryLayout.WIDTH_SHARDED)


def sampling_to_l1_us(dtype: str) -> float:
    """A gathered [1, 1, 32, 256] tensor from DRAM to DECODE_SAMPLING_INPUT_MEMCFG (8 cores of [32, 32])."""
    v = (1, 1, 32, 256)
    return copy_us("InterleavedToShardedDeviceOperation", _dram(v, dtype), _sharded(v, dtype), (8, 1))


def sampling_to_dram_us() -> float:
    """The gathered bfloat16 values back from their 8 [32, 32] shards to DRAM."""
    v = (1, 1, 32, 256)
    return copy_us("ShardedToInterleavedDeviceOperation", _sharded(v), _dram(v), (8, 1))


def last_residual_us() -> float:
    """The last layer's ``ttnn.add(ff_out, h)``: [32, 2048] bfloat8_b + bfloat16 on DECODE_RESIDUAL_MEMCFG's 16 cores
    (4 tiles a core), bfloat8_b out."""
    x, h = TensorDesc((1, 1, 32, 2048), B8, **W), TensorDesc((1, 1, 32, 2048), B16, **W)
    return kernel_us(OpDesc(OpFamily.BINARY, (x, h), (x,), core_grid=(8, 2)))


def reshard_us(source: tuple[int, int], dest: tuple[int, int], grid: tuple[int, int]) -> float:
    """A bfloat8_b [32, width] reshard: ``source`` and ``dest`` are (width, shards)."""
    a, b = TensorDesc((1, 1, 32, source[0]), B8, **W), TensorDesc((1, 1, 32, dest[0]), B8, **W)
    return copy_us("ReshardDeviceOperation", a, b, grid)


def sampling_gather_us(dtype: str, relay: bool = False) -> float:
    """The top-32 values (bfloat16) or indices (uint16) of each device, [1, 1, 32, 32], all-gathered over the 8
    devices of axis 0 (ring, 1 link) into DRAM; ``relay``: by the relay program of 2025-07 (the 70B's date:
    :class:`meshnn.perf.dated_collectives.GatherProgram`), else today's."""
    if not relay:
        return ccl._gather(ccl._g6(), 8, ccl.R, 1, 0, (1, 1, 32, 256), dtype, DRAM)
    part, whole = ccl._tensor((1, 1, 32, 32), dtype, DRAM), ccl._tensor((1, 1, 32, 256), dtype, DRAM)
    config = CollectiveConfig(ccl.R, cluster_axis=0, num_links=1)
    marks = ((GATHER_PROGRAM_ATTRIBUTE, GatherProgram.RELAY.value),)
    return ccl._us(
        OpFamily.ALL_GATHER, (part,), (whole,), ccl._g6(), config, marks, name="ttnn.experimental.all_gather_async"
    )


_ROWS = [  # figure name, source, section, measured ns, model
    ("70B decoder QKV ring matmul 2048x1536 BFLOAT8_B -> BF16", LLAMA, "decoder", 7082.490,
     lambda: ring_us(2048, 1536, (B8, B8, B16))),
    ("70B decoder DO ring matmul 1024x2304 BFLOAT8_B", LLAMA, "decoder", 7701.098,
     lambda: ring_us(1024, 2304, (B16, B8, B8))),
    ("70B decoder FF2 ring matmul 3584x2304 BFLOAT8_B", LLAMA, "decoder", 13973.231,
     lambda: ring_us(3584, 2304, (B8, B8, B8))),
    ("70B decoder FF1+FF3 matmuls + reduce-scatter (Matmul_RS)", LLAMA, "decoder", 17497.701,
     lambda: matmul_rs_us(2048, F.LoFi, B4, False)),
    ("70B decoder RMSAllGather (attention norm)", LLAMA, "decoder", 16719.618,
     lambda: rms_all_gather_us(2048, (2, 8), True)),
    ("70B decoder RMSAllGather (MLP norm)", LLAMA, "decoder", 16346.489,
     lambda: rms_all_gather_us(2048, (2, 8), True)),
    ("70B decoder AllGatherConcat (SDPA out, 4 devices)", LLAMA, "decoder", 8411.798, all_gather_concat_us),
    ("70B tail RMSAllGather (final norm)", LLAMA, "model_tail", 14480.010,
     lambda: rms_all_gather_us(2048, (2, 8), False)),
    ("70B tail LM head ring matmul 2048x16896, in1 DRAM-sharded", LLAMA, "model_tail", 142716.940,
     lambda: lm_head_us(2048, 16896)),
    ("70B tail typecast logits 32x16384 BFLOAT8_B -> BF16", LLAMA, "model_tail", 20326.517,
     lambda: typecast_us(16384, B8, B16)),
    ("70B tail typecast indices 32x256 UINT16 -> UINT32", LLAMA, "model_tail", 1887.135,
     lambda: typecast_us(256, "UINT16", "UINT32")),
    ("70B tail untilize indices 32x256 INT32", LLAMA, "model_tail", 2918.804, untilize_us),
    ("70B tail add device offsets to indices 32x256 INT32", LLAMA, "model_tail", 3139.029, offset_add_us),
    ("70B tail sharded_to_interleaved logits 32x16384", LLAMA, "model_tail", 8355.871,
     lambda: logits_to_dram_us(16384, dated=True)),
    ("70B tail reshard LM head input 16 -> 24 cores", LLAMA, "model_tail", 1118.513,
     lambda: reshard_us((2048, 16), (2304, 24), (8, 3))),
    ("70B tail reshard LM head output 24 -> 32 cores", LLAMA, "model_tail", 3915.485,
     lambda: reshard_us((16896, 24), (16384, 32), (8, 4))),
    ("70B tail interleaved_to_sharded LM head buffer 32x65536", LLAMA, "model_tail", 21786.412, lm_head_buffer_us),
    ("70B tail all_gather top-32 values, 8 devices", LLAMA, "model_tail", 10840.894,
     lambda: sampling_gather_us(B16, relay=True)),
    ("70B tail all_gather top-32 indices, 8 devices", LLAMA, "model_tail", 12112.069,
     lambda: sampling_gather_us("UINT16", relay=True)),
    ("70B tail interleaved_to_sharded top-32 values 32x256 to 8 cores", LLAMA, "model_tail", 879.240,
     lambda: sampling_to_l1_us(B16)),
    ("70B tail interleaved_to_sharded indices 32x256 INT32 to 8 cores", LLAMA, "model_tail", 1298.840,
     lambda: sampling_to_l1_us("INT32")),
    ("70B tail sharded_to_interleaved top-32 values 32x256", LLAMA, "model_tail", 1002.194, sampling_to_dram_us),
    ("70B tail last residual add 32x2048 on 16 cores", LLAMA, "model_tail", 849.731, last_residual_us),
    ("Qwen3-32B decoder all_gather binary_mult 32x3840, 4 devices", QWEN, "decoder", 12295.733, ccl._ag_binary_mult),
    ("Qwen3-32B decoder llama_reduce_scatter FF3 32x3840", QWEN, "decoder", 7238.858, ccl._llama_rs),
    ("Qwen3-32B decoder llama_rs_create_heads QKV", QWEN, "decoder", 7709.885, ccl._rs_create_heads),
    ("Qwen3-32B tail all_gather top-32 values, 8 devices", QWEN, "model_tail", 13895.062,
     lambda: sampling_gather_us(B16)),
    ("Qwen3-32B tail all_gather top-32 indices, 8 devices", QWEN, "model_tail", 15575.656,
     lambda: sampling_gather_us("UINT16")),
    ("Qwen3-32B tail interleaved_to_sharded top-32 values 32x256", QWEN, "model_tail", 892.656,
     lambda: sampling_to_l1_us(B16)),
    ("Qwen3-32B tail interleaved_to_sharded indices 32x256 INT32", QWEN, "model_tail", 1305.031,
     lambda: sampling_to_l1_us("INT32")),
    ("Qwen3-32B tail sharded_to_interleaved top-32 values 32x256", QWEN, "model_tail", 991.344, sampling_to_dram_us),
    ("Qwen3-32B tail untilize indices 32x256 INT32", QWEN, "model_tail", 3030.094, untilize_us),
    ("Qwen3-32B tail add device offsets to indices 32x256", QWEN, "model_tail", 2776.156, offset_add_us),
    ("Qwen3-32B tail reshard LM head input 10 -> 24 cores", QWEN, "model_tail", 974.906,
     lambda: reshard_us((1280, 10), (1536, 24), (8, 3))),
    ("Qwen3-32B tail reshard LM head output 24 -> 32 cores", QWEN, "model_tail", 4418.562,
     lambda: reshard_us((19968, 24), (19456, 32), (8, 4))),
    ("Qwen3-32B tail interleaved_to_sharded LM head buffer 32x77824", QWEN, "model_tail", 26418.594,
     lambda: lm_head_buffer_us(19456)),
    ("Qwen3-32B decoder binary mul + silu 32x960 BFLOAT8_B on 30 cores", QWEN, "decoder", 789.549,
     lambda: kernel_us(mul_silu(960))),
    ("Qwen3-32B decoder QKV ring matmul 1280x1536 BFLOAT8_B -> BF16", QWEN, "decoder", 7031.361,
     lambda: ring_us(1280, 1536, (B8, B8, B16))),
    ("Qwen3-32B decoder DO ring matmul 1024x1536 BFLOAT8_B", QWEN, "decoder", 8528.639,
     lambda: ring_us(1024, 1536, (B16, B8, B8))),
    ("Qwen3-32B decoder FF2 ring matmul 3200x1536 BFLOAT16 weight", QWEN, "decoder", 13282.833,
     lambda: ring_us(3200, 1536, (B8, B16, B8))),
    ("Qwen3-32B decoder FF1+FF3 BFLOAT16 matmuls + reduce-scatter (Matmul_RS)", QWEN, "decoder", 38950.861,
     lambda: matmul_rs_us(1280, F.LoFi, B16, False)),
    ("Qwen3-32B decoder RMSAllGather (attention norm)", QWEN, "decoder", 15604.045,
     lambda: rms_all_gather_us(1280, (2, 5), True)),
    ("Qwen3-32B decoder RMSAllGather (MLP norm)", QWEN, "decoder", 15236.649,
     lambda: rms_all_gather_us(1280, (2, 5), True)),
    ("Qwen3-32B decoder AllGatherConcat (SDPA out, 4 devices)", QWEN, "decoder", 8431.868, all_gather_concat_us),
    ("Qwen3-32B tail RMSAllGather (final norm)", QWEN, "model_tail", 14264.812,
     lambda: rms_all_gather_us(1280, (2, 5), False)),
    ("Qwen3-32B tail LM head ring matmul 1536x19968, in1 DRAM-sharded", QWEN, "model_tail", 114785.688,
     lambda: lm_head_us(1536, 19968)),
    ("Qwen3-32B tail typecast logits 32x19456 BFLOAT8_B -> BF16", QWEN, "model_tail", 20943.156,
     lambda: typecast_us(19456, B8, B16)),
    ("Qwen3-32B tail sharded_to_interleaved logits 32x19456", QWEN, "model_tail", 7070.812,
     lambda: logits_to_dram_us(19456)),
]  # fmt: skip


def figures() -> list[Figure]:
    """The decoder and model-tail figures (group "decode ops"), each a check but ``FITTED``'s; a miss carries its
    ``WHY``."""
    out = []
    for name, source, section, ns, model in _ROWS:
        why = WHY.get(name, "")
        us = ns / 1e3
        fitted = name in FITTED
        out.append(Figure(name, source.format(section), us, us, "us", model, not why, why, fitted, group="decode ops"))
    return out


if __name__ == "__main__":
    for f in figures():
        print(f"{f.name:<66} {f.low:>9.3f} {f.value():9.2f} {100 * f.error():+6.1f}%  {'' if f.covered else 'MISS'}")
