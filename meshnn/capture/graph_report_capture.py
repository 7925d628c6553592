"""A graph capture that also builds the node list of a report file (``end_graph_capture_to_file``).

``ttnn.graph.begin_graph_capture`` makes one of these.  Beside the node list ``end_graph_capture``
returns (:class:`~meshnn.capture.graph_capture.GraphCapture`'s, as ttnn 0.81 gives it), it keeps a
second list in the form of the newest ttnn's report files: each op called from Python is a
top-level function named by its Python name (``ttnn.add``) around its C++ function and device
operation; ``ttnn.from_torch``, ``ttnn.to_device`` and ``ttnn.to_torch`` are top-level functions
too; tensor nodes carry the tensor's dtype, layout, memory config, size, device, address, buffer
type and per-device addresses; each ``function_end`` and the ``capture_end`` carry their wall time
in nanoseconds (the host's clock: meshnn's time to run the op, not a device's).  With detailed
buffer tracing on, every live buffer of every mesh the capture saw is recorded after each
top-level function, by that function's ``function_start`` counter.

Layers: imports the capture layer's own modules and the mesh layer's observers and buffers.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Sequence
from typing import Any

from meshnn.capture.graph_builder import GraphBuilder
from meshnn.capture.graph_capture import GraphCapture, RunMode, _HostFrame, _Pending, event_facts, tensor_facts
from meshnn.capture.op_names import python_name
from meshnn.capture.tensors import argument_text, cpp_dtype, cpp_layout, mesh_buffer_of, tensor_id
from meshnn.mesh.call_sites import user_frames
from meshnn.mesh.observers import CREATE_DEVICE_TENSOR, TO_DEVICE, BufferEvent, HostOpEvent, OpEvent
from meshnn.mesh.reports import get_buffers
from meshnn.tensor.interop import CONVERT_PYTHON_TENSOR

REPORTED_HOST_OPS = ("from_torch", "to_device", "to_torch")
"""Host calls that are top-level functions of a report (``deallocate``'s free is its own node)."""


def tensor_details(tensor: Any) -> dict[str, object]:
    """The params newer ttnn puts on a tensor node beyond its id and shape: dtype, layout, logical
    size in bytes and, on a device, memory config, device id, address, buffer type and each
    device's address (``device_tensors``, a JSON text)."""
    details: dict[str, object] = {
        "dtype": cpp_dtype(tensor),
        "layout": cpp_layout(tensor),
        "size": int(tensor.logical_volume() * tensor.element_size()),
    }
    buffer = mesh_buffer_of(tensor)
    if buffer is None:
        return details
    mesh = buffer.device()
    first = mesh.get_device_ids()[0]
    details |= {
        "memory_config": repr(tensor.memory_config()),
        "device_id": first,
        "address": buffer.address(),
        "buffer_type": buffer.layout.buffer_type.value,
    }
    each = [f'{{"address":{buffer.address()},"device_id":{d},"mesh_device_id":{first}}}' for d in mesh.get_device_ids()]
    details["device_tensors"] = "[" + ",".join(each) + "]"
    return details


def buffer_rows(mesh: Any) -> list[dict[str, int]]:
    """Every live buffer of ``mesh`` on each of its devices: address, bytes per bank, buffer type
    and memory layout as ttnn's enum values (ttnn's ``get_buffers`` rows, once per device)."""
    return [
        {
            "device_id": device_id,
            "address": info.address,
            "max_size_per_bank": info.max_size_per_bank,
            "buffer_type": info.buffer_type.value,
            "buffer_layout": info.buffer_layout.value,
        }
        for info in get_buffers(mesh)
        for device_id in mesh.get_device_ids()
    ]


class ReportCapture(GraphCapture):
    """A :class:`GraphCapture` that also keeps a report file's node list (see the module docstring)."""

    def __init__(
        self, run_mode: RunMode = RunMode.NORMAL, *, detailed_buffers: bool = False, stack_traces: bool = False
    ) -> None:
        super().__init__(run_mode)
        self.stack_traces = stack_traces
        self.report = GraphBuilder()
        self.detailed_buffers = detailed_buffers
        self.started_wall_ns = time.time_ns()
        self._started = time.perf_counter_ns()
        self.meshes: dict[int, Any] = {}  # mesh id -> every mesh the capture saw
        self.per_operation_buffers: dict[int, list[dict[str, int]]] = {}
        self.python_io: list[dict[str, object]] = []  # each top-level op's arguments and tensor ids
        self._host_done: dict[int, tuple[_HostFrame, Sequence[Any]]] = {}  # thread -> from_torch's / to_device's
        self._report_lock = threading.RLock()

    def on_op_begin(self, event: OpEvent) -> None:
        self.meshes.setdefault(event.mesh.mesh_id, event.mesh)
        super().on_op_begin(event)

    def on_allocate(self, event: BufferEvent) -> None:
        self.meshes.setdefault(event.mesh.mesh_id, event.mesh)
        super().on_allocate(event)
        if self._loose():
            with self._report_lock:
                self.report.buffer_allocate(event_facts(event))

    def on_deallocate(self, event: BufferEvent) -> None:
        super().on_deallocate(event)
        if self._loose():
            with self._report_lock:
                self.report.buffer_deallocate(event_facts(event))

    def _loose(self) -> bool:
        """Whether an allocation or free on this thread is outside any op and host function."""
        return threading.get_ident() not in self._pending and not self._frames.get(threading.get_ident())

    def _host_frame_done(self, frame: _HostFrame, outputs: Sequence[Any] | None) -> None:
        """A creation is a top-level function of the report by its Python name (``ttnn.ones``)
        around its C++ functions; from_torch's and to_device's wait for their host op's event."""
        super()._host_frame_done(frame, outputs)
        with self._report_lock:
            name = frame.event.name
            if outputs is None:
                self._emit_items(self.report, frame.items)
            elif name in (CONVERT_PYTHON_TENSOR, TO_DEVICE):
                self._host_done[threading.get_ident()] = (frame, outputs)
            else:
                op = "allocate_tensor_on_device" if name == CREATE_DEVICE_TENSOR else name.removeprefix("ttnn::")
                self._describe(outputs)
                start = self.report.function_start(python_name(op), [])
                self._emit_frame(self.report, frame, outputs)
                self.report.function_end([tensor_facts(t) for t in outputs], duration_ns=0)
                self._record(op, {}, (), outputs)
                self._snapshot(start)

    def on_host_op(self, event: HostOpEvent) -> None:
        """A host call of the user's code: a top-level function of the report (no device graph)."""
        if event.op not in REPORTED_HOST_OPS or threading.get_ident() in self._pending:
            return
        with self._report_lock:
            build = self.report
            self._describe((*event.inputs, *event.outputs))
            start = build.function_start(python_name(event.op), [argument_text(t, cpp=True) for t in event.inputs])
            for tensor in event.inputs:
                build.input_tensor(*tensor_facts(tensor))
            done = self._host_done.pop(threading.get_ident(), None)
            if done is not None:  # its C++ function and the allocation inside
                self._emit_frame(build, *done)
            build.function_end([tensor_facts(t) for t in event.outputs], duration_ns=0)
            self._record(event.op, dict(enumerate(event.inputs)), event.inputs, event.outputs)
            self._snapshot(start)

    def _emit(self, pending: _Pending, outputs: Sequence[Any] | None) -> None:
        super()._emit(pending, outputs)
        with self._report_lock:
            build, event = self.report, pending.event
            self._describe((*event.inputs, *(outputs or ())))
            start = build.function_start(python_name(event.op), [])
            for tensor in event.inputs:
                build.input_tensor(*tensor_facts(tensor))
            self._emit_into(build, pending, outputs)
            if outputs is None:
                build.abandon()
                return
            took = time.perf_counter_ns() - pending.started_ns
            build.function_end([tensor_facts(t) for t in outputs], duration_ns=took)
            self._record(event.op, {**dict(enumerate(event.inputs)), **event.attrs}, event.inputs, outputs)
            self._snapshot(start)

    def _describe(self, tensors: Sequence[Any]) -> None:
        for tensor in tensors:
            if hasattr(tensor, "storage"):
                self.report.details[tensor_id(tensor)] = tensor_details(tensor)

    def _record(self, op: str, arguments: dict, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """The op's record of the report's ``python_io`` sidecar: its Python name, arguments as
        text (positional ones by index), its input and output tensor ids."""
        self.python_io.append(
            {
                "name": python_name(op),
                "arguments": {str(k): argument_text(v, cpp=False) for k, v in arguments.items()},
                "input_tensor_ids": [tensor_id(t) for t in inputs if hasattr(t, "storage")],
                "output_tensor_ids": [tensor_id(t) for t in outputs if hasattr(t, "storage")],
            }
        )
        if self.stack_traces:  # the user's frames, innermost first, as Python formats them
            self.python_io[-1]["python_stack_trace"] = traceback.format_list(user_frames())

    def _snapshot(self, start: int) -> None:
        """With detailed buffer tracing, every live buffer now, after the function begun at ``start``."""
        if self.detailed_buffers:
            self.per_operation_buffers[start] = [row for mesh in self.meshes.values() for row in buffer_rows(mesh)]

    def finish_report(self) -> list[dict]:
        """End the capture: the node list ``end_graph_capture`` gives (returned) and the report's
        (``self.report.nodes``, closed with the capture's duration)."""
        nodes = self.finish()
        with self._report_lock:
            self.report.finish(duration_ns=time.perf_counter_ns() - self._started)
        return nodes
