"""Data movement: copy / reshard, concat, slice, pad, permute, transpose, tilize, untilize, embedding.

These read what they need once and write their output once, so on DRAM tensors the memory time
decides; the reads of a slice cover only the output's part, an embedding reads one weight row per
token (row-sized pages), each row a DRAM round trip its core waits for (into a tiled output, tt-metal's fused
program: :mod:`meshnn.perf.embedding_program`).  Tilize and untilize pass
every tile through the unpacker and packer,
transpose and permute transpose every tile on the FPU: those costs are estimates from the
engines' rates, uncalibrated.  The tiled reshards, slice, concat and CN transpose are timed page by page with
the launch of a program without a compute kernel (:mod:`meshnn.perf.page_programs`).  Three programs are timed by
their waits instead, with that launch too (they have no compute kernel either): a tiled reshape that moves the
tiles' rows and a tiled pad (:mod:`meshnn.perf.movement_programs`), and a tiled permute that keeps its last dim
and moves the second-last (:mod:`meshnn.perf.transpose_hc`).
"""

from __future__ import annotations

import math

from meshnn.perf.desc import OpDesc, OpFamily, TensorDesc
from meshnn.perf.embedding_program import is_fused_embedding, predict_fused_embedding
from meshnn.perf.latency import op_latency
from meshnn.perf.movement_programs import is_tiled_pad, is_tiled_reshape_program, tiled_pad_cycles, tiled_reshape_cycles
from meshnn.perf.page_programs import is_page_program, launch_cycles, predict_page_program
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, operand_cycles, traffic
from meshnn.perf.transpose_hc import hc_transpose_cycles, is_hc_transpose

TRANSPOSE_CYCLES_PER_TILE = 32
"""FPU cycles of a 32x32 tile transpose (four 16x16 faces through srcA): an estimate."""


def _reads(desc: OpDesc) -> list[tuple[TensorDesc, float]]:
    """What the op reads: a slice only its output's part, an embedding one weight row per token."""
    out = desc.outputs[0]
    if desc.family is OpFamily.SLICE:
        source = desc.inputs[0]
        return [(source, min(1.0, out.volume / max(source.volume, 1)))]
    if desc.family is OpFamily.EMBEDDING and len(desc.inputs) > 1:
        ids, weights = desc.inputs[0], desc.inputs[1]
        return [(ids, 1.0), (weights, min(1.0, out.volume / max(weights.volume, 1)))]
    return [(t, 1.0) for t in desc.inputs]


def _cycles_per_tile(desc: OpDesc, machine: Machine) -> float:
    arch = machine.system.arch
    tile = desc.outputs[0].tile_bytes
    if desc.family in (OpFamily.TILIZE, OpFamily.UNTILIZE):
        return 2 * operand_cycles(arch, tile)  # unpack, then pack
    if desc.family in (OpFamily.TRANSPOSE, OpFamily.PERMUTE):
        return operand_cycles(arch, tile) + TRANSPOSE_CYCLES_PER_TILE
    return 0.0


def predict_movement(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a data-movement ``desc`` on ``machine``."""
    if is_page_program(desc):  # reshards, tiled slice / concat: page by page, a data-movement-only launch
        return predict_page_program(desc, machine)
    if is_fused_embedding(desc):  # into a tiled output: blocks of 32 ids, their rows read, tilized, written
        return predict_fused_embedding(desc, machine)
    arch = machine.system.arch
    out_tiles = sum(t.tiles for t in desc.outputs)
    cores = max(1, min(grid_cores(machine, desc.core_grid), out_tiles))
    cycles = math.ceil(out_tiles / cores) * _cycles_per_tile(desc, machine)
    launch = None  # the generic launch, but for the data-movement-only programs below
    if is_tiled_reshape_program(desc):  # a core's map, input tiles and writes, each waited for
        cycles, launch = tiled_reshape_cycles(desc, machine, cores), arch.cycles_ns(launch_cycles(cores))
    elif is_hc_transpose(desc):  # each face row written to its own output page; the input tiles split
        cycles, cores = hc_transpose_cycles(desc, machine, grid_cores(machine, desc.core_grid))
        memory = traffic(machine, _reads(desc) + [(t, 1.0) for t in desc.outputs], cores)
        return kernel_prediction(arch, cycles, memory, cores, fixed_ns=arch.cycles_ns(launch_cycles(cores)))
    elif is_tiled_pad(desc):  # the padding tile filled a byte at a time, then each tile written and waited for
        cycles, launch = tiled_pad_cycles(desc, machine, cores), arch.cycles_ns(launch_cycles(cores))
    if desc.family is OpFamily.EMBEDDING:  # each row is one DRAM read whose data the tilize waits for
        rows = desc.outputs[0].volume // max(desc.outputs[0].shape[-1], 1)
        row_bytes = desc.inputs[-1].shape[-1] * 2 if desc.inputs[-1].layout.name == "ROW_MAJOR" else 0
        per_row = op_latency(machine.system.arch.arch).dram_read_latency_cycles + row_bytes / arch.noc_bytes_per_cycle
        cycles += math.ceil(rows / cores) * per_row
    memory = traffic(machine, _reads(desc) + [(t, 1.0) for t in desc.outputs], cores)
    return kernel_prediction(arch, cycles, memory, cores, fixed_ns=launch)
