"""Per-op memory timelines: for every op of a mesh, what its memory did.

:class:`MemoryTimeline` is an observer (:mod:`meshnn.mesh.observers`).  It cuts each mesh's life
into *steps*: one per op (from its begin to its end, the op's outputs and any temporaries it
allocates and frees), and one for each run of allocations and frees between ops (``from_torch``,
``deallocate``...).  Each step keeps, per buffer type, the bytes allocated per bank at its end, the
highest figure reached inside it (its peak) and the largest free block at its end; and which
buffers were born and freed in it.  Every buffer keeps its life (the event numbers of its birth
and its free), so the buffers live at any moment, the peak included, can be listed afterwards
without storing them per step: the record grows with the number of ops and buffers, never with the
size of the tensors.

A mesh's devices allocate in lock-step: every device holds the same buffers at the same addresses,
so one lane per buffer type stands for all of them (a submesh shares its parent's allocator, so its
events join its parent's timeline).  Sizes are bytes per bank, as ``ttnn.get_memory_view`` gives
them; one bank's figure times the number of banks is the device's.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` and the mesh layer's observers and
labels (meshes are read by duck typing).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from meshnn.device.buffer import BufferType
from meshnn.mesh.call_sites import CallSite, call_site
from meshnn.mesh.labels import buffer_label
from meshnn.mesh.observers import BufferEvent, MeshObserver, OpEvent

BETWEEN = "(between ops)"
"""The op name of a step of allocations and frees made outside any op."""

ALWAYS = ("DRAM", "L1")
"""Buffer types every step reports; the others (L1_SMALL, TRACE) once a buffer of theirs is seen."""


@dataclass(frozen=True, slots=True)
class Lane:
    """One buffer type during one step, in bytes per bank."""

    allocated: int
    peak: int
    largest_free: int


@dataclass(frozen=True, slots=True)
class Step:
    """One op (or one run of work between ops): its lanes by buffer type name, and the buffers
    born and freed in it as ``(buffer type, address, bytes per bank)``.  ``failed``: the op raised
    before it ended (an out-of-memory error, say).  ``end_seq``: its last event number.  ``op_id``
    is not compared: it numbers the ops of the process, so two runs of one model differ only there."""

    index: int
    op: str
    lanes: Mapping[str, Lane]
    born: tuple[tuple[str, int, int], ...]
    freed: tuple[tuple[str, int, int], ...]
    failed: bool = False
    end_seq: int = 0
    op_id: int | None = field(default=None, compare=False)
    site: CallSite | None = field(default=None, compare=False)  # the user's line that began the step


@dataclass(slots=True)
class BufferLife:
    """One MeshBuffer from allocation to free.  ``born`` / ``died`` are step indices (``born`` -1:
    allocated before the timeline started); ``*_seq`` the event numbers; ``made_by`` the op whose
    step allocated it (None outside ops); ``size`` bytes per bank, ``device_size`` per device."""

    buffer_type: str
    address: int
    size: int
    device_size: int
    born: int
    born_seq: int
    made_by: str | None = None
    label: str | None = None
    died: int | None = None
    died_seq: int | None = None
    site: CallSite | None = None  # the user's line that allocated it

    def live_at(self, seq: int) -> bool:
        return self.born_seq <= seq and (self.died_seq is None or self.died_seq > seq)

    @property
    def name(self) -> str:
        """``matmul: 128x1024 bf16`` (the op that made it, and its tensor)."""
        what = self.label or f"{self.device_size} B"
        return what if self.made_by is None else f"{self.made_by}: {what}"


@dataclass(frozen=True, slots=True)
class Peak:
    """The highest allocated figure of one buffer type: bytes per bank, at event ``seq`` inside
    step ``step`` (op ``op``), with the largest free block left then."""

    buffer_type: str
    per_bank: int
    num_banks: int
    step: int
    op: str
    seq: int
    largest_free: int

    @property
    def per_device(self) -> int:
        return self.per_bank * self.num_banks


class _Building:
    """The step being recorded: its op, where its figures started and went, births and frees."""

    __slots__ = ("born", "failed", "freed", "op", "op_id", "peak", "site")

    def __init__(self, op: str, op_id: int | None, allocated: Mapping[str, int]) -> None:
        self.op, self.op_id, self.failed = op, op_id, False
        self.site = call_site()
        self.peak = dict(allocated)
        self.born: list[tuple[str, int, int]] = []
        self.freed: list[tuple[str, int, int]] = []


class MeshTimeline:
    """The steps of one mesh (and its submeshes).  ``shape``, ``system``, ``device_ids`` and
    ``banks`` (buffer type name -> ``(banks, bytes per bank, base address)``) describe it."""

    def __init__(self, mesh: Any, *, skip: object = None) -> None:
        self.mesh_id: int = mesh.mesh_id
        self.shape: tuple[int, ...] = tuple(mesh.shape)
        self.system: str = mesh.system.name
        self.executes: bool = getattr(mesh, "executes", True)
        self.device_ids: tuple[int, ...] = tuple(mesh.get_device_ids())
        self._allocator = mesh.allocator
        self.banks = {t.name: (m.num_banks, m.bank_size, m.base) for t, m in self._allocator.managers.items()}
        self.steps: list[Step] = []
        self.buffers: list[BufferLife] = []
        self.peaks: dict[str, Peak] = {}
        self.types = list(ALWAYS)
        self._live: dict[tuple[str, int], BufferLife] = {}
        self._unnamed: list[tuple[weakref.ref, BufferLife]] = []
        self._building: _Building | None = None
        self._seq = 0
        self._allocated = {t: self._stats(t).total_allocated_bytes for t in self.banks}
        for buffer in mesh.live_buffers():  # what was there before the timeline began
            if buffer is skip:  # the allocation whose event makes the timeline: it comes next
                kind = buffer.buffer_type().name
                self._allocated[kind] -= self._reserved(kind, buffer.address())
                continue
            kind = buffer.buffer_type().name
            size = self._reserved(kind, buffer.address())
            life = BufferLife(kind, buffer.address(), size, buffer.device_local_size(), -1, -1)
            life.label = buffer_label(buffer)
            self._add(life)

    # ------------------------------------------------------------------------------ events

    def _stats(self, kind: str):
        with self._allocator.lock:
            return self._allocator.managers[BufferType[kind]].statistics()

    def _reserved(self, kind: str, address: int) -> int:
        return self._allocator.managers[BufferType[kind]].free_list.allocation_size(address) or 0

    def _add(self, life: BufferLife) -> None:
        self.buffers.append(life)
        self._live[(life.buffer_type, life.address)] = life
        if life.buffer_type not in self.types and life.size:
            self.types.append(life.buffer_type)

    def _step(self, op: str = BETWEEN, op_id: int | None = None) -> _Building:
        if self._building is None:
            self._building = _Building(op, op_id, self._allocated)
        return self._building

    def allocated(self, event: BufferEvent) -> None:
        kind = event.buffer_type.name
        size = self._reserved(kind, event.address)
        if not size:
            return  # a zero-size buffer takes no memory and is never freed
        step = self._step()
        self._seq += 1
        life = BufferLife(kind, event.address, size, event.size, len(self.steps), self._seq)
        life.site = step.site if step.op != BETWEEN else call_site()
        if step.op != BETWEEN:
            life.made_by = step.op
        self._add(life)
        if event.buffer is not None:
            self._unnamed.append((weakref.ref(event.buffer), life))
        step.born.append((kind, event.address, size))
        now = self._allocated[kind] = self._allocated.get(kind, 0) + size
        step.peak[kind] = max(step.peak.get(kind, 0), now)
        best = self.peaks.get(kind)
        if best is None or now > best.per_bank:
            free = self._stats(kind).largest_free_block_bytes
            banks = self.banks[kind][0]
            self.peaks[kind] = Peak(kind, now, banks, len(self.steps), step.op, self._seq, free)

    def freed(self, event: BufferEvent) -> None:
        kind = event.buffer_type.name
        life = self._live.pop((kind, event.address), None)
        if life is None:
            return
        self._name([item for item in self._unnamed if item[1] is life])
        step = self._step()
        self._seq += 1
        life.died, life.died_seq = len(self.steps), self._seq
        step.freed.append((kind, life.address, life.size))
        self._allocated[kind] -= life.size

    def begin(self, event: OpEvent) -> None:
        if self._building is not None and self._building.op != BETWEEN:
            self._building.failed = True  # an op still open here never ended
        self.close()
        self._building = _Building(event.op, event.op_id, self._allocated)

    def end(self, event: OpEvent, *, failed: bool = False) -> None:
        step = self._building
        if step is not None and step.op_id == event.op_id:
            step.failed = failed
            self.close()

    def close(self) -> None:
        """End the step being built."""
        step, self._building = self._building, None
        if step is None:
            return
        self._name(self._unnamed)
        self._unnamed = []
        lanes = {
            kind: Lane(self._allocated.get(kind, 0), step.peak.get(kind, 0), self._stats(kind).largest_free_block_bytes)
            for kind in self.types
        }
        born, freed = tuple(step.born), tuple(step.freed)
        index = len(self.steps)
        self.steps.append(Step(index, step.op, lanes, born, freed, step.failed, self._seq, step.op_id, step.site))

    @staticmethod
    def _name(pending: Sequence[tuple[weakref.ref, BufferLife]]) -> None:
        for ref, life in pending:
            buffer = ref()
            if buffer is not None and life.label is None:
                life.label = buffer_label(buffer)

    # ----------------------------------------------------------------------------- queries

    def live_at(self, seq: int, buffer_type: str | None = None) -> list[BufferLife]:
        """The buffers live just after event ``seq`` (of one buffer type), by address."""
        found = [b for b in self.buffers if b.live_at(seq) and (buffer_type is None or b.buffer_type == buffer_type)]
        return sorted(found, key=lambda b: (b.buffer_type, b.address))

    def peak(self, buffer_type: str) -> Peak | None:
        """The highest allocated figure of ``buffer_type`` (None when nothing was allocated)."""
        return self.peaks.get(buffer_type)

    @property
    def num_devices(self) -> int:
        return len(self.device_ids)

    @property
    def mesh_name(self) -> str:
        return "x".join(str(d) for d in self.shape)


class MemoryTimeline(MeshObserver):
    """The memory timeline of every mesh, while active: ``with ttnn.MemoryTimeline() as timeline:``
    (or ``start()`` / ``stop()``).  ``timeline.meshes`` lists a :class:`MeshTimeline` per mesh;
    ``timeline.report()`` prints them; ``timeline.plot(path)`` draws one."""

    def __init__(self) -> None:
        self._by_mesh: dict[int, MeshTimeline] = {}
        self._lock = threading.RLock()

    def start(self) -> MemoryTimeline:
        from meshnn.mesh.observers import OBSERVERS

        OBSERVERS.add(self)
        return self

    def stop(self) -> None:
        from meshnn.mesh.observers import OBSERVERS

        OBSERVERS.remove(self)
        with self._lock:
            for timeline in self._by_mesh.values():
                timeline.close()

    def __enter__(self) -> MemoryTimeline:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def meshes(self) -> list[MeshTimeline]:
        with self._lock:
            return list(self._by_mesh.values())

    def of(self, mesh: Any, *, skip: object = None) -> MeshTimeline:
        """The timeline of ``mesh`` (of its root mesh, for a submesh); ``skip``: a buffer whose
        allocation event is being delivered (not one found there before)."""
        root = mesh
        while getattr(root, "_parent", None) is not None:
            root = root._parent
        with self._lock:
            found = self._by_mesh.get(root.mesh_id)
            if found is None:
                found = self._by_mesh[root.mesh_id] = MeshTimeline(root, skip=skip)
            return found

    def on_allocate(self, event: BufferEvent) -> None:
        with self._lock:
            self.of(event.mesh, skip=event.buffer).allocated(event)

    def on_deallocate(self, event: BufferEvent) -> None:
        with self._lock:
            self.of(event.mesh).freed(event)

    def on_op_begin(self, event: OpEvent) -> None:
        with self._lock:
            self.of(event.mesh).begin(event)

    def on_op_end(self, event: OpEvent, outputs: Sequence[Any]) -> None:
        with self._lock:
            self.of(event.mesh).end(event)

    def on_op_failed(self, event: OpEvent, error: BaseException) -> None:
        with self._lock:
            self.of(event.mesh).end(event, failed=True)

    def report(self, *, steps: bool = True) -> str:
        """Every mesh's timeline as text (:func:`meshnn.mesh.timeline_text.timeline_report`)."""
        from meshnn.mesh.timeline_text import timeline_report

        return "\n\n".join(timeline_report(t, steps=steps) for t in self.meshes)

    def summary(self, perf: object = None) -> str:
        """Per mesh: its DRAM / L1 peaks per device and the ops that set them, and its predicted
        device time from ``perf`` (a performance-model capture, duck-typed; None: not shown)."""
        from meshnn.mesh.timeline_text import mesh_summary, recorders_by_timeline

        meshes = self.meshes
        recorders = recorders_by_timeline(meshes, perf) if perf is not None else {}
        blocks = ["\n".join(mesh_summary(t, recorders.get(t.mesh_id), times=perf is not None)) for t in meshes]
        return "\n\n".join(blocks) if blocks else "no mesh allocated anything"

    def plot(self, path: Any, mesh: Any = None) -> Any:
        """A PNG of one mesh's timeline (``mesh``: a mesh or its :class:`MeshTimeline`; default the
        mesh with the most steps); returns the path."""
        from meshnn.mesh.memory_plot import plot_timeline

        if isinstance(mesh, MeshTimeline):
            return plot_timeline(mesh, path)
        meshes = self.meshes
        busiest = max(meshes, key=lambda t: len(t.steps)) if meshes else None
        return plot_timeline(self.of(mesh) if mesh is not None else busiest, path)
