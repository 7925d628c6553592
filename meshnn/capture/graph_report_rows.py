"""``ttnn.graph_report.import_graph``: one capture's node list as the rows of a report database.

The rules (those of tt-metal's importer, so that a report reads the same whichever wrote it):

- an **operation** is a top-level function (``function_start`` .. its ``function_end``); the
  functions inside it are part of it (its captured graph).  Operation ids count from 1 in capture
  order, plus ``base_operation_id``.  ``ttnn.from_torch`` calls before the first other operation
  (a model's weights being loaded) are not operations.  A ``buffer_deallocate`` outside any
  function becomes an operation ``ttnn::deallocate`` of its own;
- an operation's ``duration`` is its ``function_end``'s ``duration_ns`` in seconds; its arguments
  are ``arg_<i>`` of its ``function_start`` (or the Python-level record's, with ``python_io``);
  its inputs are the tensors its start names in ``input_tensors`` (else those connected to it),
  its outputs the tensors its end connects to;
- every **tensor** is written once (by ``tensor_id``), a host tensor only when an operation takes
  or makes it; ``device_tensors`` come from the tensor node's per-device addresses;
- ``buffers``: after each operation, every live buffer (``per_operation_buffers``' snapshot when
  the report has one, else the allocations and frees seen so far), sizes per bank;
- ``captured_graph``: each operation's nodes renumbered from 1 between a ``capture_start`` and a
  ``capture_end``, its output tensors included; ``edges`` are that graph's connections;
- ``errors``: each ``error`` node, and each top-level function that never ended
  (``incomplete_operation``).

Layers: the capture layer only.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict, deque
from dataclasses import dataclass, field

from meshnn.capture.graph_report_schema import insert_rows
from meshnn.capture.graph_report_sources import insert_stack_traces, lifetime_rows

_TYPES = {"DRAM": 0, "L1": 1, "SYSTEM_MEMORY": 2, "L1_SMALL": 3, "TRACE": 4}
_LAYOUTS = {"INTERLEAVED": 0, "HEIGHT_SHARDED": 2, "WIDTH_SHARDED": 3, "BLOCK_SHARDED": 4}


def _int(value: object) -> int | None:
    return None if value is None or value == "" else int(value)  # type: ignore[call-overload]


def per_bank(params: dict, banks: dict[str, int]) -> int:
    """A buffer's bytes per bank: the node's ``max_size_per_bank``, else its pages dealt over the
    device's banks (interleaved) or its shard cores, whole pages each."""
    if "max_size_per_bank" in params:
        return int(params["max_size_per_bank"])
    size, page = _int(params.get("size")) or 0, _int(params.get("page_size")) or 0
    if size <= 0 or page <= 0:
        return size
    cores = _int(params.get("num_cores")) or 0
    kind = buffer_type_of(params)
    count = cores or (banks.get("num_dram_channels", 0) if kind == 0 else banks.get("l1_num_banks", 0))
    return -(-(size // page) // count) * page if count > 0 else size


def buffer_type_of(params: dict) -> int:
    if "buffer_type" in params:
        return int(params["buffer_type"])
    return _TYPES.get(str(params.get("type", "DRAM")), 0)


@dataclass
class _Op:
    counter: int  # its function_start
    name: str
    operation_id: int
    python_io: dict | None
    nodes: list[dict] = field(default_factory=list)


@dataclass
class _Rows:
    """Every table's rows of one capture."""

    tables: dict[str, list[tuple]] = field(default_factory=lambda: defaultdict(list))
    traces: list[tuple[int, str]] = field(default_factory=list)


class _Walk:
    """One pass over a capture's nodes (see the module docstring)."""

    def __init__(self, graph: list, base: int, devices: list | None, python_io: list | None, buffers: dict | None):
        self.graph, self.base, self.buffers = graph, base, buffers
        self.banks = {d.get("device_id", 0): d for d in devices or ()}
        self.io: dict[str, deque] = defaultdict(deque)
        for record in python_io or ():
            self.io[record.get("name", "")].append(record)
        self.rows = _Rows()
        self.count = 0
        self.stack: list[int] = []  # open functions (counters)
        self.op: _Op | None = None
        self.seen_compute = False
        self.live: list[tuple] = []  # (device, address, per bank, type, layout) of live buffers
        self.tensors: dict[int, tuple] = {}
        self.operations: dict[int, int] = {}  # function_start counter -> operation id

    def tensor_id(self, counter: int) -> int | None:
        node = self.graph[counter] if 0 <= counter < len(self.graph) else None
        if node is None or node.get("node_type") != "tensor":
            return None
        return _int(node.get("params", {}).get("tensor_id"))

    def run(self) -> _Rows:
        for node in self.graph:
            if self.op is not None:
                self.op.nodes.append(node)
            getattr(self, "on_" + str(node.get("node_type")), lambda _node: None)(node)
        if self.op is not None:
            self.rows.tables["errors"].append(
                (
                    self.base,
                    self.op.name,
                    "incomplete_operation",
                    f"Operation '{self.op.name}' started but never completed (likely crashed)",
                    "",
                    "",
                )
            )
        return self.rows

    def on_function_start(self, node: dict) -> None:
        self.stack.append(node["counter"])
        name = node.get("params", {}).get("name", "unknown")
        if len(self.stack) > 1 or self.op is not None:
            return
        if name == "ttnn.from_torch" and not self.seen_compute:
            self.stack[-1] = -1  # a leading from_torch: not an operation
            return
        self.seen_compute |= name != "ttnn.from_torch"
        self.count += 1
        record = self.io[name].popleft() if self.io.get(name) else None
        self.op = _Op(node["counter"], name, self.base + self.count, record, [node])
        self.rows.tables["nodes"].append((self.op.operation_id, node["counter"], self.count, name))

    def on_function_end(self, node: dict) -> None:
        start = self.stack.pop() if self.stack else -1
        if self.stack or self.op is None or start != self.op.counter:
            return
        op, self.op = self.op, None
        self.operations[start] = op.operation_id
        self.finish(op, self.graph[start], node)

    def finish(self, op: _Op, start: dict, end: dict) -> None:
        tables, oid = self.rows.tables, op.operation_id
        tables["operations"].append((oid, op.name, (end.get("duration_ns") or 0) / 1e9))
        record = op.python_io or {}
        arguments = record.get("arguments") or {f"arg_{i}": a for i, a in enumerate(start.get("arguments", []))}
        tables["operation_arguments"].extend((oid, str(k), str(v)) for k, v in arguments.items())
        if record.get("python_stack_trace"):
            self.rows.traces.append((oid, "\n".join(record["python_stack_trace"])))
        inputs = record.get("input_tensor_ids") or self.inputs_of(start)
        outputs_nodes = [c for c in end.get("connections", []) if self.tensor_id(c) is not None]
        outputs = record.get("output_tensor_ids") or [self.tensor_id(c) for c in outputs_nodes]
        tables["input_tensors"].extend((oid, i, int(t)) for i, t in enumerate(dict.fromkeys(inputs)))
        tables["output_tensors"].extend((oid, i, int(t)) for i, t in enumerate(dict.fromkeys(outputs)))
        subgraph = op.nodes + [self.graph[c] for c in outputs_nodes]
        tables["captured_graph"].append((oid, json.dumps(renumbered(subgraph))))
        self.snapshot(oid, str(op.counter))

    def inputs_of(self, start: dict) -> list[int]:
        named = [self.tensor_id(c) for c in start.get("input_tensors", [])]
        if not named:
            feeding = (n for n in self.graph if n.get("node_type") == "tensor")
            named = [self.tensor_id(n["counter"]) for n in feeding if start["counter"] in n.get("connections", [])]
        return [t for t in named if t is not None]

    def snapshot(self, oid: int, start: str) -> None:
        snapshot = (self.buffers or {}).get(start)
        if snapshot is None:
            self.rows.tables["buffers"].extend((oid, *b) for b in self.live)
            return
        self.rows.tables["buffers"].extend(
            (
                oid,
                b.get("device_id", 0),
                b.get("address", 0),
                b.get("max_size_per_bank", 0),
                b.get("buffer_type", 0),
                b.get("buffer_layout", 0),
            )
            for b in snapshot
        )

    def on_tensor(self, node: dict) -> None:
        params = node.get("params", {})
        tid = _int(params.get("tensor_id"))
        if tid is None or tid in self.tensors:
            return
        dtype = str(params["dtype"]).replace("::", ".") if "dtype" in params else None
        layout = str(params["layout"]).replace("::", ".") if "layout" in params else None
        device, address = _int(params.get("device_id")), _int(params.get("address"))
        kind = _int(params.get("buffer_type")) or 0
        memory = params.get("memory_config")
        self.tensors[tid] = (tid, params.get("shape", ""), dtype, layout, memory, device, address, kind)
        for each in json.loads(params["device_tensors"]) if params.get("device_tensors") else ():
            device_id = each.get("mesh_device_id", each.get("device_id"))
            self.rows.tables["device_tensors"].append((tid, device_id, each.get("address")))

    def on_buffer_allocate(self, node: dict) -> None:
        params = node.get("params", {})
        device = _int(params.get("device_id")) or 0
        layout = _LAYOUTS.get(str(params.get("layout", "INTERLEAVED")), 0)
        size = per_bank(params, self.banks.get(device, {}))
        self.live.append((device, _int(params.get("address")) or 0, size, buffer_type_of(params), layout))

    def on_buffer_deallocate(self, node: dict) -> None:
        params = node.get("params", {})
        address = _int(params.get("address"))
        if address is None:
            linked = [self.graph[c] for c in node.get("connections", []) if 0 <= c < len(self.graph)]
            allocated = [n for n in linked if n.get("node_type") == "buffer_allocate"]
            address = _int(allocated[0]["params"].get("address")) if allocated else None
        if address is not None:
            self.live = [b for b in self.live if b[1] != address]
        if self.stack:
            return
        self.count += 1
        oid = self.base + self.count
        tables = self.rows.tables
        tables["operations"].append((oid, "ttnn::deallocate", 0))
        tables["nodes"].append((oid, node["counter"], self.count, "ttnn::deallocate"))
        owner = [t[0] for t in self.tensors.values() if address is not None and t[6] == address]
        tables["input_tensors"].extend((oid, 0, t) for t in owner[:1])
        start = {"counter": 0, "node_type": "capture_start", "params": {}, "arguments": [], "connections": [1]}
        end = {"counter": 2, "node_type": "capture_end", "params": {}, "arguments": [], "connections": []}
        tables["captured_graph"].append((oid, json.dumps([start, {**node, "counter": 1, "connections": [2]}, end])))
        self.snapshot(oid, "")

    def on_error(self, node: dict) -> None:
        params = node.get("params", {})
        self.rows.tables["errors"].append(
            (
                self.base,
                params.get("error_operation", ""),
                params.get("error_type", "unknown"),
                params.get("error_message", ""),
                "",
                "",
            )
        )


def renumbered(nodes: list[dict]) -> list[dict]:
    """``nodes`` between a ``capture_start`` and a ``capture_end``, counters (and the connections
    and input tensors naming them) renumbered from 0; each node's ``id`` is its new counter."""
    ends = {"arguments": [], "input_tensors": [], "params": {}, "stacking_level": 0}
    framed = [{**ends, "counter": -1, "node_type": "capture_start", "connections": [1]}, *nodes]
    framed.append({**ends, "counter": -2, "node_type": "capture_end", "connections": []})
    new = {n["counter"]: i for i, n in enumerate(framed)}
    out = []
    for index, node in enumerate(framed):
        made = {**node, "counter": index, "id": index}
        if index and index < len(framed) - 1:
            made["connections"] = [new.get(c, c) for c in node.get("connections", [])]
        made["input_tensors"] = [new.get(c, c) for c in node.get("input_tensors", [])]
        out.append(made)
    return out


def import_graph(
    cursor: sqlite3.Cursor,
    graph: list,
    base_operation_id: int = 0,
    devices: list | None = None,
    python_io: list | None = None,
    per_operation_buffers: dict | None = None,
    rank: int = 0,
    record_tensor_lifetime: bool = False,
) -> dict:
    """Write one capture's rows (every row with ``rank``); returns how many of each were written."""
    walk = _Walk(graph, base_operation_id, devices, python_io, per_operation_buffers)
    rows = walk.run()
    tables = rows.tables
    used = {t for table in ("input_tensors", "output_tensors") for _, _, t in tables[table]}
    kept = [t for t in walk.tensors.values() if t[5] is not None or t[0] in used]
    tables["tensors"] = kept
    known = {t[0] for t in kept}
    for table in ("input_tensors", "output_tensors", "device_tensors"):
        column = 2 if table != "device_tensors" else 0
        tables[table] = [r for r in dict.fromkeys(tables[table]) if r[column] in known]
    tables["tensor_consumers"] = [(t, o, i) for o, i, t in tables["input_tensors"]]
    tables["tensor_producers"] = [(t, o, i) for o, i, t in tables["output_tensors"]]
    for oid, text in tables["captured_graph"]:
        for node in json.loads(text):
            for index, sink in enumerate(node.get("connections", [])):
                tables["edges"].append((oid, node["counter"], sink, index, 0, index))
    if record_tensor_lifetime:
        tables["tensor_lifetime"] = lifetime_rows(tables, rows.traces, known)
    verbs = {"operations": "INSERT OR REPLACE", "tensors": "INSERT OR IGNORE", "tensor_lifetime": "INSERT OR REPLACE"}
    verbs |= {"tensor_consumers": "INSERT OR IGNORE", "tensor_producers": "INSERT OR IGNORE"}
    for table, table_rows in tables.items():
        insert_rows(cursor, table, [(*r, rank) for r in table_rows], verbs.get(table, "INSERT"))
    insert_stack_traces(cursor, rows.traces, rank)
    counts = {table: len(tables[table]) for table in ("operations", "tensors", "device_tensors", "buffers", "nodes")}
    counts |= {"edges": len(tables["edges"]), "errors": len(tables["errors"]), "stack_traces": len(rows.traces)}
    return counts | {"graph_counter_to_op_id": walk.operations}
