"""Data-movement programs whose time is their kernels' waits, not their bytes: the tiled reshape and the tiled pad.

* A tiled reshape that changes the tiles' rows (tt-metal's reshape_view/device/reshape_tiled_program_factory.cpp)
  splits the output tiles over the grid (split_work_to_cores); for each output tile a core reads its page of the
  host-built map from DRAM (waiting for it), then each input tile the map names (a one-tile circular buffer: read,
  waited for, its segments copied into a scratch tile by NoC writes of up to 16 elements, one face row, issued
  without a wait; the writer waits for them before it frees the tile, so the next read starts after that wait:
  reader_reshape_tiled.cpp, writer_reshape_tiled.cpp), then writes the tile out and waits for the write.  Each read
  is a round trip (:attr:`~meshnn.perf.latency.OpLatency.tile_round_trip_cycles`) plus its bytes at the NoC's rate,
  each segment a face-row write (:data:`meshnn.perf.transpose_hc.FACE_ROW_WRITE`), each wait for the segments a
  write to the core's own L1 and its acknowledgement (:data:`meshnn.perf.transpose_hc.WRITE_BARRIER`), each tile
  write its bytes and the wait for it (a write to another core's page and its acknowledgement): no constant is
  fitted here.
* A tiled pad (pad/device/pad_tile_multicore_program_factory.cpp, ``use_multicore`` ttnn's default) fills a
  padding tile once a core before its first write (writer_pad_tiled.cpp: a byte-by-byte loop, a volatile load
  of the value's byte and a volatile store a byte, each taken as ``riscv_cycles_per_element``), then writes each
  output tile, its input's or the padding, and waits for each write (its flight and its acknowledgement's).

Both have a reader and a writer and no compute kernel: their fixed cost is the data-movement launch
(:func:`meshnn.perf.page_programs.launch_cycles`) over the cores of their split.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import Layout, OpDesc, OpFamily, TensorDesc
from meshnn.perf.latency import op_latency
from meshnn.perf.systems import Machine
from meshnn.perf.transpose_hc import FACE_ROW_WRITE, WRITE_BARRIER

RESHAPE_VIEW = "ReshapeViewDeviceOperation"
TILE = 32
FACE = 16
MAP_ENTRY_BYTES = 16  # tt-metal's SegmentMapData: input page, input offset, output offset, element count (uint32 each)
SAMPLED_TILES = 64  # the busiest core's first output tiles mapped exactly; its others taken as their mean


def waited_read_cycles(machine: Machine, nbytes: float) -> float:
    """A read of ``nbytes`` from DRAM issued and waited for: the tile round trip, then its bytes at the NoC's rate."""
    arch = machine.system.arch
    return op_latency(arch.arch).tile_round_trip_cycles + nbytes / arch.noc_bytes_per_cycle


def waited_write_cycles(machine: Machine, nbytes: float) -> float:
    """A NoC write of ``nbytes`` issued and waited for: a write's latency, then its bytes at the NoC's rate."""
    arch = machine.system.arch
    return op_latency(arch.arch).noc_write_latency_cycles + nbytes / arch.noc_bytes_per_cycle


def _acked_write(machine: Machine, nbytes: float) -> float:
    """A write of ``nbytes`` to an interleaved page, then ``async_write_barrier``: its bytes, its flight and its
    acknowledgement's (:data:`meshnn.perf.transpose_hc.WRITE_BARRIER`)."""
    return WRITE_BARRIER.cycles() + nbytes / machine.system.arch.noc_bytes_per_cycle


