"""tt-metal's device-profiler readbacks (tt-metal 2026-06): ``ttnn.ReadDeviceProfiler(device)`` then
``ttnn.get_latest_programs_perf_data()`` / ``ttnn.get_all_programs_perf_data()``, each a dict
``{chip id: [ProgramAnalysisData, ...]}`` (``ttnn._ttnn.profiler``'s classes).

The durations are PREDICTED, not measured: a simulated device has no profiler buffers, so each
program's times are :mod:`meshnn.perf`'s model of it (the same prediction ``ttnn.perf_capture`` and
the ops-perf CSV give).  As in tt-metal, the readbacks answer only when the profiler is on:
``$TT_METAL_DEVICE_PROFILER``, ``$TT_METAL_PROFILER_MID_RUN_DUMP`` and
``$TT_METAL_PROFILER_CPP_POST_PROCESS`` all set (else ``{}``).  While they are set when the op
catalog loads or a readback is called, every op's run is recorded (an observer, as
:class:`~meshnn.ops.perf_capture.PerfCapture`); each ``ReadDeviceProfiler(device)`` takes the
programs run on that device since its previous read, one set per chip.  A program is one op's run
on one chip: ``runtime_id`` counts the mesh's programs from 1; ``trace_id`` / ``trace_id_counter``
stay tt-metal's invalid value (a trace replay's ops are recorded, traced, without their trace id).
Each program carries ``DEVICE FW DURATION [ns]`` and ``DEVICE KERNEL DURATION [ns]``: start and
end are device clock cycles (the kernel's predicted start on that chip's timeline, plus
:data:`meshnn.perf.ops_csv.START_OFFSET_NS`), the duration ``(end - start) * 1000 / AICLK MHz`` as
tt-metal computes it; FW and kernel windows are the same (the model has no firmware overhead).


The real-time profiler's names are :mod:`meshnn.mesh.realtime_profiler`'s.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.perf` and :mod:`meshnn.ops.perf_capture`.
"""

from __future__ import annotations

import os
import threading
import weakref
from dataclasses import dataclass, field

from meshnn.errors import MeshnnValueError
from meshnn.mesh import entry_points
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.observers import OBSERVERS
from meshnn.ops.perf_capture import PerfCapture
from meshnn.perf.ops_csv import START_OFFSET_NS
from meshnn.perf.recorder import Record, Recorder

INVALID_UID = 1 << 63
"""tt-metal's ``INVALID_NUM_PROGRAM_EXECUTION_UID``: a uid field not set."""
UINT64_MAX = (1 << 64) - 1
PROFILER_ENV = ("TT_METAL_DEVICE_PROFILER", "TT_METAL_PROFILER_MID_RUN_DUMP", "TT_METAL_PROFILER_CPP_POST_PROCESS")
"""Each must be set for the readbacks to answer (tt-metal: device profiler on, mid-run perf data)."""
FW_DURATION = "DEVICE FW DURATION [ns]"
KERNEL_DURATION = "DEVICE KERNEL DURATION [ns]"


@dataclass(order=False)
class ProgramExecutionUID:
    """Which run of which program: ``runtime_id``, and ``trace_id`` / ``trace_id_counter`` for a
    trace's replays (each :data:`INVALID_UID` when not set).  Ordered by the three in turn."""

    runtime_id: int = INVALID_UID
    trace_id: int = INVALID_UID
    trace_id_counter: int = INVALID_UID

    def _key(self) -> tuple[int, int, int]:
        return (self.runtime_id, self.trace_id, self.trace_id_counter)

    def __lt__(self, other: ProgramExecutionUID) -> bool:
        return self._key() < other._key()


@dataclass(order=False)
class ProgramSingleAnalysisResult:
    """One analysis of one program: ``start_timestamp`` / ``end_timestamp`` in device clock cycles,
    ``duration`` in ns.  Ordered by start, end, then duration."""

    start_timestamp: int = UINT64_MAX
    end_timestamp: int = 0
    duration: int = 0

    def __lt__(self, other: ProgramSingleAnalysisResult) -> bool:
        mine = (self.start_timestamp, self.end_timestamp, self.duration)
        return mine < (other.start_timestamp, other.end_timestamp, other.duration)


