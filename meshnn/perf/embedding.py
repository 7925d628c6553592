"""``ttnn.embedding`` with a tiled output, timed as tt-metal's fused embedding program runs it.

tt-metal (2026-06) runs an embedding whose ids are row-major and whose output is tiled
(``layout=TILE_LAYOUT``: the op's ``tilized``) with ttnn/cpp/ttnn/operations/embedding/device/
embeddings_fused_program_factory.cpp: the output's rows in blocks of 32 (one tile row), the blocks split
over the grid (``split_work_to_cores``: a core a block while there are cores), three kernels a core:

- the reader (kernels/dataflow/embeddings_tilize.cpp), per block: the block's 32 ids read and waited
  for, then the 32 table rows read, all issued before one barrier (``read_token_async``), so a block's
  rows cost one DRAM round trip and their bytes at the core's NoC link rate (the reads in flight together,
  as :func:`meshnn.perf.traffic.traffic` takes a block of reads issued before a wait);
- the compute kernel tilizes the block's tiles (tilize.cpp / tilize_chunked.cpp), at the cycles a tile
  tt-metal's conv2d program factory measured for a bfloat16 tilize (:mod:`meshnn.perf.conv_rates`);
- the writer (writer_unary_interleaved_start_id.cpp) writes each output tile, flushed before the next,
  and waits for the last.

A sharded output is the program's own circular buffer: each core of the shard grid takes its shard (its
rows' blocks, its columns of each table row, one read a row of its columns' bytes) and no writer runs.

With one block a core the three run one after the other; with more, the reader's next block overlaps the
busy core's tilize and writes, so a core takes its reads for every block and the last block's tilize and
writes.  The DRAM round trip is :attr:`~meshnn.perf.latency.OpLatency.tile_round_trip_cycles` (fitted on
nlp_concat_heads' tile reads), an L1 one tt-npe's NoC write latency; nothing here is fitted to an
embedding figure (tests/perf/published_deepseek_modules.py and published_galaxy_units.py check it).  A
row-major output (the RM program) stays with :mod:`meshnn.perf.movement`.  Units: chip cycles.
"""

from __future__ import annotations

import math

from meshnn.perf.conv_rates import RATES
from meshnn.perf.desc import TILE, BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, page_bytes, traffic, transfer_efficiency


def is_tilized_embedding(desc: OpDesc) -> bool:
    """Whether ``desc`` is an embedding of row-major ids into a tiled output (the fused program)."""
    if desc.family is not OpFamily.EMBEDDING or len(desc.inputs) < 2 or not desc.outputs:
        return False
    ids, weights, out = desc.inputs[0], desc.inputs[1], desc.outputs[0]
    return ids.layout is Layout.ROW_MAJOR and weights.layout is Layout.ROW_MAJOR and out.layout is Layout.TILE


def _trip(arch: ArchPerf, tensor: TensorDesc) -> float:
    latency = op_latency(arch.arch)
    return latency.tile_round_trip_cycles if tensor.buffer is BufferType.DRAM else latency.noc_write_latency_cycles


def _transfer(arch: ArchPerf, size: int) -> float:
    return size / (arch.noc_bytes_per_cycle * transfer_efficiency(arch, size))


def block_cycles(desc: OpDesc, arch: ArchPerf, columns: int) -> tuple[float, float]:
    """(the reader's cycles for one block of 32 ids, the tilize and writes of one block) on a core that
    takes ``columns`` of each row."""
    ids, weights, out = desc.inputs[0], desc.inputs[1], desc.outputs[0]
    row = max(1, page_bytes(weights) * columns // max(1, weights.shape[-1]))
    id_bytes = TILE * max(1, ids.nbytes // max(1, ids.volume))
    read = _trip(arch, ids) + _transfer(arch, id_bytes) + _trip(arch, weights) + TILE * row / arch.noc_bytes_per_cycle
    tiles = math.ceil(columns / TILE)
    tilize = tiles * RATES[arch.arch].tilize(False, "BFLOAT16", False)
    write = 0.0 if out.sharded else tiles * _transfer(arch, out.tile_bytes) + _trip(arch, out)
    return read, tilize + write


def shards(desc: OpDesc, machine: Machine) -> tuple[int, int, int]:
    """(cores, blocks of 32 ids a core, output columns a core): a sharded output's shard grid (the op's
    core grid; height-sharded: rows split, else columns), else the blocks split over the grid, whole rows."""
    out = desc.outputs[0]
    blocks = max(1, math.ceil(out.volume // max(1, out.shape[-1]) / TILE))
    grid = grid_cores(machine, desc.core_grid)
    if not out.sharded:
        cores = max(1, min(grid, blocks))
        return cores, math.ceil(blocks / cores), out.shape[-1]
    if out.memory is MemoryLayout.HEIGHT_SHARDED:
        return grid, math.ceil(blocks / grid), out.shape[-1]
    columns = math.ceil(math.ceil(out.shape[-1] / TILE) / grid) * TILE  # width-sharded (block: the same columns)
    return grid, blocks, columns


def predict_tilized_embedding(desc: OpDesc, machine: Machine) -> Prediction:
    """The kernel time of a tiled-output embedding ``desc`` on ``machine`` (see the module docstring)."""
    arch = machine.system.arch
    out = desc.outputs[0]
    cores, per_core, columns = shards(desc, machine)
    read, rest = block_cycles(desc, arch, columns)
    cycles = per_core * read + rest
    rows = out.volume // max(1, out.shape[-1])
    weights = desc.inputs[1]
    moves = [(desc.inputs[0], 1.0), (weights, min(1.0, rows / max(1, weights.volume // weights.shape[-1]))), (out, 1.0)]
    memory = traffic(machine, moves, cores)
    note = (f"tilized embedding: {per_core} blocks of 32 ids a core, {cores} cores (meshnn.perf.embedding)",)
    return kernel_prediction(arch, cycles, memory, cores, notes=note)
