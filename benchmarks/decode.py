"""Decode: time per decode step of a tt_transformers-style Llama built from meshnn's ops on a 1x8
mesh (tensor parallel over the 8 devices), eager and traced, beside the same step in plain torch
float32 in the same run.  Prints a table and one JSON line.

The model (32 users, one token each per step; weights bfloat8_b, activations bfloat16, KV caches
bfloat8_b): embedded tokens ``[1, 1, 32, dim]`` -> per layer: rms_norm, the fused QKV linear
(each device its heads), ``nlp_create_qkv_heads_decode``, ``rotary_embedding_llama_fused_qk``,
``paged_fused_update_cache`` at ``current_pos``, ``scaled_dot_product_attention_decode``,
``nlp_concat_heads_decode``, the output linear and an all_reduce, the residual add, rms_norm, the
SwiGLU MLP (w1, w3 column-sharded, w2 row-sharded) and an all_reduce, the residual add -> the final
norm, the vocab-sharded LM head and an all_gather of the logits.  Each step writes the new
embeddings, positions and rotary rows into the step's input tensors (copy_host_to_device_tensor)
and advances the positions; the traced step replays a trace captured once.  The torch step is the
same arithmetic on the full (dequantised) weights in float32, its KV cache updated in place.

Aims (issue 23): traced within 2x of torch; traced faster than eager.  Timing: the best of
``ROUNDS`` rounds, each timing the three variants in turn over ``STEPS`` steps.

The weights and KV caches stay decoded as bfloat16 memos (``MESHNN_DECODED_BYTES``, default 8
GiB: see the README's Host memory); the float32 values memo bound is raised to 1 GiB
(``MESHNN_VALUES_MEMO_BYTES``, unless set), as before issue 34, so that the figures compare.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import dataclass

os.environ.setdefault("MESHNN_VALUES_MEMO_BYTES", str(1 << 30))  # (read when meshnn is imported)

import torch

import meshnn as ttnn

STEPS = 8
ROUNDS = 3
USERS = 32
DEVICES = 8


@dataclass(frozen=True)
class Config:
    dim: int = 1024
    heads: int = 16
    kv_heads: int = 8
    hidden: int = 2816
    vocab: int = 8192
    layers: int = 1
    max_seq: int = 256
    head_dim: int = 64


def rot_transformation_mat() -> torch.Tensor:
    """tt-metal's rotary transformation matrix: rotates interleaved pairs of a 32-wide tile."""
    mat = torch.zeros(1, 1, 32, 32)
    mat[..., torch.arange(0, 32, 2), torch.arange(1, 32, 2)] = 1
    mat[..., torch.arange(1, 32, 2), torch.arange(0, 32, 2)] = -1
    return mat


