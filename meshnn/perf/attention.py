"""Attention: scaled_dot_product_attention (prefill, chunked, flash style) and the KV-cache fill of a
whole prompt (the decode step's forms are in :mod:`meshnn.perf.decode_ops`).

Prefill, as the flash kernel runs (tt-metal sdpa_program_factory.cpp, kernels/compute/sdpa.cpp): the
(batch, head, Q chunk) units are split over the grid by batch, then heads, then Q chunks, and each core
runs its Q chunks one K chunk at a time (causal: the K chunks up to the Q chunk's end); a causal split
whose cores hold an even number of Q chunks pairs a low chunk with a high one (``BALANCED_Q_PARALLEL``),
else the core holding the last chunks does the most.  The op lasts as long as its busiest core's
K-chunk steps; a step multiplies its Q chunk by the K chunk and the scores by V and runs its block
operations on the score tiles, the output accumulator and the statistics (:mod:`meshnn.perf.sdpa_step`,
fitted to FlashAttention.md's chart).  Each unit streams its head's K and V from memory again (so K/V traffic
grows with the number of Q chunks); a causal call given a mask (the 2024 kernel the chart timed) reads
the mask tiles of the K chunks crossing each Q chunk's diagonal, per head.  The reader runs ahead of the
compute kernel and the writer behind it, so of a core's units only the first one's start and the last
one's end are exposed (:func:`exposed_cycles`): the reader reads the first Q chunk and waits for it, then the
first K chunk and waits for it, before the first step can start (reader_interleaved.cpp:
read_chunk_with_padding ends with a read barrier); after the last step the output block is normalised by
its row sums' reciprocals and written, and the writer waits for its writes (writer_interleaved.cpp).
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
from meshnn.perf.movement_programs import waited_read_cycles, waited_write_cycles
from meshnn.perf.prediction import Prediction
from meshnn.perf.sdpa_step import INTERMEDIATE_TILE_BYTES, circular_buffer_bytes, step_cycles
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, operand_cycles, traffic


def _t(n: int) -> int:
    return max(1, math.ceil(n / TILE))


def busiest_core_steps(batch: int, heads: int, q_chunks: int, k_steps, cores: int, causal: bool) -> tuple[int, int]:
    """(K-chunk steps of the busiest core, cores used) as sdpa_program_factory.cpp splits the work:
    batch, then heads, then Q chunks over ``cores``; ``k_steps(j)`` is Q chunk j's K-chunk count."""
    by_batch = min(batch, cores)
    by_head = min(cores // by_batch, heads)
    by_q = max(1, min(cores // (by_batch * by_head), q_chunks))
    per_core = math.ceil(q_chunks / by_q)
    if causal and per_core * by_q == q_chunks and per_core % 2 == 0:  # BALANCED_Q_PARALLEL: low + high pairs
        half = per_core // 2
        pairs = (range(c * half, (c + 1) * half) for c in range(by_q))
        worst = max(sum(k_steps(i) + k_steps(q_chunks - 1 - i) for i in held) for held in pairs)
    else:
        runs = (range(c * per_core, min(q_chunks, (c + 1) * per_core)) for c in range(by_q))
        worst = max(sum(k_steps(j) for j in held) for held in runs)
    units = math.ceil(batch / by_batch) * math.ceil(heads / by_head)
    return units * worst, by_batch * by_head * by_q


def diagonal_mask_reads(heads: int, q_chunks: int, q_size: int, k_size: int, seq: int) -> float:
    """How many times a causal call reads its ``[b, 1, s, s]`` mask's bytes, where it is given one (the
    flash kernel of 2024, which FlashAttention.md's chart timed: its reader reads, for every (batch, head,
    Q chunk) unit, the mask tiles of the K chunks that cross the unit's diagonal, and no others): the
    tiles read over the whole mask's, for all ``heads`` (the mask is shared by the heads, read by each)."""
    read = 0
    for j in range(q_chunks):
        low, high = j * q_size, min(seq, (j + 1) * q_size)
        first, last = low // k_size, math.ceil(high / k_size)
        read += _t(high - low) * sum(_t(min(seq, (c + 1) * k_size) - c * k_size) for c in range(first, last))
    return heads * read / _t(seq) ** 2


def exposed_cycles(desc: OpDesc, machine: Machine, q_rows: int, k_t: int, d_t: int, fidelity: MathFidelity) -> float:
    """Cycles of a core's work that no other stage hides: the first Q chunk's ``q_rows x d_t`` tiles read and
    waited for, then the first K chunk's ``k_t x d_t``; after the last step, the ``q_rows x d_t`` output tiles
    each multiplied by the row sums' reciprocal (fed its two bfloat16 operands, at ``fidelity``, packed), then
    written in the output's format and waited for."""
    q, k = desc.inputs[:2]
    out = desc.outputs[0] if desc.outputs else q
    arch = machine.system.arch
    first = waited_read_cycles(machine, q_rows * d_t * q.tile_bytes)
    first += waited_read_cycles(machine, k_t * d_t * k.tile_bytes)
    normalise = operand_cycles(arch, 2 * INTERMEDIATE_TILE_BYTES) + arch.fpu_eltwise_cycles_per_tile * fidelity.phases
    normalise += INTERMEDIATE_TILE_BYTES / arch.packer_bytes_per_cycle
    last = q_rows * d_t * normalise + waited_write_cycles(machine, q_rows * d_t * out.tile_bytes)
    return first + last


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
    q_size, k_size = min(max(config.q_chunk, TILE), sq), min(max(config.k_chunk, TILE), sk)
    q_chunks, k_chunks = math.ceil(sq / q_size), math.ceil(sk / k_size)
    causal = config.causal and sq == sk
    q_rows, k_t, d_t = _t(q_size), _t(k_size), _t(d)
    tiles = (q.tile_bytes, k.tile_bytes, v.tile_bytes)
    per_step = step_cycles(arch, fidelity, (q_rows, k_t, d_t), tiles, config.fp32_dest)
    grid = grid_cores(machine, desc.core_grid)
    if ring:  # each of this device's rows' chunks attends half of the keys on average
        units = batch * heads * q_chunks
        cores = min(grid, units)
        steps = math.ceil(units / cores) * k_chunks * (0.5 if config.causal else 1.0)
        share = 0.5 if config.causal else 1.0
    else:
        k_steps = (lambda j: min(k_chunks, math.ceil((j + 1) * q_size / k_size))) if causal else (lambda j: k_chunks)
        steps, cores = busiest_core_steps(batch, heads, q_chunks, k_steps, grid, causal)
        share = sum(k_steps(j) for j in range(q_chunks)) / (q_chunks * k_chunks)
    rereads = max(1, heads // max(kv_heads, 1)) * q_chunks * share
    masks = [(m, diagonal_mask_reads(heads, q_chunks, q_size, k_size, sk)) for m in desc.inputs[3:4]] if causal else []
    once = [(t, 1.0) for t in (*desc.inputs[3 + len(masks) :], *desc.outputs)]
    moves = [(q, sq / q.shape[-2]), (k, rereads), (v, rereads), *masks, *once]
    memory = traffic(machine, moves, cores)
    flops = 4.0 * batch * heads * sq * sk * d * share
    fixed = arch.op_launch_ns + (
        0.0 if ring else arch.cycles_ns(exposed_cycles(desc, machine, q_rows, k_t, d_t, fidelity))
    )
    return kernel_prediction(arch, steps * per_step, memory, cores, fixed_ns=fixed, fidelity=fidelity, flops=flops)


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


def fits_l1(desc: OpDesc, machine: Machine) -> bool:
    """Whether prefill attention ``desc``'s circular buffers fit a core's L1 on ``machine`` (the factory
    allocates them whole, so a chunk size that overflows cannot run): Q double-buffered where a core
    holds more than one Q chunk (the split of :func:`busiest_core_steps`)."""
    q, k, v = desc.inputs[:3]
    out = desc.outputs[0] if desc.outputs else q
    config = desc.attention or AttentionConfig()
    batch, heads, sq, d = (1,) * (4 - len(q.shape)) + q.shape[-4:]
    q_size, k_size = min(max(config.q_chunk, TILE), sq), min(max(config.k_chunk, TILE), k.shape[-2])
    q_chunks = math.ceil(sq / q_size)
    cores = grid_cores(machine, desc.core_grid)
    by_batch = min(batch, cores)
    by_q = max(1, min(cores // (by_batch * min(cores // by_batch, heads)), q_chunks))
    mask = desc.inputs[3].tile_bytes if len(desc.inputs) > 3 else 0
    tiles = (q.tile_bytes, k.tile_bytes, v.tile_bytes, mask, out.tile_bytes)
    needed = circular_buffer_bytes((_t(q_size), _t(k_size), _t(d)), tiles, math.ceil(q_chunks / by_q) > 1)
    return needed <= machine.system.spec.arch_spec.l1_bank_size
