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
  (``noc_async_write_barrier``): all after the last arrival, so on the op's critical path.

Units: ``_ns`` nanoseconds, bytes, cycles.
"""

from __future__ import annotations

from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.traffic import operand_cycles
from meshnn.perf.transpose_hc import WRITE_BARRIER


def packet_read_ns(arch: ArchPerf, packet_bytes: float) -> float:
    """The sender core's waited read of one packet's pages from other cores' L1 (ns)."""
    far_end = op_latency(arch.arch).read_trip_cycles(in_dram=False)
    return arch.cycles_ns(far_end + packet_bytes / arch.noc_bytes_per_cycle)


def reduction_tail_ns(arch: ArchPerf, tile_bytes: float, pages: int, devices: int) -> float:
    """What follows the last arrival on a packet core of ``pages`` tiles of ``tile_bytes``: the ``devices`` copies
    of each summed in pairs (``devices // 2`` adds a page, each feeding two operand tiles), the pages packed, then
    written to their output cores and the writes waited for (ns)."""
    adds = pages * max(1, devices // 2) * (arch.fpu_eltwise_cycles_per_tile + operand_cycles(arch, 2 * tile_bytes))
    pack = pages * tile_bytes / arch.packer_bytes_per_cycle
    write = pages * tile_bytes / arch.noc_bytes_per_cycle + WRITE_BARRIER.cycles()
    return arch.cycles_ns(adds + pack + write)
