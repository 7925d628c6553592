"""Recording the predicted device time of every op a program runs: ``ttnn.begin_perf_capture()`` /
``ttnn.end_perf_capture()`` (or ``with ttnn.perf_capture() as capture:``), named after ttnn's
``graph.begin_graph_capture`` / ``end_graph_capture``.

While a capture runs it is one of the process's mesh observers (:mod:`meshnn.mesh.observers`): each
op's end is turned into an :class:`~meshnn.perf.OpDesc` (:mod:`meshnn.ops.costs`) and recorded, with
its devices, in a :class:`~meshnn.perf.Recorder` of the op's mesh (one per mesh, made at its first
op: the mesh's system and shape).  Outside a capture nothing is observed, so an ordinary run builds
no events at all.

Eager or traced: an op is recorded eager (each op waits for the host to dispatch it) unless the
capture was begun with ``traced=True``.  Ops enqueued while their queue captures a trace
(``queue.capture`` set) run nothing on a device then: their descriptions are kept with the trace's
id, and each ``ttnn.execute_trace`` of that trace records them again, traced (the observers'
``on_trace_replay``).  A trace captured before this perf capture began is not known to it, and its
replays are listed in :attr:`PerfCapture.skipped`.  A whole capture can be re-timed as if traced
(or eager) with :meth:`PerfCapture.retimed`.

An op the model cannot time (a mesh of a system it has no figures for, an op with no tensors) is
listed in :attr:`PerfCapture.skipped` with the reason; the program runs on regardless.

Host <-> device transfers (``from_torch(device=)``, ``to_device``, ``to_torch`` of a device tensor) are
timed apart (:mod:`meshnn.perf.host_transfers`, :attr:`PerfCapture.transfers`) and said in the summary,
not added to any device's time.

What an op records follows what it runs in tt-metal, its registry entry's ``runs``
(:class:`~meshnn.ops.registry.DeviceWork`, :func:`meshnn.ops.costs.device_work`): only a device program
is a device row (device time, an op-to-op gap).  An op that writes a host tensor into device memory
(``ttnn.zeros`` / ``ones`` / ``full`` / ``arange`` on a device, the ``*_like`` forms' host path: ttnn
builds the values on the host and runs ``Tensor::to_device`` or ``copy_to_device``) is a host transfer
named after the op, timed as ``to_device`` is; an allocation alone (``ttnn.empty``) or host work
(a tensor-prefetcher request, which the host's worker thread pushes to the prefetcher's sockets)
records nothing.  A program such an op runs (``zeros_like`` of a TILE device tensor runs ``ttnn.fill``)
is recorded as that program's own op.

May import: :mod:`meshnn.errors`, :mod:`meshnn.perf`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
:mod:`meshnn.ops.costs` and :mod:`meshnn.ops.registry` (its ``DeviceWork``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError
from meshnn.mesh.observers import COPY_TO_DEVICE, OBSERVERS, TO_DEVICE, HostCallEvent, HostOpEvent, OpEvent
from meshnn.ops.costs import ESTIMATED, device_work, op_desc, tensor_desc, ttnn_name
from meshnn.ops.registry import DeviceWork
from meshnn.perf.gather_matmul import FUSED_MATMUL
from meshnn.perf.host import step_time
from meshnn.perf.host_transfers import Direction, HostTransferRecord, time_transfer, transfers_line
from meshnn.perf.ops_csv import write_ops_perf_csv
from meshnn.perf.plot import write_time_plot
from meshnn.perf.recorder import Recorder
from meshnn.perf.rs_matmul import FUSED_PRODUCT
from meshnn.perf.systems import Machine, machine
from meshnn.perf.table import format_table


class PerfCapture:
    """The predicted device time of every op run on any mesh while this capture records, a
    :class:`~meshnn.perf.Recorder` per mesh.  ``traced``: record every op as a traced replay.
    (An observer of op ends only: allocations and frees are not sent to it.)"""

    def __init__(self, *, traced: bool = False) -> None:
        if not isinstance(traced, bool):
            raise MeshnnTypeError(f"PerfCapture: traced must be a bool, got {traced!r}")
        self.traced = traced
        self.skipped: list[tuple[str, str]] = []  # (ttnn op, why it was not timed)
        self._entries: list[tuple[weakref.ref, Recorder]] = []  # (mesh, its recorder), by first op
        self._by_id: dict[int, int] = {}  # id(mesh) -> its entry
        self._traces: dict[tuple[int, int], list] = {}  # (id(mesh), trace id) -> its ops' (desc, devices)
        self._transfers: list[tuple[weakref.ref, HostTransferRecord]] = []  # (mesh, a write to it / read from it)
        self._calls = threading.local()  # ``stack``: this thread's open host calls, outermost first
        self._lock = threading.Lock()

    # -------------------------------------------------------------------- the observer side

    def on_op_end(self, event: OpEvent, outputs: Sequence[Any]) -> None:
        work = device_work(event.op)
        if work is not DeviceWork.PROGRAM:  # no program in tt-metal: no device row
            if work is DeviceWork.HOST_WRITE and outputs:
                self._record_transfer(event.op, event.mesh, Direction.WRITE, outputs[0])
            return
        if event.attrs.get(FUSED_MATMUL) or event.attrs.get(FUSED_PRODUCT):  # timed in its fused op's row
            return
        capture = getattr(_queue(event), "capture", None)  # a trace being captured runs nothing now
        try:
            recorder = self._recorder_for(event.mesh)
            desc = op_desc(event, outputs)
            if desc is None:
                self.skipped.append((event.op, "no tensor in or out"))
                return
            if capture is not None:
                key = (id(event.mesh), int(capture.trace_id))
                self._traces.setdefault(key, []).append((desc, _device_ids(event)))
                return
            recorder.record(desc, _device_ids(event), traced=self.traced)
        except (MeshnnError, TypeError, ValueError, AttributeError, LookupError, ArithmeticError) as error:
            self.skipped.append(
                (event.op, f"{type(error).__name__}: {error}")
            )  # the model cannot time it: the program runs on

    def on_host_op(self, event: HostOpEvent) -> None:
        """A write to a mesh or a read back from it, timed apart; a read back (``to_torch`` of a mesh's
        tensor) also makes the host wait for that mesh's devices before it dispatches its next op."""
        if event.mesh is None or event.error is not None:
            return
        if self._host_write_op() is None:  # (a write inside an op that is a host write is that op's)
            self._time_transfer(event)
        if event.op != "to_torch":
            return
        with self._lock:
            index = self._by_id.get(id(event.mesh))
            entry = None if index is None else self._entries[index]
        if entry is not None and entry[0]() is event.mesh:
            entry[1].synchronize()

    def on_host_call_begin(self, event: HostCallEvent) -> None:
        self._stack().append(event)

    def on_host_call_end(self, event: HostCallEvent, outputs: Sequence[Any] | None) -> None:
        """A write (``Tensor::to_device``, ``copy_to_device``) made by an op whose run in tt-metal is a
        host write: a host transfer of that op (a write inside ``from_torch`` or ``ttnn.to_device`` is
        timed from their own events)."""
        stack = self._stack()
        if not stack or stack[-1] is not event:
            return  # it began before this capture
        stack.pop()
        if outputs is None or not outputs or event.name not in (TO_DEVICE, COPY_TO_DEVICE) or not stack:
            return
        op = self._host_write_op()
        if op is not None:
            self._record_transfer(op, event.mesh, Direction.WRITE, outputs[0])

    def _host_write_op(self) -> str | None:
        """The op (``zeros``...) this thread is running when the outermost open host call is an op whose
        run in tt-metal is a host write; None otherwise."""
        stack = self._stack()
        root = stack[0].name if stack else ""
        if root.startswith("ttnn::") and device_work(root) is DeviceWork.HOST_WRITE:
            return ttnn_name(root)
        return None

    def _stack(self) -> list[HostCallEvent]:
        stack = getattr(self._calls, "stack", None)
        if stack is None:
            stack = self._calls.stack = []
        return stack

    def _time_transfer(self, event: HostOpEvent) -> None:
        """Time a ``from_torch`` / ``to_device`` write or a ``to_torch`` read of a device tensor."""
        direction = Direction.READ if event.op == "to_torch" else Direction.WRITE
        tensors = event.inputs if direction is Direction.READ else event.outputs
        if event.op not in ("from_torch", "to_device", "to_torch") or not tensors:
            return
        self._record_transfer(event.op, event.mesh, direction, tensors[0])

    def _record_transfer(self, op: str, mesh: Any, direction: Direction, tensor: Any) -> None:
        """Time ``op``'s write of ``tensor`` to ``mesh`` (or its read back), kept apart from the devices."""
        if mesh is None:
            return
        try:
            devices = _row_major(mesh, tensor.device_coords())
            record = time_transfer(_machine_of(mesh), op, direction, tensor_desc(tensor.spec), devices)
        except (MeshnnError, TypeError, ValueError, AttributeError, LookupError, ArithmeticError) as error:
            self.skipped.append((op, f"{type(error).__name__}: {error}"))
            return
        with self._lock:
            self._transfers.append((weakref.ref(mesh), record))

    @property
    def transfers(self) -> list[HostTransferRecord]:
        """Every host transfer to or from a mesh, in order (timed apart from the devices)."""
        with self._lock:
            return [record for _, record in self._transfers]

    def transfers_of(self, mesh_device: Any) -> list[HostTransferRecord]:
        """The host transfers to and from ``mesh_device``, in order."""
        with self._lock:
            return [record for ref, record in self._transfers if ref() is mesh_device]

    def on_trace_replay(self, mesh: Any, trace_id: int, cq_id: int) -> None:
        """A replay of a trace: its captured ops again, each timed as traced."""
        ops = self._traces.get((id(mesh), trace_id))
        if ops is None:
            self.skipped.append(("execute_trace", f"trace {trace_id} was captured before this perf capture began"))
            return
        recorder = self._recorder_for(mesh)
        for desc, devices in ops:
            recorder.record(desc, devices, traced=True)

    def _recorder_for(self, mesh: Any) -> Recorder:
        with self._lock:
            index = self._by_id.get(id(mesh))
            if index is not None and self._entries[index][0]() is mesh:
                return self._entries[index][1]
            recorder = Recorder(_machine_of(mesh))
            self._by_id[id(mesh)] = len(self._entries)  # (a new mesh at a dead one's id gets its own)
            self._entries.append((weakref.ref(mesh), recorder))
            return recorder

    # ------------------------------------------------------------------- what a user reads

    @property
    def recorders(self) -> list[Recorder]:
        """One recorder per mesh that ran an op, in the order of their first ops."""
        with self._lock:
            return [recorder for _, recorder in self._entries]

    def recorder(self, mesh_device: Any) -> Recorder:
        """The recorder of ``mesh_device``'s ops."""
        with self._lock:
            index = self._by_id.get(id(mesh_device))
            entry = None if index is None else self._entries[index]
        if entry is None or entry[0]() is not mesh_device:
            raise MeshnnValueError(f"PerfCapture.recorder: no op of mesh_device {mesh_device!r} was recorded")
        return entry[1]

    def retimed(self, *, traced: bool) -> list[Recorder]:
        """Every mesh's ops again, all traced (or all eager): what tracing the run would save."""
        if not isinstance(traced, bool):
            raise MeshnnTypeError(f"PerfCapture.retimed: traced must be a bool, got {traced!r}")
        return [recorder.retimed(traced=traced) for recorder in self.recorders]

    def total_ns(self) -> float:
        """The predicted time of the slowest mesh (meshes of one program run side by side)."""
        return max((recorder.total_ns() for recorder in self.recorders), default=0.0)

    def table(self) -> str:
        """Every mesh's per-op table and per-device totals (:func:`meshnn.perf.format_table`)."""
        return "\n\n".join(format_table(recorder) for recorder in self.recorders)

    def summary(self) -> str:
        """Per mesh: its predicted time as recorded, and with every op eager or every op traced."""
        lines = []
        for index, recorder in enumerate(self.recorders):
            m = recorder.machine
            eager, traced = recorder.retimed(traced=False).total_ns(), recorder.retimed(traced=True).total_ns()
            lines.append(
                f"mesh {index} ({m.system.name} {m.mesh_shape[0]}x{m.mesh_shape[1]}): {len(recorder)} ops, "
                f"{_us(recorder.total_ns())} as recorded; all eager {_us(eager)}, all traced {_us(traced)}"
            )
            with self._lock:
                mesh = next((ref() for ref, r in self._entries if r is recorder), None)
            line = transfers_line(self.transfers_of(mesh)) if mesh is not None else ""
            if line:
                lines.append(line)
            line = _estimated_line(recorder)
            if line:
                lines.append(line)
            step = step_time(recorder, traced=False)
            if step.host_bound_ops * 2 > step.ops:  # most of the eager time is the host's dispatch
                dispatch = _us(m.system.arch.dispatch_ns(m.num_devices))
                lines.append(
                    f"  eager, {step.host_bound_ops} of {step.ops} ops wait on the host's dispatch ({dispatch} an op, "
                    "more than the kernels before them hide): the eager time is dispatch, nearly the same at any batch "
                    "or position"
                )
        with self._lock:
            recorded = {id(ref()) for ref, _ in self._entries}
            idle = list(
                dict.fromkeys(m for ref, _ in self._transfers if (m := ref()) is not None and id(m) not in recorded)
            )
        for mesh in idle:  # a mesh only written to or read from (a creation is a host write, no device op)
            lines.append(f"mesh {mesh.system.name} {tuple(mesh.shape)}: no device ops")
            lines.append(transfers_line(self.transfers_of(mesh)))
        return "\n".join(lines)

    def write_ops_perf_csv(self, folder: str | Path, name: str) -> list[Path]:
        """tt-metal's ops-perf CSV of each mesh, ``ops_perf_results_<name>.csv`` in ``folder`` (the
        second mesh's ``<name>_mesh1``...), as tt-perf-report reads it."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        return [
            write_ops_perf_csv(recorder, target / f"ops_perf_results_{_stem(name, i)}.csv")
            for i, recorder in enumerate(self.recorders)
        ]

    def write_time_plot(self, folder: str | Path, name: str) -> list[Path]:
        """A PNG of where each mesh's time goes, ``<name>_time.png`` in ``folder`` (needs the plot
        extra, matplotlib)."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        return [
            write_time_plot(recorder, target / f"{_stem(name, i)}_time.png")
            for i, recorder in enumerate(self.recorders)
        ]

    def __len__(self) -> int:
        return sum(len(recorder) for recorder in self.recorders)


