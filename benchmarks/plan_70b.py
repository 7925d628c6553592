"""Plan Llama-3.1-70B on an 8x4 Galaxy (prefill 128, one decode step), and a 405B that must not fit.

The model is Llama-3.1-70B-shaped (80 layers, hidden 8192, 64 heads of 128, 8 KV heads, MLP 28672,
vocab 128256; attention weights bfloat8_b, MLP weights bfloat4_b, norms and embedding bfloat16,
the LM head bfloat8_b), written with meshnn's own ops (``import meshnn as ttnn``), its weights torch
"meta" tensors: nothing of its 49 GB exists on the host.  It runs on a PLANNING mesh
(``open_mesh_device(..., execute=False)``): every op is validated and allocates its outputs at
their real lock-step addresses, nothing is computed.

Its layout on the 8x4 mesh (rows r, columns c): the residual stream ``[1, 1, s, 8192]`` is cut over
the columns (2048 each) and the same on every row.  Attention: mesh row r owns KV head r and its 8
query heads; the fused QKV weight (``[8192, 10240]``, row r's 1280 columns) is the same on a row's
4 devices, the output projection is cut 8 ways on its input (the heads) and 4 ways on its output
(the stream), its partial sums all_reduced over the rows.  The MLP's gate and up projections are cut
32 ways on their output, the down projection 32 ways on its input; its partial sums are
all_reduced over the rows and reduce_scattered over the columns back onto the stream.  Each
decoder layer gathers the stream over the columns for its RMSNorms.  KV caches for 32 users of 256
positions are allocated before the run.  Prefill: one user, 128 tokens, causal SDPA.  Decode: 32
users, one token each at position 128; SDPA of each user's query over its cache (meshnn has no
``update_cache``: the step reads the caches as they are, whose memory is already counted).  The
vocabulary is padded to 129024 (126 tiles per device).

The 405B (126 layers, hidden 16384, 128 heads, 8 KV heads, MLP 53248, all weights bfloat16, about
810 GB, 25 GB per device against a Wormhole's 12 GiB) must fail with an out-of-memory error that
names the op, the devices and the sizes.

Figures: the planning wall time and the process's peak resident memory, each beside the issue's
limit (30 s, 2 GB) and the run's own reference (the resident memory before planning; the device
memory the plan stands for).  The predicted device time comes from the performance model's capture
(``ttnn.begin_perf_capture``) when this build has it.  Prints a table, then one JSON line.
"""

from __future__ import annotations

import json
import math
import resource
import sys
import time
from dataclasses import dataclass

import torch

import meshnn as ttnn

LIMIT_SECONDS = 30.0
LIMIT_RSS_BYTES = 2 * 10**9


@dataclass(frozen=True)
class Config:
    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    mlp: int
    vocab: int
    attention_dtype: ttnn.DataType
    mlp_dtype: ttnn.DataType
    head_dim: int = 128
    users: int = 32
    cache: int = 256

    @property
    def padded_vocab(self) -> int:
        return 1024 * math.ceil(self.vocab / 1024)


LLAMA_70B = Config("Llama-3.1-70B", 80, 8192, 64, 8, 28672, 128256, ttnn.bfloat8_b, ttnn.bfloat4_b)
LLAMA_405B = Config("Llama-3.1-405B (bfloat16)", 126, 16384, 128, 8, 53248, 128256, ttnn.bfloat16, ttnn.bfloat16)

TILE, BF16 = ttnn.TILE_LAYOUT, ttnn.bfloat16


def meta(*shape: int) -> torch.Tensor:
    return torch.empty(shape, device="meta", dtype=torch.bfloat16)