def rotary_rows(cfg: Config, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos / sin ``[users, head_dim]`` for interleaved-pair rotary embeddings at ``positions``."""
    freqs = 1.0 / (10000.0 ** (torch.arange(0, cfg.head_dim, 2).float() / cfg.head_dim))
    angles = positions.float()[:, None] * freqs[None]
    return angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)


class TorchModel:
    """The decode step in torch float32 (full weights, a KV cache per layer)."""

    def __init__(self, cfg: Config, weights: dict[str, torch.Tensor]) -> None:
        self.cfg, self.w = cfg, weights
        shape = (cfg.layers, USERS, cfg.kv_heads, cfg.max_seq, cfg.head_dim)
        self.k, self.v = torch.zeros(shape), torch.zeros(shape)

    @staticmethod
    def norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w

    def rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        pairs = x.reshape(*x.shape[:-1], -1, 2)
        rotated = torch.stack((-pairs[..., 1], pairs[..., 0]), -1).reshape(x.shape)
        return x * cos + rotated * sin

    def step(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        cfg, w = self.cfg, self.w
        cos, sin = rotary_rows(cfg, pos)
        cos, sin = cos[:, None], sin[:, None]
        users = torch.arange(USERS)
        for i in range(cfg.layers):
            h = self.norm(x, w[f"{i}.attn_norm"])
            q = (h @ w[f"{i}.wq"]).view(USERS, cfg.heads, cfg.head_dim)
            k = (h @ w[f"{i}.wk"]).view(USERS, cfg.kv_heads, cfg.head_dim)
            v = (h @ w[f"{i}.wv"]).view(USERS, cfg.kv_heads, cfg.head_dim)
            q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
            self.k[i, users, :, pos] = k
            self.v[i, users, :, pos] = v
            grouped = q.view(USERS, cfg.kv_heads, -1, cfg.head_dim)  # (users, kv heads, group, d)
            scores = torch.einsum("ukgd,uksd->ukgs", grouped, self.k[i]) / math.sqrt(cfg.head_dim)
            masked = torch.arange(cfg.max_seq)[None, None, None] > pos[:, None, None, None]
            attn = torch.einsum("ukgs,uksd->ukgd", scores.masked_fill(masked, float("-inf")).softmax(-1), self.v[i])
            x = x + attn.reshape(USERS, -1) @ w[f"{i}.wo"]
            h = self.norm(x, w[f"{i}.ffn_norm"])
            x = x + (torch.nn.functional.silu(h @ w[f"{i}.w1"]) * (h @ w[f"{i}.w3"])) @ w[f"{i}.w2"]
        return self.norm(x, w["norm"]) @ w["output"]


def quantized(t: torch.Tensor, dtype=ttnn.bfloat8_b) -> torch.Tensor:
    """``t`` as the device will hold it (block-float rounding), back in float32."""
    return ttnn.to_torch(ttnn.from_torch(t, dtype=dtype, layout=ttnn.TILE_LAYOUT)).float()


def random_weights(cfg: Config) -> dict[str, torch.Tensor]:
    """Random weights, rounded as the device holds them (bfloat8_b matrices, bfloat16 norms)."""
    gen = torch.Generator().manual_seed(0)

    def mat(rows: int, cols: int) -> torch.Tensor:
        return quantized(torch.randn(rows, cols, generator=gen) / math.sqrt(rows))

    def norm() -> torch.Tensor:
        return (1 + 0.1 * torch.randn(cfg.dim, generator=gen)).bfloat16().float()

    w: dict[str, torch.Tensor] = {"norm": norm(), "output": mat(cfg.dim, cfg.vocab)}
    for i in range(cfg.layers):
        w |= {f"{i}.attn_norm": norm(), f"{i}.ffn_norm": norm()}
        w |= {f"{i}.wq": mat(cfg.dim, cfg.heads * cfg.head_dim), f"{i}.wk": mat(cfg.dim, cfg.kv_heads * cfg.head_dim)}
        w |= {f"{i}.wv": mat(cfg.dim, cfg.kv_heads * cfg.head_dim), f"{i}.wo": mat(cfg.heads * cfg.head_dim, cfg.dim)}
        w |= {
            f"{i}.w1": mat(cfg.dim, cfg.hidden),
            f"{i}.w3": mat(cfg.dim, cfg.hidden),
            f"{i}.w2": mat(cfg.hidden, cfg.dim),
        }
    return w


class MeshModel:
    """The decode step built from meshnn's ops, tensor-parallel over a 1x8 mesh."""

    def __init__(self, mesh: ttnn.MeshDevice, cfg: Config, w: dict[str, torch.Tensor]) -> None:
        self.mesh, self.cfg = mesh, cfg
        self.hq, self.hk = cfg.heads // DEVICES, cfg.kv_heads // DEVICES
        cols, rows = ttnn.ShardTensorToMesh(mesh, dim=-1), ttnn.ShardTensorToMesh(mesh, dim=-2)
        rep = ttnn.ReplicateTensorToMesh(mesh)

        def put(t, mapper, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, mc=None):
            return ttnn.from_torch(t, dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper, memory_config=mc)

        self.layers = []
        for i in range(cfg.layers):
            fused = torch.cat([self._qkv_slice(w, i, d) for d in range(DEVICES)], -1)
            self.layers.append(
                {
                    "attn_norm": put(w[f"{i}.attn_norm"][None], rep, ttnn.bfloat16),
                    "ffn_norm": put(w[f"{i}.ffn_norm"][None], rep, ttnn.bfloat16),
                    "wqkv": put(fused, cols),
                    "wo": put(w[f"{i}.wo"], rows),
                    "w1": put(w[f"{i}.w1"], cols),
                    "w3": put(w[f"{i}.w3"], cols),
                    "w2": put(w[f"{i}.w2"], rows),
                    "k": put(torch.zeros(USERS, self.hk, cfg.max_seq, cfg.head_dim), rep),
                    "v": put(torch.zeros(USERS, self.hk, cfg.max_seq, cfg.head_dim), rep),
                }
            )
        self.norm = put(w["norm"][None], rep, ttnn.bfloat16)
        self.output = put(w["output"], cols)
        self.trans = put(
            rot_transformation_mat().repeat(1, 1, 2 * USERS, 1), rep, ttnn.bfloat16, mc=self._rot_config(32)
        )
        self.inputs = self._device_inputs(torch.zeros(USERS, cfg.dim), torch.zeros(USERS, dtype=torch.int32))

    def _qkv_slice(self, w, i, d):
        hd = self.cfg.head_dim
        q = w[f"{i}.wq"][:, d * self.hq * hd : (d + 1) * self.hq * hd]
        k = w[f"{i}.wk"][:, d * self.hk * hd : (d + 1) * self.hk * hd]
        v = w[f"{i}.wv"][:, d * self.hk * hd : (d + 1) * self.hk * hd]
        return torch.cat([q, k, v], -1)

    @staticmethod
    def _rot_config(width: int) -> ttnn.MemoryConfig:
        """Height-sharded, one 32-row tile per user (q's users, then k's) on its own core."""
        cores = ttnn.CoreRangeSet(_first_ranges(2 * USERS))
        return ttnn.create_sharded_memory_config(
            (32, width), cores, ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
        )

    def host_inputs(self, x: torch.Tensor, pos: torch.Tensor) -> list[ttnn.Tensor]:
        """The step's inputs on the host: embeddings, positions, rotary rows (q's users, then k's)."""
        cos, sin = rotary_rows(self.cfg, pos.long())
        rows = [c.repeat(2, 1)[None, :, None] for c in (cos, sin)]
        return [
            ttnn.from_torch(x[None, None], dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT),
            ttnn.from_torch(pos.int(), dtype=ttnn.int32),
            *(ttnn.from_torch(r, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for r in rows),
        ]

    def _device_inputs(self, x, pos):
        configs = [None, None, self._rot_config(self.cfg.head_dim), self._rot_config(self.cfg.head_dim)]
        hosts = self.host_inputs(x, pos)
        return [ttnn.to_device(t, self.mesh, memory_config=c) for t, c in zip(hosts, configs, strict=True)]

    def write_inputs(self, x: torch.Tensor, pos: torch.Tensor) -> None:
        for host, device in zip(self.host_inputs(x, pos), self.inputs, strict=True):
            ttnn.copy_host_to_device_tensor(host, device)

    def step(self) -> ttnn.Tensor:
        x, pos, cos, sin = self.inputs
        for layer in self.layers:
            x = self._layer(layer, x, pos, cos, sin)
        h = ttnn.rms_norm(x, epsilon=1e-5, weight=self.norm)
        logits = ttnn.linear(h, self.output, dtype=ttnn.bfloat16)
        return ttnn.all_gather(logits, 3)

    def _layer(self, layer, x, pos, cos, sin):
        h = ttnn.rms_norm(x, epsilon=1e-5, weight=layer["attn_norm"])
        qkv = ttnn.linear(h, layer["wqkv"], dtype=ttnn.bfloat16)
        q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(
            qkv, num_heads=self.hq, num_kv_heads=self.hk, overlap_qk_coregrid=False
        )
        ttnn.deallocate(qkv)
        q, k = ttnn.experimental.rotary_embedding_llama_fused_qk(q, k, cos, sin, self.trans)
        ttnn.experimental.paged_fused_update_cache(layer["k"], k, layer["v"], v, update_idxs_tensor=pos)
        attn = ttnn.transformer.scaled_dot_product_attention_decode(q, layer["k"], layer["v"], cur_pos_tensor=pos)
        sharded = ttnn.to_memory_config(attn, self._head_config())
        cat = ttnn.experimental.nlp_concat_heads_decode(sharded, num_heads=self.hq)
        out = ttnn.all_reduce(ttnn.linear(cat, layer["wo"], dtype=ttnn.bfloat16))
        x = ttnn.add(x, out)
        h = ttnn.rms_norm(x, epsilon=1e-5, weight=layer["ffn_norm"])
        gate = ttnn.linear(h, layer["w1"], dtype=ttnn.bfloat16)
        up = ttnn.linear(h, layer["w3"], dtype=ttnn.bfloat16)
        mlp = ttnn.mul(gate, up, input_tensor_a_activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.SILU)])
        return ttnn.add(x, ttnn.all_reduce(ttnn.linear(mlp, layer["w2"], dtype=ttnn.bfloat16)))

    def _head_config(self):
        grid = ttnn.CoreRangeSet(_first_ranges(USERS))
        return ttnn.create_sharded_memory_config(
            (32, self.cfg.head_dim), grid, ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
        )