def _estimated_line(recorder: Recorder) -> str:
    """The ops the model has no family for (timed as copies of their tensors, marked estimated in the CSV):
    how many, their share of the kernel time and their op codes; "" when there are none."""
    records = recorder.records
    marked = [r for r in records if ESTIMATED in r.desc.attributes]
    if not marked:
        return ""
    total = sum(r.prediction.kernel_ns for r in records) or 1.0
    share = 100 * sum(r.prediction.kernel_ns for r in marked) / total
    codes = ", ".join(sorted({r.desc.op_code for r in marked}))
    what = f"{len(marked)} op{'' if len(marked) == 1 else 's'}, {share:.1f}% of the kernel time"
    return f"  estimated (timed as a copy, no model of its program): {what}: {codes}"


def _us(ns: float) -> str:
    return f"{ns / 1e3:,.1f} us"


def _stem(name: str, index: int) -> str:
    return name if index == 0 else f"{name}_mesh{index}"


def _queue(event: OpEvent) -> Any:
    try:
        return event.mesh.mesh_command_queue(event.queue_id)
    except MeshnnError:
        return None


def _machine_of(mesh: Any) -> Machine:
    """The system and mesh shape ``mesh`` is timed on."""
    shape = tuple(mesh.shape)
    return machine(mesh.system.name, (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1]))