class Model:
    """The weights on the mesh (meta tensors, so nothing on the host) and the forward passes."""

    def __init__(self, config: Config, mesh: ttnn.MeshDevice, loaded: list[int] | None = None) -> None:
        """``loaded[0]``: the number of layers whose weights are on the mesh, kept up to date."""
        self.c, self.mesh = config, mesh
        rows = mesh.shape[0]
        c = config
        loaded = [0] if loaded is None else loaded
        group = (c.heads // c.kv_heads + 2) * c.head_dim  # one KV head's q, k and v columns
        put = self.put
        self.embedding = put(meta(c.vocab, c.hidden), (None, 1), BF16, ttnn.ROW_MAJOR_LAYOUT)
        self.layers = []
        for _ in range(c.layers):
            self.layers.append(
                {
                    "attn_norm": put(meta(1, c.hidden), (None, None), BF16),
                    "wqkv": put(meta(c.hidden, group * rows), (1, None), c.attention_dtype),
                    "wo": put(meta(c.heads * c.head_dim, c.hidden), (0, 1), c.attention_dtype),
                    "mlp_norm": put(meta(1, c.hidden), (None, None), BF16),
                    "w1": put(meta(c.hidden, c.mlp), "all 1", c.mlp_dtype),
                    "w3": put(meta(c.hidden, c.mlp), "all 1", c.mlp_dtype),
                    "w2": put(meta(c.mlp, c.hidden), "all 0", c.mlp_dtype),
                    "k_cache": put(meta(c.users, 1, c.cache, c.head_dim), (None, None), BF16),
                    "v_cache": put(meta(c.users, 1, c.cache, c.head_dim), (None, None), BF16),
                }
            )
            loaded[0] += 1
        self.norm = put(meta(1, c.hidden), (None, None), BF16)
        self.lm_head = put(meta(c.hidden, c.padded_vocab), "all 1", c.attention_dtype)
        self.cos = put(meta(1, 1, c.cache, c.head_dim), (None, None), BF16)
        self.sin = put(meta(1, 1, c.cache, c.head_dim), (None, None), BF16)

    def put(self, values: torch.Tensor, dims, dtype: ttnn.DataType, layout=TILE) -> ttnn.Tensor:
        if isinstance(dims, str):  # "all d": cut dim d over every device of the mesh
            mapper = ttnn.ShardTensorToMesh(self.mesh, dim=int(dims.split()[1]))
        else:
            mapper = ttnn.ShardTensor2dMesh(self.mesh, mesh_shape=tuple(self.mesh.shape), dims=dims)
        return ttnn.from_torch(values, dtype=dtype, layout=layout, device=self.mesh, mesh_mapper=mapper)

    def gathered_norm(self, x: ttnn.Tensor, weight: ttnn.Tensor, memory_config) -> ttnn.Tensor:
        full = ttnn.all_gather(x, dim=3, cluster_axis=1, memory_config=memory_config)
        normed = ttnn.rms_norm(full, epsilon=1e-5, weight=weight, memory_config=memory_config)
        ttnn.deallocate(full)
        return normed

    def attention(self, x: ttnn.Tensor, w: dict, decode: bool, memory_config) -> ttnn.Tensor:
        c, s = self.c, x.shape[2]
        normed = self.gathered_norm(x, w["attn_norm"], memory_config)
        qkv = ttnn.linear(normed, w["wqkv"], memory_config=memory_config)
        ttnn.deallocate(normed)
        per_row = c.heads // c.kv_heads
        q, k, v = ttnn.experimental.nlp_create_qkv_heads(
            qkv, num_heads=per_row, num_kv_heads=1, transpose_k_heads=False, memory_config=ttnn.DRAM_MEMORY_CONFIG
        )
        ttnn.deallocate(qkv)
        if decode:  # one token per user at position 128: every row takes the caches' row 128
            flat = ttnn.reshape(q, (1, 1, per_row * s, c.head_dim))
            q = ttnn.reshape(ttnn.experimental.rotary_embedding(flat, self.cos, self.sin, 128), (1, per_row, s, 128))
            k = ttnn.experimental.rotary_embedding(k, self.cos, self.sin, 128)
            by_user = ttnn.permute(q, (2, 1, 0, 3))  # [users, heads, 1, d]: each user's query over its cache
            context = ttnn.transformer.scaled_dot_product_attention(
                by_user, w["k_cache"], w["v_cache"], is_causal=False
            )
            context = ttnn.permute(context, (2, 1, 0, 3))
        else:
            q = ttnn.experimental.rotary_embedding(q, self.cos, self.sin)
            k = ttnn.experimental.rotary_embedding(k, self.cos, self.sin)
            context = ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal=True)
        heads = ttnn.experimental.nlp_concat_heads(context, memory_config=memory_config)
        partial = ttnn.linear(heads, w["wo"], memory_config=memory_config)
        return ttnn.all_reduce(partial, cluster_axis=0, memory_config=memory_config)

    def mlp(self, x: ttnn.Tensor, w: dict, memory_config) -> ttnn.Tensor:
        normed = self.gathered_norm(x, w["mlp_norm"], memory_config)
        gate = ttnn.linear(normed, w["w1"], memory_config=memory_config)
        up = ttnn.linear(normed, w["w3"], memory_config=memory_config)
        ttnn.deallocate(normed)
        gated = ttnn.multiply(gate, up, input_tensor_a_activations=[ttnn.UnaryOpType.SILU], memory_config=memory_config)
        ttnn.deallocate(gate)
        ttnn.deallocate(up)
        partial = ttnn.linear(gated, w["w2"], memory_config=memory_config)
        ttnn.deallocate(gated)
        summed = ttnn.all_reduce(partial, cluster_axis=0, memory_config=memory_config)
        ttnn.deallocate(partial)
        return ttnn.reduce_scatter(summed, dim=3, cluster_axis=1, memory_config=memory_config)

    def forward(self, tokens: int, *, decode: bool) -> ttnn.Tensor:
        memory_config = ttnn.L1_MEMORY_CONFIG if decode else ttnn.DRAM_MEMORY_CONFIG
        ids = ttnn.from_torch(
            torch.empty(1, tokens, dtype=torch.int32, device="meta"), dtype=ttnn.uint32, device=self.mesh,
            mesh_mapper=ttnn.ReplicateTensorToMesh(self.mesh),
        )  # fmt: skip
        rows = ttnn.embedding(ids, self.embedding)
        x = ttnn.reshape(ttnn.to_layout(rows, TILE, memory_config=memory_config), (1, 1, tokens, rows.shape[-1]))
        for w in self.layers:
            attended = self.attention(x, w, decode, memory_config)
            h = ttnn.add(x, attended, memory_config=memory_config)
            ttnn.deallocate(attended)
            ttnn.deallocate(x)
            out = self.mlp(h, w, memory_config)
            x = ttnn.add(h, out, memory_config=memory_config)
            ttnn.deallocate(h)
            ttnn.deallocate(out)
        normed = self.gathered_norm(x, self.norm, memory_config)
        return ttnn.linear(normed, self.lm_head, memory_config=memory_config)


def rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def phase(model: Model, *, decode: bool) -> tuple[float, object]:
    """One forward pass; its wall seconds and its performance capture (None without one)."""
    begin = getattr(ttnn, "begin_perf_capture", None)
    capture = begin() if begin is not None else None
    start = time.perf_counter()
    try:
        model.forward(32 if decode else 128, decode=decode)
    finally:
        if capture is not None:
            ttnn.end_perf_capture()
    return time.perf_counter() - start, capture


def predicted_ms(capture: object) -> tuple[float, float] | None:
    """The capture's predicted device time as recorded (eager) and with every op traced, ms."""
    if capture is None:
        return None
    traced = max(r.total_ns() for r in capture.retimed(traced=True))  # type: ignore[attr-defined]
    return capture.total_ns() / 1e6, traced / 1e6  # type: ignore[attr-defined]


def plan_70b() -> dict:
    rss_before = rss_bytes()
    start = time.perf_counter()
    with ttnn.MemoryTimeline() as timeline:
        mesh = ttnn.open_mesh_device(ttnn.MeshShape(8, 4), system="galaxy", execute=False)
        model = Model(LLAMA_70B, mesh)
        load = time.perf_counter() - start
        prefill_s, prefill = phase(model, decode=False)
        decode_s, decode = phase(model, decode=True)
        planned = timeline.of(mesh)
        mesh.close()
    wall = time.perf_counter() - start
    ops = sum(1 for s in planned.steps if s.op_id is not None)
    return {
        "timeline": planned,
        "wall_s": wall,
        "load_s": load,
        "prefill_s": prefill_s,
        "decode_s": decode_s,
        "ops": ops,
        "rss_before": rss_before,
        "rss_peak": rss_bytes(),
        "prefill_ms": predicted_ms(prefill),
        "decode_ms": predicted_ms(decode),
        "summary": timeline.summary(),
    }


