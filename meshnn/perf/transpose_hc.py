"""A tiled permute that keeps the last dim and moves the second-last: for dims (0, 2, 1, 3) tt-metal runs a transpose
over H and C (TransposeDeviceOperation, transpose/device/transpose_hc_tiled_interleaved_program_factory.cpp), for
the others its own row-invariant program (permute/device/permute_tiled_program_factory.cpp, MultiCoreTileRowInvariant:
the same reader, writer_permute_interleaved_tiled_row_invariant.cpp), which writes the same face rows.

Both run a reader and a writer and no compute kernel (the row-invariant factory adds transpose_wh only when the last
two dims swap, which these dims do not), so their fixed cost is :mod:`meshnn.perf.page_programs`' data-movement
launch: over every core of the grid for the HC transpose (its kernels are placed on the whole compute grid, the
cores without tiles given none), over the larger of its two splits' cores for the row-invariant permute.

Its input tiles are split over the grid (split_work_to_cores).  The reader
(reader_unary_transpose_hc_interleaved_tiled_padding_aware.cpp) reads each tile and waits for it (a round trip: an
L1 tile's the NoC's far-end latency, a DRAM tile's ``tile_round_trip_cycles``, plus its bytes), into a two-tile
circular buffer, so it reads the next tile while the writer empties the last.  The writer issues one NoC write of
16 elements (one face row, 32 B in bfloat16) for each of the tile's real rows and face columns, each to the output
page that row lands in, without waiting, then waits once a tile for all of them (``async_write_barrier``: the
last write's flight and its acknowledgement's, :data:`WRITE_BARRIER`).  A face row's write costs
:data:`FACE_ROW_WRITE`'s cycles (its output page's bank and offset through the TensorAccessor, the NoC command); the
row-invariant writer also finds each row's source index with a modulo by a runtime dim, and each tile's place with a
divide and a modulo a dim, which the model does not count (its one figure, q_nope_permute_pre_linear, is met at
-13% without them).  Where
the output's new second-last dim is not a whole number of tiles, the output's last tile row is padded: a second
split over the padded tiles (N x H x Wt), each written from a padding buffer that the reader fills first, one write
a face (HC: up to 512 B) or a face row (row-invariant), one wait at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from meshnn.perf.desc import Layout, MemoryLayout, OpDesc, OpFamily
from meshnn.perf.latency import op_latency
from meshnn.perf.systems import Machine

TILE = 32
FACE = 16
HC_DIMS = ("0,2,1,3", "1,0,2")  # rank 4 and rank 3: C and H swapped, the rest in place


@dataclass(frozen=True, slots=True)
class FaceRowWrite:
    """The cost of one face-row write the HC writers issue (chip cycles); ``sources`` names each one's origin."""

    issue_cycles: float  # a small NoC write issued without a wait: its page's address and its command
    sources: dict[str, str] = field(default_factory=dict, compare=False)


FACE_ROW_WRITE = FaceRowWrite(
    issue_cycles=52.2,
    sources={
        "issue_cycles": "fitted on tt-metal models/demos/deepseek_v3/tests/fused_op_unit_tests/"
        "mla_deepseek_perf_and_pcc_tests.py's kvpe_permute (TG, 30.95 us: [1, 32, 32, 576] with C and H swapped, "
        "576 tiles over the 72 cores, 8 a core of 64 face-row writes, no padding), with the data-movement launch "
        "(meshnn.perf.page_programs): 512 writes and 8 waits (WRITE_BARRIER) in about 29.8 us; kv_rope_permute_pre, "
        "v_out_permute (4 real rows a tile: the waits weigh), q_nope_permute_post_linear and the other MLA permutes "
        "check it.  A NoC write's latency (noc_write_latency_cycles, 50) and its 32 B are 51 of them",
    },
)


