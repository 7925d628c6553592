"""Watching what meshes do: MeshBuffers allocated and freed, operations begun and ended.

Observers are process-wide, as ttnn's graph capture and its reports are: the performance
recorder, graph capture, report writers and memory timelines each add one to :data:`OBSERVERS`
and read every mesh's events (each event names its mesh).  With no observer the cost is one
truth test at each allocation, free and op launch: callers build an event only when
``OBSERVERS`` is true.

An observer is any object with some of :class:`MeshObserver`'s methods (subclass it to get no-op
defaults).  Events arrive on the thread that caused them; an observer's exception propagates to
that caller (an observer may refuse an allocation, as trace capture does).

Layers: imports nothing of meshnn but the mesh layer's types (for hints only).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class BufferEvent:
    """One MeshBuffer allocated or freed: the same address on every device of ``mesh``.

    ``size`` and ``page_size`` are bytes per device; ``buffer`` is the MeshBuffer itself when it
    was allocated (None once it is freed: a free may run from a finaliser); ``layout`` is its
    device-local :class:`~meshnn.device.buffer.BufferLayout` (page size, memory layout, shards)."""

    mesh: Any
    key: int
    buffer_type: Any
    address: int
    size: int
    page_size: int
    buffer: Any = None
    layout: Any = None


_OP_IDS = itertools.count()

CREATE_DEVICE_TENSOR = "tt::tt_metal::create_device_tensor"  # ttnn's allocation of a device tensor
TO_DEVICE = "Tensor::to_device"  # ttnn's write of a host tensor into a new device tensor
COPY_TO_DEVICE = "tt::tt_metal::copy_to_device"  # ttnn's write of a host tensor into an existing device tensor


@dataclass(frozen=True, slots=True)
class OpEvent:
    """One operation launched on ``mesh``: its ttnn name (``"matmul"``), its input tensors, the
    devices it runs on, its command queue, and ``attrs``: what the op was configured with that
    the data does not say (program and compute-kernel configs, memory config, topology, cluster
    axis, links...), by ttnn's argument names.  ``op_id`` numbers every op of the process."""

    op: str
    mesh: Any
    inputs: tuple[Any, ...]
    coords: tuple[Any, ...]
    queue_id: int = 0
    attrs: Mapping[str, object] = field(default_factory=dict)
    op_id: int = field(default_factory=lambda: next(_OP_IDS))


@dataclass(frozen=True, slots=True)
class HostOpEvent:
    """A ttnn call made on the host that ttnn's report lists as an operation, as it lists its Python
    operations: ``from_torch`` (``outputs``: the new tensor), ``to_torch`` and ``deallocate``
    (``inputs``: the tensor), sent after it is done.  ``mesh`` is the tensor's mesh (None for a host
    tensor).  ``error``: what the call raised (it made nothing then)."""

    op: str
    mesh: Any
    inputs: tuple[Any, ...] = ()
    outputs: tuple[Any, ...] = ()
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class HostCallEvent:
    """A function of ttnn's C++ that its graph capture records as a ``function_start`` /
    ``function_end`` pair though meshnn runs it as no op: a creation (``ttnn::zeros``), the
    conversion of ``from_torch`` (``ttnn::convert_python_tensor_to_tt_tensor``), a write to a device
    (``Tensor::to_device``) or an allocation (``tt::tt_metal::create_device_tensor``).  ``name`` is
    ttnn's; ``inputs`` the tensors it was given; ``mesh`` the mesh it writes to, or None."""

    name: str
    mesh: Any
    inputs: tuple[Any, ...] = ()


@dataclass(slots=True)
class HostCallOutputs:
    """What a :func:`host_call` made: the caller sets ``tensors`` before its block ends."""

    tensors: tuple[Any, ...] = ()