def _rank3(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """``shape`` as (leading dims' product, height, width), as the program sees it."""
    full = (1, 1, *shape) if len(shape) < 2 else shape
    return math.prod(full[:-2]), int(full[-2]), int(full[-1])


def is_tiled_reshape_program(desc: OpDesc) -> bool:
    """Whether ``desc`` is a tiled ``ttnn.reshape`` that moves data (not a view: the padded last dim changes, or
    the second-last changes where either is not tile-aligned)."""
    if desc.op_code != RESHAPE_VIEW or desc.family is not OpFamily.COPY or len(desc.inputs) != 1:
        return False
    source, out = desc.inputs[0], desc.outputs[0]
    if source.layout is not Layout.TILE or out.layout is not Layout.TILE:
        return False
    _, hi, wi = _rank3(source.logical_shape or source.shape)
    _, ho, wo = _rank3(out.logical_shape or out.shape)
    return wi != wo or (hi != ho and bool(hi % TILE or ho % TILE))


def _segments(start: int, width: int, out_col: int, hi: int, wi: int) -> tuple[int, set[tuple[int, int, int]]]:
    """The map segments of one output row piece (``width`` elements from flat offset ``start``, output column
    ``out_col``) and the input tiles (c, tile row, tile column) they come from, for an input ``hi`` x ``wi``."""
    count, pages, done = 0, set(), 0
    while done < width:
        flat, col = start + done, out_col + done
        row, in_col = divmod(flat, wi)
        run = min(width - done, FACE - col % FACE, FACE - in_col % FACE, wi - in_col)
        c, h = divmod(row, hi)
        pages.add((c, h // TILE, in_col // TILE))
        count, done = count + 1, done + run
    return count, pages


def _tile_map(o: int, source: TensorDesc, out: TensorDesc) -> tuple[int, int]:
    """(input tiles read, segments copied) of output tile ``o`` (row-major tile order, as tt-metal's map)."""
    _, hi, wi = _rank3(source.logical_shape or source.shape)
    _, ho, wo = _rank3(out.logical_shape or out.shape)
    th, tw = -(-ho // TILE), -(-wo // TILE)
    c, rest = divmod(o, th * tw)
    r0, c0 = (rest // tw) * TILE, (rest % tw) * TILE
    segments, pages = 0, set()
    for r in range(r0, min(r0 + TILE, ho)):
        n, p = _segments((c * ho + r) * wo + c0, min(TILE, wo - c0), c0, hi, wi)
        segments += n
        pages |= p
    return len(pages), segments


def tiled_reshape_cycles(desc: OpDesc, machine: Machine, cores: int) -> float:
    """Cycles of the busiest core of a tiled reshape program over ``cores`` cores (see the module's text)."""
    source, out = desc.inputs[0], desc.outputs[0]
    per_core = math.ceil(out.tiles / cores)
    sampled = [_tile_map(o, source, out) for o in range(min(per_core, SAMPLED_TILES))]
    reads = sum(p for p, _ in sampled) / len(sampled)
    segments = sum(s for _, s in sampled) / len(sampled)
    map_bytes = max(s for _, s in sampled) * MAP_ENTRY_BYTES
    read, map_read = waited_read_cycles(machine, source.tile_bytes), waited_read_cycles(machine, map_bytes)
    write = _acked_write(machine, out.tile_bytes)
    copy = FACE_ROW_WRITE.issue_cycles + segments_bytes(desc) / machine.system.arch.noc_bytes_per_cycle
    landing = WRITE_BARRIER.cycles(local=True)  # the writer's wait for its own-L1 copies before it frees the tile
    per_tile = map_read + reads * (read + landing) + segments * copy + write
    return per_core * per_tile


def is_tiled_pad(desc: OpDesc) -> bool:
    """Whether ``desc`` is ttnn.pad of a tiled tensor (its tile program)."""
    return desc.family is OpFamily.PAD and desc.inputs[0].layout is Layout.TILE


def tiled_pad_cycles(desc: OpDesc, machine: Machine, cores: int) -> float:
    """Cycles of the busiest core of the tiled pad program over ``cores`` cores (see the module's text)."""
    out = desc.outputs[0]
    fill = 2 * out.tile_bytes * op_latency(machine.system.arch.arch).riscv_cycles_per_element
    return fill + math.ceil(out.tiles / cores) * _acked_write(machine, out.tile_bytes)


def segments_bytes(desc: OpDesc) -> float:
    """The bytes of one map segment copy at most: a face row of ``desc``'s output (16 elements)."""
    out = desc.outputs[0]
    return out.tile_bytes / (TILE * 2)
