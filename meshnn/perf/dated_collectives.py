"""Collective programs of earlier dates, for figures measured on them: an op desc marked with one is timed as it.

**The ring reduce_scatter of before #41522** (merged 2026-04-09): each half of a slice crosses the whole ring.
Until tt-metal #41522 ("New ReduceScatter ring algorithm", 2026-04-09) the ring path of
``reduce_scatter_minimal_async`` (which ttnn.reduce_scatter called; no one-shot program yet) sent half of every
slice each way round the ring: on each of ``N-1`` steps a worker waits for its neighbour's partial
(``out_ready_sem``), reads it and its own input slice, adds them and writes the sum on to the next device over the
fabric, then increments that device's semaphore [tt-metal at 77b6238149^: ttnn/cpp/ttnn/operations/experimental/
ccl/reduce_scatter_minimal_async/device/kernels/ring_reduce_scatter_minimal_async_writer.cpp, loop ``i <
ring_size - 1``; ring_reduce_scatter_minimal_async_reader.cpp and ring_reduction.cpp].  A step's chunk is at most
``tile_granularity`` tiles (8 for bfloat16: two tiles a scatter-write packet), so a decode-sized slice (one to 14
tiles over 2 workers a direction) is one chunk a step, and the ``N-1`` steps run one after another.  The
program of today sends the whole slice half-way (``N/2`` steps), which the CCL report's ring rows (and
:mod:`meshnn.perf.fabric`'s hop term) time.

Model: an op desc marked ``(RING_RS_PROGRAM_ATTRIBUTE, RingReduceScatterProgram.HALF_SLICES.value)`` and run as a
ring reduce_scatter takes the report's invocation, ``N-1`` steps of :data:`HALF_SLICE_STEP_NS` and the report
program's transfer (bytes, ramp; never the one-shot program's 2.3x).  The step is fitted to #41522's "ring
(current)" [1, 1, 32, 256] row (8 devices, bfloat16, DRAM interleaved: 46.76 us); its 1024 / 2048 / 3584 rows
(49.15 / 55.42 / 66.61 us) and its [2, 8, 512, 1024] row (915.39 us) check it (tests/perf/published_ccl_dated.py).
The same table's "ring (new)" column (30.81 .. 45.93 us) reads about 14 us above the report's later runs of today's
program (16.8 .. 31.2 us modelled), and its line column 10-16% above them: the PR's runs cost more a call than the
report's, and the fitted step holds that too (6.0 us a step where the report's ring hop is 3.06).

**The relay all_gather of 2025-07** (``all_gather_async_minimal_interleaved``, which ``experimental.all_gather_async``
ran for an interleaved tiled input given two semaphores, Llama-70B Galaxy's ``line_all_gather`` in decode, until
#25063 of 2025-07-23) [tt-metal at 7f36e28e80: ttnn/cpp/ttnn/operations/experimental/ccl/all_gather_async/device/
all_gather_async_op.cpp, select_version; kernels/interleaved_reader.cpp, interleaved_writer.cpp]: no entry barrier
and no mux; one worker a direction a link writes its own slice to its neighbour a packet at a time, then the
semaphore increment behind it, and relays each slice that arrives (the reader waits for the semaphore, reads the
slice back from the output, the writer sends it on).  The farthest slice crosses ``N/2`` links on a ring (``N-1`` on
a line), each crossing one after the other: a waited read of the tile (``read_trip_cycles`` and its bytes at one
core's NoC rate), its packet's write into the router (a page write's issue and bytes), the fabric's hop
(``hop_latency_1d_ns``), the write's landing at the far end (its DRAM write acknowledgement, or an L1 write's latency)
and the semaphore's packet behind it (``FabricPerf.packet_ns``).  Start-up: the op's launch and those crossings; the
transfer is today's (the link's bytes).  No constant of its own: every figure of it is a check (the Galaxy decoder's
70B top-32 gathers, tests/perf/published_galaxy_decoder.py).  For a decode-sized slice (one chunk a crossing) only.
"""

from __future__ import annotations

from dataclasses import replace
from enum import Enum
from typing import TypeVar

from meshnn.device.arch import Arch
from meshnn.perf.desc import OpDesc, OpFamily, Topology
from meshnn.perf.fabric import fabric_perf
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.page_programs import PAGE_FIGURES
from meshnn.perf.transpose_hc import WRITE_BARRIER

P = TypeVar("P")

RING_RS_PROGRAM_ATTRIBUTE = "ring_rs_program"
"""The op-desc attribute naming the ring reduce_scatter program a figure ran (absent: today's)."""