class MeshObserver:
    """The events an observer may take; each default does nothing."""

    def on_allocate(self, event: BufferEvent) -> None:
        """A MeshBuffer now owns ``event.address`` on every device of ``event.mesh``."""

    def on_deallocate(self, event: BufferEvent) -> None:
        """The MeshBuffer ``event.key`` freed its address on every device."""

    def on_op_begin(self, event: OpEvent) -> None:
        """An op passed its checks and is about to allocate its outputs."""

    def on_op_end(self, event: OpEvent, outputs: Sequence[Any]) -> None:
        """An op's outputs exist and its workload is enqueued."""

    def on_trace_replay(self, mesh: Any, trace_id: int, cq_id: int) -> None:
        """Trace ``trace_id`` was enqueued for replay on queue ``cq_id`` of ``mesh``: the ops
        captured into it run again (their events arrived while it was captured, with the queue's
        ``capture`` set)."""

    def on_op_failed(self, event: OpEvent, error: BaseException) -> None:
        """An op that began raised ``error`` (out of memory for its outputs, say) and will not end."""

    def on_host_op(self, event: HostOpEvent) -> None:
        """A host-side ttnn call (``from_torch``, ``to_torch``, ``deallocate``) is done."""

    def on_host_call_begin(self, event: HostCallEvent) -> None:
        """A :class:`HostCallEvent` function begins (its allocations follow, on this thread)."""

    def on_host_call_end(self, event: HostCallEvent, outputs: Sequence[Any] | None) -> None:
        """The function that began last on this thread ended: ``outputs`` are the tensors it made,
        None when it raised."""


class Observers:
    """The process's observers, called in the order they were added.  False when empty."""

    def __init__(self) -> None:
        self._observers: tuple[Any, ...] = ()
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self._observers)

    def __contains__(self, observer: object) -> bool:
        return observer in self._observers

    def add(self, observer: object) -> None:
        """Start sending events to ``observer`` (adding one twice sends them once)."""
        with self._lock:
            if observer not in self._observers:
                self._observers = (*self._observers, observer)

    def remove(self, observer: object) -> None:
        """Stop sending events to ``observer`` (safe to repeat)."""
        with self._lock:
            self._observers = tuple(o for o in self._observers if o is not observer)

    def _each(self, method: str) -> list:
        return [bound for o in self._observers if (bound := getattr(o, method, None)) is not None]

    def allocated(self, event: BufferEvent) -> None:
        for call in self._each("on_allocate"):
            call(event)

    def deallocated(self, event: BufferEvent) -> None:
        for call in self._each("on_deallocate"):
            call(event)

    def op_begin(self, event: OpEvent) -> None:
        for call in self._each("on_op_begin"):
            call(event)

    def op_end(self, event: OpEvent, outputs: Sequence[Any]) -> None:
        for call in self._each("on_op_end"):
            call(event, outputs)

    def trace_replayed(self, mesh: Any, trace_id: int, cq_id: int) -> None:
        for call in self._each("on_trace_replay"):
            call(mesh, trace_id, cq_id)

    def op_failed(self, event: OpEvent, error: BaseException) -> None:
        for call in self._each("on_op_failed"):
            call(event, error)

    def host_op(self, event: HostOpEvent) -> None:
        for call in self._each("on_host_op"):
            call(event)

    def host_call_begin(self, event: HostCallEvent) -> None:
        for call in self._each("on_host_call_begin"):
            call(event)

    def host_call_end(self, event: HostCallEvent, outputs: Sequence[Any] | None) -> None:
        for call in self._each("on_host_call_end"):
            call(event, outputs)


OBSERVERS = Observers()
"""The process's observers of every mesh."""


@contextlib.contextmanager
def host_call(name: str, mesh: Any = None, inputs: Sequence[Any] = ()) -> Iterator[HostCallOutputs]:
    """``with host_call("ttnn::zeros", mesh) as made: ...; made.tensors = (tensor,)``: tells the
    observers (graph capture) that ttnn's function ``name`` ran around the block's allocations.
    Costs one truth test when nothing observes."""
    made = HostCallOutputs()
    if not OBSERVERS:
        yield made
        return
    event = HostCallEvent(name, mesh, tuple(inputs))
    OBSERVERS.host_call_begin(event)
    try:
        yield made
    except BaseException:
        OBSERVERS.host_call_end(event, None)
        raise
    OBSERVERS.host_call_end(event, made.tensors)
