"""A Llama model written as tt_transformers writes it (models/tt_transformers/tt: model, decoder,
attention, mlp, lm_head, distributed_norm, ccl), with meshnn's ops, for the performance model.

Every layer, the embedding, the rotary lookups, the final norm and the LM head (split as tt_transformers
splits it), at tt_transformers' performance precisions and fidelities (PERF.md: "bfp4 MLP and bfp8
attention": ModelOptimizations.performance sets FF1/FF3 bfloat4_b at LoFi and leaves FF2 at its default,
bfloat8_b at HiFi2; QKV and output bfloat8_b at HiFi2; SDPA HiFi2 in decode, HiFi4 in prefill; bfloat8_b
KV cache; decode matmuls DRAM-sharded).  Weights are torch "meta" tensors on a planning mesh
(``execute=False``): every op is checked and allocated as on hardware, nothing is computed.

On a 1-D mesh (N150 1x1, N300 1x2, T3000 1x8) the residual stream is cut over the devices between
layers; each norm all_gathers it first; QKV, w1 and w3 are cut by columns, the attention output and w2
by rows and reduce_scattered back onto the stream.  On the Galaxy (8x4) tt_transformers' TG path:
2-D weights, interleaved DRAM weights on a 32-core grid (its model_config: "glx doesn't support DRAM
sharded matmuls yet"), all-reduces as all_gather + fast_reduce_nc along an axis.  What differs from
tt_transformers is said where it is done (``NOT_MODELLED``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

import meshnn as ttnn

TILE = 32
BF16, BFP8, BFP4 = ttnn.bfloat16, ttnn.bfloat8_b, ttnn.bfloat4_b
NOT_MODELLED = (
    "T3000's decode collectives are written as today's fabric ops (all_gather_matmul_async, reduce_scatter); every "
    "PERF.md row but QwQ-32B's (2026-03) predates tt-metal #25628 (2025-08-12), when tt_transformers ran the "
    "non-fabric ttnn.reduce_scatter and ttnn.experimental.all_gather_matmul, timed here as the fabric ones; "
    "perf_model times the rows' ring reduce_scatters as the fabric program of before tt-metal #41522 (2026-04-09: "
    "meshnn.perf.dated_collectives, fitted to that PR's 'ring (current)' figures, 46.8-66.6 us at decode sizes); "
    "the older non-fabric program is not written (the 32B Qwens' decodes read 14-22% fast; Phi-3.5-mini's 40%, of "
    "which the same code base's Llama-3.2-3B T3000 row, its collectives of the same bytes, shows +14%: "
    "perf_model.UNNAMED)",
    "T3000's prefill attention output runs as linear + reduce_scatter; tt_transformers all_gathers the heads and "
    "runs wo on output columns (USE_FUSED_ALL_GATHER_MATMUL: the same op count, a collective of the same bytes)",
    "paged attention runs unpaged (the same bytes; cur_pos as a list so the model sees the position)",
    "decode samples on the host (PERF.md's older rows: the logits read back every token) unless the model is built "
    "with device_sampling (perf_model.DEVICE_SAMPLING's rows): the logits' all_gather and untilize and, where the demo "
    "argmaxed on the device, the argmax are not written (the host's fitted per-token figure holds batch 1's); a batch "
    "sampled on the host has its 32 rows' read back and the host's argmax of them timed by perf_model (decode_tail)",
    "device sampling: manual_seed (no tensor to time) and the host's shorter read (32 tokens, not the logits)",
    "prefill SDPA reads bfloat16 q, k and v: attention.py typecasts q to the activation dtype (bfloat8_b by default) "
    "and runs SDPA on the KV cache's dtype; written, its typecast a layer moves the fitted 1B / 3B prefill rows (N300 "
    "1B +17% -> +21%), so it waits for the host figures' refit",
)


@dataclass(frozen=True)
class Shape:
    """A Llama model's dimensions (HF config names in comments)."""

    name: str
    layers: int
    dim: int  # hidden_size
    heads: int
    kv_heads: int
    head_dim: int
    hidden: int  # intermediate_size
    vocab: int = 128256
    qkv_bias: bool = False  # attention_bias / Qwen2's q, k and v biases
    qk_norm: bool = False  # Qwen3's per-head q_norm and k_norm


SAMPLING_TOP_K = 32
"""TTSampling's ``max_top_k`` (its default): each device's top-k before the gather."""
LLAMA3_VOCAB = 128256
"""Llama 3's vocabulary, which model_config.py sizes the LM head's splits on Blackhole by, whatever the model's."""

MLP_PAD_CORES = {"Qwen2.5-72B": 32, "Qwen2.5-32B": 16, "Qwen2.5-7B": 16, "QwQ-32B": 16}
"""model_config.py's default PAD_MLP_CORES: the hidden dim padded (zero weights) to a multiple of
cores x 32 x the mesh's devices, so that every device's share is whole tiles on that many cores."""


def padded(shape: Shape, devices: int) -> Shape:
    """``shape`` with its hidden dim padded as tt_transformers pads it on ``devices`` devices."""
    cores = MLP_PAD_CORES.get(shape.name, 0)
    if not cores:
        return shape
    step = cores * TILE * devices
    return dataclasses.replace(shape, hidden=math.ceil(shape.hidden / step) * step)