def _device_ids(event: OpEvent) -> list[int]:
    """Row-major indices of the devices the op ran on (device 0 is the first coordinate)."""
    return _row_major(event.mesh, event.coords)


def _row_major(mesh: Any, coords: Any) -> list[int]:
    """Row-major indices in ``mesh`` of the mesh coordinates ``coords``."""
    shape = tuple(mesh.shape)
    cols = shape[1] if len(shape) > 1 else shape[0]
    return [c[0] * cols + c[1] if len(c) > 1 else c[0] for c in (tuple(coord) for coord in coords)]


# --------------------------------------------------------------------------- the public calls

_ACTIVE: list[PerfCapture] = []  # at most one: the running capture
_ACTIVE_LOCK = threading.Lock()


def begin_perf_capture(*, traced: bool = False) -> PerfCapture:
    """Start recording the predicted time of every op on every mesh; returns the capture (also
    what :func:`end_perf_capture` returns).  ``traced``: time every op as a traced replay."""
    capture = PerfCapture(traced=traced)
    with _ACTIVE_LOCK:
        if _ACTIVE:
            raise MeshnnError("begin_perf_capture: a perf capture is already running; end_perf_capture() it first")
        _ACTIVE.append(capture)
        OBSERVERS.add(capture)
    return capture


def end_perf_capture() -> PerfCapture:
    """Stop recording; returns the capture with every op recorded since :func:`begin_perf_capture`."""
    with _ACTIVE_LOCK:
        if not _ACTIVE:
            raise MeshnnError("end_perf_capture: no perf capture is running (begin_perf_capture() starts one)")
        capture = _ACTIVE.pop()
        OBSERVERS.remove(capture)
    return capture


@contextmanager
def perf_capture(*, traced: bool = False) -> Iterator[PerfCapture]:
    """``with ttnn.perf_capture() as capture:`` records the ops run in the block."""
    capture = begin_perf_capture(traced=traced)
    try:
        yield capture
    finally:
        end_perf_capture()
