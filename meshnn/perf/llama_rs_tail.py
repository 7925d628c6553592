"""The two parts of ``llama_reduce_scatter``'s program (LlamaReduceScatterDeviceOperation and its create-heads
variant) that the direct phase of :mod:`meshnn.perf.collectives` does not hold: the sender core's reads that build
each packet, and the sum after the last packet lands.

From the program at the 6U decoder figures' date [tt-metal ebcfbec674, 2025-07-31:
ttnn/cpp/ttnn/operations/experimental/ccl/llama_reduce_scatter/device/kernels/dataflow/reader_llama_reduce_scatter.cpp,
writer_llama_reduce_scatter.cpp, compute/reduction.cpp; llama_reduce_scatter_program_factory.cpp]:

- **packets**: the sender core's reader reads each packet's pages from the input shards on other cores' L1 and waits
  for them (``noc_async_read_barrier`` a packet) before the writer forwards it; its circular buffer holds every page,
  so reading and sending overlap, and a packet costs the longer of its read (the NoC's far-end latency and its
  bytes at one core's NoC rate) and the EDM's time for it;
- **the sum**: each packet core waits for the other devices' packets (a semaphore), then its compute kernel adds the
  ``N`` copies of each of its packet's pages in pairs (``N/2`` ``add_tiles`` a page, accumulating in the dest
  registers) and packs them; the writer writes the packet's pages to their output cores and waits for the writes
  (``noc_async_write_barrier``): all after the last arrival, so on the op's critical path;
- **the writes**: each ``noc_async_write`` of the write-out is issued in turn, and costs its command and flight
  beyond its bytes (:data:`meshnn.perf.transpose_hc.FACE_ROW_WRITE`'s ``issue_cycles``, less the 32 B it was fitted
  with): one a page for ``llama_reduce_scatter``; for the create-heads variant one a stick, its packet core's two
  data-movement cores writing in parallel (reader_ and writer_llama_reduce_scatter.cpp of
  llama_reduce_scatter_create_heads: the writer the even 8x64 blocks of the summed packet, the reader the odd ones,
  each block a row at a time, 64 bfloat16 elements, to the q, k or v output core of that row), so each issues one
  write per head's row of ``head_dim`` (128) elements it holds half of: 16 a core for a packet of 4 KiB, where the
  plain writer issues 2 to 4.  The bytes are counted as on one NoC;
- **the create-heads sum**: its compute kernel (compute/reduction.cpp of llama_reduce_scatter_create_heads) runs one
  ``add_tiles`` a device pair for each page of the packet, and its pages are 8x64 blocks (``rows / N`` users of half
  a head: 1 KiB, 4 a 4 KiB packet), while its circular buffers name no tile shape (the program factory's
  CircularBufferConfig sets a page size only), so each add unpacks and packs a whole 32x32 tile: 4 tile adds a
  pair where the packet holds 2 tiles' bytes.

Units: ``_ns`` nanoseconds, bytes, cycles.
"""

from __future__ import annotations

import math

from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.traffic import operand_cycles
from meshnn.perf.transpose_hc import FACE_ROW_WRITE, WRITE_BARRIER

CREATE_HEADS = "LlamaReduceScatterCreateHeadsDeviceOperation"
HEAD_ROW_BYTES = 128 * 2
"""A head's row, ``head_dim_bytes = 128 * 2`` in the create-heads kernels; each of the two data-movement cores writes
half of it (``stick_size_byte``, a 64-element row of an 8x64 block) in one write."""
FITTED_WRITE_BYTES = 32
"""The bytes of the face-row writes ``FACE_ROW_WRITE.issue_cycles`` was fitted on (one face row of bfloat16)."""


def packet_read_ns(arch: ArchPerf, packet_bytes: float) -> float:
    """The sender core's waited read of one packet's pages from other cores' L1 (ns)."""
    far_end = op_latency(arch.arch).read_trip_cycles(in_dram=False)
    return arch.cycles_ns(far_end + packet_bytes / arch.noc_bytes_per_cycle)


def output_writes(op_code: str, packet_bytes: float, pages: int) -> int:
    """The NoC writes one data-movement core of a packet core issues in turn to write out its summed packet of
    ``packet_bytes`` (``pages`` pages): one a page, or for the create-heads variant half a head's row for each
    head's row of the packet (:data:`HEAD_ROW_BYTES`; the other half on the other data-movement core)."""
    if op_code == CREATE_HEADS:
        return math.ceil(packet_bytes / HEAD_ROW_BYTES)
    return pages


def summed_tiles(op_code: str, packet_bytes: float, pages: int, rows: int, devices: int) -> int:
    """The tiles a packet core's compute kernel adds a device pair (and packs) for a packet of ``packet_bytes``
    (``pages`` tiles): one a page, or for the create-heads variant one a block of ``rows / devices`` rows of half a
    head (:data:`HEAD_ROW_BYTES`), each added as a whole tile."""
    if op_code != CREATE_HEADS:
        return pages
    block = max(1, rows // devices) * HEAD_ROW_BYTES // 2
    return math.ceil(packet_bytes / block)


def reduction_tail_ns(
    arch: ArchPerf, tile_bytes: float, pages: int, devices: int, writes: int | None = None, summed: int | None = None
) -> float:
    """What follows the last arrival on a packet core of ``pages`` tiles of ``tile_bytes``: the ``devices`` copies
    of its ``summed`` tiles (``pages`` if not given) added in pairs (``devices // 2`` adds a tile, each feeding two
    operand tiles) and packed, then the pages written to their output cores in ``writes`` NoC writes (one a page if
    not given), each its command and flight beyond its bytes, and the writes waited for (ns)."""
    tiles = pages if summed is None else summed
    adds = tiles * max(1, devices // 2) * (arch.fpu_eltwise_cycles_per_tile + operand_cycles(arch, 2 * tile_bytes))
    pack = tiles * tile_bytes / arch.packer_bytes_per_cycle
    issue = FACE_ROW_WRITE.issue_cycles - FITTED_WRITE_BYTES / arch.noc_bytes_per_cycle
    commands = (pages if writes is None else writes) * issue if pages else 0.0
    write = pages * tile_bytes / arch.noc_bytes_per_cycle + commands + WRITE_BARRIER.cycles()
    return arch.cycles_ns(adds + pack + write)
