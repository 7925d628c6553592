"""A decode step of ``meshnn demo``'s model, run for its predicted device time: the token after the
prompt through every layer, each attending to a KV cache that holds the prompt (one user).

The step is the prefill's model with one token: embedding, per layer RMSNorm, the fused QKV
projection, heads split, rotary embedding at the token's position, attention of the one query row
over the cache (fused SDPA, or matmul / softmax / matmul for head sizes that are not whole tiles),
the row-parallel output projection and its all_reduce, the MLP with its reduce_scatter and
all_gather; then the final norm.  The caches are made (zeros of the prompt's length) before the step
and are not written by it: the in-place cache write of a real decode step is the one op missing.
What the step computes is not checked; how long it would take on the device is what it is for.

May import: the public surface (``meshnn`` as ``ttnn``) and the demo's model.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

import meshnn as ttnn
from meshnn.cli.demo import MeshModel, rope_tables


def caches(model: MeshModel) -> list[tuple[ttnn.Tensor, ttnn.Tensor]]:
    """Each layer's K and V cache of the prompt, this device's heads: (1, heads / devices, seq, d)."""
    cfg = model.config
    shape = (1, cfg.heads // model.n, cfg.seq, cfg.head_dim)

    def zeros() -> ttnn.Tensor:
        return ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=model.mesh)

    return [(zeros(), zeros()) for _ in model.layers]


def rotation_at(model: MeshModel, position: int) -> tuple[ttnn.Tensor, ttnn.Tensor]:
    """The rotary tables' row for ``position``, as (1, 1, 1, d) tensors on the mesh."""
    cos, sin = rope_tables(replace(model.config, seq=position + 1))

    def row(table: np.ndarray) -> ttnn.Tensor:
        values = table[position].reshape(1, 1, 1, -1)
        return ttnn.from_torch(
            values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=model.mesh, mesh_mapper=model.replicate
        )

    return row(cos), row(sin)


def attend(model: MeshModel, x: ttnn.Tensor, weights: dict, cache: tuple, rotation: tuple) -> ttnn.Tensor:
    """One layer's attention for the new token (x: (1, 1, hidden)) over ``cache``."""
    cfg = model.config
    d = cfg.head_dim
    qkv = ttnn.linear(x, weights["wqkv"])
    q, _, _ = ttnn.transformer.split_query_key_value_and_split_heads(
        qkv, num_heads=cfg.heads // model.n, transpose_key=False
    )  # (1, local heads, 1, d); the new K and V would be written into the cache
    q = model.rotate(q, *rotation)
    keys, values = cache
    if model.mask is None:
        context = ttnn.transformer.scaled_dot_product_attention(q, keys, values, is_causal=False)
    else:
        scores = ttnn.multiply(ttnn.matmul(q, keys, transpose_b=True), 1.0 / math.sqrt(d))
        context = ttnn.matmul(ttnn.softmax(scores, dim=-1), values)
    partial = ttnn.linear(ttnn.transformer.concatenate_heads(context), weights["wo"])
    return ttnn.all_reduce(partial)


def decode_step(model: MeshModel, cache: list, token: int, position: int) -> ttnn.Tensor:
    """The model's output for ``token`` at ``position`` (after a prompt of ``config.seq`` tokens)."""
    rotation = rotation_at(model, position)
    ids = ttnn.from_torch(
        np.array([[token]], np.uint32), dtype=ttnn.uint32, device=model.mesh, mesh_mapper=model.replicate
    )
    x = ttnn.to_layout(ttnn.embedding(ids, model.embedding), ttnn.TILE_LAYOUT)
    for weights, layer_cache in zip(model.layers, cache, strict=True):
        h = ttnn.rms_norm(x, epsilon=1e-5, weight=weights["attn_norm"])
        x = ttnn.add(x, attend(model, h, weights, layer_cache, rotation))
        x = ttnn.add(x, model.mlp(ttnn.rms_norm(x, epsilon=1e-5, weight=weights["mlp_norm"]), weights))
    return ttnn.rms_norm(x, epsilon=1e-5, weight=model.norm)


def _ms(ns: float) -> str:
    return f"{ns / 1e6:,.3f} ms"


def _eager_and_traced(capture: ttnn.PerfCapture) -> tuple[float, float]:
    """The capture's predicted time with every op eager, and with every op traced (ns)."""
    eager = max(r.total_ns() for r in capture.retimed(traced=False))
    traced = max(r.total_ns() for r in capture.retimed(traced=True))
    return eager, traced


def predicted_lines(model: MeshModel, prefill: ttnn.PerfCapture) -> list[str]:
    """The demo's lines of predicted time: ``prefill`` (the capture of its forward pass), and one
    decode step of the same model, run here."""
    cache = caches(model)
    with ttnn.perf_capture() as decode:
        decode_step(model, cache, token=1, position=model.config.seq)
    prefill_eager, prefill_traced = _eager_and_traced(prefill)
    step_eager, step_traced = _eager_and_traced(decode)
    spec = model.mesh.system
    return [
        f"  predicted device time on {spec.name} ({spec.description}; meshnn's model, `meshnn perf` for each op):",
        f"    prefill of {model.config.seq} tokens  {_ms(prefill_traced)} traced, {_ms(prefill_eager)} eager",
        f"    decode, one user  {1e9 / step_traced:,.0f} tokens/s traced ({_ms(step_traced)} a token), "
        f"{1e9 / step_eager:,.0f} tokens/s eager",
    ]