def plan_405b() -> tuple[str | None, int, float]:
    """The 405B's out-of-memory error (None if it fit), the layers loaded before it, the seconds."""
    start, loaded = time.perf_counter(), [0]
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(8, 4), system="galaxy", execute=False)
    try:
        Model(LLAMA_405B, mesh, loaded)
        return None, loaded[0], time.perf_counter() - start
    except ttnn.OutOfMemoryError as error:
        return str(error), loaded[0], time.perf_counter() - start
    finally:
        mesh.close()


def gib(size: float) -> str:
    return f"{size / 2**30:,.2f} GiB"


def main(argv: list[str]) -> None:
    """``--plot FILE.png``: also draw the 70B's memory timeline."""
    result = plan_70b()
    planned = result.pop("timeline")
    if "--plot" in argv:
        print(f"wrote {ttnn.MemoryTimeline().plot(argv[argv.index('--plot') + 1], planned)}")
    dram, l1 = planned.peak("DRAM"), planned.peak("L1")
    print(f"{LLAMA_70B.name} on an 8x4 Galaxy, planned (prefill 128, one decode step of 32 users)")
    print(result.pop("summary"))
    print()
    rows = [
        ("plan wall time (load + prefill + decode)", f"{result['wall_s']:.2f} s", f"limit {LIMIT_SECONDS:.0f} s"),
        ("  weights loaded (meta tensors)", f"{result['load_s']:.2f} s", ""),
        ("  prefill 128 / decode 1", f"{result['prefill_s']:.2f} s / {result['decode_s']:.2f} s", ""),
        ("ops planned", f"{result['ops']}", ""),
        ("peak resident memory", gib(result["rss_peak"]), f"limit {LIMIT_RSS_BYTES / 1e9:.0f} GB"),
        ("  resident before planning (imports)", gib(result["rss_before"]), "same run"),
        ("device memory planned, all 32 devices", gib(32 * dram.per_device), "never on the host"),
        ("DRAM peak per device", f"{gib(dram.per_device)} at step {dram.step} (ttnn.{dram.op})", ""),
        ("L1 peak per device", f"{l1.per_device / 2**20:,.2f} MiB at step {l1.step} (ttnn.{l1.op})", ""),
    ]
    for label, key in (("predicted prefill time", "prefill_ms"), ("predicted decode time", "decode_ms")):
        value = result[key]
        shown = (
            "n/a (no perf capture in this build)" if value is None else f"{value[0]:,.2f} ms ({value[1]:,.2f} traced)"
        )
        rows.append((label, shown, "performance model, slowest device"))
    error, layers, seconds = plan_405b()
    verdict = f"OUT OF MEMORY in layer {layers + 1} of {LLAMA_405B.layers}" if error else "FITS (wrong)"
    rows.append((f"{LLAMA_405B.name}", verdict, f"{seconds:.2f} s"))
    width = max(len(r[0]) for r in rows)
    for label, value, limit in rows:
        print(f"{label:{width}}  {value:40}  {limit}")
    print(f"\n405B: {error}\n")
    figures = {
        "benchmark": "plan_70b",
        "wall_s": round(result["wall_s"], 3),
        "limit_s": LIMIT_SECONDS,
        "rss_peak_bytes": result["rss_peak"],
        "rss_before_bytes": result["rss_before"],
        "limit_rss_bytes": LIMIT_RSS_BYTES,
        "ops": result["ops"],
        "dram_peak_per_device": dram.per_device,
        "dram_peak_op": dram.op,
        "l1_peak_per_device": l1.per_device,
        "l1_peak_op": l1.op,
        "predicted_prefill_ms": result["prefill_ms"],  # [eager, traced], or null without a perf capture
        "predicted_decode_ms": result["decode_ms"],
        "oom_405b": error is not None,
        "oom_405b_layer": layers,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main(sys.argv[1:])
