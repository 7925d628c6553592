"""The prefill head ops on interleaved tensors: ``nlp_create_qkv_heads`` (the fused QKV rows cut into
q, k and v heads) and ``nlp_concat_heads`` (the heads put back side by side), as their programs run.

Both programs (tt-metal nlp_create_qkv_heads_program_factory.cpp, nlp_concat_heads_program_factory.cpp)
split the work by rows of tiles: a block is one tile row of ``batch x sequence`` (``split_work_to_cores``
over the compute grid), so a 128-token prompt of one user runs on 4 cores whatever its width or heads.
Each core's reader moves its blocks' tiles one at a time: it issues a tile's read and waits for it
(``noc_async_read_tile``, then ``noc_async_read_barrier``) before the next, so a tile costs a DRAM round
trip (:attr:`OpLatency.tile_round_trip_cycles`) and its transfer at the NoC's rate for its size, not
its share of the DRAM bandwidth; the writer streams behind it.  The bandwidth still bounds a long
sequence (the memory time of the tensors' bytes, as for any copy).  Sharded inputs run other programs
(timed as copies).
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, OpDesc
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, traffic, transfer_efficiency

CREATE, CONCAT = "NlpCreateHeadsDeviceOperation", "NLPConcatHeadsDeviceOperation"


def is_heads_prefill(desc: OpDesc) -> bool:
    """Whether ``desc`` is nlp_create_qkv_heads or nlp_concat_heads on an interleaved input."""
    return desc.op_code in (CREATE, CONCAT) and bool(desc.inputs) and not desc.inputs[0].sharded


def heads_split(desc: OpDesc, machine: Machine) -> tuple[int, int]:
    """(cores used, tiles the busiest core reads): blocks of one ``batch x sequence`` tile row, each
    the width of the QKV row (create) or all heads' widths (concat)."""
    shape = (1,) * (4 - len(desc.inputs[0].shape)) + tuple(desc.inputs[0].shape[-4:])
    batch, heads, seq, width = shape
    width_tiles = math.ceil(width / TILE)
    if desc.op_code == CREATE:  # [B, 1, S, (q + 2 kv) x d]; a separate kv input adds its row
        blocks = batch * heads * math.ceil(seq / TILE)
        per_block = width_tiles + sum(math.ceil(t.shape[-1] / TILE) for t in desc.inputs[1:2])
    else:  # [B, heads, S, d] -> [B, 1, S, heads x d]
        blocks = batch * math.ceil(seq / TILE)
        per_block = heads * width_tiles
    cores = max(1, min(grid_cores(machine, desc.core_grid), blocks))
    return cores, math.ceil(blocks / cores) * per_block


def predict_heads_prefill(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of nlp_create_qkv_heads / nlp_concat_heads on an interleaved input on ``machine``."""
    arch = machine.system.arch
    cores, tiles = heads_split(desc, machine)
    tile = desc.inputs[0].tile_bytes
    transfer = tile / (arch.noc_bytes_per_cycle * transfer_efficiency(arch, tile))
    cycles = tiles * (op_latency(arch.arch).tile_round_trip_cycles + transfer)
    memory = traffic(machine, [(t, 1.0) for t in (*desc.inputs, *desc.outputs)], cores)
    notes = (f"{cores} core(s), {tiles} tiles each, read one at a time",)
    return kernel_prediction(arch, cycles, memory, cores, notes=notes)
