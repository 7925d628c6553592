"""Speed at model scale: a Llama-3.2-1B-shaped model (16 layers, dim 2048, 32 / 8 heads, hidden
8192, vocab 128256) built from meshnn's ops the way tt_transformers builds it (bfloat8_b weights,
bfloat16 activations, paged bfloat8_b KV caches, a bfloat8_b LM head output), on a simulated N150
(1x1) and T3000 (1x8, tensor parallel: fused QKV / w1 / w3 / LM head sharded by columns, wo / w2
by rows, an all_reduce after each), timed beside torch running the same model (bfloat16 and
float32) in the same process; and a Llama-3.1-8B-shaped model (32 layers, dim 4096, head 128,
hidden 14336) on a T3000: decode step time and peak host memory, beside torch bfloat16 (run in a
process of its own, so that the two models' memory does not add up, and with 4 distinct layers
run in turn, 32 layer steps a token: a bfloat16 8B is 16 GB by itself).

Per case: prefill of 128 tokens of one user (its pages filled, logits of the last token; the first
prefill, which decodes every weight into its memo, is timed apart from the next ones), then
decode steps of 32 users (each a new token at its position, the paged caches updated in place),
eager and traced (a trace captured once, replayed after each step's inputs are written), each
timed as the best of ``ROUNDS`` rounds of ``STEPS`` steps, the variants interleaved.  The weights
are small integers times a power of two, so bfloat8_b holds them exactly and both sides multiply
the same values; logits are compared (PCC against torch float32) and a replay is checked to equal
the eager step bit for bit.  Peak host memory is the process's peak resident set.

Aims (issue 34): 1B decode traced <= 2x torch bfloat16 on N150, <= 3x on T3000, prefill <= 3x;
traced at least 30% faster than eager; 8B on T3000 within 20 GB, decode <= 4x torch bfloat16.

Usage: ``python benchmarks/model_scale.py [--quick] [--single-thread] [--cases 1b-n150,1b-t3k,8b-t3k]
[--layers N]`` (``--layers``: every case with N layers, to see how memory grows with them);
each case runs in a subprocess of its own (``--case NAME`` runs one and prints its JSON).  Every
figure is also taken in CPU seconds of the process (``..._cpu``), and the ratios printed of them
too: on a host shared with other work, threads that wait for each other stretch wall time far
more than CPU time.  ``--single-thread`` runs meshnn and torch on one thread each (torch's pool,
OpenBLAS, meshnn's host threads), where CPU time is the work done.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass, replace

import torch

USERS = 32
BLOCK = 32
PREFILL = 128


@dataclass(frozen=True)
class Config:
    dim: int = 2048
    heads: int = 32
    kv_heads: int = 8
    head_dim: int = 64
    hidden: int = 8192
    vocab: int = 128256
    layers: int = 16
    max_seq: int = 256  # per user (pages of BLOCK rows)
    devices: int = 1


CASES = {
    "1b-n150": Config(),
    "1b-t3k": Config(devices=8),
    "8b-t3k": Config(dim=4096, head_dim=128, hidden=14336, layers=32, devices=8),
}


class Weights:
    """Random weights made on demand, the same each time: int8 codes times a power of two per
    matrix (exact in bfloat8_b: every block of 16 shares the power), norms bfloat16 values."""

    def __init__(self, cfg: Config, seed: int = 0) -> None:
        self.cfg, self.seed = cfg, seed
        q, kv = cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim
        per_layer = {"wq": (cfg.dim, q), "wk": (cfg.dim, kv), "wv": (cfg.dim, kv), "wo": (q, cfg.dim)}
        per_layer |= {"w1": (cfg.dim, cfg.hidden), "w3": (cfg.dim, cfg.hidden), "w2": (cfg.hidden, cfg.dim)}
        self.shapes = {f"{i}.{n}": shape for i in range(cfg.layers) for n, shape in per_layer.items()}
        self.shapes["output"] = (cfg.dim, cfg.vocab)
        names = [f"{i}.{n}" for i in range(cfg.layers) for n in ("attn_norm", "ffn_norm")] + ["norm"]
        self.norm_names = names

    def value(self, name: str, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        shape = self.shapes[name]
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + zlib.crc32(name.encode()))
        codes = torch.randint(-127, 128, shape, generator=gen, dtype=torch.int8)
        scale = 2.0 ** -(7 + math.ceil(math.log2(math.sqrt(shape[0]))))  # std ~ 1 / sqrt(rows) / 2
        return codes.to(dtype).mul_(scale)

    def norm(self, name: str) -> torch.Tensor:
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + zlib.crc32(name.encode()))
        return (1 + 0.1 * torch.randn(self.cfg.dim, generator=gen)).bfloat16().float()


def rotary(cfg: Config, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos / sin ``[len(positions), head_dim]`` of interleaved-pair rotary embeddings."""
    freqs = 1.0 / (500000.0 ** (torch.arange(0, cfg.head_dim, 2).float() / cfg.head_dim))
    angles = positions.float()[:, None] * freqs[None]
    return angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)