DIRECT_OP_CODES = frozenset({"LlamaReduceScatterDeviceOperation", "LlamaReduceScatterCreateHeadsDeviceOperation"})
"""Reduce_scatters with programs of their own (the Llama ones, :mod:`meshnn.perf.collectives`): never marked."""


GATHER_PROGRAM_ATTRIBUTE = "gather_program"
"""The op-desc attribute naming the all_gather program a figure ran (absent: today's)."""


class GatherProgram(Enum):
    """Which of tt-metal's all_gather_async programs times an op."""

    RELAY = "2025-07"  # all_gather_async_minimal_interleaved, until #25063 (2025-07-23): slices relayed, no barrier


class RingReduceScatterProgram(Enum):
    """Which of tt-metal's ring reduce_scatter programs times an op."""

    HALF_SLICES = "2026-03"  # before #41522 (2026-04-09): half a slice each way, across all N-1 links


HALF_SLICE_STEP_NS = {Arch.WORMHOLE_B0: 6029.0}
"""One step of the program of before #41522 (ns): the wait for the neighbour's partial, its read and add, and the
write and semaphore increment to the next device, for a slice of one chunk.  Fitted: tt-metal #41522's ring
(current) [1, 1, 32, 256] on 8 Wormhole devices, 46.76 us (the module's docstring).  No Blackhole figure: on
Blackhole a marked op runs as today's."""


def marked(desc: OpDesc, program: RingReduceScatterProgram) -> OpDesc:
    """``desc`` marked as run by ``program`` when it is a reduce_scatter with the ring program, else as it is."""
    if desc.family is not OpFamily.REDUCE_SCATTER or desc.op_code in DIRECT_OP_CODES:
        return desc
    return desc.with_attribute(RING_RS_PROGRAM_ATTRIBUTE, program.value)


def half_slices(desc: OpDesc, arch: Arch) -> bool:
    """Whether ``desc`` is marked as run by the program of before #41522 and that program is timed on ``arch``."""
    value = dict(desc.attributes).get(RING_RS_PROGRAM_ATTRIBUTE)
    return value == RingReduceScatterProgram.HALF_SLICES.value and arch in HALF_SLICE_STEP_NS


def relays(desc: OpDesc) -> bool:
    """Whether ``desc`` is an all_gather marked as run by the relay program of 2025-07."""
    value = dict(desc.attributes).get(GATHER_PROGRAM_ATTRIBUTE)
    return desc.family is OpFamily.ALL_GATHER and value == GatherProgram.RELAY.value


def relay_crossing_ns(arch: ArchPerf, desc: OpDesc) -> float:
    """One link crossing of a slice in the relay all_gather (ns): its waited read, its packet's write into the
    router, the hop, its landing in the output and the semaphore's packet behind it (see the module)."""
    out = desc.outputs[0]
    tile_bytes = desc.inputs[0].nbytes / max(desc.inputs[0].tiles, 1)
    moved = tile_bytes / arch.noc_bytes_per_cycle
    latency = op_latency(arch.arch)
    land = WRITE_BARRIER.cycles() if out.in_dram else latency.noc_write_latency_cycles
    cycles = latency.read_trip_cycles(True) + moved + PAGE_FIGURES.write_issue_cycles + moved + land
    return arch.cycles_ns(cycles) + arch.hop_latency_1d_ns + fabric_perf(arch.arch).packet_ns


def dated_phase(desc: OpDesc, arch: ArchPerf, family: OpFamily, topology: Topology, devices: int, phase: P) -> P:
    """One phase of ``desc`` (``phase``, a :class:`meshnn.perf.collectives.Phase` as today's program runs it), as the
    program ``desc`` is marked with runs it: a ring reduce_scatter of before #41522 starts with the report's
    invocation and ``devices - 1`` steps of :data:`HALF_SLICE_STEP_NS`; the relay all_gather with the op's launch
    and its farthest slice's crossings (:func:`relay_crossing_ns`).  The transfer is today's."""
    ring = topology is Topology.RING
    if family is OpFamily.ALL_GATHER and relays(desc):
        crossings = devices // 2 if ring else devices - 1
        return replace(phase, startup_ns=arch.op_launch_ns + crossings * relay_crossing_ns(arch, desc))
    if family is not OpFamily.REDUCE_SCATTER or not ring or not half_slices(desc, arch.arch):
        return phase
    startup = fabric_perf(arch.arch).invocation_ns[family] + (devices - 1) * HALF_SLICE_STEP_NS[arch.arch]
    return replace(phase, startup_ns=startup)
