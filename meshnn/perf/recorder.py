"""The record of a mesh's ops: each op's description, its prediction and the devices it ran on, and
the predicted time per device.

Device ids are the row-major indices of the mesh coordinates (device 0 is (0, 0)).  Each device
keeps its own timeline; a collective starts on all its devices once the last of them is ready.

The host keeps a clock of its own: it dispatches eager ops one after another (each
``ArchPerf.dispatch_ns(devices)``) without waiting for the device, as tt-metal's fast dispatch
does (the commands queue up in each device's issue queue), so an eager op starts when both the
host has dispatched it and its devices are free (plus the replay gap): behind a long kernel the
host runs ahead and the short ops after it cost no host time.  A read back to the host
(:meth:`Recorder.synchronize`, ``ttnn.to_torch`` under a capture) makes the host wait for every
device.  A traced op costs the host nothing per op.  A recorder is safe to use from several threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from meshnn.errors import MeshnnValueError
from meshnn.perf.desc import CollectiveConfig, OpDesc
from meshnn.perf.model import op_to_op_ns, predict_kernel
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine, SystemPerf, machine

KEPT_KERNELS = 4096
"""Distinct ops whose kernel prediction a recorder keeps (a model's layers repeat a few dozen)."""


@dataclass(frozen=True, slots=True)
class Record:
    """One op run: ``start_ns`` is when its kernel starts on each of ``devices`` (same order)."""

    index: int
    desc: OpDesc
    prediction: Prediction
    devices: tuple[int, ...]
    start_ns: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class DeviceTotals:
    """The predicted time of one device: kernels, gaps, and the op count (ns)."""

    device: int
    ops: int
    kernel_ns: float
    gap_ns: float

    @property
    def total_ns(self) -> float:
        return self.kernel_ns + self.gap_ns


class Recorder:
    """Predictions of the ops run on one mesh, in order."""

    def __init__(self, system: str | SystemPerf | Machine, mesh_shape: tuple[int, int] | None = None) -> None:
        self.machine = machine(system, mesh_shape)
        self._records: list[Record] = []
        self._clock: dict[int, float] = {}  # device -> end of its last kernel
        self._host = 0.0  # when the host has dispatched its last eager op
        self._syncs: list[int] = []  # record counts at which the host waited for the devices
        self._kernels: dict[OpDesc, Prediction] = {}  # an op's kernel prediction, kept for its repeats
        self._lock = threading.Lock()

    @property
    def records(self) -> tuple[Record, ...]:
        with self._lock:
            return tuple(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def _devices(self, devices: Iterable[int] | None) -> tuple[int, ...]:
        count = self.machine.num_devices
        chosen = tuple(range(count)) if devices is None else tuple(int(d) for d in devices)
        if not chosen or any(not 0 <= d < count for d in chosen):
            raise MeshnnValueError(f"device ids must be in 0..{count - 1}, got {devices!r}")
        return chosen

    def record(self, desc: OpDesc, devices: Iterable[int] | None = None, *, traced: bool = False) -> Record:
        """Predict ``desc`` and append it, run on ``devices`` (default: every device of the mesh)."""
        chosen = self._devices(devices)
        with self._lock:
            ready = [self._clock.get(d, 0.0) for d in chosen]
            if desc.family.is_collective:  # every device waits for its peers before the first hop
                ready = [max(ready)] * len(ready)
            gap = self._gap(max(ready), len(chosen), traced=traced)
            timed = self._aligned(desc, chosen, gap)
            prediction = replace(self._kernel(timed), gap_ns=gap, traced=traced)
            starts = tuple(t + prediction.gap_ns for t in ready)
            for device, start in zip(chosen, starts, strict=True):
                self._clock[device] = start + prediction.kernel_ns
            entry = Record(len(self._records), desc, prediction, chosen, starts)
            self._records.append(entry)
            return entry

    def _aligned(self, desc: OpDesc, devices: tuple[int, ...], gap_ns: float) -> OpDesc:
        """``desc`` marked aligned when it is a collective right behind another on the same devices
        with no host wait between them (the replay gap only): the devices start it together, as the
        previous call's exit left them (caller holds the lock)."""
        last = self._records[-1] if self._records else None
        if not desc.family.is_collective or last is None or not last.desc.family.is_collective:
            return desc
        floor = op_to_op_ns(self.machine.system.arch, traced=True, previous_kernel_ns=None)
        if last.devices != devices or gap_ns > floor:
            return desc
        return replace(desc, collective=replace(desc.collective or CollectiveConfig(), aligned=True))

    def _gap(self, ready_ns: float, devices: int, *, traced: bool) -> float:
        """The gap before an op whose devices are free at ``ready_ns``: traced, the replay gap;
        eager, until the host (which dispatches ops back to back) has dispatched it, at least the
        replay gap.  Advances the host's clock (caller holds the lock)."""
        arch = self.machine.system.arch
        floor = op_to_op_ns(arch, traced=True, previous_kernel_ns=None)
        if traced:
            return floor
        self._host += arch.dispatch_ns(devices)
        return max(floor, self._host - ready_ns)

    def synchronize(self) -> None:
        """The host waits for every device (a read back): the next eager op's dispatch starts then."""
        with self._lock:
            self._host = max(self._host, max(self._clock.values(), default=0.0))
            if not self._syncs or self._syncs[-1] != len(self._records):
                self._syncs.append(len(self._records))

    def _kernel(self, desc: OpDesc) -> Prediction:
        kernel = self._kernels.get(desc)
        if kernel is None:
            kernel = predict_kernel(desc, self.machine)
            if len(self._kernels) < KEPT_KERNELS:
                self._kernels[desc] = kernel
        return kernel

    def totals(self) -> list[DeviceTotals]:
        """Per device, in device order: ops run, summed kernel and gap time."""
        sums: dict[int, list[float]] = {}
        for entry in self.records:
            for device in entry.devices:
                row = sums.setdefault(device, [0, 0.0, 0.0])
                row[0] += 1
                row[1] += entry.prediction.kernel_ns
                row[2] += entry.prediction.gap_ns
        return [DeviceTotals(d, int(r[0]), r[1], r[2]) for d, r in sorted(sums.items())]

    def total_ns(self) -> float:
        """The slowest device's predicted time: the mesh finishes when its last device does."""
        return max((t.total_ns for t in self.totals()), default=0.0)

    def retimed(self, *, traced: bool, rewrite: Callable[[OpDesc], OpDesc] | None = None) -> Recorder:
        """The same ops on the same devices, all run traced (or all eager): what tracing would save;
        ``rewrite``: each op's desc as it is to be timed (e.g. marked with the program of a dated figure)."""
        again = Recorder(self.machine)
        with self._lock:
            syncs = set(self._syncs)
        for entry in self.records:
            if entry.index in syncs:
                again.synchronize()
            again.record(entry.desc if rewrite is None else rewrite(entry.desc), entry.devices, traced=traced)
        if len(self) in syncs:
            again.synchronize()
        return again

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
            self._clock.clear()
            self._host = 0.0
            self._syncs.clear()
