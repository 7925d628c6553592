"""The ops of a decode step, whose kilobytes make their time a matter of latencies and of the cores
their programs really use (figures: :mod:`meshnn.perf.latency`).

- scaled_dot_product_attention_decode (flash decode) [tt-metal: tech_reports/FlashAttention/
  FlashDecode.md]: the (user, kv head) pairs are spread over the op's grid; when there are fewer
  pairs than cores, each pair gets ``cores // pairs`` cores (at most ``max_cores_per_head_batch``),
  which split its cache in chunks of ``k_chunk`` positions; the cores that got chunks send their
  partial results (an output row and two statistics tiles) to one reducer, one after another.  The
  chunks' K and V stream from DRAM over the active cores' NoC links; per chunk a core multiplies its
  q tile row by K and the scores by V and runs the softmax on the scores.  A desc marked with the
  program of 2025-02 (:mod:`meshnn.perf.flash_decode`) adds each chunk's block-operation calls and
  merges the cores' results one after another.
- nlp_create_qkv_heads_decode: one core per user gathers that user's row of every q, k and v head,
  face row by face row (16 elements); nlp_concat_heads_decode: one core per head gathers that head's
  row of every user.
- paged_update_cache / update_cache: one core per user reads, rewrites and writes back the tile row
  holding its position in each of its heads (read-modify-write of ``head_dim / 32`` tiles).
- argmax: a scalar loop on data-movement cores; ``use_multicore`` splits the row over the grid
  (chunks of 16 elements, one DRAM word) and one core reduces the partial maxima, otherwise one core
  walks every element.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, AttentionConfig, OpDesc, OpFamily, TensorDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.flash_decode import DecodeProgram, chunk_call_cycles, merge_cycles, program_of
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, operand_cycles, sfpu_cycles_per_tile, traffic

FACE = 16
"""Elements in one row of a tile face: the unit the decode head ops move."""

ARGMAX_CHUNK = 16
"""Elements per core chunk of a multi-core argmax: one 32-byte DRAM word of bfloat16."""


def _t(n: int) -> int:
    return max(1, math.ceil(n / TILE))


def score_tile_cycles(arch: ArchPerf) -> float:
    """Softmax work on one score tile: exp on the SFPU, max / subtract / scale / sum on the FPU."""
    return sfpu_cycles_per_tile(arch, ["exp"]) + 4 * arch.fpu_eltwise_cycles_per_tile + 2 * arch.reduce_cycles_per_tile


def _multiply_cycles(arch: ArchPerf, fidelity: MathFidelity, tile_bytes: float) -> float:
    return arch.lofi_cycles_per_tile * fidelity.phases + operand_cycles(arch, tile_bytes)


def chunk_cycles(arch: ArchPerf, fidelity: MathFidelity, tile_bytes: float, k_t: int, d_t: int) -> float:
    """One K chunk's tile work on its core (``k_t`` positions' tiles, head dim ``d_t`` tiles): q's tile row by
    the chunk's K, then the scores by its V (``tile_bytes`` the mean operand tile), and the softmax on the
    scores."""
    return k_t * (2 * d_t * _multiply_cycles(arch, fidelity, tile_bytes) + score_tile_cycles(arch))


def dynamic_chunk(kv_len: int) -> int:
    """tt-metal's K chunk for a decode step given ``k_chunk_size=0``: the smallest of 32, 64, 128 and
    256 positions that holds the cache read, else 512."""
    return next((size for size in (32, 64, 128, 256) if kv_len <= size), 512)


def decode_split(pairs: int, cores: int, chunks: int, cap: int) -> tuple[int, int, int]:
    """(pairs per core, active cores per pair, chunks per active core) of a flash-decode program
    with ``pairs`` (user, kv head) pairs, ``cores`` cores and ``chunks`` K chunks per pair."""
    if pairs >= cores:
        return math.ceil(pairs / cores), 1, chunks
    per_pair = max(1, min(cores // pairs, cap))
    active = min(per_pair, chunks)
    return 1, active, math.ceil(chunks / active)


def predict_sdpa_decode(desc: OpDesc, machine: Machine) -> Prediction:
    """Decode attention ``desc`` (inputs q ``[1, users, heads, d]``, the k and v caches ``[users, kv
    heads, S, d]`` or paged ``[blocks, kv heads, block, d]``[, ...]; output o) on ``machine``."""
    q, k, v = desc.inputs[:3]
    arch = machine.system.arch
    fidelity = desc.fidelity or MathFidelity.HiFi2
    config = desc.attention or AttentionConfig(causal=False)
    users, heads = (q.shape[-3] if len(q.shape) >= 3 else 1), q.shape[-2]
    kv_heads, d = (k.shape[-3] if len(k.shape) >= 3 else 1), k.shape[-1]
    positions = k.shape[-2] * _pages(desc)
    kv_len = min(config.kv_len or positions, positions)
    chunk = config.k_chunk if config.k_chunk >= TILE else dynamic_chunk(kv_len)
    chunks, pairs = math.ceil(kv_len / chunk), users * kv_heads
    cores = grid_cores(machine, desc.core_grid)
    per_core, active, chunks_per_core = decode_split(pairs, cores, chunks, config.max_cores_per_head_batch)
    k_t, d_t = _t(chunk), _t(d)
    step = chunk_cycles(arch, fidelity, (q.tile_bytes + k.tile_bytes) / 2, k_t, d_t)
    serial = program_of(desc) is DecodeProgram.SERIAL_MERGE
    cycles = per_core * chunks_per_core * step
    if serial:  # a call a block operation (meshnn.perf.flash_decode)
        cycles += per_core * chunk_call_cycles(chunks_per_core)
    read = min(1.0, chunks * chunk * pairs / max(1, k.volume // max(d, 1)))
    readers = min(cores, pairs * active)
    memory = traffic(machine, [(q, 1.0), (k, read), (v, read), *((t, 1.0) for t in desc.outputs)], readers)
    latency = op_latency(arch.arch)
    partial = (d_t + 2) * (2048 / arch.noc_bytes_per_cycle + 3 * arch.fpu_eltwise_cycles_per_tile)
    partial += latency.dram_read_latency_cycles
    reduce_ns = (active - 1) * arch.cycles_ns(merge_cycles(partial) if serial else partial)
    notes = (f"{pairs} (user, kv head) pairs, {active} core(s) each, {chunks_per_core} chunk(s) of {chunk} a core",)
    if serial:
        notes += (f"the program of {DecodeProgram.SERIAL_MERGE.value}: {active - 1} merge(s) one after another",)
    if config.kv_len is None:
        notes += ("positions on the device (cur_pos_tensor): timed as reading the whole cache",)
    return kernel_prediction(
        arch,
        cycles,
        memory,
        readers,
        fixed_ns=arch.op_launch_ns + latency.sdpa_decode_setup_ns + reduce_ns,
        fidelity=fidelity,
        flops=4.0 * users * heads * kv_len * d,
        notes=notes,
    )


def _pages(desc: OpDesc) -> int:
    """Blocks per user of a paged cache (its page table is the op's input after v), else 1."""
    for t in desc.inputs[3:]:
        if t.dtype == "INT32" and len(t.shape) == 2 and t.shape[0] > 0:
            return t.shape[1]
    return 1


def predict_heads_decode(desc: OpDesc, machine: Machine) -> Prediction:
    """nlp_create_qkv_heads_decode (input ``[1, 1, users, (q + 2 kv) x d]``; outputs q, k, v ``[1,
    users, heads, d]``) or nlp_concat_heads_decode (input ``[1, users, heads (padded), d]``; output
    ``[1, 1, users, heads x d]``): face rows gathered by one core per user or per head."""
    arch = machine.system.arch
    latency = op_latency(arch.arch)
    first, out = desc.inputs[0], desc.outputs[0]
    if desc.family is OpFamily.HEADS_DECODE:
        users = (out.logical_shape or out.shape)[-3]
        heads = sum((t.logical_shape or t.shape)[-2] for t in desc.outputs)
        cores, rows, setup = users, heads * math.ceil(out.shape[-1] / FACE), latency.create_heads_setup_ns
    else:
        users = (first.logical_shape or first.shape)[-3]
        heads, d = (desc.inputs[0].logical_shape or first.shape)[-2], first.shape[-1]
        cores, rows, setup = heads, users * math.ceil(d / FACE), latency.concat_heads_setup_ns
    moved = [(t, _logical_share(t)) for t in (*desc.inputs, *desc.outputs)]  # only the real rows move
    memory = traffic(machine, moved, cores)
    gather = rows * latency.face_row_ns * arch.clock_hz / 1e9  # in cycles: the face rows a core gathers
    notes = (f"{cores} core(s), {rows} face rows each",)
    return kernel_prediction(
        arch, gather, memory, min(cores, machine.system.compute_cores), fixed_ns=arch.op_launch_ns + setup, notes=notes
    )


def _logical_share(tensor: TensorDesc) -> float:
    """The fraction of a tensor's padded bytes its logical shape holds (a decode row of 32)."""
    if tensor.logical_shape is None:
        return 1.0
    return min(1.0, math.prod(tensor.logical_shape) / max(1, tensor.volume))


def predict_cache_update(desc: OpDesc, machine: Machine) -> Prediction:
    """paged_update_cache / update_cache: ``inputs[0]`` the cache, ``inputs[1]`` the new row per user
    ``[1, users, heads, d]``; one core per user rewrites ``heads x d / 32`` tiles in place."""
    cache, new = desc.inputs[0], desc.inputs[1]
    arch = machine.system.arch
    latency = op_latency(arch.arch)
    users = (new.logical_shape or new.shape)[-3] if len(new.shape) >= 3 else 1
    heads = cache.shape[-3] if len(cache.shape) >= 3 else 1
    tiles = heads * _t(cache.shape[-1])  # per user: the tile row holding the position, in every head
    cores = min(users, grid_cores(machine, desc.core_grid))
    touched = users * tiles / max(cache.tiles, 1)
    memory = traffic(machine, [(new, 1.0), (cache, 2 * touched)], cores)
    rewrite = 4 * operand_cycles(arch, cache.tile_bytes)  # untilize (unpack, pack), the row set, tilize again
    cycles = math.ceil(users / cores) * (latency.dram_read_latency_cycles + tiles * rewrite)
    return kernel_prediction(arch, cycles, memory, cores, fixed_ns=arch.op_launch_ns + latency.cache_update_setup_ns)


def predict_argmax(desc: OpDesc, machine: Machine) -> Prediction:
    """argmax over the last dim of a row-major ``[..., rows, width]`` input: a scalar loop over each
    core's elements (``use_multicore``: the width split over the grid), then one core's reduction of
    the partial maxima."""
    x = desc.inputs[0]
    arch = machine.system.arch
    latency = op_latency(arch.arch)
    width = x.shape[-1]
    rows = max(1, x.volume // max(width, 1))
    multicore = ("use_multicore", "True") in desc.attributes
    cores = min(grid_cores(machine, desc.core_grid), math.ceil(width / ARGMAX_CHUNK)) if multicore else 1
    per_core = rows * math.ceil(width / cores)
    cycles = (per_core + rows * cores) * latency.riscv_cycles_per_element  # the loop, then the reducer's
    memory = traffic(machine, [(t, 1.0) for t in (*desc.inputs, *desc.outputs)], cores)
    notes = (f"argmax on {cores} core(s){'' if multicore else ' (use_multicore=False)'}",)
    return kernel_prediction(arch, cycles, memory, cores, notes=notes)
