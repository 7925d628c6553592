"""The ttnn report folder of a run, written op by op as ttnn's report writer does.

A :class:`ReportWriter` is an observer of every mesh (installed by ``ttnn.CONFIG``: see
:mod:`~meshnn.capture.config`).  Its folder holds ``db.sqlite`` (tables of
:mod:`~meshnn.capture.report_schema`), ``config.json``, the system's ``cluster_descriptor.yaml`` and
``physical_chip_mesh_coordinate_mapping.yaml`` (chips, Ethernet links, mesh coordinates:
:mod:`~meshnn.capture.cluster_desc`), with ``enable_detailed_tensor_report`` a
``tensors/<tensor id>.bin`` per tensor (``ttnn.load_tensor`` reads them), and in ``perf/`` the
ops-perf CSV and ``profile_log_device.csv`` of the performance model (written when the writer
closes: logging turned off, another report started, or the process ends).

For each op (numbered from 1 in the order ops begin), and, as ttnn lists its Python operations, for
each ``ttnn.from_torch``, ``ttnn.to_torch`` and ``ttnn.deallocate`` the user's code makes:

- ``operations``: ``ttnn.<op>`` and its ``duration``: the seconds the op call took in meshnn from
  its checks to its enqueue (the visualizer shows it as Python execution time; the predicted
  device time is in the CSV; NULL for the host calls);
- ``operation_arguments``: the input tensors by position (``"0"``, ``"1"``...) and the op's
  configuration by ttnn's argument names; ``input_tensors`` / ``output_tensors`` / ``tensors`` /
  ``device_tensors``; ``stack_traces`` (the user's frames, innermost first, absolute paths),
  ``source_files`` and ``tensor_lifetime`` (:mod:`~meshnn.capture.report_sources`);
- ``buffers`` (and with ``enable_detailed_buffer_report`` ``buffer_pages``) after the op; the
  ``captured_graph`` of a device op alone (:mod:`~meshnn.capture.graph_capture`);
- ``devices`` once per device of each mesh the report sees.

An op that raised after it began (an output that did not fit) keeps its row, arguments, inputs and
graph (its functions left open), with no outputs and a NULL duration.

Layers: imports the mesh layer's observers, the tensor layer's readback and files, the capture
layer's own modules.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meshnn.capture.cluster_desc import cluster_descriptor, mesh_coordinate_mapping
from meshnn.capture.graph_capture import GraphCapture
from meshnn.capture.op_names import python_name
from meshnn.capture.report_perf import Describe, PerfRecords
from meshnn.capture.report_rows import (
    buffer_page_rows,
    buffer_rows,
    device_rows,
    device_tensor_rows,
    error_row,
    tensor_row,
)
from meshnn.capture.report_schema import insert, open_database, write_config
from meshnn.capture.report_sources import ReportSources, Site, record_lives
from meshnn.capture.tensors import argument_text, mesh_buffer_of, tensor_id
from meshnn.mesh.observers import BufferEvent, HostOpEvent, MeshObserver, OpEvent
from meshnn.tensor.files.writer import save_tensor
from meshnn.tensor.readback import from_device

MESH_MAPPING = "physical_chip_mesh_coordinate_mapping.yaml"


def snake_name(name: str) -> str:
    """ttnn's folder name of a report: cut to 64 characters, lower-case alphanumerics, every
    other run of characters one ``_``, no ``_`` at either end."""
    text = re.sub(r"[^a-z0-9]", "_", name[:64].lower())
    return re.sub(r"_+", "_", text).strip("_")


@dataclass(frozen=True)
class ReportOptions:
    """What a report records: ``name`` (its ``report_name``), the detailed parts, and the CONFIG
    values for ``config.json``."""

    name: str
    detailed_buffers: bool = False
    detailed_tensors: bool = False
    config: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Op:
    operation_id: int
    event: OpEvent
    capture: GraphCapture
    started: float
    site: Site = None  # the innermost frame of the user's code: (file, line)


class ReportWriter(MeshObserver):
    """Writes the report folder ``path`` (see the module docstring); :meth:`close` finishes it."""

    def __init__(self, path: Path, options: ReportOptions, describe: Describe | None = None) -> None:
        self.path = Path(path)
        self.options = options
        self.perf = PerfRecords(describe)
        self._db: Any = None
        self._meshes: dict[int, Any] = {}  # mesh id -> mesh
        self._tensors: set[int] = set()  # tensor ids with a row
        self._sources = ReportSources()
        self._ops: dict[int, _Op] = {}  # thread -> its op in progress
        self._next_id = 1
        self._lock = threading.RLock()

    # ------------------------------------------------------------------------------ set-up

    def _database(self) -> Any:
        if self._db is None:
            self.path.mkdir(parents=True, exist_ok=True)
            write_config(self.path / "config.json", self.options.config)
            self._db, self._next_id = open_database(self.path / "db.sqlite")
            rows = [("producer", "meshnn"), ("report_name", self.options.name), ("report_version", "1")]
            self._db.executemany("INSERT OR REPLACE INTO report_metadata VALUES (?, ?)", rows)
        return self._db

    def _see(self, mesh: Any) -> None:
        """A mesh seen for the first time: its devices' rows; with the first, the system's cluster
        descriptor and mesh coordinates (:mod:`~meshnn.capture.cluster_desc`)."""
        if mesh.mesh_id in self._meshes:
            return
        if not self._meshes:
            (self.path / "cluster_descriptor.yaml").write_text(cluster_descriptor(mesh.system))
            (self.path / MESH_MAPPING).write_text(mesh_coordinate_mapping(mesh.system))
        self._meshes[mesh.mesh_id] = mesh
        insert(self._database(), "devices", device_rows(mesh))

    def _tensor(self, tensor: Any) -> int:
        """The tensor's id, with its rows written the first time."""
        tid = tensor_id(tensor)
        if tid not in self._tensors:
            self._tensors.add(tid)
            insert(self._db, "tensors", [tensor_row(tensor)])
            insert(self._db, "device_tensors", device_tensor_rows(tensor))
            if self.options.detailed_tensors and mesh_buffer_of(tensor) is not None:
                (self.path / "tensors").mkdir(exist_ok=True)
                save_tensor(self.path / "tensors" / f"{tid}.bin", from_device(tensor))
        return tid

    # ---------------------------------------------------------------------------- events

    def on_op_begin(self, event: OpEvent) -> None:
        with self._lock:
            db = self._database()
            self._see(event.mesh)
            failed = self._ops.pop(threading.get_ident(), None)
            if failed is not None:
                self._finish(failed, None)
            op = _Op(self._next_id, event, GraphCapture(), time.perf_counter())
            self._next_id += 1
            self._ops[threading.get_ident()] = op
            db.execute("INSERT INTO operations VALUES (?, ?, NULL)", (op.operation_id, python_name(event.op)))
            arguments = [(op.operation_id, str(i), argument_text(t, cpp=False)) for i, t in enumerate(event.inputs)]
            arguments += [(op.operation_id, k, argument_text(v, cpp=False)) for k, v in event.attrs.items()]
            insert(db, "operation_arguments", arguments)
            inputs = [(op.operation_id, i, self._tensor(t)) for i, t in enumerate(event.inputs)]
            insert(db, "input_tensors", inputs)
            op.site = self._sources.stack_trace(db, op.operation_id)
            record_lives(db, op.operation_id, op.site, used=[tid for _, _, tid in inputs], made=[], freed=[])
            op.capture.on_op_begin(event)

    def on_host_op(self, event: HostOpEvent) -> None:
        """``ttnn.from_torch`` / ``to_torch`` / ``deallocate`` made by the user's code: an operation
        row as ttnn's report gives its Python operations (its tensors, stack trace and the buffers
        after it; no device graph, no device time).  One made inside an op is part of that op."""
        with self._lock:
            if threading.get_ident() in self._ops:
                return
            db = self._database()
            if event.mesh is not None:
                self._see(event.mesh)
            oid = self._next_id
            self._next_id += 1
            db.execute("INSERT INTO operations VALUES (?, ?, NULL)", (oid, python_name(event.op)))
            if event.error is not None:
                db.execute("INSERT INTO errors VALUES (?, ?, ?, ?, ?, ?)", error_row(oid, event.op, event.error))
            inputs = [self._tensor(t) for t in event.inputs]
            outputs = [self._tensor(t) for t in event.outputs]
            insert(
                db,
                "operation_arguments",
                [(oid, str(i), argument_text(t, cpp=False)) for i, t in enumerate(event.inputs)],
            )
            insert(db, "input_tensors", [(oid, i, tid) for i, tid in enumerate(inputs)])
            insert(db, "output_tensors", [(oid, i, tid) for i, tid in enumerate(outputs)])
            site = self._sources.stack_trace(db, oid)
            freed = event.op == "deallocate"
            record_lives(db, oid, site, used=[] if freed else inputs, made=outputs, freed=inputs if freed else [])
            self._snapshot(oid)
            db.commit()

    def on_op_failed(self, event: OpEvent, error: BaseException) -> None:
        """The op's row in ``errors`` (ttnn's writer records an op that raised); its other rows
        are written as for an op that raised (:meth:`_finish`)."""
        with self._lock:
            op = self._ops.get(threading.get_ident())
            if op is not None and op.event.op_id == event.op_id:
                row = error_row(op.operation_id, event.op, error)
                self._db.execute("INSERT INTO errors VALUES (?, ?, ?, ?, ?, ?)", row)

    def on_allocate(self, event: BufferEvent) -> None:
        self._buffer_event(event, allocated=True)

    def on_deallocate(self, event: BufferEvent) -> None:
        self._buffer_event(event, allocated=False)

    def _buffer_event(self, event: BufferEvent, *, allocated: bool) -> None:
        with self._lock:
            if self._db is not None:
                self._see(event.mesh)
            op = self._ops.get(threading.get_ident())
            if op is not None:
                (op.capture.on_allocate if allocated else op.capture.on_deallocate)(event)

    def on_op_end(self, event: OpEvent, outputs: Sequence[Any]) -> None:
        with self._lock:
            op = self._ops.pop(threading.get_ident(), None)
            if op is not None and op.event.op_id != event.op_id:
                self._finish(op, None)
                op = None
            if op is not None:
                self._finish(op, outputs)

    def _finish(self, op: _Op, outputs: Sequence[Any] | None) -> None:
        """The op's outputs, duration, buffers and graph (``outputs`` None: it raised)."""
        db, oid = self._db, op.operation_id
        if outputs is not None:
            seconds = time.perf_counter() - op.started
            op.capture.on_op_end(op.event, outputs)
            made = [self._tensor(t) for t in outputs]
            insert(db, "output_tensors", [(oid, i, tid) for i, tid in enumerate(made)])
            record_lives(db, oid, op.site, used=[], made=made, freed=[])
            db.execute("UPDATE operations SET duration = ? WHERE operation_id = ?", (seconds, oid))
            self.perf.record(op.event, outputs)
        self._snapshot(oid)
        insert(db, "captured_graph", [(oid, json.dumps(op.capture.finish(), separators=(",", ":")))])
        db.commit()

    def _snapshot(self, oid: int) -> None:
        """Every live buffer after operation ``oid`` (and with the detailed report, their pages)."""
        meshes = [m for m in self._meshes.values() if m.is_open()]
        insert(self._db, "buffers", buffer_rows(oid, meshes))
        if self.options.detailed_buffers:
            insert(self._db, "buffer_pages", buffer_page_rows(oid, meshes))

    # ------------------------------------------------------------------------------- close

    def close(self) -> list[Path]:
        """Finish the report: ops still open are written as raised, the perf files are written,
        the database is closed.  Returns the perf files written.  Safe to repeat."""
        with self._lock:
            if self._db is None:
                return []
            for op in list(self._ops.values()):
                self._finish(op, None)
            self._ops.clear()
            if self.perf.refused:
                refused = json.dumps(self.perf.refused)
                self._db.execute("INSERT OR REPLACE INTO report_metadata VALUES ('perf_refused', ?)", (refused,))
            self._db.commit()
            self._db.close()
            self._db = None
            return self.perf.write(self.path / "perf", snake_name(self.options.name) or "meshnn")