@dataclass(order=False)
class ProgramAnalysisData:
    """One program's run on one chip: its uid, its analyses by name, the cores it used and the
    worker cores available.  Ordered by its ``DEVICE FW DURATION [ns]`` analysis (tt-metal's order)."""

    program_execution_uid: ProgramExecutionUID = field(default_factory=ProgramExecutionUID)
    program_analyses_results: dict[str, ProgramSingleAnalysisResult] = field(default_factory=dict)
    core_count: int = 0
    num_available_cores: int = 0

    def __lt__(self, other: ProgramAnalysisData) -> bool:
        return self.program_analyses_results[FW_DURATION] < other.program_analyses_results[FW_DURATION]

    def __repr__(self) -> str:
        return (
            f"ProgramAnalysisData(program_execution_uid={self.program_execution_uid!r}, "
            f"program_analyses_results_size={len(self.program_analyses_results)}, core_count={self.core_count}, "
            f"num_available_cores={self.num_available_cores})"
        )


def profiler_enabled() -> bool:
    """Whether every variable of :data:`PROFILER_ENV` is set (to a value other than 0)."""
    return all(os.environ.get(name, "0") not in ("", "0") for name in PROFILER_ENV)


class _DeviceProfiler:
    """The programs each mesh ran (a perf capture), and what each chip's reads returned."""

    def __init__(self) -> None:
        self.capture = PerfCapture()
        self.read_upto: weakref.WeakKeyDictionary[MeshDevice, int] = weakref.WeakKeyDictionary()
        self.reads: dict[int, list[list[ProgramAnalysisData]]] = {}  # chip id -> each read's programs
        self.lock = threading.Lock()

    def start(self) -> None:
        """Record ops while the profiler's variables are set; stop when they no longer are."""
        if profiler_enabled():
            OBSERVERS.add(self.capture)
        else:
            OBSERVERS.remove(self.capture)

    def read(self, device: MeshDevice) -> None:
        """``ReadDeviceProfiler(device)``: the programs run on ``device`` since its last read."""
        self.start()
        if not profiler_enabled():
            return
        try:
            recorder = self.capture.recorder(device)
        except MeshnnValueError:  # no op of this mesh was recorded
            recorder = None
        chips = device.get_device_ids()
        with self.lock:
            fresh: dict[int, list[ProgramAnalysisData]] = {chip: [] for chip in chips}
            records = recorder.records if recorder is not None else ()
            for entry in records[self.read_upto.get(device, 0) :]:
                for slot, index in enumerate(entry.devices):
                    fresh[chips[index]].append(_program(entry, slot, recorder))
            self.read_upto[device] = len(records)
            for chip, programs in fresh.items():
                self.reads.setdefault(chip, []).append(sorted(programs))

    def latest(self) -> dict[int, list[ProgramAnalysisData]]:
        with self.lock:
            return {chip: list(reads[-1]) if reads else [] for chip, reads in sorted(self.reads.items())}

    def all(self) -> dict[int, list[ProgramAnalysisData]]:
        with self.lock:
            return {chip: sorted(p for read in reads for p in read) for chip, reads in sorted(self.reads.items())}


def _program(entry: Record, slot: int, recorder: Recorder) -> ProgramAnalysisData:
    """One record's run on the chip at ``slot`` of its devices, in tt-metal's structure."""
    system = recorder.machine.system
    per_ns = system.arch.clock_hz / 1e9  # cycles a ns
    start = round((START_OFFSET_NS + entry.start_ns[slot]) * per_ns)
    end = start + round(entry.prediction.kernel_ns * per_ns)
    duration = round((end - start) * 1000.0 / (system.arch.clock_hz / 1e6))
    results = {name: ProgramSingleAnalysisResult(start, end, duration) for name in (FW_DURATION, KERNEL_DURATION)}
    return ProgramAnalysisData(
        ProgramExecutionUID(runtime_id=entry.index + 1),
        results,
        core_count=int(entry.prediction.cores),
        num_available_cores=int(system.compute_cores),
    )


PROFILER = _DeviceProfiler()
"""The process's device profiler (tt-metal keeps one profiler state per process)."""
PROFILER.start()
entry_points.PROFILER_READS.append(PROFILER.read)


def get_latest_programs_perf_data() -> dict[int, list[ProgramAnalysisData]]:
    """``ttnn.get_latest_programs_perf_data()``: per chip, the programs the latest
    ``ReadDeviceProfiler`` of its device returned (predicted times; ``{}`` with the profiler off)."""
    PROFILER.start()
    return PROFILER.latest() if profiler_enabled() else {}


def get_all_programs_perf_data() -> dict[int, list[ProgramAnalysisData]]:
    """``ttnn.get_all_programs_perf_data()``: per chip, every program all its device's
    ``ReadDeviceProfiler`` calls returned (predicted times; ``{}`` with the profiler off)."""
    PROFILER.start()
    return PROFILER.all() if profiler_enabled() else {}
