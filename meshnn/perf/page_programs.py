"""Data-movement-only page programs: sharded-to-interleaved, interleaved-to-sharded, the tiled slice, the tiled
interleaved concat, the CN transpose and the row-major pad, timed as their reader and writer kernels move each page,
with the launch of a program that has no compute kernel.

What the programs do (tt-metal, ttnn/cpp/ttnn/operations/data_movement):

* sharded_to_interleaved (sharded/sharded_to_interleaved, writer_unary_sharded_blocks_interleaved_start_id.cpp): each
  core that holds a shard issues one NoC write a tile of its shard to the tile's interleaved page, back to back, then
  waits once for all of them (``async_write_barrier``).  Before tt-metal #27430 (c3855893b3, 2025-09-04) the writer
  waited after every tile: an op desc carrying ``(S2I_PROGRAM_ATTRIBUTE, S2IProgram.BARRIER_A_TILE.value)`` is timed
  as that program (figures of that date, e.g. the 70B Galaxy's 2025-07 model tail).
* reshard of a tiled tensor between two L1 height- or width-sharded layouts (sharded/reshard,
  reshard_program_factory.cpp's ``reshard_multi_core_generic``, reshard_reader.cpp on both data-movement cores): each
  output core reads its shard's pages from the source cores' L1, runs of pages contiguous on one source core as one
  NoC read each (``get_core_page_ranges``' strides), none waited until one barrier at the end.
* interleaved_to_sharded (sharded/interleaved_to_sharded, reader_unary_sharded_blocks_interleaved_start_id.cpp): each
  core that holds a shard reads its shard's tiles one NoC read a tile, all in flight, waiting
  (``async_read_barrier``) every ``((512 / readers) * 1152) / tile_bytes`` reads and at the end; the writer only
  waits for the circular buffer, which is the shard itself.  Only the cores with data run it
  (``get_optimal_worker_cores_for_sharded_tensor``).  A dtype change adds a compute kernel (not timed here).
* the tiled slice (slice/device/slice_program_factory_tile.cpp: any buffers, its pages found through TensorAccessor,
  a sharded output's too) and the tiled concat of interleaved tensors (concat/device/concat_program_factory.cpp):
  the output's tiles split over the grid (``split_work_to_cores``); the
  reader reads each tile and waits for it before the next (reader_unary_unpad_dims_interleaved_start_id.cpp,
  reader_concat_interleaved_start_id.cpp), the writer writes each and waits for it to leave the core
  (writer_unary_interleaved_start_id.cpp: ``async_writes_flushed`` a page), the two overlapping through the circular
  buffer.
* the CN transpose (transpose/device/transpose_cn_program_factory.cpp: ``ttnn.permute`` with dims (1, 0, 2, 3), tiled
  and interleaved, the form whose dims meshnn records): the tiles split over the grid, the reader waiting for each
  tile (reader_unary_transpose_cn_interleaved_start_id.cpp), the writer waiting for each write to land before the
  next (writer_unary_transpose_cn_interleaved_start_id.cpp: ``async_write_barrier`` a page).
* the row-major pad of interleaved tensors (pad/device/pad_rm_reader_writer_multi_core_default_program_factory.cpp):
  the output's sticks split over the grid; a core first fills a padded stick with the value two bytes at a time
  (reader_pad_dims_rm_interleaved_v2.cpp's ``fill_pad_cb_with_val``: a volatile load and store a step, taken as
  ``riscv_cycles_per_element`` as the tiled pad's fill), then reads its sticks in batches of 2 KB
  (``max_read_size``), waiting once a batch, and writes each, waiting once a batch.

Per page: a waited read costs its round trip (a DRAM tile's ``tile_round_trip_cycles``; an L1 tile's the NoC's
far-end latency, ``dram_read_latency_cycles``, as :mod:`meshnn.perf.matmul_blocks` takes it) plus its bytes at one
core's NoC rate; a read issued without a wait its bytes; a write :data:`PAGE_FIGURES`' ``write_issue_cycles`` plus
its bytes, the last write's landing a NoC write's latency to an L1 page, and to a DRAM page the write's flight to
its bank and the acknowledgement's back (:data:`meshnn.perf.transpose_hc.WRITE_BARRIER`, 276 cycles).
A page read after a core's first also costs ``write_issue_cycles`` (the first's is in the launch, fitted on programs
that start with a read): a waited read before its round trip; interleaved_to_sharded's reads in
flight leave that far apart, or their bytes apart where those are longer (:func:`sharded_reads_cycles`).  What that
per-page cost is in a ttnn kernel is not separated: tt-metal's NoC estimator reads 2 KB pages 71.5-73 cycles apart
from precomputed addresses, where kvpe_reshard's reader (TensorAccessor, interleaved L1 pages) takes about 130; the
HC transpose's 32 B face-row writes, the same lookup and command, cost 52 (:mod:`meshnn.perf.transpose_hc`), so the
cost grows with the page (a 2 KB page's transfer beyond its bytes at 30 B a cycle), as the page writes' 140 does.

The launch: these programs run on BRISC and NCRISC alone, so none of a compute kernel's start-up is in their kernel
time (its unpack / math / pack configuration, the first tile's passage through the three TRISCs, the tile-register
handshakes), and tt-metal's kernel time is measured from the first core's start to the last core's end: their fixed
cost is ``launch_cycles`` plus ``launch_per_core_cycles`` a core of the program.  The model's generic launch
(``ArchPerf.op_launch_ns``, 2 us, fitted on DRAM streams) is taken to hold a compute kernel's start-up and the DRAM's
first bytes; an element-wise binary on L1 shards of its own cores takes this launch and its compute kernel's start
instead (:func:`meshnn.perf.tile_ops.local_binary_launch_ns`: the Galaxy's one-tile mul + silu, 2.4-2.5 us, is
mostly its silu's SFPU work); the fused rotary's L1 figure (2.2 us) still needs the generic launch.
The other data-movement-only programs (the HC transpose and row-invariant permute, the tiled reshape and pad:
:mod:`meshnn.perf.transpose_hc`, :mod:`meshnn.perf.movement_programs`, none with a compute kernel) take this launch
too, their per-write costs counted from their kernels (:data:`meshnn.perf.transpose_hc.FACE_ROW_WRITE`).
Units: chip cycles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

from meshnn.perf.desc import ROW_MAJOR_ELEMENT_BYTES, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, traffic
from meshnn.perf.transpose_hc import WRITE_BARRIER

S2I, I2S = "ShardedToInterleavedDeviceOperation", "InterleavedToShardedDeviceOperation"
RESHARD = "ReshardDeviceOperation"
S2I_PROGRAM_ATTRIBUTE = "s2i_program"
"""The op-desc attribute naming the sharded-to-interleaved writer a figure ran (absent: today's)."""


class S2IProgram(Enum):
    """Which of tt-metal's sharded-to-interleaved writers times an op."""

    BARRIER_A_TILE = "2025-07"  # before #27430 (2025-09-04): ``noc_async_write_barrier`` after each tile's write


SLICE, CONCAT = "SliceDeviceOperation", "ConcatDeviceOperation"
PAD_BATCH_BYTES = 2048  # the row-major pad's max_read_size: sticks read (and written) between waits
CN_DIMS = ("1,0,2,3",)
"""A permute's ``dims`` attribute that tt-metal runs as the CN transpose."""
TILE = 32
MLA = "tt-metal models/demos/deepseek_v3/tests/fused_op_unit_tests/mla_deepseek_perf_and_pcc_tests.py (TG)"


@dataclass(frozen=True, slots=True)
class PageFigures:
    """The fitted figures of the page programs (chip cycles); ``sources`` names each one's origin."""

    launch_cycles: float  # a data-movement-only program's start and end, whatever its cores
    launch_per_core_cycles: float  # what each core of the program adds to its first-start-to-last-end time
    write_issue_cycles: float  # a page write's address generation and NoC command, beyond its bytes
    sources: dict[str, str] = field(default_factory=dict, compare=False)


_FIT = (
    f"fitted jointly on three named figures of {MLA}: kv_rope_slice (0.95 us: 2 of [32, 2112]'s tiles, one a core "
    "on 2 cores), q_slice (1.47 us: 48 tiles, one a core on 48 cores) and flash_mla_out_reshard (3.89 us: 16 "
    "height shards of 16 tiles, 16 tile writes a core); the other MLA reshards, slices and concats check them.  "
    "Blackhole takes the same cycles at its own clock (no Blackhole figure of these programs found)"
)
PAGE_FIGURES = PageFigures(
    launch_cycles=331.0,
    launch_per_core_cycles=11.3,
    write_issue_cycles=140.0,
    sources={
        "launch_cycles": f"{_FIT}: the slices' equal per-core work on 2 and on 48 cores separates the launch from "
        "what grows with the cores",
        "launch_per_core_cycles": f"{_FIT}: one-tile-a-core slices measure 0.95, 1.26, 1.47 us on 2, 16, 48 cores; "
        "tt-metal's go signal is one multicast, so where the per-core growth comes from (the spread of the cores' "
        "starts and ends that the first-start-to-last-end kernel time takes) is not found",
        "write_issue_cycles": f"{_FIT}: 16 tiles a core written back to back take 2.7 us more than 2 a core "
        "(kv_rope_out_reshard, q_rope_out_reshard: 1.19 us): about 210 cycles a 2 KB write, of which 68 its bytes "
        "at the NoC's 30 B a cycle (tt-npe): the interleaved page's bank and address, the write's command",
    },
)


def _tiled(tensors: tuple[TensorDesc, ...]) -> bool:
    return all(t.layout is Layout.TILE for t in tensors)


def is_page_program(desc: OpDesc) -> bool:
    """Whether ``desc`` runs one of this module's programs: a tiled sharded-to-interleaved or interleaved-to-sharded
    copy of an L1 height / width shard without a dtype change (a DRAM shard runs on the banks' worker cores, not
    timed here), a tiled reshard between L1 height / width shards without a dtype change, a tiled slice, a tiled concat
    from and to interleaved tensors, the CN transpose, or a row-major pad."""
    if desc.inputs and is_row_major_pad(desc):
        return True
    if not desc.inputs or len(desc.outputs) != 1 or not _tiled(desc.inputs + desc.outputs):
        return False
    source, out = desc.inputs[0], desc.outputs[0]
    if desc.op_code == RESHARD:
        return len(desc.inputs) == 1 and _l1_one_d(source) and _l1_one_d(out) and source.dtype == out.dtype
    if desc.op_code in (S2I, I2S):
        sharded, plain = (source, out) if desc.op_code == S2I else (out, source)
        one_d = sharded.memory in (MemoryLayout.HEIGHT_SHARDED, MemoryLayout.WIDTH_SHARDED) and not sharded.in_dram
        return one_d and not plain.sharded and source.dtype == out.dtype and len(desc.inputs) == 1
    if desc.op_code == SLICE:  # the tiled factory reads and writes pages through TensorAccessor, sharded or not
        return len(desc.inputs) == 1
    if desc.op_code == CONCAT:
        return not out.sharded and not any(t.sharded for t in desc.inputs) and not _padded_concat(desc)
    return is_cn_transpose(desc)


def _l1_one_d(tensor: TensorDesc) -> bool:
    return tensor.memory in (MemoryLayout.HEIGHT_SHARDED, MemoryLayout.WIDTH_SHARDED) and not tensor.in_dram


def _padded_concat(desc: OpDesc) -> bool:
    """Whether a tiled concat joins along a tile dim that its inputs pad (tt-metal then untilizes, concatenates
    row-major and tilizes again: concat.cpp's untilize_rm_retilize, not this module's program)."""
    shapes = [t.logical_shape or t.shape for t in desc.inputs]
    rank = len(shapes[0])
    joined = [d for d in range(rank) if len({s[d] for s in shapes if len(s) == rank}) > 1]
    return any(d >= rank - 2 and any(s[d] % TILE for s in shapes) for d in joined)


def is_row_major_pad(desc: OpDesc) -> bool:
    """Whether ``desc`` is ttnn.pad of an interleaved row-major tensor (tt-metal's multi-core row-major program)."""
    tensors = desc.inputs[:1] + desc.outputs
    plain = all(t.layout is Layout.ROW_MAJOR and not t.sharded for t in tensors)
    return desc.family is OpFamily.PAD and len(desc.outputs) == 1 and plain


def is_cn_transpose(desc: OpDesc) -> bool:
    """Whether ``desc`` is a tiled, interleaved permute that swaps N and C (tt-metal's CN transpose program)."""
    if desc.family not in (OpFamily.PERMUTE, OpFamily.TRANSPOSE) or len(desc.inputs) != 1:
        return False
    tensors = desc.inputs + desc.outputs
    cn = dict(desc.attributes).get("dims", "") in CN_DIMS
    return cn and _tiled(tensors) and not any(t.sharded for t in tensors)


def _rows_cols(tensor: TensorDesc) -> tuple[int, int]:
    """(tile rows, tile columns) of ``tensor`` as the program sees it: every leading dim folded into the rows."""
    rows = math.prod(tensor.shape[:-1]) if len(tensor.shape) > 1 else 1
    return -(-rows // TILE), -(-tensor.shape[-1] // TILE)


def shard_cores(tensor: TensorDesc, grid: int) -> tuple[int, int]:
    """(cores with data, tiles a core) of a height- or width-sharded ``tensor`` over a shard grid of ``grid`` cores,
    its shards the even split rounded up to whole tiles (as ``ttnn.create_sharded_memory_config`` makes them)."""
    rows, cols = _rows_cols(tensor)
    along, across = (rows, cols) if tensor.memory is MemoryLayout.HEIGHT_SHARDED else (cols, rows)
    per_shard = -(-along // max(1, grid))
    return -(-along // per_shard), per_shard * across


def _trip(machine: Machine, tensor: TensorDesc) -> float:
    return op_latency(machine.system.arch.arch).read_trip_cycles(tensor.in_dram)


def _bytes(machine: Machine, tensor: TensorDesc) -> float:
    return tensor.tile_bytes / machine.system.arch.noc_bytes_per_cycle


def write_cycles(machine: Machine, tensor: TensorDesc) -> float:
    """A page write's issue and its bytes at one core's NoC rate (cycles), its landing apart."""
    return PAGE_FIGURES.write_issue_cycles + _bytes(machine, tensor)


def landing_cycles(machine: Machine, tensor: TensorDesc) -> float:
    """The wait of a writer's barrier after its last write to ``tensor``'s page: a NoC write's latency to an L1 page,
    to a DRAM bank the write's flight and its acknowledgement's back over the chip."""
    if tensor.in_dram:
        return WRITE_BARRIER.cycles()
    return op_latency(machine.system.arch.arch).noc_write_latency_cycles


def barrier_a_tile(desc: OpDesc) -> bool:
    """Whether ``desc`` is marked as run by the sharded-to-interleaved writer that waits after every tile."""
    return dict(desc.attributes).get(S2I_PROGRAM_ATTRIBUTE) == S2IProgram.BARRIER_A_TILE.value


def sharded_reads_cycles(machine: Machine, source: TensorDesc, tiles: int, every: int) -> float:
    """Cycles interleaved_to_sharded's reader takes on its ``tiles`` pages of ``source``, waiting after each
    ``every``: within a batch a read leaves ``write_issue_cycles`` after the one before (a page's cost to the
    issuing core beyond its bytes, as the page writes measure it), the reads before it in flight, so the batch
    takes its bytes or those issues, whichever is longer, then the last read's round trip.  The first read's
    issue is in the fitted launch (the slices it was fitted on start with a read)."""
    issue, size, trip = PAGE_FIGURES.write_issue_cycles, _bytes(machine, source), _trip(machine, source)
    total, left = 0.0, tiles
    while left > 0:
        batch = min(every, left)
        total += max(batch * size, (batch - 1) * issue + size) + trip
        left -= batch
    return total


def read_barrier_every(tile_bytes: int, readers: int) -> int:
    """Reads interleaved_to_sharded's reader issues before it waits: about 8 KB in flight a reader of 64."""
    return max(1, (512 // max(1, readers)) * 1152 // max(1, tile_bytes))


def page_cycles(desc: OpDesc, machine: Machine) -> tuple[float, int]:
    """(cycles of the busiest core, the program's cores) of a page program (see the module's text)."""
    source, out = desc.inputs[0], desc.outputs[0]
    landing = op_latency(machine.system.arch.arch).noc_write_latency_cycles
    grid = grid_cores(machine, desc.core_grid)
    if desc.op_code == S2I:
        cores, tiles = shard_cores(source, grid)
        waits = tiles if barrier_a_tile(desc) else 1
        return tiles * write_cycles(machine, out) + waits * landing_cycles(machine, out), cores
    if desc.op_code == RESHARD:  # an output core's pages read from the sources' L1, one barrier at the end
        cores, tiles = shard_cores(out, grid)
        return tiles * _bytes(machine, source) + _trip(machine, source), cores
    if desc.op_code == I2S:
        cores, tiles = shard_cores(out, grid)
        return sharded_reads_cycles(machine, source, tiles, read_barrier_every(source.tile_bytes, cores)), cores
    if is_row_major_pad(desc):
        return row_major_pad_cycles(desc, machine, grid)
    cores = max(1, min(grid, out.tiles))
    tiles = math.ceil(out.tiles / cores)
    first = max(_trip(machine, t) + _bytes(machine, t) for t in desc.inputs)
    read = first + PAGE_FIGURES.write_issue_cycles  # every waited read after a core's first: its page's cost
    write = write_cycles(machine, out) + (landing if is_cn_transpose(desc) else 0.0)  # the CN writer waits a page
    return max(first, write) + (tiles - 1) * max(read, write) + min(first, write) + landing, cores


def _stick_bytes(tensor: TensorDesc) -> int:
    return int(tensor.shape[-1]) * ROW_MAJOR_ELEMENT_BYTES[tensor.dtype]


def row_major_pad_cycles(desc: OpDesc, machine: Machine, grid: int) -> tuple[float, int]:
    """(cycles of the busiest core, cores) of the row-major pad: the padded stick's fill, then its sticks' batches."""
    source, out = desc.inputs[0], desc.outputs[0]
    lat = op_latency(machine.system.arch.arch)
    noc = machine.system.arch.noc_bytes_per_cycle
    sticks = max(1, out.volume // max(1, int(out.shape[-1])))
    cores = max(1, min(grid, sticks))
    per_core = math.ceil(sticks / cores)
    stick_in, stick_out = _stick_bytes(source), _stick_bytes(out)
    batches = math.ceil(per_core / max(1, math.ceil(PAD_BATCH_BYTES / max(1, stick_out))))
    fill = stick_out / 2 * lat.riscv_cycles_per_element
    reads = per_core * stick_in / noc + batches * _trip(machine, source)
    writes = per_core * (PAGE_FIGURES.write_issue_cycles + stick_out / noc) + batches * lat.noc_write_latency_cycles
    return fill + reads + writes, cores


def launch_cycles(cores: int) -> float:
    """The fixed cycles of a data-movement-only program on ``cores`` cores."""
    return PAGE_FIGURES.launch_cycles + PAGE_FIGURES.launch_per_core_cycles * cores


def predict_page_program(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a page program ``desc`` on ``machine``: its busiest core's pages, its bytes, its launch."""
    arch = machine.system.arch
    cycles, cores = page_cycles(desc, machine)
    moves = [(t, 1.0) for t in desc.inputs] + [(t, 1.0) for t in desc.outputs]
    if desc.op_code == SLICE:  # a slice reads only its output's part
        moves[0] = (desc.inputs[0], min(1.0, out_share(desc)))
    if desc.op_code == RESHARD:  # the reads land in the output core's own shard: the input's bytes cross once
        moves = moves[:1]
    memory = traffic(machine, moves, cores, local_shards=desc.op_code in (S2I, I2S))  # a shard is its core's own
    return kernel_prediction(arch, cycles, memory, cores, fixed_ns=arch.cycles_ns(launch_cycles(cores)))


def out_share(desc: OpDesc) -> float:
    """The share of a slice's input its output holds."""
    return desc.outputs[0].volume / max(desc.inputs[0].volume, 1)
