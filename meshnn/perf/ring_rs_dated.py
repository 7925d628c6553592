"""The ring reduce_scatter tt-metal ran before #41522 (merged 2026-04-09): each half of a slice crosses the whole ring.

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
"""

from __future__ import annotations

from dataclasses import replace
from enum import Enum
from typing import TypeVar

from meshnn.device.arch import Arch
from meshnn.perf.desc import OpDesc, OpFamily, Topology
from meshnn.perf.fabric import fabric_perf

P = TypeVar("P")

RING_RS_PROGRAM_ATTRIBUTE = "ring_rs_program"
"""The op-desc attribute naming the ring reduce_scatter program a figure ran (absent: today's)."""

DIRECT_OP_CODES = frozenset({"LlamaReduceScatterDeviceOperation", "LlamaReduceScatterCreateHeadsDeviceOperation"})
"""Reduce_scatters with programs of their own (the Llama ones, :mod:`meshnn.perf.collectives`): never marked."""


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
    kept = tuple(a for a in desc.attributes if a[0] != RING_RS_PROGRAM_ATTRIBUTE)
    return replace(desc, attributes=(*kept, (RING_RS_PROGRAM_ATTRIBUTE, program.value)))


def half_slices(desc: OpDesc, arch: Arch) -> bool:
    """Whether ``desc`` is marked as run by the program of before #41522 and that program is timed on ``arch``."""
    value = dict(desc.attributes).get(RING_RS_PROGRAM_ATTRIBUTE)
    return value == RingReduceScatterProgram.HALF_SLICES.value and arch in HALF_SLICE_STEP_NS


def dated_phase(desc: OpDesc, arch: Arch, family: OpFamily, topology: Topology, devices: int, phase: P) -> P:
    """One phase of ``desc`` (``phase``, a :class:`meshnn.perf.collectives.Phase` as today's program runs it): for a
    marked ring reduce_scatter, its start-up is the report's invocation and ``devices - 1`` steps of
    :data:`HALF_SLICE_STEP_NS` (its transfer is today's)."""
    if family is not OpFamily.REDUCE_SCATTER or topology is not Topology.RING or not half_slices(desc, arch):
        return phase
    startup = fabric_perf(arch).invocation_ns[family] + (devices - 1) * HALF_SLICE_STEP_NS[arch]
    return replace(phase, startup_ns=startup)
