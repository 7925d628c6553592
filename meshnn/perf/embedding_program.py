"""``ttnn.embedding`` into a tiled output: tt-metal's fused program (embedding/device/
embeddings_fused_program_factory.cpp, chosen when the output is tilized and the ids are row-major), timed as its
three kernels move one block of 32 ids.

- The work is blocks of 32 output rows (one tile row): an interleaved output's blocks split over the grid
  (``split_work_to_cores``: 32 ids one core, 128 ids four), a sharded output's shards each on its own core, a core
  taking its shard's columns of the table only.
- The reader (embeddings_tilize.cpp), a block at a time: reads the block's 32 ids and waits for them, then issues the
  32 table rows' reads (a row, or the shard's part of it) back to back and waits once.
- The compute kernel tilizes the block (tilize_chunked.cpp: each tile unpacked and packed once).
- The writer writes each output tile (an interleaved page: a write's issue and its bytes, then the last write's
  landing); a sharded output is the compute kernel's own circular buffer, so it only waits.

A read's round trip is :attr:`~meshnn.perf.latency.OpLatency.tile_round_trip_cycles` from DRAM (the NoC's far-end
latency, ``dram_read_latency_cycles``, from L1), its bytes at one core's NoC rate; a page write costs
:mod:`meshnn.perf.page_programs`' ``write_issue_cycles`` and its bytes.  The program has a compute kernel, so its fixed
cost is the generic launch.  Nothing here is fitted: the unit embeddings of tests/perf/published_decode.py and
published_galaxy_units.py and the DeepSeek embedding modules check it.  Units: chip cycles.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import ROW_MAJOR_ELEMENT_BYTES, Layout, OpDesc, OpFamily, TensorDesc
from meshnn.perf.latency import op_latency
from meshnn.perf.page_programs import PAGE_FIGURES, shard_cores
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, operand_cycles, traffic

TILE = 32
ID_BYTES = 4  # a uint32 id


def is_fused_embedding(desc: OpDesc) -> bool:
    """Whether ``desc`` is an embedding of row-major ids from a row-major table into a tiled output (the fused
    program)."""
    if desc.family is not OpFamily.EMBEDDING or len(desc.inputs) != 2 or len(desc.outputs) != 1:
        return False
    ids, table = desc.inputs
    return ids.layout is Layout.ROW_MAJOR and table.layout is Layout.ROW_MAJOR and desc.outputs[0].layout is Layout.TILE


def _trip(machine: Machine, tensor: TensorDesc) -> float:
    return op_latency(machine.system.arch.arch).read_trip_cycles(tensor.in_dram)


def embedding_cycles(desc: OpDesc, machine: Machine) -> tuple[float, int]:
    """(cycles of the busiest core, the program's cores) of the fused embedding program (see the module's text)."""
    arch = machine.system.arch
    ids, table = desc.inputs
    out = desc.outputs[0]
    grid = grid_cores(machine, desc.core_grid)
    blocks = math.ceil(math.prod(out.shape[:-1]) / TILE)
    width_tiles = math.ceil(out.shape[-1] / TILE)
    if out.sharded:
        cores, shard_tiles = shard_cores(out, grid)
        per_core = max(1, shard_tiles // width_tiles) if out.memory.name == "HEIGHT_SHARDED" else blocks
        tiles = width_tiles if out.memory.name == "HEIGHT_SHARDED" else max(1, shard_tiles // blocks)
    else:
        cores = max(1, min(grid, blocks))
        per_core, tiles = math.ceil(blocks / cores), width_tiles
    row_bytes = tiles * TILE * ROW_MAJOR_ELEMENT_BYTES.get(table.dtype, 2)  # a table row's share of the block
    noc = arch.noc_bytes_per_cycle
    reader = _trip(machine, ids) + TILE * ID_BYTES / noc + TILE * row_bytes / noc + _trip(machine, table)
    tilize = tiles * 2 * operand_cycles(arch, out.tile_bytes)  # each tile unpacked, then packed
    writer = 0.0
    if not out.sharded:
        landing = op_latency(arch.arch).noc_write_latency_cycles
        writer = tiles * (PAGE_FIGURES.write_issue_cycles + out.tile_bytes / noc) + landing
    return per_core * (reader + tilize + writer), cores


def predict_fused_embedding(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of the fused embedding program ``desc`` on ``machine``: its busiest core's blocks, the ids, the
    table's rows read and the output written, and the generic launch (the program has a compute kernel)."""
    cycles, cores = embedding_cycles(desc, machine)
    ids, table = desc.inputs
    out = desc.outputs[0]
    rows = math.prod(out.shape[:-1])
    moves = [(ids, 1.0), (table, min(1.0, rows / max(1, math.prod(table.shape[:-1])))), (out, 1.0)]
    return kernel_prediction(machine.system.arch, cycles, traffic(machine, moves, cores), cores)