LLAMA_1B = Shape("Llama-3.2-1B", 16, 2048, 32, 8, 64, 8192)
LLAMA_3B = Shape("Llama-3.2-3B", 28, 3072, 24, 8, 128, 8192)
LLAMA_8B = Shape("Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336)
LLAMA_70B = Shape("Llama-3.1-70B", 80, 8192, 64, 8, 128, 28672)


def meta(*shape: int) -> torch.Tensor:
    return torch.empty(shape, device="meta", dtype=torch.bfloat16)


def kernel(fidelity: ttnn.MathFidelity) -> ttnn.WormholeComputeKernelConfig:
    return ttnn.WormholeComputeKernelConfig(
        math_fidelity=fidelity, math_approx_mode=False, fp32_dest_acc_en=False, packer_l1_acc=True
    )


HIFI2, HIFI4, LOFI = kernel(ttnn.MathFidelity.HiFi2), kernel(ttnn.MathFidelity.HiFi4), kernel(ttnn.MathFidelity.LoFi)
"""model_config.py's compute_kernel_config_hifi2_fp16 (the MLP's MathFidelitySetting.HIFI2_FP16), the LM
head's own config (lm_head.py) and compute_kernel_config_lofi: 16-bit accumulation, partial sums in L1."""
HIFI4_FP32 = ttnn.WormholeComputeKernelConfig(
    math_fidelity=ttnn.MathFidelity.HiFi4, math_approx_mode=False, fp32_dest_acc_en=True, packer_l1_acc=True
)
"""model_config.py's compute_kernel_config_hifi4 (MathFidelitySetting.HIFI4): HiFi4 with float32
accumulation: a matmul's partial sums between K blocks are float32 (4 KB a tile: meshnn.perf.matmul; bfloat16 in
the DRAM-sharded program before tt-metal #36177, 2026-01-21: meshnn.perf.matmul.DramShardedPartials)."""
HIFI2_FP32 = ttnn.WormholeComputeKernelConfig(
    math_fidelity=ttnn.MathFidelity.HiFi2, math_approx_mode=True, fp32_dest_acc_en=True, packer_l1_acc=True
)
"""model_config.py's compute_kernel_config_hifi2 (MathFidelitySetting.HIFI2, the attention's QKV and
output matmuls and decode SDPA by default): HiFi2 with float32 accumulation."""
HIFI2_NA = ttnn.WormholeComputeKernelConfig(
    math_fidelity=ttnn.MathFidelity.HiFi2, math_approx_mode=False, fp32_dest_acc_en=False, packer_l1_acc=False
)
"""model_config.py's compute_kernel_config_hifi2_na (MathFidelitySetting.HIFI2_NA): HiFi2, 16-bit
accumulation, no packer L1 accumulation (decode SDPA's default in 2025-03)."""


@dataclass(frozen=True)
class Precision:
    """tt_transformers' ModelOptimizations for a model (model_config.py: TensorPrecision and OpFidelity
    per tensor and op group): the weights' and KV cache's dtypes and the matmuls' and SDPA's fidelities.
    The FF1/FF3 fidelity follows their dtype (LoFi for bfloat4_b, else HiFi2), as the settings pair them."""

    name: str
    ff1_ff3: object = BFP4
    ff2: object = BFP8
    wqkv: object = BFP8
    wo: object = BFP8
    kv_cache: object = BFP8
    attention: object = HIFI2_FP32  # LI_QKV_* and LI_O_* (decode and prefill)
    sdpa_decode: object = HIFI2_FP32
    mlp: object = None  # LI_FF1_FF3 and LI_FF2 where a model's decoder config sets them (None: the defaults)
    activation: object = None  # TensorGroup.ACTIVATION where a decoder config sets it (None: each op's default)
    ff1_ff3_fidelity: object = None  # LI_FF1_FF3 alone, where a configuration sets it apart from LI_FF2
    ff2_fidelity: object = None  # LI_FF2 alone
    wo_decode: object = None  # LI_O_DECODE where it differs from ``attention``
    wo_prefill: object = None  # LI_O_PREFILL where it differs from ``attention``
    qkv_prefill: object = None  # LI_QKV_PREFILL where it differs from ``attention``

    def ff1_ff3_kernel(self, dtype) -> object:
        """FF1/FF3's compute kernel config: the model's own, else LoFi for bfloat4_b, HiFi2 otherwise."""
        return self.ff1_ff3_fidelity or self.mlp or (LOFI if dtype == BFP4 else HIFI2)

    def ff2_kernel(self) -> object:
        return self.ff2_fidelity or self.mlp or HIFI2

    def wo_kernel(self, *, prefill: bool) -> object:
        """The attention output matmul's config (LI_O_PREFILL / LI_O_DECODE): ``attention`` unless set apart."""
        return (self.wo_prefill if prefill else self.wo_decode) or self.attention

    def gated_dtype(self) -> object:
        """The MLP's gated product (mlp.py's w2_in, FF2's input): ``activation_dtype or ttnn.bfloat8_b``."""
        return self.activation or BFP8


PERFORMANCE = Precision("performance")
"""ModelOptimizations.performance for every model but Qwen2.5-7B: FF1/FF3 bfloat4_b at LoFi, the rest at
the defaults (bfloat8_b weights and KV cache, HiFi2; prefill SDPA HiFi4)."""
BF16_ATTENTION = Precision("bf16 attention", ff1_ff3=BFP8, wqkv=BF16, wo=BF16, kv_cache=BF16, attention=HIFI4_FP32,
                           sdpa_decode=HIFI4_FP32)  # fmt: skip
"""Every family's accuracy settings but Llama 3, Mistral-7B, Phi-3-mini and phi-4 (below 70B): bfloat16
QKV, output and KV cache at HiFi4 (SDPA too), FF1/FF3 at the default bfloat8_b."""
QWEN25_7B_DECODERS = Precision("qwen2.5-7b decoders", ff1_ff3=BFP8, wqkv=BF16, wo=BF16, kv_cache=BF16,
                               attention=HIFI4_FP32, sdpa_decode=HIFI4_FP32, mlp=HIFI4_FP32,
                               activation=BF16)  # fmt: skip
"""Qwen2.5-7B's own settings, performance and accuracy alike: model_params/Qwen2.5-7B-Instruct/
performance_decoder_config.json (and accuracy_decoder_config.json, the same), which replace
ModelOptimizations for every one of its 28 decoders since tt-metal #22689 (2025-06-03, "Increase Qwen2.5 7B
real-world accuracy"; PERF.md's row moved 31.0 -> 24.6 t/s/u with it): BF16 attention weights and KV cache,
BFP8 MLP, BF16 activations (``ACTIVATION``: the MLP's gated product, FF2's input, bfloat16 where the default
is bfloat8_b), and HIFI4 (HiFi4, float32 accumulation) for every matmul and SDPA, the MLP's included."""
ACCURACY_LLAMA = Precision("accuracy", ff1_ff3=BFP8)
"""ModelOptimizations.accuracy for Llama 3, Mistral-7B, Phi-3-mini and phi-4 below 70B: bfloat8_b
attention and KV cache, bfloat8_b MLP at HiFi2 with 16-bit accumulation (HIFI2_FP16, fp32_dest_acc_en
off; the attention's HIFI2 accumulates in float32); the 70B and 90B keep the performance settings."""
PHI3_MINI_PERFORMANCE = dataclasses.replace(PERFORMANCE, name="performance, fp16 QKV prefill", qkv_prefill=HIFI2)
PHI3_MINI_ACCURACY = dataclasses.replace(ACCURACY_LLAMA, name="accuracy, fp16 QKV prefill", qkv_prefill=HIFI2)
"""Phi-3-mini's settings, performance and accuracy: model_config.py's ModelOptimizations sets LI_QKV_PREFILL to
HIFI2_FP16 for any model name starting "Phi-3-mini" ("running out of L1 memory ..., using FP16 accumulate in
attention prefill QKV Matmul"; since its bring-up, #27508, 2025-09-02, when its PERF.md rows were measured)."""


def find_grid(tiles: int, *, both: int | None = None, target: int = 32) -> ttnn.CoreGrid:
    """tt_transformers' find_grid / find_grid_k_n: cores (at most 8x8) dividing ``tiles`` (and
    ``both``), nearest ``target`` (the most cores when ``both`` is given)."""
    fits = [c for c in range(1, 65) if tiles % c == 0 and (both is None or both % c == 0)]
    fits.sort(key=(lambda c: -c) if both is not None else (lambda c: abs(c - target)))
    for cores in fits:
        for rows in range(1, 9):
            if cores % rows == 0 and cores // rows <= 8:
                return ttnn.CoreGrid(y=rows, x=cores // rows)
    raise ValueError(f"no grid for {tiles} tiles")


def width_sharded(rows: int, width: int, grid: ttnn.CoreGrid) -> ttnn.MemoryConfig:
    return ttnn.create_sharded_memory_config(
        (rows, width // grid.num_cores), grid, ttnn.ShardStrategy.WIDTH, use_height_and_width_as_shard_shape=True
    )


def dram_sharded(k: int, n: int, banks: int = 12) -> ttnn.MemoryConfig:
    """tt_transformers' create_dram_sharded_mem_config: the weight's columns over the DRAM banks."""
    padded = math.ceil(n / (TILE * banks)) * TILE * banks
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(banks - 1, 0))])
    spec = ttnn.ShardSpec(grid, (k, padded // banks), ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.DRAM, spec)


def dram_program(k: int, n: int, cores: int, activation=None):
    """tt_transformers' dram_matmul_config for 32 rows."""
    in0 = next(i for i in range(8, 0, -1) if (k // (TILE * cores)) % i == 0)
    return ttnn.MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig(
        in0_block_w=in0, per_core_M=1, per_core_N=math.ceil(n / (TILE * cores)), fused_activation=activation
    )


def largest_divisor(n: int, most: int = 8) -> int:
    """model_config's find_largest_divisor (and find_prefill_grid's columns): the largest divisor of ``n`` up to
    ``most``."""
    return next(i for i in range(most, 0, -1) if n % i == 0)


def out_subblock_w(per_core_n: int) -> int:
    """common.get_out_subblock_w with one-row subblocks: the widest of 4, 3, 2, 1 tiles dividing ``per_core_n``."""
    return next(w for w in (4, 3, 2, 1) if per_core_n % w == 0)


def user_grid(users: int) -> ttnn.CoreGrid:
    """model_config.py's num_to_corerange: ``users`` cores in rows of 8 from (0, 0), one a user."""
    return ttnn.CoreGrid(y=math.ceil(users / 8), x=min(users, 8))


class Llama:
    """``shape``'s weights on ``mesh`` (planning) and its two passes: a decode step of ``batch`` users
    at a position, and the prefill of one user's prompt."""

    def __init__(
        self,
        shape: Shape,
        mesh: ttnn.MeshDevice,
        *,
        max_seq: int = 1024,
        batch: int = 1,
        precision: Precision = PERFORMANCE,
        device_sampling: bool = False,
        pad_sampling_logits: bool = True,
        sdpa_decode_chunk: int = 0,
    ) -> None:
        self.mesh, self.max_seq, self.batch = mesh, max_seq, batch
        self.sdpa_decode_chunk = sdpa_decode_chunk  # decode SDPA's q / k chunk (0: tt-metal's by position)
        self.p = precision
        self.device_sampling = device_sampling
        self.pad_sampling_logits = pad_sampling_logits
        self.n = mesh.get_num_devices()
        self.s = shape = padded(shape, self.n)
        self.galaxy = tuple(mesh.shape) == (8, 4)
        self.cols = mesh.shape[1]
        self.topology = ttnn.Topology.Ring if self.n == 8 and not self.galaxy else ttnn.Topology.Linear
        s = shape
        if self.galaxy:
            self.heads, self.kv_heads = s.heads // 8, max(1, s.kv_heads // 8)
        else:
            self.heads, self.kv_heads = s.heads // self.n, max(1, s.kv_heads // self.n)
        self.residual = s.dim // (self.cols if self.galaxy else self.n)  # the stream's share per device
        # model_config.py's USE_FUSED_ALL_GATHER_MATMUL (2024-11 to today, unchanged): 8 devices on a ring and
        # dim / 32 / 8 a multiple of 8 (1B, 7-8B, 70-72B; not the 3B, Phi-3 / 3.5 or the 32B Qwens)
        self.fused_wo = self.n == 8 and not self.galaxy and (s.dim // TILE // self.n) % self.n == 0
        self.layers = [self._layer(i) for i in range(s.layers)]
        self.embedding = self._put(meta(s.vocab, s.dim), BF16, layout=ttnn.ROW_MAJOR_LAYOUT, dims=(None, 1))
        self.norm = self._norm_weight()
        self.final = {"norm": self.norm, **self._distributed_norm_weights("norm")}  # the output norm, prefill's
        self.rot = [self._put(meta(max_seq, s.head_dim), BF16, layout=ttnn.ROW_MAJOR_LAYOUT) for _ in range(2)]
        self.trans = self._put(meta(1, 1, TILE, TILE), BF16)
        self.lm_head = self._lm_head()
        self.sampler = self._sampler_tensors() if device_sampling else None

    # ------------------------------------------------------------------------------ weights

    def _put(self, values, dtype, *, layout=ttnn.TILE_LAYOUT, dims=None, memory_config=None) -> ttnn.Tensor:
        """``dims``: (dim cut over mesh rows, dim cut over mesh columns) or None (replicated); a 1-D
        mesh cuts along its columns."""
        if dims is None:
            mapper = ttnn.ReplicateTensorToMesh(self.mesh)
        else:
            mapper = ttnn.ShardTensor2dMesh(self.mesh, mesh_shape=tuple(self.mesh.shape), dims=dims)
        return ttnn.from_torch(
            values, dtype=dtype, layout=layout, device=self.mesh, mesh_mapper=mapper, memory_config=memory_config
        )

    def _weight(self, k: int, n: int, dtype, dims) -> ttnn.Tensor:
        """A [k, n] weight cut by ``dims`` (the weight dim cut over mesh rows, over mesh columns);
        DRAM-sharded on a 1-D mesh."""
        rows, cols = self.mesh.shape
        local = [k, n]
        for axis, count in zip(dims, (rows, cols), strict=True):
            if axis is not None:
                local[axis] //= count
        banks = self.mesh.dram_grid_size().x  # model_config's dram_grid_size: 12 on Wormhole, 8 on Blackhole
        config = ttnn.DRAM_MEMORY_CONFIG if self.galaxy else dram_sharded(*local, banks=banks)
        return self._put(meta(k, n), dtype, dims=dims, memory_config=config)

    def _layer(self, index: int) -> dict[str, ttnn.Tensor]:
        s = self.s
        qkv = (s.heads + 2 * s.kv_heads) * s.head_dim
        # ModelOptimizations.performance: FF1/FF3 bfloat4_b (LoFi), FF2 the default bfloat8_b (HiFi2); the 8B's
        # performance_decoder_config.json: FF1/FF3 bfloat8_b (HiFi2) in its last layer
        p = self.p
        mlp = BFP8 if (s is LLAMA_8B and index == s.layers - 1) else p.ff1_ff3
        # QKV, w1, w3: output columns cut; wo, w2: input rows cut (TG: both, over the two mesh axes)
        cols = (1, 0) if self.galaxy else (None, 1)
        rows = (0, 1) if self.galaxy else (None, 0)
        cache = (max(1, self.batch // 4) if self.galaxy else self.batch, s.kv_heads, self.max_seq, s.head_dim)
        cache_dims = (1, None) if self.galaxy else (None, 1)
        return {
            "attn_norm": self._norm_weight(),
            "ff_norm": self._norm_weight(),
            **self._distributed_norm_weights("attn_norm", "ff_norm"),
            "wqkv": self._weight(s.dim, qkv, p.wqkv, cols),
            "wo": self._weight(s.heads * s.head_dim, s.dim, p.wo, rows),
            **self._fused_wo(p.wo),
            "w1": self._weight(s.dim, s.hidden, mlp, cols),
            "w3": self._weight(s.dim, s.hidden, mlp, cols),
            "w2": self._weight(s.hidden, s.dim, p.ff2, rows),
            "k": self._put(meta(*cache), p.kv_cache, dims=cache_dims),
            "v": self._put(meta(*cache), p.kv_cache, dims=cache_dims),
            **self._qwen_weights(qkv),
        }

    def _fused_wo(self, dtype) -> dict[str, ttnn.Tensor]:
        """Where decode fuses the attention output's all-gather (:attr:`fused_wo`), attention.py's
        ``wo_width_sharded_2d``: the output weight cut by columns, interleaved in DRAM (decode's; the prefill here
        keeps the row-cut ``wo``: ``NOT_MODELLED``)."""
        s = self.s
        if not self.fused_wo:
            return {}
        cols = self._put(
            meta(s.heads * s.head_dim, s.dim), dtype, dims=(None, 1), memory_config=ttnn.DRAM_MEMORY_CONFIG
        )
        return {"wo_cols": cols}

    def _qwen_weights(self, qkv: int) -> dict[str, ttnn.Tensor]:
        """attention.py's extra weights: the fused QKV bias in bfloat16, cut with QKV's columns (prefill:
        one row, broadcast; decode: a tile of rows), and the per-head q / k norms' weights."""
        out = {}
        dims = (3, None) if self.galaxy else (None, 3)  # as QKV's columns are cut
        if self.s.qkv_bias:
            out["bias_prefill"] = self._put(meta(1, 1, 1, qkv), BF16, dims=dims)
            out["bias_decode"] = self._put(meta(1, 1, TILE, qkv), BF16, dims=dims)
        if self.s.qk_norm:
            for name in ("q_norm", "k_norm"):
                out[name] = self._put(meta(1, 1, self.s.head_dim // TILE, TILE), BF16, layout=ttnn.ROW_MAJOR_LAYOUT)
        return out

    def _qk_norm(self, q: ttnn.Tensor, k: ttnn.Tensor, w: dict, *, decode: bool) -> tuple[ttnn.Tensor, ttnn.Tensor]:
        """attention.py's q_norm / k_norm (norm_reshard): an RMS norm over each head's head_dim; in decode
        the heads go to L1 interleaved for it and back to their height-sharded config."""
        if not self.s.qk_norm:
            return q, k
        out = []
        for x, weight in ((q, w["q_norm"]), (k, w["k_norm"])):
            config = x.memory_config()
            if decode:
                x = ttnn.to_memory_config(x, ttnn.L1_MEMORY_CONFIG)
            x = ttnn.rms_norm(x, epsilon=1e-6, weight=weight, compute_kernel_config=HIFI2)
            out.append(ttnn.to_memory_config(x, config) if decode else x)
        return out[0], out[1]

    def _norm_weight(self) -> ttnn.Tensor:
        """A norm's weight, row-major in rows of 32 (TG: cut over the columns, as the stream is)."""
        dims = (None, 2) if self.galaxy else None
        return self._put(meta(1, 1, self.s.dim // TILE, TILE), BF16, layout=ttnn.ROW_MAJOR_LAYOUT, dims=dims)

    def _lm_head(self) -> list[tuple[ttnn.Tensor, object]]:
        """lm_head.py: the vocabulary cut over the devices, each device's columns in splits of at
        most :meth:`_lm_split_columns` (ttnn.bfloat8_b, DRAM-sharded)."""
        s = self.s
        step = TILE * (self.cols if self.galaxy else 1)  # TG reduce_scatters the logits over its columns
        per_device = math.ceil(s.vocab / (self.mesh.shape[0] if self.galaxy else self.n) / step) * step
        grid = self._lm_grid()
        most = self._lm_split_columns(grid)
        most -= most % step
        splits = [min(most, per_device - i) for i in range(0, per_device, most)]
        out = []
        for width in splits:
            width = math.ceil(width / TILE) * TILE
            devices = self.mesh.shape[0] if self.galaxy else self.n
            weight = self._weight(s.dim, width * devices, BFP8, (1, 0) if self.galaxy else (None, 1))
            out.append((weight, None if self.galaxy else dram_program(s.dim, width, grid.num_cores)))
        return out

    def _lm_split_columns(self, grid: ttnn.CoreGrid) -> int:
        """model_config's get_lm_head_max_columns_per_device: 668 columns a core of the LM head's grid on
        Wormhole; on Blackhole a fixed share of Llama 3's 128,256-token vocabulary (an eighth on one or two
        chips, a 32nd on four, a 128th on eight: 16,032 columns a split on a P150, where a Wormhole chip's
        64-core grid takes 42,752)."""
        if self.mesh.arch() is ttnn.Arch.BLACKHOLE:
            return LLAMA3_VOCAB // {4: 4 * 8, 8: 8 * 16}.get(self.n, 8)
        return 668 * grid.num_cores

    def _lm_grid(self) -> ttnn.CoreGrid:
        rows = next(r for r in range(8, 0, -1) if self.s.dim % (r * 8 * TILE) == 0)
        return ttnn.CoreGrid(y=rows, x=8)

    # --------------------------------------------------------------------------- decode (1-D)

    def _residual_config(self) -> ttnn.MemoryConfig:
        return width_sharded(TILE, self.residual, find_grid(self.residual // TILE))

    def _norm(self, x: ttnn.Tensor, weight: ttnn.Tensor) -> ttnn.Tensor:
        """distributed_norm.py on a 1-D mesh: all_gather the stream, then a sharded rms_norm."""
        dim = self.s.dim
        config = width_sharded(TILE, dim, find_grid(dim // TILE))
        if self.n > 1:
            x = ttnn.all_gather(x, dim=3, num_links=1, topology=self.topology, memory_config=config)
        elif x.memory_config() != config:
            x = ttnn.to_memory_config(x, config)
        grid = find_grid(dim // TILE)
        program = ttnn.LayerNormShardedMultiCoreProgramConfig(
            compute_with_storage_grid_size=ttnn.CoreCoord(grid.x, grid.y),
            subblock_w=1,
            block_h=1,
            block_w=dim // TILE // grid.num_cores,
            inplace=False,
        )
        return ttnn.rms_norm(
            x, epsilon=1e-5, weight=weight, program_config=program, memory_config=config, compute_kernel_config=HIFI2
        )

    def _rotation(self) -> tuple[ttnn.Tensor, ttnn.Tensor, ttnn.Tensor]:
        """rope.py's get_rot_mats: two embedding lookups of the position (then sharded per user)."""
        ids = self._ids(TILE)
        for table in self.rot:
            ttnn.to_layout(ttnn.embedding(ids, table, layout=ttnn.TILE_LAYOUT), ttnn.TILE_LAYOUT)
        users = self.batch
        grid = ttnn.CoreGrid(y=math.ceil(users / 8), x=min(users, 8))
        config = ttnn.create_sharded_memory_config(
            (TILE, self.s.head_dim), grid, ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
        )
        cos, sin = (self._put(meta(1, users, TILE, self.s.head_dim), BF16, memory_config=config) for _ in range(2))
        trans_config = ttnn.create_sharded_memory_config(
            (TILE, TILE), grid, ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
        )
        trans = self._put(meta(1, 1, TILE * users, TILE), BF16, memory_config=trans_config)
        return cos, sin, trans

    def _attention(self, x: ttnn.Tensor, w: dict, rot, positions: list[int]) -> ttnn.Tensor:
        s = self.s
        h = self._norm(x, w["attn_norm"])
        qkv_width = (self.heads + 2 * self.kv_heads) * s.head_dim
        grid = find_grid(s.dim // TILE)
        qkv = ttnn.linear(
            h,
            w["wqkv"],
            program_config=dram_program(s.dim, qkv_width, grid.num_cores),
            memory_config=ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG,
            compute_kernel_config=self.p.attention,
        )
        if s.qkv_bias:  # attention.py: "File bug against dram-sharded matmuls with bias": a separate add
            qkv = ttnn.add(qkv, w["bias_decode"], memory_config=ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG)
        qkv = ttnn.sharded_to_interleaved(qkv, ttnn.L1_MEMORY_CONFIG)
        qkv = ttnn.reshape(qkv, (1, 1, self.batch, qkv_width), (1, 1, TILE, qkv_width))  # the true batch
        q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(
            qkv, num_heads=self.heads, num_kv_heads=self.kv_heads, memory_config=ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG
        )
        q, k = self._qk_norm(q, k, w, decode=True)
        cos, sin, trans = rot
        q = ttnn.experimental.rotary_embedding_llama(q, cos, sin, trans, is_decode_mode=True)
        k = ttnn.experimental.rotary_embedding_llama(k, cos, sin, trans, is_decode_mode=True)
        ttnn.experimental.paged_update_cache(w["k"], k, update_idxs=positions)
        ttnn.experimental.paged_update_cache(w["v"], v, update_idxs=positions)
        program = self._decode_sdpa_program((8, 8))
        out = ttnn.transformer.scaled_dot_product_attention_decode(
            q, w["k"], w["v"], cur_pos=positions, program_config=program, compute_kernel_config=self.p.sdpa_decode,
            memory_config=ttnn.DRAM_MEMORY_CONFIG,
        )  # fmt: skip
        per_user = ttnn.create_sharded_memory_config(
            (TILE, s.head_dim), user_grid(self.batch), ttnn.ShardStrategy.HEIGHT,
            use_height_and_width_as_shard_shape=True,
        )  # fmt: skip
        heads = ttnn.experimental.nlp_concat_heads_decode(ttnn.to_memory_config(out, per_user), num_heads=self.heads)
        if self.fused_wo:
            return self._fused_dense(heads, w["wo_cols"])
        width = self.heads * s.head_dim
        dense = ttnn.linear(
            heads,
            w["wo"],
            program_config=dram_program(width, s.dim, self.heads),
            memory_config=ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG,
            compute_kernel_config=self.p.wo_kernel(prefill=False),
        )
        return self._reduced(dense)

    def _fused_dense(self, heads: ttnn.Tensor, wo: ttnn.Tensor) -> ttnn.Tensor:
        """attention.py's decode output where USE_FUSED_ALL_GATHER_MATMUL holds: the heads resharded onto 8 cores
        (ATTN_ALL_GATHER_MATMUL_OUTPUT_MEMCFG), the fused all-gather + matmul with WO cut by columns on an 8x1 grid
        (ATTN_ALL_GATHER_MATMUL_PROGCFG), its product straight onto the stream: no reduce_scatter.  The rows' dates
        (2025-02 to 2025-07) ran the non-fabric ``all_gather_matmul``; written as today's ``_async`` form."""
        dim, rows = self.s.dim, TILE
        grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(self.n - 1, 0))})
        spec = ttnn.ShardSpec(grid, [rows, dim // self.n], ttnn.ShardOrientation.ROW_MAJOR)
        gathered = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)
        heads = ttnn.to_memory_config(heads, gathered)
        per_core_n = dim // self.n // TILE // 8
        program = ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
            compute_with_storage_grid_size=(8, 1), in0_block_w=dim // TILE // 8, out_subblock_h=1,
            out_subblock_w=out_subblock_w(per_core_n), per_core_M=1, per_core_N=per_core_n, fuse_batch=True,
            fused_activation=None, mcast_in0=True,
        )  # fmt: skip
        semaphores = [ttnn.create_global_semaphore(self.mesh, grid, 0) for _ in range(2)]
        _, dense = ttnn.experimental.all_gather_matmul_async(
            heads, wo, dim=3, multi_device_global_semaphore=semaphores, all_gather_core_grid_offset=(0, 4),
            num_links=1, topology=self.topology, memory_config_ag=gathered, memory_config_mm=self._residual_config(),
            program_config=program, compute_kernel_config=self.p.wo_kernel(prefill=False),
        )  # fmt: skip
        return ttnn.to_memory_config(dense, self._residual_config())

    def _decode_sdpa_program(self, grid: tuple[int, int]) -> ttnn.SDPAProgramConfig:
        """model_config's SDPA_DECODE_PROGCFG: q and k chunks of ``sdpa_decode_chunk`` positions (256 from 2025-03, 128
        on Blackhole from #21993 of 2025-05-13; 0 since #33978 of 2026-01-06, when tt-metal picks the chunk from the
        position: ``meshnn.perf.decode_ops.dynamic_chunk``)."""
        chunk = self.sdpa_decode_chunk
        return ttnn.SDPAProgramConfig(compute_with_storage_grid_size=grid, q_chunk_size=chunk, k_chunk_size=chunk)

    def _reduced(self, partial: ttnn.Tensor) -> ttnn.Tensor:
        """ccl.py's tt_all_reduce on a 1-D mesh: a reduce_scatter back onto the stream."""
        if self.n > 1:
            partial = ttnn.reduce_scatter(
                ttnn.sharded_to_interleaved(partial, ttnn.L1_MEMORY_CONFIG), dim=3, num_links=1, topology=self.topology
            )
        return ttnn.to_memory_config(partial, self._residual_config())

    def _mlp(self, x: ttnn.Tensor, w: dict) -> ttnn.Tensor:
        s = self.s
        h = self._norm(x, w["ff_norm"])
        hidden = s.hidden // self.n
        grid = find_grid(s.dim // TILE, both=hidden // TILE)
        h = ttnn.to_memory_config(h, width_sharded(TILE, s.dim, grid))
        dtype = w["w1"].dtype
        up = [
            ttnn.linear(
                h,
                w[name],
                program_config=dram_program(s.dim, hidden, grid.num_cores),
                memory_config=ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG,
                compute_kernel_config=self.p.ff1_ff3_kernel(dtype),
            )
            for name in ("w1", "w3")
        ]
        gated = ttnn.multiply(
            up[0], up[1], input_tensor_a_activations=[ttnn.UnaryOpType.SILU], dtype=self.p.gated_dtype(),
            memory_config=ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG,
        )  # fmt: skip
        grid2 = find_grid(hidden // TILE, both=s.dim // TILE)
        gated = ttnn.to_memory_config(gated, width_sharded(TILE, hidden, grid2))
        down = ttnn.linear(
            gated,
            w["w2"],
            program_config=dram_program(hidden, s.dim, grid2.num_cores),
            memory_config=ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG,
            compute_kernel_config=self.p.ff2_kernel(),
        )
        return self._reduced(down)

    def _ids(self, tokens: int) -> ttnn.Tensor:
        ids = torch.empty(1, tokens, dtype=torch.int32, device="meta")
        return self._put(ids, ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)

    def _embedded(self, tokens: int, memory_config) -> ttnn.Tensor:
        ids = self._ids(tokens)
        rows = ttnn.embedding(ids, self.embedding, layout=ttnn.TILE_LAYOUT)
        return ttnn.to_memory_config(ttnn.reshape(rows, (1, 1, tokens, rows.shape[-1])), memory_config)

    def decode(self, position: int | list[int]) -> ttnn.Tensor:
        """One decode step of every user at ``position`` (or each user at its own: a list of ``batch``
        positions): the logits, cut over the devices (the sampled tokens with ``device_sampling``)."""
        positions = [position] * self.batch if isinstance(position, int) else list(position)
        if len(positions) != self.batch:
            raise ValueError(f"{len(positions)} positions for a batch of {self.batch} users")
        x = self._embedded(TILE, self._residual_config())
        rot = self._rotation()
        for w in self.layers:
            h = ttnn.add(x, self._attention(x, w, rot, positions), memory_config=self._residual_config())
            x = ttnn.add(h, self._mlp(h, w), memory_config=self._residual_config())
        logits = self._head(self._norm(x, self.norm))
        return self._sample(logits) if self.device_sampling else logits

    def _sampler_tensors(self) -> dict[str, ttnn.Tensor]:
        """TTSampling's constant tensors (models/common/sampling/tt_sampling.py), in DRAM: the vocabulary
        indices of a device's logits, each device's index offset, and the users' k, p and temperature."""
        dram, width = ttnn.DRAM_MEMORY_CONFIG, self._vocab_share()

        def put(shape, dtype, layout=ttnn.TILE_LAYOUT) -> ttnn.Tensor:
            values = torch.empty(shape, dtype=torch.int32 if dtype in (ttnn.uint32, ttnn.int32, ttnn.uint16) else
                                 torch.bfloat16, device="meta")  # fmt: skip
            return self._put(values, dtype, layout=layout, memory_config=dram)

        users = max(TILE, self.batch)
        row = (1, 1, 1, users)
        parts = 2 if self.n == 1 else self.n  # one device: TTSampling's multi_step_reduction, two halves
        return {
            "indices": put((1, 1, users, width), ttnn.uint16),
            "offsets": put((1, 1, users, SAMPLING_TOP_K * parts), ttnn.int32),
            "k": put(row, ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT),
            "p": put(row, BF16, ttnn.ROW_MAJOR_LAYOUT),
            "temp": put(row, BF16, ttnn.ROW_MAJOR_LAYOUT),
        }

    def _vocab_share(self) -> int:
        """A device's logits as top-k reads them: the tile-padded vocabulary's share, padded to a power
        of two (model_config.py's ``pad_logits_to_power_of_2`` on a mesh of several devices, since
        tt-metal #40397 of 2026-03-24; not with ``pad_sampling_logits=False``, the code before it).  One
        device's logits are not padded: TTSampling's multi_step_reduction takes them in two halves."""
        share = math.ceil(self.s.vocab / (TILE * self.n)) * TILE
        if self.n == 1:
            return share
        return 2 ** math.ceil(math.log2(share)) if self.pad_sampling_logits else share

    def _sample(self, logits: ttnn.Tensor) -> ttnn.Tensor:
        """TTSampling.forward's top-k path as tt_transformers runs it since 2025-11 (on a mesh of more than
        one device; ``allow_force_argmax`` is off outside the Galaxy): the logits typecast to bfloat16 and
        padded to a power of two, a local top-32, its values and indices all_gathered, the indices typecast to int32
        and offset to the global vocabulary, untilized, then one token a user drawn (``ttnn.sampling``)."""
        t, dram = self.sampler, ttnn.DRAM_MEMORY_CONFIG
        x = ttnn.typecast(logits, dtype=BF16)
        if self.n == 1:
            values, indices = self._halves_topk(x)
        else:
            width = t["indices"].shape[-1]
            if x.shape[-1] < width:
                x = ttnn.pad(x, [(0, 0), (0, 0), (0, 0), (0, width - x.shape[-1])], value=-3.0e38)
            values, indices = ttnn.topk(x, k=SAMPLING_TOP_K, dim=-1, indices_tensor=t["indices"])
            gather = {"dim": 3, "num_links": 1, "topology": ttnn.Topology.Linear, "memory_config": dram}
            values, indices = ttnn.all_gather(values, **gather), ttnn.all_gather(indices, **gather)
        ids = ttnn.add(t["offsets"], ttnn.typecast(indices, dtype=ttnn.int32), dtype=ttnn.uint32, memory_config=dram)
        ids = ttnn.untilize(ids, use_multicore=True)
        return ttnn.sampling(values, ids, k=t["k"], p=t["p"], temp=t["temp"])

    def _halves_topk(self, x: ttnn.Tensor) -> tuple[ttnn.Tensor, ttnn.Tensor]:
        """TTSampling's multi_step_reduction (a 1x1 mesh): a top-k of each half of the logits (neither
        padded to a power of two), the two results concatenated."""
        half = x.shape[-1] // 2
        parts = zip(ttnn.split(x, half, dim=3), ttnn.split(self.sampler["indices"], half, dim=3), strict=True)
        pairs = [ttnn.topk(h, k=SAMPLING_TOP_K, dim=-1, indices_tensor=i) for h, i in parts]
        return tuple(ttnn.concat([pair[j] for pair in pairs], dim=3) for j in (0, 1))

    def _head(self, x: ttnn.Tensor) -> ttnn.Tensor:
        """lm_head.py: the splits' DRAM-sharded matmuls, unsharded and concatenated."""
        x = ttnn.to_memory_config(x, width_sharded(TILE, self.s.dim, self._lm_grid()))
        outs = [
            ttnn.sharded_to_interleaved(
                ttnn.linear(x, weight, program_config=program, memory_config=ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG,
                            dtype=BFP8, compute_kernel_config=HIFI2),
                ttnn.L1_MEMORY_CONFIG,
            )
            for weight, program in self.lm_head
        ]  # fmt: skip
        return ttnn.concat(outs, dim=-1, memory_config=ttnn.L1_MEMORY_CONFIG) if len(outs) > 1 else outs[0]

    # -------------------------------------------------------------------------- prefill (1-D)

    def _distributed_prefill(self) -> bool:
        """model_config.py's ``is_distributed_norm(Mode.PREFILL)`` on a 1-D mesh of several devices: above a
        hidden size of 4096 ("somewhere between 4k and 8k WH runs out of L1 if not distributed")."""
        return self.n > 1 and not self.galaxy and self.s.dim > 4096

    def _distributed_norm_weights(self, *names: str) -> dict[str, ttnn.Tensor]:
        """RMSNorm's ``weight_distributed`` for each of ``names`` (cut over the devices with the stream) where
        prefill norms are distributed."""
        if not self._distributed_prefill():
            return {}
        dims = (None, 2)
        return {
            f"{name}_distributed": self._put(
                meta(1, 1, self.s.dim // TILE, TILE), BF16, layout=ttnn.ROW_MAJOR_LAYOUT, dims=dims
            )
            for name in names
        }

    def _prefill_norm(self, x: ttnn.Tensor, w: dict, name: str) -> ttnn.Tensor:
        """distributed_norm.py in prefill on a 1-D mesh: all_gather the stream, then rms_norm; above a hidden size
        of 4096 (:meth:`_distributed_prefill`) RMSNorm's ``_distributed_rmsnorm`` on the device's share (statistics,
        their all_gather, the normalisation) and then the all_gather of its output."""
        dram = ttnn.DRAM_MEMORY_CONFIG
        gather = {"dim": 3, "num_links": 1, "topology": self.topology, "memory_config": dram}
        if self._distributed_prefill():
            stats = ttnn.rms_norm_pre_all_gather(x, compute_kernel_config=HIFI2, dtype=BF16)
            stats = ttnn.all_gather(stats, **gather)
            out = ttnn.rms_norm_post_all_gather(
                x, stats, epsilon=1e-5, weight=w[f"{name}_distributed"], compute_kernel_config=HIFI2
            )
            return ttnn.all_gather(out, **gather)
        if self.n > 1:
            x = ttnn.all_gather(x, **gather)
        return ttnn.rms_norm(x, epsilon=1e-5, weight=w[name], compute_kernel_config=HIFI2)

    def _prefill_linear(self, x: ttnn.Tensor, weight: ttnn.Tensor, fidelity, grid_k: int | None = None) -> ttnn.Tensor:
        """model_config's prefill matmul_config (PREFILL_MLP_W1_W3 / W2_PRG_CONFIG, WO_PREFILL_PROGCFG): a 2-D
        multicast program on a grid of 8 x ``c``, ``c`` the largest divisor up to 8 of ``grid_k`` / 32 (FF1 / FF3: the
        model's dim; FF2: its whole hidden dim, not the device's share; WO: the device's heads x head dim; default: the
        weight's K), ``per_core_N`` the output's tiles over the 8 DRAM-shard columns, K in blocks of the largest
        divisor up to 8 of ``grid_k / 32 / c`` tiles, output subblocks of one row and up to 4 tiles
        (common.get_out_subblock_w)."""
        m, k, n = x.shape[-2], x.shape[-1], weight.shape[-1]
        grid_tiles = (grid_k or k) // TILE
        c = largest_divisor(grid_tiles)
        per_n = math.ceil(n / (TILE * 8))
        block = largest_divisor(grid_tiles // c)
        if (k // TILE) % block:  # the weight's own K must hold whole blocks
            block = math.gcd(block, k // TILE)
        program = ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(
            compute_with_storage_grid_size=(8, c),
            in0_block_w=block,
            out_subblock_h=1,
            out_subblock_w=out_subblock_w(per_n),
            per_core_M=math.ceil(m / TILE / c),
            per_core_N=per_n,
            transpose_mcast=False,
            fused_activation=None,
        )
        return ttnn.linear(
            x, weight, program_config=program, compute_kernel_config=fidelity, memory_config=ttnn.DRAM_MEMORY_CONFIG
        )

    def _prefill_qkv(self, x: ttnn.Tensor, weight: ttnn.Tensor, fidelity) -> ttnn.Tensor:
        """model_config's XQKV_PREFILL_PROGCFG: the 8x8 grid, K one tile a block (``in0_block_w=1``: "FIXME: optimize
        this config for prefill"), one-tile subblocks, ``per_core_M`` the rows over 8, ``per_core_N`` the device's QKV
        columns over 8 (2025-03 to 2026-06 alike)."""
        m, n = x.shape[-2], weight.shape[-1]
        program = ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(
            compute_with_storage_grid_size=(8, 8),
            in0_block_w=1,
            out_subblock_h=1,
            out_subblock_w=1,
            per_core_M=max(1, math.ceil(m / TILE / 8)),
            per_core_N=math.ceil(n / TILE / 8),
            transpose_mcast=False,
            fused_activation=None,
        )
        return ttnn.linear(
            x, weight, program_config=program, compute_kernel_config=fidelity, memory_config=ttnn.DRAM_MEMORY_CONFIG
        )

    def _kv_fill(self, heads: ttnn.Tensor, tokens: int) -> ttnn.Tensor:
        """attention.py's k_fill / v_fill: height-sharded over the 8x8 grid from min_kv_prefill_shard_seqlen
        (2048 / the device's KV heads) tokens on, "to deal with update_cache memory limitation"."""
        if tokens < TILE * 8 * 8 / self.kv_heads:
            return heads
        config = ttnn.create_sharded_memory_config(
            (self.kv_heads * tokens // 64, self.s.head_dim), ttnn.CoreGrid(y=8, x=8), ttnn.ShardStrategy.HEIGHT,
            ttnn.ShardOrientation.ROW_MAJOR, use_height_and_width_as_shard_shape=True,
        )  # fmt: skip
        return ttnn.interleaved_to_sharded(heads, config)

    @staticmethod
    def _prefill_sdpa_program(tokens: int) -> ttnn.SDPAProgramConfig:
        """model_config's prefill SDPA program (SDPA_PROGCFG; get_attn_sdpa_prefill_program_config since): Q and K
        chunks of 64 rows below 2048 tokens, 256 from there, exact exponentials, on the 8x8 grid."""
        chunk = 256 if tokens >= 2048 else 64
        return ttnn.SDPAProgramConfig(
            compute_with_storage_grid_size=(8, 8), exp_approx_mode=False, q_chunk_size=chunk, k_chunk_size=chunk
        )

    def _prefill_reduced(self, partial: ttnn.Tensor) -> ttnn.Tensor:
        if self.n == 1:
            return partial
        dram = ttnn.DRAM_MEMORY_CONFIG
        return ttnn.reduce_scatter(partial, dim=3, num_links=1, topology=self.topology, memory_config=dram)

    def prefill(self, tokens: int, *, sample: bool = False) -> ttnn.Tensor:
        """One user's prompt of ``tokens`` (a multiple of 128), cached; the last token's logits (``sample``,
        with ``device_sampling``: its token drawn on the device, as the demo's prefill_sampling_params do)."""
        s = self.s
        x = self._embedded(tokens, ttnn.DRAM_MEMORY_CONFIG)
        cos, sin = (self._put(meta(1, 1, tokens, s.head_dim), BF16) for _ in range(2))
        trans = self._put(meta(1, 1, TILE, TILE), BF16)
        for w in self.layers:
            h = self._prefill_norm(x, w, "attn_norm")
            qkv = self._prefill_qkv(h, w["wqkv"], self.p.qkv_prefill or self.p.attention)
            if s.qkv_bias:  # a broadcast add of the bias row
                qkv = ttnn.add(qkv, w["bias_prefill"], memory_config=ttnn.DRAM_MEMORY_CONFIG)
            q, k, v = ttnn.experimental.nlp_create_qkv_heads(
                qkv, num_heads=self.heads, num_kv_heads=self.kv_heads, transpose_k_heads=False,
                memory_config=ttnn.DRAM_MEMORY_CONFIG,
            )  # fmt: skip
            q, k = self._qk_norm(q, k, w, decode=False)
            q = ttnn.experimental.rotary_embedding_llama(q, cos, sin, trans)
            k = ttnn.experimental.rotary_embedding_llama(k, cos, sin, trans)
            for cache, heads in ((w["k"], k), (w["v"], v)):
                ttnn.fill_cache(cache, self._kv_fill(ttnn.typecast(heads, self.p.kv_cache), tokens), 0)
            program = self._prefill_sdpa_program(tokens)
            context = ttnn.transformer.scaled_dot_product_attention(
                q, k, v, is_causal=True, program_config=program, compute_kernel_config=HIFI4
            )
            heads = ttnn.experimental.nlp_concat_heads(context, memory_config=ttnn.DRAM_MEMORY_CONFIG)
            dense = self._prefill_linear(heads, w["wo"], self.p.wo_kernel(prefill=True))
            h = ttnn.add(x, self._prefill_reduced(dense))
            normed = self._prefill_norm(h, w, "ff_norm")
            fidelity = self.p.ff1_ff3_kernel(w["w1"].dtype)
            up = [self._prefill_linear(normed, w[name], fidelity, s.dim) for name in ("w1", "w3")]
            gated = ttnn.multiply(
                up[0], up[1],
                input_tensor_a_activations=[ttnn.UnaryOpType.SILU], dtype=self.p.gated_dtype(),
            )  # fmt: skip
            down = self._prefill_linear(gated, w["w2"], self.p.ff2_kernel(), s.hidden)
            x = ttnn.add(h, self._prefill_reduced(down))
        last = ttnn.slice(x, (0, 0, tokens - TILE, 0), (1, 1, tokens, x.shape[-1]))
        logits = self._head(self._prefill_norm(last, self.final, "norm"))  # model.py: the output norm in prefill mode
        return self._sample(logits) if sample and self.device_sampling else logits

    # ------------------------------------------------------------------- decode (TG, 8x4 Galaxy)

    def _tg_norm(self, x: ttnn.Tensor, weight: ttnn.Tensor) -> ttnn.Tensor:
        """distributed_norm.py's TG decode norm (ccl.py's tt_sharded_distributed_rmsnorm): the row width-sharded
        over min(4, dim / 1024) x 8 cores, statistics per device, gathered over the columns into one core."""
        width = self.s.dim // 4  # a device's share of the row (the mesh's 4 columns)
        grid = ttnn.CoreGrid(y=min(4, width // TILE // 8), x=8)
        block = width // grid.num_cores // TILE
        sharded = ttnn.create_sharded_memory_config((1, 1, TILE, width), grid, ttnn.ShardStrategy.WIDTH)
        program = ttnn.LayerNormShardedMultiCoreProgramConfig(
            compute_with_storage_grid_size=(grid.x, grid.y), subblock_w=block, block_h=1, block_w=block, inplace=False
        )
        one_core = ttnn.create_sharded_memory_config(
            (1, 1, TILE, TILE * 4), ttnn.CoreGrid(y=1, x=1), ttnn.ShardStrategy.WIDTH
        )
        x = ttnn.to_memory_config(x, sharded)
        stats = ttnn.rms_norm_pre_all_gather(x, program_config=program)
        stats = ttnn.all_gather(
            stats, dim=3, cluster_axis=1, num_links=1, topology=ttnn.Topology.Linear, memory_config=one_core
        )
        return ttnn.rms_norm_post_all_gather(x, stats, epsilon=1e-5, weight=weight, program_config=program)

    def _tg_linear(self, x: ttnn.Tensor, weight: ttnn.Tensor, fidelity, dtype=BFP8) -> ttnn.Tensor:
        """TG's decode matmuls: interleaved DRAM weights on a CoreGrid(y=4, x=8) (no DRAM sharding)."""
        return ttnn.matmul(
            x, weight, core_grid=ttnn.CoreGrid(y=4, x=8), compute_kernel_config=fidelity, dtype=dtype,
            memory_config=ttnn.L1_MEMORY_CONFIG,
        )  # fmt: skip

    def _tg_all_reduce(self, x: ttnn.Tensor, axis: int, *, composite: bool) -> ttnn.Tensor:
        """ccl.py's tt_all_reduce on a 2-D mesh: a reduce_scatter then an all_gather (composite), else
        an all_gather along dim 0 and a fast_reduce_nc of the gathered partials."""
        if composite:
            x = ttnn.reduce_scatter(x, dim=3, cluster_axis=axis, num_links=1, topology=ttnn.Topology.Linear)
            return ttnn.all_gather(x, dim=3, cluster_axis=axis, num_links=2, topology=ttnn.Topology.Linear)
        gathered = ttnn.all_gather(x, dim=0, cluster_axis=axis, num_links=2, topology=ttnn.Topology.Linear)
        return ttnn.experimental.fast_reduce_nc(gathered, dims=[0], memory_config=ttnn.L1_MEMORY_CONFIG)

    def _tg_attention(self, x: ttnn.Tensor, w: dict, rot, position: int) -> ttnn.Tensor:
        s = self.s
        big = s.dim >= 8192
        h = self._tg_norm(x, w["attn_norm"])
        qkv = self._tg_all_reduce(self._tg_linear(h, w["wqkv"], self.p.attention, BF16), 1, composite=False)
        qkv = ttnn.matmul(self._select, qkv, dtype=BF16, memory_config=ttnn.L1_MEMORY_CONFIG)  # the group's users
        width = (self.heads + 2 * self.kv_heads) * s.head_dim
        qkv = ttnn.reshape(qkv, (1, 1, self.batch, width), (1, 1, TILE, width))
        q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(
            qkv, num_heads=self.heads, num_kv_heads=self.kv_heads, memory_config=ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG
        )
        q, k = self._qk_norm(q, k, w, decode=True)
        cos, sin, trans = rot
        q = ttnn.experimental.rotary_embedding_llama(q, cos, sin, trans, is_decode_mode=True)
        k = ttnn.experimental.rotary_embedding_llama(k, cos, sin, trans, is_decode_mode=True)
        positions = [position] * self.batch
        ttnn.experimental.paged_update_cache(w["k"], k, update_idxs=positions)
        ttnn.experimental.paged_update_cache(w["v"], v, update_idxs=positions)
        program = self._decode_sdpa_program((8, 4))
        out = ttnn.transformer.scaled_dot_product_attention_decode(
            q, w["k"], w["v"], cur_pos=positions, program_config=program, compute_kernel_config=self.p.sdpa_decode
        )
        per_user = ttnn.create_sharded_memory_config(
            (TILE, s.head_dim), user_grid(self.batch), ttnn.ShardStrategy.HEIGHT,
            use_height_and_width_as_shard_shape=True,
        )  # fmt: skip
        heads = ttnn.experimental.nlp_concat_heads_decode(ttnn.to_memory_config(out, per_user), num_heads=self.heads)
        users = ttnn.all_gather(heads, dim=2, cluster_axis=1, num_links=2, topology=ttnn.Topology.Linear)
        users = ttnn.matmul(self._users, ttnn.to_memory_config(users, ttnn.L1_MEMORY_CONFIG), dtype=BF16)
        return self._tg_all_reduce(self._tg_linear(users, w["wo"], self.p.wo_kernel(prefill=False)), 0, composite=big)

    def _tg_mlp(self, x: ttnn.Tensor, w: dict) -> ttnn.Tensor:
        big = self.s.dim >= 8192
        h = self._tg_norm(x, w["ff_norm"])
        fidelity = self.p.ff1_ff3_kernel(w["w1"].dtype)
        up = [self._tg_linear(h, w[name], fidelity) for name in ("w1", "w3")]
        if big:  # mlp.py: reduce_scatter each over the columns, then all_gather the product
            up = [ttnn.reduce_scatter(u, dim=3, cluster_axis=1, num_links=1, topology=ttnn.Topology.Linear) for u in up]
        else:
            up = [self._tg_all_reduce(u, 1, composite=False) for u in up]
        gated = ttnn.multiply(up[0], up[1], input_tensor_a_activations=[ttnn.UnaryOpType.SILU], dtype=BFP8)
        if big:
            gated = ttnn.all_gather(gated, dim=3, cluster_axis=1, num_links=2, topology=ttnn.Topology.Linear)
        return self._tg_all_reduce(self._tg_linear(gated, w["w2"], self.p.ff2_kernel()), 0, composite=big)

    def tg_decode(self, position: int) -> ttnn.Tensor:
        """One decode step on the Galaxy (tt_transformers' TG path)."""
        self._select = self._put(meta(1, 1, TILE, TILE), BF16, memory_config=ttnn.L1_MEMORY_CONFIG)
        rows = self.batch * self.cols  # the gathered users (tt_transformers: 4 groups of 32 padded rows)
        self._users = self._put(meta(1, 1, TILE, rows), BF16, memory_config=ttnn.L1_MEMORY_CONFIG)
        x = self._embedded(TILE, ttnn.L1_MEMORY_CONFIG)
        rot = self._rotation()
        for w in self.layers:
            h = ttnn.add(x, self._tg_attention(x, w, rot, position), memory_config=ttnn.L1_MEMORY_CONFIG)
            x = ttnn.add(h, self._tg_mlp(h, w), memory_config=ttnn.L1_MEMORY_CONFIG)
        h = self._tg_norm(x, self.norm)
        outs = [self._tg_linear(h, weight, HIFI2) for weight, _ in self.lm_head]
        logits = ttnn.concat(outs, dim=-1) if len(outs) > 1 else outs[0]
        return self._tg_all_reduce(logits, 1, composite=True)
