"""The performance model: (a) its own cost, and (b) what it predicts for one tt_transformers-style
Llama decoder layer on N150, N300 and T3000.

(a) The cost of predicting: ``meshnn.perf.predict`` on a mix of op descriptions (matmul, eltwise,
norm, attention, collective), and the whole capture (event -> OpDesc -> prediction -> record) added
to a tiny op, each in us per op beside the limit measured in the same run: the tiny op itself
(``ttnn.add`` of one 32x32 bfloat16 tile on a 1x1 mesh, meshnn's cheapest launch).

(b) One decoder layer of Llama-3.1-8B's shape (dim 4096, 32 heads, 8 KV heads of 128, MLP 14336;
``--small`` for Llama-3.2-1B's: dim 2048, head 64, MLP 8192), written as tt_transformers writes it
with meshnn's ops and tensor-parallel over the mesh (fused QKV and MLP w1 / w3 sharded by columns,
wo and w2 by rows, each followed by an all_reduce; bfloat8_b weights, bfloat4_b for w1 / w3 as its
performance mode keeps them): prefill of 128 tokens of one user, and a decode step of 32 users over
a 128-position KV cache.  What is not there: the embedding and LM head, the in-place KV-cache writes
(meshnn has no cache ops yet) and the decode-only ops (nlp_create_qkv_heads_decode,
scaled_dot_product_attention_decode): the decode step uses the prefill forms over 32 users, one query
row each.  Printed per system: the ops, predicted eager and traced time, tokens/s traced, and the
simulator's wall time for the same run.  Model-level figures are predictions, never fitted.

Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import meshnn as ttnn
from meshnn import perf

SYSTEMS = (("n150", (1, 1)), ("n300", (1, 2)), ("t3k", (1, 8)))
LLAMA_8B = {"dim": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128, "hidden": 14336}
LLAMA_1B = {"dim": 2048, "heads": 32, "kv_heads": 8, "head_dim": 64, "hidden": 8192}
PREFILL, USERS, CACHE = 128, 32, 128


# ------------------------------------------------------------------------ (a) the model's cost


def sample_descs() -> list[perf.OpDesc]:
    l1 = {"buffer": perf.BufferType.L1, "memory": perf.MemoryLayout.WIDTH_SHARDED}
    x, w = perf.TensorDesc((1, 1, 32, 4096), **l1), perf.TensorDesc((1, 1, 4096, 1792), "BFLOAT8_B")
    y, big = perf.TensorDesc((1, 1, 32, 1792), **l1), perf.TensorDesc((1, 1, 128, 4096))
    q, kv = perf.TensorDesc((1, 4, 128, 128)), perf.TensorDesc((1, 1, 128, 128))
    dram = perf.MatmulConfig(perf.MatmulProgram.DRAM_SHARDED)
    return [
        perf.OpDesc(perf.OpFamily.MATMUL, (x, w), (y,), matmul=dram),
        perf.OpDesc(perf.OpFamily.BINARY, (big, big), (big,)),
        perf.OpDesc(perf.OpFamily.NORM, (big,), (big,)),
        perf.OpDesc(perf.OpFamily.SDPA, (q, kv, kv), (q,)),
        perf.OpDesc(
            perf.OpFamily.ALL_REDUCE,
            (big,),
            (big,),
            collective=perf.CollectiveConfig(perf.Topology.RING, cluster_axis=1),
        ),
    ]


def best_us(fn, calls: int, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def model_cost() -> dict[str, float]:
    """us per predicted op, us a capture adds to an op, and the tiny op's own us (the limit)."""
    descs = sample_descs()
    predict_us = best_us(lambda: [perf.predict(d, "t3k", mesh_shape=(1, 8)) for d in descs], 200) / len(descs)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        x = ttnn.from_torch(np.ones((32, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        queue = mesh.mesh_command_queue()

        def tiny():
            ttnn.add(x, x)
            queue.finish()

        off = on = float("inf")
        for _ in range(5):  # in turn, so that both meet the shared machine in the same states
            off = min(off, best_us(tiny, 200, rounds=1))
            with ttnn.perf_capture():
                on = min(on, best_us(tiny, 200, rounds=1))
    finally:
        mesh.close()
    return {"predict_us_per_op": predict_us, "capture_added_us_per_op": on - off, "tiny_op_us": off}


# ------------------------------------------------------------------ (b) a Llama decoder layer


class Layer:
    """One decoder layer's weights, tensor-parallel over ``mesh``."""

    def __init__(self, mesh: ttnn.MeshDevice, dims: dict[str, int], rng: np.random.Generator) -> None:
        self.mesh, self.dims, self.n = mesh, dims, mesh.get_num_devices()
        d, hd, hidden = dims["dim"], dims["head_dim"], dims["hidden"]
        qkv = (dims["heads"] + 2 * dims["kv_heads"]) * hd
        self.replicate = ttnn.ReplicateTensorToMesh(mesh)
        columns, rows = ttnn.ShardTensorToMesh(mesh, dim=1), ttnn.ShardTensorToMesh(mesh, dim=0)

        def weight(shape, mapper, dtype=ttnn.bfloat8_b):
            values = (rng.standard_normal(shape, dtype=np.float32) / np.sqrt(shape[0])).astype(np.float32)
            return ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper)

        self.wqkv, self.wo = weight((d, qkv), columns), weight((dims["heads"] * hd, d), rows)
        self.w1, self.w3 = weight((d, hidden), columns, ttnn.bfloat4_b), weight((d, hidden), columns, ttnn.bfloat4_b)
        self.w2 = weight((hidden, d), rows)
        self.norms = [self.put(np.ones((1, d))) for _ in range(2)]
        angles = np.outer(np.arange(CACHE), 1.0 / 10000 ** (np.arange(hd // 2) / (hd // 2)))
        self.cos = self.put(np.concatenate([np.cos(angles)] * 2, -1).reshape(1, 1, CACHE, hd))
        self.sin = self.put(np.concatenate([np.sin(angles)] * 2, -1).reshape(1, 1, CACHE, hd))

    def put(self, values: np.ndarray) -> ttnn.Tensor:
        values = values.astype(np.float32)
        return ttnn.from_torch(
            values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=self.mesh, mesh_mapper=self.replicate
        )

    def reduced(self, partial: ttnn.Tensor) -> ttnn.Tensor:
        return partial if self.n == 1 else ttnn.all_reduce(partial)

    def attention(self, x: ttnn.Tensor, keys=None, values=None) -> ttnn.Tensor:
        """Prefill (x [1, 1, s, dim]) attends causally to itself; decode (x [1, 1, users, dim]) has
        each user's one query row attend to its cache ``keys`` / ``values``."""
        heads, kv_heads = self.dims["heads"] // self.n, max(1, self.dims["kv_heads"] // self.n)
        qkv = ttnn.linear(x, self.wqkv)
        q, k, v = ttnn.experimental.nlp_create_qkv_heads(
            qkv, num_heads=heads, num_kv_heads=kv_heads, transpose_k_heads=False
        )
        q = ttnn.experimental.rotary_embedding(q, self.cos, self.sin)
        if keys is None:
            k = ttnn.experimental.rotary_embedding(k, self.cos, self.sin)
            context = ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # one row per user: [users, heads, 1, head_dim] against [users, kv heads, cache, head_dim]
            q = ttnn.permute(q, (2, 1, 0, 3))
            context = ttnn.permute(
                ttnn.transformer.scaled_dot_product_attention(q, keys, values, is_causal=False), (2, 1, 0, 3)
            )
        return self.reduced(ttnn.linear(ttnn.experimental.nlp_concat_heads(context), self.wo))

    def forward(self, x: ttnn.Tensor, cache=(None, None)) -> ttnn.Tensor:
        h = ttnn.rms_norm(x, epsilon=1e-5, weight=self.norms[0])
        x = ttnn.add(x, self.attention(h, *cache))
        h = ttnn.rms_norm(x, epsilon=1e-5, weight=self.norms[1])
        gated = ttnn.multiply(ttnn.linear(h, self.w1), ttnn.linear(h, self.w3), input_tensor_a_activations=["silu"])
        return ttnn.add(x, self.reduced(ttnn.linear(gated, self.w2)))


def predicted(system: str, shape: tuple[int, int], dims: dict[str, int], rng) -> list[dict[str, object]]:
    """Prefill and decode of one layer on ``system``: ops, predicted ms (eager, traced), wall s."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=system)
    try:
        layer = Layer(mesh, dims, rng)
        kv_heads = max(1, dims["kv_heads"] // mesh.get_num_devices())
        cache_shape = (USERS, kv_heads, CACHE, dims["head_dim"])
        cache = [ttnn.zeros(cache_shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh) for _ in range(2)]
        rows = []
        for phase, tokens, x, kv in (
            (
                f"prefill {PREFILL} tokens",
                PREFILL,
                layer.put(rng.standard_normal((1, 1, PREFILL, dims["dim"]))),
                (None, None),
            ),
            (f"decode {USERS} users", USERS, layer.put(rng.standard_normal((1, 1, USERS, dims["dim"]))), cache),
        ):
            start = time.perf_counter()
            with ttnn.perf_capture() as capture:
                layer.forward(x, kv)
            mesh.mesh_command_queue().finish()
            wall = time.perf_counter() - start
            (eager,), (traced,) = capture.retimed(traced=False), capture.retimed(traced=True)
            rows.append(
                {
                    "system": system,
                    "mesh": f"{shape[0]}x{shape[1]}",
                    "phase": phase,
                    "ops": len(capture),
                    "not_timed": len(capture.skipped),
                    "eager_ms": eager.total_ns() / 1e6,
                    "traced_ms": traced.total_ns() / 1e6,
                    "tokens_per_s": tokens / (traced.total_ns() / 1e9),
                    "simulator_s": wall,
                }
            )
        return rows
    finally:
        mesh.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="Llama-3.2-1B's shape instead of Llama-3.1-8B's")
    args = parser.parse_args()
    dims = LLAMA_1B if args.small else LLAMA_8B
    cost = model_cost()
    print("(a) the model's own cost, us per op (limit: the tiny op itself, measured in this run)")
    print(f"    predict(), per op                   {cost['predict_us_per_op']:8.1f}")
    print(f"    capture on, added to each op        {cost['capture_added_us_per_op']:8.1f}")
    print(f"    limit: ttnn.add of one tile on 1x1  {cost['tiny_op_us']:8.1f}")
    rng = np.random.default_rng(0)
    rows = [row for system, shape in SYSTEMS for row in predicted(system, shape, dims, rng)]
    name = "Llama-3.2-1B" if args.small else "Llama-3.1-8B"
    print(f"(b) one {name}-shaped decoder layer (tt_transformers style), predicted device time")
    head = f"{'ops':>4} {'eager ms':>9} {'traced ms':>10} {'tokens/s':>10} {'sim s':>7}"
    print(f"    {'system':7} {'mesh':5} {'phase':19} {head}")
    for r in rows:
        print(
            f"    {r['system']:7} {r['mesh']:5} {r['phase']:19} {r['ops']:4d} {r['eager_ms']:9.3f} "
            f"{r['traced_ms']:10.3f} {r['tokens_per_s']:10,.0f} {r['simulator_s']:7.2f}"
        )
    rounded = [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()} for r in rows]
    print(
        json.dumps(
            {"benchmark": "perf_model", "model": name, **{k: round(v, 2) for k, v in cost.items()}, "layer": rounded}
        )
    )


if __name__ == "__main__":
    main()
