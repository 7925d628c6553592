"""Attention: scaled_dot_product_attention (prefill, chunked, flash style) and the KV-cache fill of a
whole prompt (the decode step's forms are in :mod:`meshnn.perf.decode_ops`).

Prefill: every (batch, head, Q chunk) is a unit of work on one core; a unit multiplies its Q chunk
by all K (causal: the K up to its position) and the scores by V, with an exp per score tile, and
streams its head's K and V from memory again (so K/V traffic grows with the number of Q chunks).
The cache fill writes each tile of the prompt once.
Ring-distributed prefill (an output of fewer rows than q: this device's two chunks of q's rows, an
early and a late one) works on those rows only, each attending half of the keys on average.
Tensors: prefill q [b, nh, sq, d], k and v [b, nkv, sk, d]; the fill: inputs[0] the cache, inputs[1]
the new values.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, AttentionConfig, OpDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, operand_cycles, sfpu_cycles_per_tile, traffic


def _t(n: int) -> int:
    return max(1, math.ceil(n / TILE))


def _score_tile_cycles(arch: ArchPerf) -> float:
    """Softmax work on one score tile: exp on the SFPU, max / subtract / scale / sum on the FPU."""
    return sfpu_cycles_per_tile(arch, ["exp"]) + 4 * arch.fpu_eltwise_cycles_per_tile + 2 * arch.reduce_cycles_per_tile


def _multiply_cycles(arch: ArchPerf, fidelity: MathFidelity, tile_bytes: float) -> float:
    return arch.lofi_cycles_per_tile * fidelity.phases + operand_cycles(arch, tile_bytes)


def predict_sdpa(desc: OpDesc, machine: Machine) -> Prediction:
    """Prefill attention ``desc`` (inputs q, k, v[, mask]; output o) on ``machine``."""
    q, k, v = desc.inputs[:3]
    arch = machine.system.arch
    fidelity = desc.fidelity or MathFidelity.HiFi2
    config = desc.attention or AttentionConfig()
    batch, heads, sq, d = (1,) * (4 - len(q.shape)) + q.shape[-4:]
    kv_heads, sk = k.shape[-3] if len(k.shape) > 2 else 1, k.shape[-2]
    rows = desc.outputs[0].shape[-2] if desc.outputs else sq
    ring = rows < sq  # ring-distributed: this device's chunk pair of q's rows, half the keys on average
    sq = rows if ring else sq
    q_chunks = math.ceil(sq / max(config.q_chunk, TILE))
    causal = (1 + 1 / q_chunks) / 2 if config.causal and sq == sk else 1.0
    if ring and config.causal:
        causal = 0.5
    units = batch * heads * q_chunks
    cores = min(grid_cores(machine, desc.core_grid), units)
    q_rows, k_t, d_t = _t(min(config.q_chunk, sq)), _t(sk), _t(d)
    per_unit = 2 * q_rows * k_t * d_t * _multiply_cycles(arch, fidelity, (q.tile_bytes + k.tile_bytes) / 2)
    per_unit += q_rows * k_t * _score_tile_cycles(arch)
    cycles = math.ceil(units / cores) * per_unit * causal
    rereads = max(1, heads // max(kv_heads, 1)) * q_chunks * causal
    once = [(t, 1.0) for t in (*desc.inputs[3:], *desc.outputs)]
    moves = [(q, sq / q.shape[-2]), (k, rereads), (v, rereads), *once]
    memory = traffic(machine, moves, cores)
    return kernel_prediction(
        arch, cycles, memory, cores, fidelity=fidelity, flops=4.0 * batch * heads * sq * sk * d * causal
    )


def predict_cache_fill(desc: OpDesc, machine: Machine) -> Prediction:
    """A KV-cache fill: ``inputs[0]`` the cache, ``inputs[1]`` a whole prompt's keys or values
    ``[1, heads, s, d]``, written once, one tile row of a head per core."""
    cache, new = desc.inputs[0], desc.inputs[1]
    arch = machine.system.arch
    d_t = _t(cache.shape[-1])
    touched = new.tiles / max(cache.tiles, 1)
    cores = min(grid_cores(machine, desc.core_grid), max(1, new.tiles // d_t))
    memory = traffic(machine, [(new, 1.0), (cache, touched)], cores)
    return kernel_prediction(arch, 0.0, memory, cores)
