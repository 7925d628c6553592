"""A tiled permute that keeps the last dim and moves the second-last: for dims (0, 2, 1, 3) tt-metal runs a transpose
over H and C (TransposeDeviceOperation, transpose/device/transpose_hc_tiled_interleaved_program_factory.cpp), for
the others its own row-invariant program (permute/device/permute_tiled_program_factory.cpp, MultiCoreTileRowInvariant:
the same reader, writer_permute_interleaved_tiled_row_invariant.cpp), which writes the same face rows.

Its input tiles are split over the grid (split_work_to_cores); a core reads each tile (a two-tile circular buffer,
so the next read overlaps) and writes each of the tile's face rows (16 elements, one of its real rows and face
columns) to the output tile that row lands in, a different page each, then waits for the writes.  Where C is
not a whole number of tiles, the output's last channel tile row is padded: a second split over the padded
tiles (N x H x Wt), each written as its padded faces' rows in one write a face (the row-invariant program: one
write a face row).  A write costs a NoC write's
latency (:attr:`~meshnn.perf.latency.OpLatency.noc_write_latency_cycles`: the accessor's page lookup and the
command to a page on another core) plus its bytes at the NoC's rate; a read the tile round trip
(``tile_round_trip_cycles``) plus its bytes.  No constant is fitted here.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import Layout, MemoryLayout, OpDesc, OpFamily
from meshnn.perf.latency import op_latency
from meshnn.perf.movement_programs import waited_read_cycles, waited_write_cycles
from meshnn.perf.systems import Machine

TILE = 32
FACE = 16
HC_DIMS = ("0,2,1,3", "1,0,2")  # rank 4 and rank 3: C and H swapped, the rest in place


def _dims(desc: OpDesc) -> tuple[int, ...]:
    text = dict(desc.attributes).get("dims", "")
    return tuple(int(d) for d in text.split(",")) if text else ()


def is_hc_transpose(desc: OpDesc) -> bool:
    """Whether ``desc`` is a tiled, interleaved permute that keeps its last dim and moves the second-last (its
    ``dims`` attribute): C and H swapped, or another row-invariant permute."""
    if desc.family not in (OpFamily.PERMUTE, OpFamily.TRANSPOSE) or len(desc.inputs) != 1:
        return False
    source, out = desc.inputs[0], desc.outputs[0]
    tiled = source.layout is Layout.TILE and out.layout is Layout.TILE
    interleaved = source.memory is MemoryLayout.INTERLEAVED and out.memory is MemoryLayout.INTERLEAVED
    dims = _dims(desc)
    rank = len(dims)
    return tiled and interleaved and rank >= 3 and dims[-1] == rank - 1 and dims[-2] != rank - 2


def hc_transpose_cycles(desc: OpDesc, machine: Machine, cores: int) -> float:
    """Cycles of the busiest core of the HC transpose or row-invariant permute program on a grid of ``cores`` (see
    the module's text): its input tiles split over the grid, then its padded tiles split again."""
    source = desc.inputs[0]
    lat = op_latency(machine.system.arch.arch)
    logical = source.logical_shape or source.shape
    c, h = (1, 1, *logical)[-3], logical[-2]
    ht = -(-h // TILE)
    row_bytes = source.tile_bytes / (TILE * 2)  # one face row: a 64th of the tile

    read = waited_read_cycles(machine, source.tile_bytes)
    face_rows = 2 * h / ht  # a tile's real rows, each in two faces, the mean over a column of tiles
    per_tile = max(read, face_rows * waited_write_cycles(machine, row_bytes) + lat.noc_write_latency_cycles)
    cycles = math.ceil(source.tiles / cores) * per_tile
    dims = _dims(desc)
    x = logical[dims[-2]] if len(dims) == len(logical) else c  # the output's new second-last dim
    if x % TILE:  # the last tile row of the output's padded rows, a write a face (HC) or a face row
        first = (x % TILE) // FACE
        lines = [FACE - (x % TILE) % FACE] + [FACE] * (1 - first)
        if ",".join(map(str, dims)) in HC_DIMS:
            padded = 2 * sum(waited_write_cycles(machine, k * row_bytes) for k in lines)
        else:
            padded = 2 * sum(lines) * waited_write_cycles(machine, row_bytes)
        cycles += math.ceil(desc.outputs[0].tiles / -(-x // TILE) / cores) * padded
    return cycles
