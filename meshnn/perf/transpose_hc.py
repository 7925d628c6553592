"""A tiled permute that swaps the channel and height dims (dims (0, 2, 1, 3)): tt-metal runs it as a transpose
over H and C (TransposeDeviceOperation, transpose/device/transpose_hc_tiled_interleaved_program_factory.cpp).

Its input tiles are split over the grid (split_work_to_cores); a core reads each tile (a two-tile circular buffer,
so the next read overlaps) and writes each of the tile's face rows (16 elements, one of its real rows and face
columns) to the output tile that row lands in, a different page each, then waits for the writes.  Where C is
not a whole number of tiles, the output's last channel tile row is padded: a second split over the padded
tiles (N x H x Wt), each written as its padded faces' rows in one write a face.  A write costs a NoC write's
latency (:attr:`~meshnn.perf.latency.OpLatency.noc_write_latency_cycles`: the accessor's page lookup and the
command to a page on another core) plus its bytes at the NoC's rate; a read the tile round trip
(``tile_round_trip_cycles``) plus its bytes.  No constant is fitted here.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import Layout, MemoryLayout, OpDesc, OpFamily
from meshnn.perf.latency import op_latency
from meshnn.perf.systems import Machine

TILE = 32
FACE = 16
HC_DIMS = ("0,2,1,3", "1,0,2")  # rank 4 and rank 3: C and H swapped, the rest in place


def is_hc_transpose(desc: OpDesc) -> bool:
    """Whether ``desc`` is a tiled, interleaved permute that swaps dims -3 and -2 (its ``dims`` attribute)."""
    if desc.family not in (OpFamily.PERMUTE, OpFamily.TRANSPOSE) or len(desc.inputs) != 1:
        return False
    source, out = desc.inputs[0], desc.outputs[0]
    tiled = source.layout is Layout.TILE and out.layout is Layout.TILE
    interleaved = source.memory is MemoryLayout.INTERLEAVED and out.memory is MemoryLayout.INTERLEAVED
    return tiled and interleaved and dict(desc.attributes).get("dims") in HC_DIMS


def hc_transpose_cycles(desc: OpDesc, machine: Machine, cores: int) -> float:
    """Cycles of the busiest core of the HC transpose program on a grid of ``cores`` (see the module's text): its
    input tiles split over the grid, then its padded tiles split again."""
    source = desc.inputs[0]
    arch, lat = machine.system.arch, op_latency(machine.system.arch.arch)
    logical = source.logical_shape or source.shape
    n, c, h, w = (1,) * (4 - len(logical)) + tuple(logical[-4:])
    ht, wt = -(-h // TILE), -(-w // TILE)
    row_bytes = source.tile_bytes / (TILE * 2)  # one face row: a 64th of the tile

    def write(nbytes: float) -> float:
        return lat.noc_write_latency_cycles + nbytes / arch.noc_bytes_per_cycle

    read = lat.tile_round_trip_cycles + source.tile_bytes / arch.noc_bytes_per_cycle
    face_rows = 2 * h / ht  # a tile's real rows, each in two faces, the mean over a column of tiles
    per_tile = max(read, face_rows * write(row_bytes) + lat.noc_write_latency_cycles)
    cycles = math.ceil(n * c * ht * wt / cores) * per_tile
    if c % TILE:  # the last channel tile's padded rows, one write a face
        first = (c % TILE) // FACE
        lines = [FACE - (c % TILE) % FACE] + [FACE] * (1 - first)
        padded = 2 * sum(write(k * row_bytes) for k in lines)
        cycles += math.ceil(n * h * wt / cores) * padded
    return cycles
