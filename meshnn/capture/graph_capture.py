"""Graph capture as an observer of meshes: every op, allocation and free becomes ttnn's nodes.

Each op launched on a mesh (``ttnn.add``) becomes, as in ttnn's traces::

    function_start ttnn::add                 (its tensors' texts and its configuration as arguments)
      tensor / buffer nodes of its inputs     (made the first time they are seen)
      function_start BinaryNgDeviceOperation   (the device operation, as tt-metal names it)
        function_start tt::tt_metal::create_device_tensor   (one per output allocated)
          buffer, buffer_allocate
        function_end -> the output tensor
        circular_buffer_deallocate_all, circular_buffer_allocate...   (:mod:`~meshnn.capture.circular_buffers`)
      function_end BinaryNgDeviceOperation -> outputs
    function_end ttnn::add -> outputs

The host-side functions ttnn's C++ records though meshnn runs them as no op
(:class:`~meshnn.mesh.observers.HostCallEvent`) nest as ttnn nests them::

    function_start ttnn::convert_python_tensor_to_tt_tensor     (from_torch)
      function_start Tensor::to_device                          (with a device)
        buffer, buffer_allocate
      function_end Tensor::to_device -> the device tensor
    function_end ttnn::convert_python_tensor_to_tt_tensor -> the tensor

and ``ttnn::zeros`` (``ones``, ``full``, ``arange``, the ``*_like`` forms) around its
``Tensor::to_device``, ``ttnn::empty`` around ``tt::tt_metal::create_device_tensor``.  Any other
allocation or free outside an op (``ttnn.deallocate``) is a top-level ``buffer_allocate`` /
``buffer_deallocate``.  A host function's nodes are written when it ends; one that raised leaves
its allocations and frees as loose nodes.  An op's nodes are made when
it ends (an op's events arrive begin, allocations, end, on the thread that launched it); an op that
raised after it began (an output that did not fit) is written at the next event of its thread or at
the end of the capture: its functions stay open (no ``function_end``), its outputs that were
allocated and freed again appear with their ``buffer_allocate`` / ``buffer_deallocate``; the
allocation that failed leaves no node.

Layers: imports the mesh layer's observers and the capture layer's own modules.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from meshnn.capture.circular_buffers import estimate
from meshnn.capture.graph_builder import BufferFacts, GraphBuilder
from meshnn.capture.op_names import CREATE_DEVICE_TENSOR, device_operation_name, function_name
from meshnn.capture.tensors import argument_text, cpp_dtype, cpp_layout, mesh_buffer_of, shape_text, tensor_id
from meshnn.mesh.observers import BufferEvent, HostCallEvent, MeshObserver, OpEvent
from meshnn.ops.run_op_codes import run_op_code


class RunMode(enum.Enum):
    """``ttnn.graph.RunMode``.  NO_DISPATCH is accepted and recorded; meshnn still runs the ops
    (so allocations are real and an op that does not fit raises), and reports circular buffers at
    address 0 as ttnn does in that mode."""

    NORMAL = 0
    NO_DISPATCH = 1


def tensor_facts(tensor: Any) -> tuple[int, str, BufferFacts | None]:
    """(id, shape text, its buffer's facts or None) of a tensor, as graph nodes need them."""
    buffer = mesh_buffer_of(tensor)
    facts = None if buffer is None else BufferFacts.of(buffer.device(), buffer.address(), buffer.layout)
    return tensor_id(tensor), shape_text(tensor), facts


def event_facts(event: BufferEvent) -> BufferFacts:
    """The facts of the buffer an allocation or free is about."""
    layout = event.buffer.layout if event.buffer is not None else getattr(event, "layout", None)
    if layout is not None:
        return BufferFacts.of(event.mesh, event.address, layout)
    kind = event.buffer_type
    key = (event.mesh.mesh_id, kind.value, event.address)
    return BufferFacts(
        key, event.address, event.size, kind, "UNKNOWN", event.page_size, 0, event.mesh.get_device_ids()[0]
    )


@dataclass
class _Pending:
    """An op that began: its events until it ends."""

    event: OpEvent
    items: list[tuple[bool, BufferEvent]] = field(default_factory=list)  # (is an allocation, event)
    started_ns: int = field(default_factory=time.perf_counter_ns)  # when the op began (host clock)


@dataclass
class _HostFrame:
    """A host function that began on a thread: what happened inside it until it ends, in order:
    ``(True, BufferEvent)`` allocations, ``(False, BufferEvent)`` frees, ``(_HostFrame, outputs)``
    nested functions that ended, ``(_Pending, outputs)`` ops.  ``inside_op``: it began inside an op,
    which records its own allocations (the frame is dropped)."""

    event: HostCallEvent
    inside_op: bool
    items: list[tuple[Any, Any]] = field(default_factory=list)
    started_ns: int = field(default_factory=time.perf_counter_ns)


class GraphCapture(MeshObserver):
    """One capture's observer; :meth:`finish` gives ttnn's node list."""

    def __init__(self, run_mode: RunMode = RunMode.NORMAL) -> None:
        self.run_mode = run_mode
        self.builder = GraphBuilder()
        self._pending: dict[int, _Pending] = {}  # thread -> the op it is running
        self._frames: dict[int, list[_HostFrame]] = {}  # thread -> its open host functions, outermost first
        self._started = time.perf_counter_ns()  # the capture's start (host clock, ns)
        self._lock = threading.RLock()

    def on_op_begin(self, event: OpEvent) -> None:
        with self._lock:
            failed = self._pending.pop(threading.get_ident(), None)
            if failed is not None:
                self._emit(failed, None)
            self._pending[threading.get_ident()] = _Pending(event)

    def on_allocate(self, event: BufferEvent) -> None:
        self._buffer_event(event, allocated=True)

    def on_deallocate(self, event: BufferEvent) -> None:
        self._buffer_event(event, allocated=False)

    def _buffer_event(self, event: BufferEvent, *, allocated: bool) -> None:
        with self._lock:
            pending = self._pending.get(threading.get_ident())
            frames = self._frames.get(threading.get_ident())
            if pending is not None:
                pending.items.append((allocated, event))
            elif frames:
                frames[-1].items.append((allocated, event))
            elif allocated:
                self.builder.buffer_allocate(event_facts(event))
            else:
                self.builder.buffer_deallocate(event_facts(event))

    def on_op_end(self, event: OpEvent, outputs: Sequence[Any]) -> None:
        with self._lock:
            pending = self._pending.pop(threading.get_ident(), None)
            if pending is not None and pending.event.op_id != event.op_id:
                self._emit(pending, None)
                pending = None
            frames = self._frames.get(threading.get_ident())
            if frames:  # an op run by a host function: written inside it
                frames[-1].items.append((pending or _Pending(event), outputs))
            else:
                self._emit(pending or _Pending(event), outputs)

    def on_host_call_begin(self, event: HostCallEvent) -> None:
        with self._lock:
            inside_op = threading.get_ident() in self._pending
            self._frames.setdefault(threading.get_ident(), []).append(_HostFrame(event, inside_op))

    def on_host_call_end(self, event: HostCallEvent, outputs: Sequence[Any] | None) -> None:
        with self._lock:
            frames = self._frames.get(threading.get_ident())
            if not frames or frames[-1].event is not event:
                return  # it began before this capture
            frame = frames.pop()
            if not frames:
                del self._frames[threading.get_ident()]
            if frame.inside_op:
                return
            if frames:
                frames[-1].items.append((frame, outputs))
            else:
                self._host_frame_done(frame, outputs)

    def _host_frame_done(self, frame: _HostFrame, outputs: Sequence[Any] | None) -> None:
        """An outermost host function ended (under the lock): its nodes."""
        self._emit_frame(self.builder, frame, outputs)

    def finish(self) -> list[dict]:
        """Write what is still open (ops that raised) and close the node list."""
        with self._lock:
            for pending in list(self._pending.values()):
                self._emit(pending, None)
            self._pending.clear()
            for frames in self._frames.values():
                for frame in frames:
                    self._emit_items(self.builder, frame.items)
            self._frames.clear()
            return self.builder.finish(duration_ns=time.perf_counter_ns() - self._started)

    # --------------------------------------------------------------------------- emission

    def _emit(self, pending: _Pending, outputs: Sequence[Any] | None) -> None:
        """An op's nodes; ``outputs`` None: the op raised before it ended."""
        self._emit_into(self.builder, pending, outputs)

    def _emit_into(self, build: GraphBuilder, pending: _Pending, outputs: Sequence[Any] | None) -> None:
        """An op's nodes in ``build`` (its C++ function, device operation, allocations, CBs)."""
        event = pending.event
        arguments = [argument_text(t, cpp=True) for t in event.inputs]
        arguments += [argument_text(v, cpp=True) for v in event.attrs.values()]
        build.function_start(function_name(event.op), arguments)
        for tensor in event.inputs:
            build.input_tensor(*tensor_facts(tensor))
        attrs = ", ".join(f"{k}={argument_text(v, cpp=True)}" for k, v in event.attrs.items())
        device_arguments = [f"operation_attributes_t({attrs})", "tensor_args_t(...)"]
        code = run_op_code(event.op.rsplit(".", 1)[-1], event.attrs, event.inputs, device_operation_name(event.op))
        program = bool(code)  # an op that runs no device program in tt-metal has no device operation's frame
        if program:
            build.function_start(code, device_arguments)
        made = [tensor_facts(t) for t in outputs or ()]
        by_buffer = {facts.key: (tid, shape, facts) for tid, shape, facts in made if facts is not None}
        by_tensor = {tid: t for t, (tid, _, _) in zip(outputs or (), made, strict=True)}
        for allocated, buffer_event in pending.items:
            facts = event_facts(buffer_event)
            if not allocated:
                build.buffer_deallocate(facts)
                continue
            output = by_buffer.get(facts.key)
            build.function_start(CREATE_DEVICE_TENSOR, _create_arguments(by_tensor.get(output[0]) if output else None))
            build.buffer_allocate(facts)
            build.function_end([output] if output else [])
        if outputs is None:
            for _ in range(1 + program):
                build.abandon()
            return
        took = time.perf_counter_ns() - pending.started_ns  # the op's wall time in meshnn (host clock)
        if program:
            no_dispatch = self.run_mode is RunMode.NO_DISPATCH
            cbs = estimate(event.op, event.mesh, event.inputs, outputs, event.attrs, no_dispatch=no_dispatch)
            build.circular_buffers(event.mesh.get_device_ids()[0], cbs)
            build.function_end(made, duration_ns=took)
        build.function_end(made, duration_ns=took)

    def _emit_frame(self, build: GraphBuilder, frame: _HostFrame, outputs: Sequence[Any] | None) -> None:
        """A host function's nodes; one that raised (``outputs`` None) leaves only its items."""
        if outputs is None:
            self._emit_items(build, frame.items)
            return
        event = frame.event
        if event.name == CREATE_DEVICE_TENSOR:
            arguments = _create_arguments(outputs[0] if outputs else None)
        else:
            arguments = [argument_text(t, cpp=True) for t in event.inputs]
        build.function_start(event.name, arguments)
        for tensor in event.inputs:
            build.input_tensor(*tensor_facts(tensor))
        self._emit_items(build, frame.items)
        build.function_end([tensor_facts(t) for t in outputs], duration_ns=time.perf_counter_ns() - frame.started_ns)

    def _emit_items(self, build: GraphBuilder, items: Sequence[tuple[Any, Any]]) -> None:
        """A host function's allocations, frees, nested functions and ops (into the capture's own
        list only: a report gets its ops from :meth:`_emit`), in order."""
        for first, second in items:
            if isinstance(first, _HostFrame):
                self._emit_frame(build, first, second)
            elif isinstance(first, _Pending):
                if build is self.builder:
                    self._emit(first, second)
            elif first:
                build.buffer_allocate(event_facts(second))
            else:
                build.buffer_deallocate(event_facts(second))


def _create_arguments(tensor: Any) -> list[str]:
    """``create_device_tensor``'s arguments as ttnn gives them: shape, dtype, layout, device, memory config."""
    if tensor is None:
        return []
    device = tensor.storage.mesh_buffer.device().get_device_ids()[0]
    return [shape_text(tensor), cpp_dtype(tensor), cpp_layout(tensor), str(device), repr(tensor.memory_config())]