@dataclass(frozen=True, slots=True)
class WriteBarrier:
    """What a writer's ``async_write_barrier`` waits for after its last write (chip cycles): the write's flight to
    its page and the acknowledgement's flight back, each a NoC packet's start-up and its router hops."""

    startup_cycles: float  # a NoC packet's start-up
    cycles_per_hop: float  # each router hop
    round_trip_hops: float  # a write to another worker core and its acknowledgement back, the mean over the grid
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def cycles(self, local: bool = False) -> float:
        """The wait after a write to another core's page (the grid's mean), or to the writer's own L1."""
        return 2 * self.startup_cycles + (0.0 if local else self.round_trip_hops * self.cycles_per_hop)


_NPE = "tt-npe tt_npe/cpp/include/device_models/wormhole_b0.hpp"
WRITE_BARRIER = WriteBarrier(
    startup_cycles=40.0,
    cycles_per_hop=10.0,
    round_trip_hops=19.55,
    sources={
        "startup_cycles": f"{_NPE}: get_write_latency's STARTUP_LATENCY (the acknowledgement taken as a packet alike)",
        "cycles_per_hop": f"{_NPE}: get_write_latency's CYCLES_PER_HOP",
        "round_trip_hops": f"{_NPE}: route_hops on the 10 x 12 torus (each NoC one-way: east then south, or north "
        "then west) from each of its 80 worker cores to each other and back, the mean: 9.78 each way, as the pages "
        "of an interleaved tensor lie on every core's bank.  Blackhole taken alike (no Blackhole figure found)",
    },
)


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


def _read(machine: Machine, desc: OpDesc) -> float:
    """A waited tile read of ``desc``'s input: its round trip (L1: the far end's latency) and its bytes."""
    source = desc.inputs[0]
    arch = machine.system.arch
    return op_latency(arch.arch).read_trip_cycles(source.in_dram) + source.tile_bytes / arch.noc_bytes_per_cycle


def _write(machine: Machine, nbytes: float) -> float:
    """One write of ``nbytes`` issued without a wait."""
    return FACE_ROW_WRITE.issue_cycles + nbytes / machine.system.arch.noc_bytes_per_cycle


def hc_transpose_cycles(desc: OpDesc, machine: Machine, grid: int) -> tuple[float, int]:
    """(cycles of the busiest core, the cores its launch spans) of the HC transpose or row-invariant permute on a
    grid of ``grid`` cores (see the module's text): its input tiles split over the grid, then its padded tiles."""
    source = desc.inputs[0]
    landing = WRITE_BARRIER.cycles()  # the last face row's write and its acknowledgement
    logical = source.logical_shape or source.shape
    h = logical[-2]
    ht = -(-h // TILE)
    row_bytes = source.tile_bytes / (TILE * 2)  # one face row: a 64th of the tile
    dims = _dims(desc)
    hc = ",".join(map(str, dims)) in HC_DIMS

    read = _read(machine, desc)
    face_rows = 2 * h / ht  # a tile's real rows, each in two faces, the mean over a column of tiles
    write = face_rows * _write(machine, row_bytes) + landing  # issued back to back, one wait a tile
    tiles = math.ceil(source.tiles / grid)
    cycles = read + write + (tiles - 1) * max(read, write) if tiles else 0.0
    cores = min(grid, source.tiles)
    c = (1, 1, *logical)[-3]
    x = logical[dims[-2]] if len(dims) == len(logical) else c  # the output's new second-last dim
    if x % TILE:  # the last tile row of the output's padded rows, a write a face (HC) or a face row
        first = (x % TILE) // FACE
        lines = [FACE - (x % TILE) % FACE] + [FACE] * (1 - first)
        if hc:
            padded = 2 * sum(_write(machine, k * row_bytes) for k in lines)
        else:
            padded = 2 * sum(lines) * _write(machine, row_bytes)
        padded_tiles = desc.outputs[0].tiles // -(-x // TILE)
        cycles += math.ceil(padded_tiles / grid) * padded + landing
        cores = max(cores, min(grid, padded_tiles))
    return cycles, grid if hc else max(1, cores)
