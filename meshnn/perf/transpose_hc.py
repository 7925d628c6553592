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
page that row lands in, without waiting, then waits once a tile for all of them (``async_write_barrier``).  A face
row's write costs :data:`FACE_ROW_WRITE`'s cycles (its output page's bank and offset through the TensorAccessor, the
NoC command); the row-invariant writer also finds each row's source index with a modulo by a runtime dim, and
each tile's place with a divide and a modulo a dim (``divide_cycles`` each).  Where
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
    divide_cycles: float  # a 32-bit divide or modulo by a runtime value on a data-movement RISC-V
    sources: dict[str, str] = field(default_factory=dict, compare=False)


FACE_ROW_WRITE = FaceRowWrite(
    issue_cycles=56.0,
    divide_cycles=21.0,
    sources={
        "issue_cycles": "fitted on tt-metal models/demos/deepseek_v3/tests/fused_op_unit_tests/"
        "mla_deepseek_perf_and_pcc_tests.py's kvpe_permute (TG, 30.95 us: [1, 32, 32, 576] with C and H swapped, "
        "576 tiles over the 72 cores, 8 a core of 64 face-row writes, no padding), with the data-movement launch "
        "(meshnn.perf.page_programs): 512 writes and 8 waits in about 29.8 us; kv_rope_permute_pre, "
        "q_nope_permute_post_linear and the other MLA permutes check it.  A NoC write's latency "
        "(noc_write_latency_cycles, 50) and its 32 B are 51 of them",
        "divide_cycles": "fitted on the same file's q_nope_permute_pre_linear (6.23 us: [32, 1, 16, 128] to "
        "[1, 16, 32, 128], dims (1, 2, 0, 3), the row-invariant program: 2 tiles a core of 16 rows), the only "
        "row-invariant figure found: its writer takes each row's source index as a modulo by the input's H, a "
        "runtime argument, and each tile's index apart by a divide and a modulo a dim (rank 4: 8), where the HC "
        "writer's divisors are compile-time constants; the 1.0 us the face-row writes leave over 48 of them",
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
    lat = op_latency(arch.arch)
    trip = lat.tile_round_trip_cycles if source.in_dram else lat.dram_read_latency_cycles
    return trip + source.tile_bytes / arch.noc_bytes_per_cycle


def _write(machine: Machine, nbytes: float) -> float:
    """One write of ``nbytes`` issued without a wait."""
    return FACE_ROW_WRITE.issue_cycles + nbytes / machine.system.arch.noc_bytes_per_cycle


def hc_transpose_cycles(desc: OpDesc, machine: Machine, grid: int) -> tuple[float, int]:
    """(cycles of the busiest core, the cores its launch spans) of the HC transpose or row-invariant permute on a
    grid of ``grid`` cores (see the module's text): its input tiles split over the grid, then its padded tiles."""
    source = desc.inputs[0]
    lat = op_latency(machine.system.arch.arch)
    landing = lat.noc_write_latency_cycles
    logical = source.logical_shape or source.shape
    h = logical[-2]
    ht = -(-h // TILE)
    row_bytes = source.tile_bytes / (TILE * 2)  # one face row: a 64th of the tile
    dims = _dims(desc)
    hc = ",".join(map(str, dims)) in HC_DIMS

    read = _read(machine, desc)
    face_rows = 2 * h / ht  # a tile's real rows, each in two faces, the mean over a column of tiles
    write = face_rows * _write(machine, row_bytes) + landing  # issued back to back, one wait a tile
    if not hc:  # the row-invariant writer: a modulo a row, a divide and a modulo a dim a tile (runtime divisors)
        write += (face_rows / 2 + 2 * len(dims)) * FACE_ROW_WRITE.divide_cycles
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