def _first_ranges(count: int) -> list[ttnn.CoreRange]:
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


def logits_of(mesh: ttnn.MeshDevice, t: ttnn.Tensor) -> torch.Tensor:
    return ttnn.to_torch(ttnn.get_device_tensors(t)[0]).float()[0, 0]


def run(cfg: Config, steps: int = STEPS, rounds: int = ROUNDS) -> dict[str, float]:
    """Seconds per step: torch, meshnn eager, meshnn traced (best round); the worst PCC of the
    traced logits against torch's over two checked steps, and whether a replay gave the eager
    step's logits bit for bit."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, DEVICES), trace_region_size=64 << 20, system="t3k")
    w = random_weights(cfg)
    ref, model = TorchModel(cfg, w), MeshModel(mesh, cfg, w)
    gen = torch.Generator().manual_seed(1)
    pos = torch.randint(0, cfg.max_seq // 2, (USERS,), generator=gen)
    x = torch.randn(USERS, cfg.dim, generator=gen)
    model.write_inputs(x, pos)
    eager = logits_of(mesh, model.step())  # the eager warm-up, as a generator compiles before it captures
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    traced_logits = model.step()
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    same = bool(torch.equal(logits_of(mesh, traced_logits), eager))
    worst = pcc(eager[:USERS, : cfg.vocab], ref.step(x, pos))
    for _ in range(2):  # new tokens at the next positions: the replay reads the new inputs
        x, pos = torch.randn(USERS, cfg.dim, generator=gen), pos + 1
        model.write_inputs(x, pos)
        ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
        worst = min(worst, pcc(logits_of(mesh, traced_logits)[:USERS, : cfg.vocab], ref.step(x, pos)))
    times: dict[str, list[float]] = {"torch": [], "eager": [], "traced": []}
    for _ in range(rounds):  # every variant writes the same token at the same positions each step
        for kind in times:
            begin = time.perf_counter()
            for _ in range(steps):
                if kind == "torch":
                    ref.step(x, pos)
                    continue
                model.write_inputs(x, pos)
                if kind == "eager":
                    model.step()
                else:
                    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=False)
                ttnn.synchronize_device(mesh)
            times[kind].append((time.perf_counter() - begin) / steps)
    ttnn.release_trace(mesh, trace)
    ttnn.close_mesh_device(mesh)
    return {k: min(v) for k, v in times.items()} | {"pcc": worst, "replay_equals_eager": same}


def main() -> None:
    quick = "--quick" in sys.argv
    results = {}
    for layers in (1, 4):
        cfg = Config(layers=layers)
        results[layers] = run(cfg, steps=2 if quick else STEPS, rounds=1 if quick else ROUNDS)
    print(
        f"decode step on a 1x8 mesh, {USERS} users (dim {Config.dim}, {Config.heads} heads, {Config.kv_heads} kv "
        f"heads, hidden {Config.hidden}, vocab {Config.vocab}); ms per step"
    )
    header = ("layers", "torch f32", "eager", "traced", "traced/torch", "traced/eager", "PCC", "replay=eager")
    print(" ".join(f"{h:>12}" for h in header))
    for layers, r in results.items():
        cells = (layers, f"{r['torch'] * 1e3:.2f}", f"{r['eager'] * 1e3:.2f}", f"{r['traced'] * 1e3:.2f}")
        cells += (f"{r['traced'] / r['torch']:.2f}", f"{r['traced'] / r['eager']:.2f}", f"{r['pcc']:.5f}")
        print(" ".join(f"{c!s:>12}" for c in (*cells, r["replay_equals_eager"])))
    print("aims: traced/torch <= 2.0 (the limit, measured in this run), traced/eager < 1.0")
    print(json.dumps({"benchmark": "decode", "results": {str(k): v for k, v in results.items()}}))


if __name__ == "__main__":
    main()
