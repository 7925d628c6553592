"""Trace capture and replay (``ttnn.begin_trace_capture`` / ``end_trace_capture`` /
``execute_trace`` / ``release_trace``): a command queue's workloads recorded once and run again on
the same buffers, at the same addresses.

While a queue captures (:func:`begin_trace_capture`), the workloads enqueued on it are recorded
and NOT run (tt-metal delays their execution until the trace is replayed: a capture's outputs hold
no values until :func:`execute_trace`); their outputs are allocated as usual, at the addresses a
replay writes.  The queue refuses what tt-metal's refuses during a capture, with its message,
before anything changes: host writes ("Writes are not supported during trace capture."), host
reads ("Reads are ...") and events ("Event Synchronization is ...").  Allocations are allowed
(the trace's outputs are allocated during its capture); once a trace exists and none is being
captured, an allocation warns once, as tt-metal's allocator does.

A trace holds its buffers by their bytes (:class:`TracedBuffer`: the slab storage, size and
address), not by their MeshBuffers: a tensor the model drops or deallocates during the capture is
freed at once, as on a device, and its address may go to the next allocation of the capture.  A
replay writes a freed intermediate's bytes into memory the trace keeps for it (on a device, the
same address; only the order of the trace's own writes and reads matters).  A trace *input* (a
buffer the trace reads before it writes it) must still be allocated when the trace is replayed.

Size (documented model, not a measurement): every recorded program adds
:data:`TRACE_BYTES_PER_PROGRAM` bytes of dispatch commands on each device (or its op's own figure,
``Program.trace_bytes``); the trace is their sum,
rounded up to whole :data:`TRACE_PAGE_SIZE` pages, and :func:`end_trace_capture` allocates it as a
TRACE MeshBuffer (every device, lock-step) in the ``trace_region_size`` region of
``open_mesh_device``.  When the live traces would exceed the region it fails with tt-metal's
message ("Creating trace buffers of size ...B on MeshDevice ..., but only ...B is allocated for
trace region."), the capture ended and nothing kept.  With no trace region (``trace_region_size=0``,
tt-metal's dynamic mode) the buffer is a DRAM buffer allocated top-down instead; the allocator
records, during the capture, the highest end of a DRAM buffer allocated and of one freed, and a
trace buffer that reaches below either fails with tt-metal's message ("Trace buffer at address ...
overlaps with ..."), nothing kept: a replay would write over them.

Replay runs the recorded kernels only (no op validation, no allocation): a kernel reads the bytes
its inputs hold when it runs (a memo is dropped whenever the bytes change), so writing new inputs
with ``copy_host_to_device_tensor`` and replaying computes the next step.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` and the mesh layer.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, TraceError
from meshnn.mesh.buffer_config import DeviceLocalBufferConfig, ReplicatedBufferConfig
from meshnn.mesh.coord import MeshCoordinateRange
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.observers import OBSERVERS
from meshnn.mesh.slab import WRITES
from meshnn.mesh.workload import MeshWorkload, Program, run_programs

TRACE_BYTES_PER_PROGRAM = 6144
"""Dispatch-command bytes one recorded program adds to a trace on each device (a model: tt-metal's
published trace sizes are a few KiB per op, e.g. 751,616 B for a ResNet-50 step)."""

TRACE_PAGE_SIZE = 4096
"""A trace buffer is whole pages of this size (tt-metal's trace page)."""

_TRACE_IDS = itertools.count()


class MeshTraceId(int):
    """The id of a trace (``ttnn.MeshTraceId``): a non-negative int, and true even when 0, as
    ttnn's binding (a class with ``__int__``, no ``__bool__``) is: a model that asks ``if not
    self.trace_id`` before capturing (the 70B Galaxy's Generator does) captures its first trace,
    id 0, once."""

    def __new__(cls, value: int) -> MeshTraceId:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise MeshnnTypeError(f"MeshTraceId: value must be a non-negative int, got {value!r}")
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return f"MeshTraceId({int(self)})"

    def __bool__(self) -> bool:
        return True


class TracedBuffer:
    """A buffer as a trace holds it: the bytes (slab storage), size, type and address of a
    MeshBuffer, without the MeshBuffer, so that recording never keeps a buffer allocated.  It
    answers what a replayed kernel asks of its buffers (rows, memo, deferred write)."""

    __slots__ = ("__weakref__", "_size", "_storage", "address", "buffer_type", "mesh_id")

    def __init__(self, buffer: MeshBuffer) -> None:
        self._storage = buffer._storage
        self._size = buffer.device_local_size()
        self.address = buffer.address()
        self.buffer_type = buffer.buffer_type()
        self.mesh_id = buffer.mesh_id

    def is_allocated(self) -> bool:
        """False once the buffer's owner was freed."""
        return self._storage.live

    def device_local_size(self) -> int:
        return self._size

    def rows(self) -> np.ndarray:
        """The ``(local devices, size)`` bytes (memory the trace keeps once the buffer is freed)."""
        return self._storage.first(self._size)

    def lazy_rows(self) -> np.ndarray:
        return self._storage.unsettled(self._size)

    def shares_bytes(self, other: Any) -> bool:
        return self._storage.root is other._storage.root

    @property
    def memo(self) -> object:
        return self._storage.memo

    @memo.setter
    def memo(self, value: object) -> None:
        self._storage.memo = value

    def has_deferred_write(self) -> bool:
        return self._storage.pending is not None

    def drop_bytes(self, write: Callable[[np.ndarray], None]) -> bool:
        return self._storage.drop_bytes(write)

    def settle(self) -> None:
        self._storage.settle()

    def defer(self, write: Callable[[np.ndarray], None]) -> None:
        self._storage.defer(write)

    def touch(self) -> None:
        self._storage.touch()


class TracedProgram:
    """A recorded program: what :func:`~meshnn.mesh.workload.run_programs` runs, over
    :class:`TracedBuffer` s."""

    __slots__ = (
        "args",
        "buffers",
        "is_uniform",
        "keeps_memos",
        "kernel",
        "lazy_reads",
        "name",
        "overwrites",
        "repeat_key",
        "runtime_args",
        "trace_bytes",
        "written",
    )

    def __init__(self, program: Program, swap: Callable[[MeshBuffer], TracedBuffer]) -> None:
        self.buffers = tuple(swap(b) for b in program.buffers)
        written = {id(b) for b in program.written}
        self.written = tuple(t for b, t in zip(program.buffers, self.buffers, strict=True) if id(b) in written)
        for_trace = getattr(program.kernel, "for_trace", None)
        self.kernel = program.kernel if for_trace is None else for_trace(swap)
        self.args, self.runtime_args, self.name = program.args, program.runtime_args, program.name
        self.lazy_reads, self.is_uniform = program.lazy_reads, program.is_uniform
        self.keeps_memos, self.repeat_key = program.keeps_memos, program.repeat_key
        self.trace_bytes = program.trace_bytes or TRACE_BYTES_PER_PROGRAM
        self.overwrites = bool(getattr(program.kernel, "deferrable", False))  # its outputs are written whole

    def bind(self) -> tuple[np.ndarray, ...]:
        """The slabs of its buffers now (a deferred write of a buffer read through memos left be;
        an output the program writes whole drops the previous replay's deferred write unwritten)."""
        if self.overwrites:
            for b in self.written:
                if b._storage.pending is not None:
                    b._storage.pending = None
                    WRITES.bump()
        if not self.lazy_reads:
            return tuple([b.rows() for b in self.buffers])
        return tuple(b.lazy_rows() if b not in self.written else b.rows() for b in self.buffers)


class MeshTrace:
    """One trace: the programs recorded on queue ``cq_id`` of a mesh, in order, and (once ended)
    its TRACE buffer."""

    def __init__(self, trace_id: MeshTraceId, cq_id: int) -> None:
        self.trace_id, self.cq_id = trace_id, cq_id
        self.entries: list[tuple[MeshCoordinateRange, TracedProgram]] = []
        self._held: dict[tuple[int, int], TracedBuffer] = {}
        self.inputs: list[TracedBuffer] = []  # buffers read before the trace writes them
        self._seen: set[int] = set()
        self.buffer: MeshBuffer | None = None

    def _swap(self, buffer: MeshBuffer) -> TracedBuffer:
        key = (id(buffer._storage), buffer.device_local_size())
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = TracedBuffer(buffer)
        return held

    def record(self, workload: MeshWorkload) -> None:
        """Record a validated workload's programs (nothing runs)."""
        for device_range, program in workload.get_programs().items():
            traced = TracedProgram(program, self._swap)
            for b in traced.buffers:
                if id(b) not in self._seen:
                    self._seen.add(id(b))
                    if b not in traced.written:
                        self.inputs.append(b)
            self.entries.append((device_range, traced))

    @property
    def size(self) -> int:
        """Bytes of the trace buffer on each device (see the module docstring)."""
        raw = sum(traced.trace_bytes for _, traced in self.entries) or TRACE_BYTES_PER_PROGRAM
        return -(-raw // TRACE_PAGE_SIZE) * TRACE_PAGE_SIZE

    def replay(self, mesh: MeshDevice) -> None:
        """Run every recorded program again, in order (on the queue's dispatch)."""
        for b in self.inputs:
            if not b.is_allocated():
                raise TraceError(
                    f"execute_trace: trace {int(self.trace_id)} reads the {b.buffer_type.name} buffer at address "
                    f"{b.address}, which was deallocated after the capture"
                )
        entries = self.entries
        with np.errstate(all="ignore"):  # (once for every kernel: a device computes inf and NaN silently)
            run_programs(mesh, entries, (program.bind() for _, program in entries))


# ------------------------------------------------------------------------------ the ttnn API


def _mesh_and_queue(op: str, mesh_device: object, cq_id: object):
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    mesh_device.check_open()
    if isinstance(cq_id, bool) or not isinstance(cq_id, int):
        raise MeshnnTypeError(f"ttnn.{op}: cq_id must be an int, got {cq_id!r}")
    return mesh_device, mesh_device.mesh_command_queue(cq_id)


def _trace_of(op: str, mesh: MeshDevice, trace_id: object) -> MeshTrace:
    if isinstance(trace_id, bool) or not isinstance(trace_id, int):
        raise MeshnnTypeError(f"ttnn.{op}: trace_id must be a MeshTraceId, got {trace_id!r}")
    trace = mesh.traces.get(int(trace_id))
    if trace is None:
        raise TraceError(f"ttnn.{op}: Trace instance {int(trace_id)} must exist on device (captured, not released)")
    return trace  # type: ignore[return-value]


def begin_trace_capture(mesh_device: MeshDevice, cq_id: int = 0) -> MeshTraceId:
    """Start recording the workloads enqueued on queue ``cq_id``; returns the trace's id."""
    mesh, queue = _mesh_and_queue("begin_trace_capture", mesh_device, cq_id)
    if queue.capture is not None:
        raise TraceError(
            f"ttnn.begin_trace_capture: CQ {cq_id} is already being used for tracing tid {int(queue.capture.trace_id)}"
        )
    queue.finish()  # what was enqueued before the capture runs before it
    queue.capture = MeshTrace(MeshTraceId(next(_TRACE_IDS)), cq_id)
    mesh.allocations_unsafe = False
    if mesh.allocator.trace_region_size == 0:  # dynamic mode: the trace buffer will be DRAM's
        mesh.allocator.begin_dram_high_water_mark_tracking()
    return queue.capture.trace_id


def end_trace_capture(mesh_device: MeshDevice, trace_id: MeshTraceId, cq_id: int = 0) -> None:
    """Stop recording; the trace's buffer is allocated in the trace region (or the capture fails
    with tt-metal's message when the live traces would not fit it, and nothing is kept)."""
    mesh, queue = _mesh_and_queue("end_trace_capture", mesh_device, cq_id)
    trace = queue.capture
    if trace is None or isinstance(trace_id, bool) or not isinstance(trace_id, int) or trace.trace_id != trace_id:
        now = "no trace" if trace is None else f"trace {int(trace.trace_id)}"
        raise TraceError(
            f"ttnn.end_trace_capture: trace_id {trace_id!r} is not being captured on CQ {cq_id} ({now} is)"
        )
    queue.capture = None
    region = mesh.allocator.trace_region_size
    if region == 0:
        trace.buffer = _dynamic_trace_buffer(mesh, trace)
    else:
        total = sum(t.size for t in mesh.traces.values()) + trace.size  # type: ignore[attr-defined]
        if total > region:
            raise TraceError(
                f"Creating trace buffers of size {total}B on MeshDevice {mesh.id()}, but only {region}B is "
                "allocated for trace region."
            )
        config = DeviceLocalBufferConfig(page_size=TRACE_PAGE_SIZE, buffer_type=BufferType.TRACE)
        trace.buffer = MeshBuffer.create(ReplicatedBufferConfig(size=trace.size), config, mesh)
    mesh.traces[int(trace.trace_id)] = trace
    mesh.allocations_unsafe = True


def _dynamic_trace_buffer(mesh: MeshDevice, trace: MeshTrace) -> MeshBuffer:
    """The trace's buffer with no trace region: DRAM, top-down, above every DRAM buffer allocated or
    freed during the capture (else freed again and tt-metal's error raised)."""
    allocated, deleted = mesh.allocator.end_dram_high_water_mark_tracking()
    config = DeviceLocalBufferConfig(page_size=TRACE_PAGE_SIZE, buffer_type=BufferType.DRAM, bottom_up=False)
    buffer = MeshBuffer.create(ReplicatedBufferConfig(size=trace.size), config, mesh)
    address = buffer.address()
    if address >= max(allocated, deleted):
        return buffer
    buffer.deallocate()
    at = f"Trace buffer at address {address} overlaps with"
    if allocated > address and deleted > address:
        what = (
            f"DRAM activity during trace capture. Allocation high water mark: {allocated}, Deletion high water "
            f"mark: {deleted}. Reduce allocations during trace capture"
        )
    elif deleted > address:
        what = (
            f"buffers deallocated during trace capture (deletion high water mark: {deleted}). Avoid deallocating "
            "DRAM buffers during trace capture"
        )
    else:
        what = (
            f"buffers allocated during trace capture (allocation high water mark: {allocated}). Reduce allocations "
            "during trace capture"
        )
    raise TraceError(f"{at} {what} or set a non-zero trace_region_size.")


def execute_trace(mesh_device: MeshDevice, trace_id: MeshTraceId, cq_id: int = 0, blocking: bool = True) -> None:
    """Replay trace ``trace_id`` on queue ``cq_id``, after the work enqueued before it."""
    mesh, queue = _mesh_and_queue("execute_trace", mesh_device, cq_id)
    trace = _trace_of("execute_trace", mesh, trace_id)
    if not isinstance(blocking, bool):
        raise MeshnnTypeError(f"ttnn.execute_trace: blocking must be a bool, got {blocking!r}")
    if queue.capture is not None:
        raise TraceError(f"ttnn.execute_trace: CQ {cq_id} is capturing trace {int(queue.capture.trace_id)}")
    queue.enqueue_trace(trace, blocking=blocking)
    if OBSERVERS:
        OBSERVERS.trace_replayed(mesh, int(trace.trace_id), cq_id)


def release_trace(mesh_device: MeshDevice, trace_id: MeshTraceId) -> None:
    """Free trace ``trace_id`` and its buffer (queued replays of it run first)."""
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.release_trace: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    mesh_device.check_open()
    trace = _trace_of("release_trace", mesh_device, trace_id)
    mesh_device.mesh_command_queue(trace.cq_id).finish()
    del mesh_device.traces[int(trace.trace_id)]
    if trace.buffer is not None:
        trace.buffer.deallocate()
    if not mesh_device.traces:
        mesh_device.allocations_unsafe = False