def trans_mat() -> torch.Tensor:
    mat = torch.zeros(1, 1, 32, 32)
    mat[..., torch.arange(0, 32, 2), torch.arange(1, 32, 2)] = 1
    mat[..., torch.arange(1, 32, 2), torch.arange(0, 32, 2)] = -1
    return mat


class TorchModel:
    """The same model in plain torch (``dtype`` weights and activations, a KV cache per layer).
    With ``distinct`` (fewer than ``cfg.layers``), only that many layers are made, and a step runs
    them in turn over and over, ``cfg.layers`` layers in all: the same work and the same memory
    traffic as the whole model (every layer's weights far larger than the caches), in a fraction
    of its memory (a bfloat16 8B is 16 GB).  Its logits are then not the mesh model's."""

    def __init__(self, cfg: Config, weights: Weights, dtype: torch.dtype, distinct: int | None = None) -> None:
        self.cfg, self.dtype = cfg, dtype
        self.distinct = distinct = min(distinct or cfg.layers, cfg.layers)
        made = [name for name in weights.shapes if name == "output" or int(name.split(".")[0]) < distinct]
        self.w = {name: weights.value(name, dtype) for name in made}
        self.n = {name: weights.norm(name).to(dtype) for name in weights.norm_names}
        shape = (distinct, USERS, cfg.kv_heads, cfg.max_seq, cfg.head_dim)
        self.k, self.v = torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)

    def norm(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-5)).to(self.dtype) * w

    @staticmethod
    def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        pairs = x.reshape(*x.shape[:-1], -1, 2)
        rotated = torch.stack((-pairs[..., 1], pairs[..., 0]), -1).reshape(x.shape)
        return x * cos + rotated * sin

    def _mlp(self, i: int, x: torch.Tensor) -> torch.Tensor:
        w = self.w
        h = self.norm(x, self.n[f"{i}.ffn_norm"])
        return x + (torch.nn.functional.silu(h @ w[f"{i}.w1"]) * (h @ w[f"{i}.w3"])) @ w[f"{i}.w2"]

    @torch.no_grad()
    def decode(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        cfg, w = self.cfg, self.w
        cos, sin = (t.to(self.dtype)[:, None] for t in rotary(cfg, pos))
        users = torch.arange(USERS)
        x = x.to(self.dtype)
        for i in (j % self.distinct for j in range(cfg.layers)):
            h = self.norm(x, self.n[f"{i}.attn_norm"])
            q = self.rotate((h @ w[f"{i}.wq"]).view(USERS, cfg.heads, cfg.head_dim), cos, sin)
            k = self.rotate((h @ w[f"{i}.wk"]).view(USERS, cfg.kv_heads, cfg.head_dim), cos, sin)
            self.k[i, users, :, pos] = k
            self.v[i, users, :, pos] = (h @ w[f"{i}.wv"]).view(USERS, cfg.kv_heads, cfg.head_dim)
            grouped = q.view(USERS, cfg.kv_heads, -1, cfg.head_dim)
            scores = torch.einsum("ukgd,uksd->ukgs", grouped, self.k[i]) / math.sqrt(cfg.head_dim)
            masked = torch.arange(cfg.max_seq)[None, None, None] > pos[:, None, None, None]
            probs = scores.float().masked_fill(masked, float("-inf")).softmax(-1).to(self.dtype)
            attn = torch.einsum("ukgs,uksd->ukgd", probs, self.v[i])
            x = x + attn.reshape(USERS, -1) @ w[f"{i}.wo"]
            x = self._mlp(i, x)
        return self.norm(x, self.n["norm"]) @ w["output"]

    @torch.no_grad()
    def prefill(self, x: torch.Tensor, user: int = 0) -> torch.Tensor:
        cfg, w = self.cfg, self.w
        s = x.shape[0]
        cos, sin = (t.to(self.dtype)[:, None] for t in rotary(cfg, torch.arange(s)))
        x = x.to(self.dtype)
        for i in (j % self.distinct for j in range(cfg.layers)):
            h = self.norm(x, self.n[f"{i}.attn_norm"])
            q = self.rotate((h @ w[f"{i}.wq"]).view(s, cfg.heads, cfg.head_dim), cos, sin).transpose(0, 1)
            k = self.rotate((h @ w[f"{i}.wk"]).view(s, cfg.kv_heads, cfg.head_dim), cos, sin).transpose(0, 1)
            v = (h @ w[f"{i}.wv"]).view(s, cfg.kv_heads, cfg.head_dim).transpose(0, 1)
            self.k[i, user, :, :s], self.v[i, user, :, :s] = k, v
            group = cfg.heads // cfg.kv_heads
            attn = torch.nn.functional.scaled_dot_product_attention(
                q, k.repeat_interleave(group, 0), v.repeat_interleave(group, 0), is_causal=True
            )
            x = x + attn.transpose(0, 1).reshape(s, -1) @ w[f"{i}.wo"]
            x = self._mlp(i, x)
        return self.norm(x[-1:], self.n["norm"]) @ w["output"]


class MeshModel:
    """The model from meshnn's ops, tensor parallel over a 1 x ``cfg.devices`` mesh."""

    def __init__(self, mesh, cfg: Config, weights: Weights) -> None:
        import meshnn as ttnn

        self.ttnn, self.mesh, self.cfg = ttnn, mesh, cfg
        d = cfg.devices
        self.hq, self.hk = cfg.heads // d, cfg.kv_heads // d
        cols, rows = ttnn.ShardTensorToMesh(mesh, dim=-1), ttnn.ShardTensorToMesh(mesh, dim=-2)
        self.rep = rep = ttnn.ReplicateTensorToMesh(mesh)
        self.layers = []
        blocks = USERS * cfg.max_seq // BLOCK
        for i in range(cfg.layers):
            layer = {"wqkv": self._put(self._fused_qkv(weights, i), cols)}
            for name, mapper in (("wo", rows), ("w1", cols), ("w3", cols), ("w2", rows)):
                layer[name] = self._put(weights.value(f"{i}.{name}", torch.bfloat16), mapper)
            for name in ("attn_norm", "ffn_norm"):
                layer[name] = self._put(weights.norm(f"{i}.{name}")[None], rep, ttnn.bfloat16)
            for name in ("k", "v"):
                layer[name] = self._put(torch.zeros(blocks, self.hk, BLOCK, cfg.head_dim), rep)
            self.layers.append(layer)
        self.norm = self._put(weights.norm("norm")[None], rep, ttnn.bfloat16)
        self.output = self._put(weights.value("output", torch.bfloat16), cols)
        self.trans = self._put(trans_mat().repeat(1, 1, 2 * USERS, 1), rep, ttnn.bfloat16, self._rot_config(32))
        self.trans_prefill = self._put(trans_mat(), rep, ttnn.bfloat16)
        perm = torch.randperm(blocks, generator=torch.Generator().manual_seed(2))
        self.table_host = perm.reshape(USERS, cfg.max_seq // BLOCK).int()
        self.table = ttnn.from_torch(self.table_host, dtype=ttnn.int32, device=mesh, mesh_mapper=rep)
        self.inputs = self._device_inputs(torch.zeros(USERS, cfg.dim), torch.zeros(USERS, dtype=torch.int32))

    def _put(self, t, mapper, dtype=None, mc=None):
        ttnn = self.ttnn
        dtype = dtype or ttnn.bfloat8_b
        return ttnn.from_torch(
            t, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=self.mesh, mesh_mapper=mapper, memory_config=mc
        )

    def _fused_qkv(self, weights: Weights, i: int) -> torch.Tensor:
        """wq | wk | wv, each device's heads side by side (tt_transformers' fused QKV)."""
        hd, parts = self.cfg.head_dim, []
        q, k, v = (weights.value(f"{i}.{n}", torch.bfloat16) for n in ("wq", "wk", "wv"))
        for dev in range(self.cfg.devices):
            parts += [q[:, dev * self.hq * hd : (dev + 1) * self.hq * hd]]
            parts += [t[:, dev * self.hk * hd : (dev + 1) * self.hk * hd] for t in (k, v)]
        return torch.cat(parts, -1)

    def _rot_config(self, width: int):
        ttnn = self.ttnn
        cores = ttnn.CoreRangeSet(_first_ranges(ttnn, 2 * USERS))
        return ttnn.create_sharded_memory_config(
            (32, width), cores, ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
        )

    def _head_config(self):
        ttnn = self.ttnn
        grid = ttnn.CoreRangeSet(_first_ranges(ttnn, USERS))
        return ttnn.create_sharded_memory_config(
            (32, self.cfg.head_dim), grid, ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
        )

    def host_inputs(self, x: torch.Tensor, pos: torch.Tensor):
        """A decode step's inputs on the host: embeddings, positions, rotary rows (q's users, k's)."""
        ttnn = self.ttnn
        cos, sin = rotary(self.cfg, pos.long())
        rows = [c.repeat(2, 1)[None, :, None] for c in (cos, sin)]
        return [
            ttnn.from_torch(x[None, None], dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT),
            ttnn.from_torch(pos.int(), dtype=ttnn.int32),
            *(ttnn.from_torch(r, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for r in rows),
        ]

    def _device_inputs(self, x, pos):
        configs = [None, None, self._rot_config(self.cfg.head_dim), self._rot_config(self.cfg.head_dim)]
        hosts = self.host_inputs(x, pos)
        return [self.ttnn.to_device(t, self.mesh, memory_config=c) for t, c in zip(hosts, configs, strict=True)]

    def write_inputs(self, x: torch.Tensor, pos: torch.Tensor) -> None:
        for host, device in zip(self.host_inputs(x, pos), self.inputs, strict=True):
            self.ttnn.copy_host_to_device_tensor(host, device)

    def _reduced(self, t):
        return self.ttnn.all_reduce(t) if self.cfg.devices > 1 else t

    def _mlp(self, layer, x):
        ttnn = self.ttnn
        h = ttnn.rms_norm(x, epsilon=1e-5, weight=layer["ffn_norm"])
        gate = ttnn.linear(h, layer["w1"], dtype=ttnn.bfloat16)
        up = ttnn.linear(h, layer["w3"], dtype=ttnn.bfloat16)
        silu = [ttnn.UnaryWithParam(ttnn.UnaryOpType.SILU)]
        mlp = ttnn.mul(gate, up, input_tensor_a_activations=silu, dtype=ttnn.bfloat8_b)
        ttnn.deallocate(gate)
        ttnn.deallocate(up)
        return ttnn.add(x, self._reduced(ttnn.linear(mlp, layer["w2"], dtype=ttnn.bfloat16)))

    def decode(self):
        """One decode step over the current inputs; the logits (all gathered on a T3000)."""
        ttnn = self.ttnn
        x, pos, cos, sin = self.inputs
        for layer in self.layers:
            h = ttnn.rms_norm(x, epsilon=1e-5, weight=layer["attn_norm"])
            qkv = ttnn.linear(h, layer["wqkv"], dtype=ttnn.bfloat16)
            q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(
                qkv, num_heads=self.hq, num_kv_heads=self.hk, overlap_qk_coregrid=False
            )
            ttnn.deallocate(qkv)
            q, k = ttnn.experimental.rotary_embedding_llama_fused_qk(q, k, cos, sin, self.trans)
            ttnn.experimental.paged_fused_update_cache(
                layer["k"], k, layer["v"], v, update_idxs_tensor=pos, page_table=self.table
            )
            attn = ttnn.transformer.paged_scaled_dot_product_attention_decode(
                q, layer["k"], layer["v"], self.table, cur_pos_tensor=pos
            )
            cat = ttnn.experimental.nlp_concat_heads_decode(
                ttnn.to_memory_config(attn, self._head_config()), num_heads=self.hq
            )
            x = ttnn.add(x, self._reduced(ttnn.linear(cat, layer["wo"], dtype=ttnn.bfloat16)))
            x = self._mlp(layer, x)
        logits = ttnn.linear(ttnn.rms_norm(x, epsilon=1e-5, weight=self.norm), self.output, dtype=ttnn.bfloat8_b)
        return ttnn.all_gather(logits, 3) if self.cfg.devices > 1 else logits

    def prefill(self, x: torch.Tensor, user: int = 0):
        """Prefill of one user's ``x`` ``[s, dim]`` (its pages filled); the last token's logits."""
        ttnn, cfg = self.ttnn, self.cfg
        s = x.shape[0]
        cos, sin = (self._put(t[None, None], self.rep, ttnn.bfloat16) for t in rotary(cfg, torch.arange(s)))
        h_in = self._put(x[None, None], self.rep, ttnn.bfloat16)
        for layer in self.layers:
            h = ttnn.rms_norm(h_in, epsilon=1e-5, weight=layer["attn_norm"])
            qkv = ttnn.linear(h, layer["wqkv"], dtype=ttnn.bfloat16)
            q, k, v = ttnn.experimental.nlp_create_qkv_heads(
                qkv, num_heads=self.hq, num_kv_heads=self.hk, transpose_k_heads=False
            )
            q = ttnn.experimental.rotary_embedding_llama(q, cos, sin, self.trans_prefill, is_decode_mode=False)
            k = ttnn.experimental.rotary_embedding_llama(k, cos, sin, self.trans_prefill, is_decode_mode=False)
            k8, v8 = ttnn.typecast(k, dtype=ttnn.bfloat8_b), ttnn.typecast(v, dtype=ttnn.bfloat8_b)
            ttnn.experimental.paged_fill_cache(layer["k"], k8, self.table, batch_idx=user)
            ttnn.experimental.paged_fill_cache(layer["v"], v8, self.table, batch_idx=user)
            q8 = ttnn.typecast(q, dtype=ttnn.bfloat8_b)
            attn = ttnn.transformer.scaled_dot_product_attention(q8, k8, v8, is_causal=True)
            out = ttnn.linear(ttnn.experimental.nlp_concat_heads(attn), layer["wo"], dtype=ttnn.bfloat8_b)
            h_in = ttnn.add(h_in, self._reduced(out), dtype=ttnn.bfloat16)
            h_in = self._mlp(layer, h_in)
        last = ttnn.slice(h_in, (0, 0, s - 32, 0), (1, 1, s, cfg.dim))
        logits = ttnn.linear(ttnn.rms_norm(last, epsilon=1e-5, weight=self.norm), self.output, dtype=ttnn.bfloat8_b)
        return ttnn.all_gather(logits, 3) if cfg.devices > 1 else logits


def _first_ranges(ttnn, count: int) -> list:
    """The first ``count`` cores of an 8-wide grid, row by row."""
    ranges, index = [], 0
    while index < count:
        y, x = divmod(index, 8)
        stop = min(count, (y + 1) * 8)
        ranges.append(ttnn.CoreRange(ttnn.CoreCoord(x, y), ttnn.CoreCoord(x + stop - index - 1, y)))
        index = stop
    return ranges


def pcc(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.double().flatten(), b.double().flatten()
    a, b = a - a.mean(), b - b.mean()
    return float((a @ b) / (a.norm() * b.norm()))


def _mesh_logits(ttnn, t, cfg: Config) -> torch.Tensor:
    """The logits a device holds (after the all-gather, every device holds them all)."""
    return ttnn.to_torch(ttnn.get_device_tensors(t)[0]).float().reshape(-1, cfg.vocab)


def _best(times: list[float]) -> float:
    return min(times) if times else float("nan")


TORCH_DISTINCT_LAYERS = {"8b-t3k": 4}
"""Cases whose torch model makes only this many distinct layers (see :class:`TorchModel`)."""


def run_case(name: str, steps: int, rounds: int, torch_dtypes: tuple[str, ...], layers: int = 0) -> dict:
    """One case in this process (``layers`` of them when not 0): build, check, time; the figures
    as a dict (seconds)."""
    import meshnn as ttnn
    from meshnn.mesh.slab import SLAB_POOL
    from meshnn.ops.decoded import DECODED
    from meshnn.ops.memo import VALUES_MEMO

    cfg = replace(CASES[name], layers=layers) if layers else CASES[name]
    weights = Weights(cfg)
    dtypes = {"bf16": torch.bfloat16, "f32": torch.float32}
    distinct = TORCH_DISTINCT_LAYERS.get(name)
    refs = {key: TorchModel(cfg, weights, dtypes[key], distinct) for key in torch_dtypes if key in dtypes}
    system = "n150" if cfg.devices == 1 else "t3k"
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, cfg.devices), trace_region_size=64 << 20, system=system)
    begin = time.perf_counter()
    model = MeshModel(mesh, cfg, weights) if "mesh" not in torch_dtypes else None
    result: dict = {"case": name, "layers": cfg.layers, "build_s": time.perf_counter() - begin}
    result["torch_distinct_layers"] = distinct
    result["build_rss_gb"] = _rss_gb()
    gen = torch.Generator().manual_seed(1)
    xp = (0.5 * torch.randn(PREFILL, cfg.dim, generator=gen)).bfloat16().float()
    x = (0.5 * torch.randn(USERS, cfg.dim, generator=gen)).bfloat16().float()
    pos = torch.full((USERS,), PREFILL, dtype=torch.int32)
    times: dict[str, list[float]] = {}

    def timed(key: str, fn) -> object:
        start, cpu = time.perf_counter(), time.process_time()
        out = fn()
        times.setdefault(key, []).append(time.perf_counter() - start)
        times.setdefault(f"{key}_cpu", []).append(time.process_time() - cpu)
        return out

    if model is not None:  # the first prefill decodes every weight (kept decoded after): timed apart
        timed("prefill_first_mesh", lambda: _mesh_logits(ttnn, model.prefill(xp), cfg))
    for _ in range(rounds):  # prefill, the variants in turn
        for key, ref in refs.items():
            timed(f"prefill_torch_{key}", lambda ref=ref: ref.prefill(xp))
        if model is not None:
            timed("prefill_mesh", lambda: _mesh_logits(ttnn, model.prefill(xp), cfg))
    if model is not None and "f32" in refs:
        result["prefill_pcc"] = pcc(_mesh_logits(ttnn, model.prefill(xp), cfg)[-1], refs["f32"].prefill(xp)[-1])
    trace = None
    if model is not None:
        model.write_inputs(x, pos)
        eager = timed("eager_first", lambda: _mesh_logits(ttnn, model.decode(), cfg))
        trace = ttnn.begin_trace_capture(mesh, cq_id=0)
        traced = model.decode()
        ttnn.end_trace_capture(mesh, trace, cq_id=0)
        timed("traced_first", lambda: ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True))
        result["replay_equals_eager"] = bool(torch.equal(_mesh_logits(ttnn, traced, cfg), eager))
        if "f32" in refs:
            result["decode_pcc"] = pcc(eager[:USERS], refs["f32"].decode(x, pos.long()))
    for _ in range(rounds):  # decode steps: every variant writes the same token at the same position
        for key, ref in refs.items():
            timed(f"decode_torch_{key}", lambda ref=ref: [ref.decode(x, pos.long()) for _ in range(steps)])
        if model is not None:
            timed("decode_eager", lambda: _mesh_steps(ttnn, mesh, model, x, pos, steps, None))
            timed("decode_traced", lambda: _mesh_steps(ttnn, mesh, model, x, pos, steps, trace))
    for key, values in times.items():
        result[key] = _best(values) / (steps if key.startswith("decode_") else 1)
    result["decoded_gb"] = DECODED.nbytes / 2**30  # counted against MESHNN_DECODED_BYTES
    result["decoded_limit_gb"] = DECODED.limit / 2**30  # the bound (MESHNN_DECODED_BYTES, or its default)
    result["values_memo_gb"] = VALUES_MEMO.nbytes / 2**30  # float32 memos (MESHNN_VALUES_MEMO_BYTES)
    result["slab_pool_gb"] = SLAB_POOL.nbytes / 2**30  # freed slabs kept (MESHNN_SLAB_POOL_BYTES)
    result["end_rss_gb"] = _rss_gb()
    if trace is not None:
        ttnn.release_trace(mesh, trace)
    ttnn.close_mesh_device(mesh)
    result["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return result


def _rss_gb() -> float:
    """The process's resident set now, GB (2**30 bytes)."""
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def _mesh_steps(ttnn, mesh, model: MeshModel, x, pos, steps: int, trace) -> None:
    for _ in range(steps):
        model.write_inputs(x, pos)
        if trace is None:
            model.decode()
        else:
            ttnn.execute_trace(mesh, trace, cq_id=0, blocking=False)
        ttnn.synchronize_device(mesh)


def _subprocess(case: str, quick: bool, torch_dtypes: str, layers: int) -> dict:
    command = [sys.executable, __file__, "--case", case, "--torch", torch_dtypes, "--layers", str(layers)]
    command += ["--quick"] if quick else []
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        return {"case": case, "error": (done.stderr or done.stdout)[-2000:]}
    return json.loads(lines[-1])


def _ratio(r: dict, a: str, b: str) -> str:
    return f"{r[a] / r[b]:.2f}" if a in r and b in r else "-"


RATIOS = (
    ("decode_traced", "decode_torch_bf16"),
    ("prefill_mesh", "prefill_torch_bf16"),
    ("decode_traced", "decode_eager"),
)


def report(results: list[dict]) -> None:
    ms = lambda r, k: f"{r[k] * 1e3:.0f}" if k in r else "-"  # noqa: E731
    header = ("case", "1st prefill", "prefill", "torch bf16", "torch f32", "eager", "traced", "torch bf16", "torch f32")
    header += ("traced/bf16", "prefill/bf16", "traced/eager", "peak GB", "PCC", "replay=eager")
    print("ms: prefill of 128 tokens (one user; the first, weights decoded, then the best), a decode step of 32 users")
    print(" ".join(f"{h:>12}" for h in header))
    for r in results:
        if "error" in r:
            print(f"{r['case']:>12} failed: {r['error'][-400:]}")
            continue
        cells = (r["case"], ms(r, "prefill_first_mesh"), ms(r, "prefill_mesh"), ms(r, "prefill_torch_bf16"))
        cells += (ms(r, "prefill_torch_f32"),)
        cells += (ms(r, "decode_eager"), ms(r, "decode_traced"), ms(r, "decode_torch_bf16"), ms(r, "decode_torch_f32"))
        cells += (_ratio(r, "decode_traced", "decode_torch_bf16"), _ratio(r, "prefill_mesh", "prefill_torch_bf16"))
        cells += (_ratio(r, "decode_traced", "decode_eager"), f"{r.get('peak_rss_gb', float('nan')):.1f}")
        cells += (f"{r.get('decode_pcc', float('nan')):.4f}", r.get("replay_equals_eager", "-"))
        print(" ".join(f"{c!s:>12}" for c in cells))
    for r in results:  # the same ratios of CPU seconds (all threads): steadier than wall time on a shared host
        cpu = [_ratio(r, f"{a}_cpu", f"{b}_cpu") for a, b in RATIOS]
        print(f"{r['case']:>12} CPU time: traced/bf16 {cpu[0]}, prefill/bf16 {cpu[1]}, traced/eager {cpu[2]}")
    print("aims: 1b-n150 traced/bf16 <= 2, 1b-t3k <= 3, prefill/bf16 <= 3, traced/eager <= 0.7;")
    print("      8b-t3k peak <= 20 GB, traced/bf16 <= 4 (torch bf16 of 8b-t3k: a process of its own, its")
    print(f"      {TORCH_DISTINCT_LAYERS['8b-t3k']} distinct layers run in turn)")
    for r in results:
        if "error" not in r:
            print(
                f"{r['case']:>12} {r['layers']} layers: RSS after build {r['build_rss_gb']:.2f} GB, at the end "
                f"{r['end_rss_gb']:.2f} GB; decoded memos counted {r['decoded_gb']:.2f} GB (bound "
                f"{r.get('decoded_limit_gb', float('nan')):.2f}), float32 memos "
                f"{r['values_memo_gb']:.2f} GB, slab pool {r['slab_pool_gb']:.2f} GB"
            )


def main() -> None:
    args = sys.argv[1:]
    quick = "--quick" in args
    if "--single-thread" in args:  # every case on one core (set before torch's pool starts, inherited by the cases)
        os.environ.update(MESHNN_HOST_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        torch.set_num_threads(1)
    steps, rounds = (2, 1) if quick else (4, 3)
    layers = int(args[args.index("--layers") + 1]) if "--layers" in args else 0
    if "--case" in args:
        case = args[args.index("--case") + 1]
        dtypes = tuple(t for t in args[args.index("--torch") + 1].split(",") if t) if "--torch" in args else ()
        print(json.dumps(run_case(case, steps, rounds, dtypes, layers)))
        return
    cases = args[args.index("--cases") + 1].split(",") if "--cases" in args else list(CASES)
    results = []
    for case in cases:
        if case.startswith("8b"):  # the two models apart: their memory would add up
            mesh, alone = _subprocess(case, quick, "", layers), _subprocess(case, quick, "bf16,mesh", layers)
            mesh.update({k: v for k, v in alone.items() if k.startswith(("decode_torch", "prefill_torch"))})
            mesh["torch_peak_rss_gb"] = alone.get("peak_rss_gb")
            results.append(mesh)
        else:
            results.append(_subprocess(case, quick, "bf16,f32", layers))
    report(results)
    print(json.dumps({"benchmark": "model_scale", "results": results}))


if __name__ == "__main__":
    main()
