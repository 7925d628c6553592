"""``ttnn.graph``'s analysis helpers over a captured node list, with ttnn's semantics.

Each helper walks the trace as tt-metal's ``graph_trace_utils`` does, and takes any trace in
ttnn's JSON form (a list of node dicts; param values may be strings, as ttnn writes them, or
numbers):

- :func:`extract_peak_L1_memory_usage`: a **whole-device** figure: the running sum of L1
  ``buffer_allocate`` sizes minus the L1 ``buffer_deallocate`` sizes (the size of the buffer node
  they connect to), plus the circular buffers allocated since the last
  ``circular_buffer_deallocate_all`` (each CB's per-core size, globally allocated ones included);
  at each top-level ``function_start`` the L1 ``buffer`` nodes that follow it (tensor nodes
  skipped, anything else, a DRAM buffer too, ends the scan) are added too: the op's inputs
  already in L1.  The peak is
  taken after every node, in unsigned 32-bit arithmetic as ttnn's.
- :func:`extract_resource_usage_per_core`: per core, worst case: an L1 buffer of ``size`` bytes in
  ``page_size`` pages over ``num_cores`` cores (0: interleaved over ``interleaved_storage_cores``)
  costs ``ceil(ceil(size / page_size) / cores) * page_size``; CBs not globally allocated are summed
  and reset at ``circular_buffer_deallocate_all``; peaks of CBs, L1 buffers and their sum (unsigned
  64-bit).  ``buffer`` nodes of inputs are not counted here (as in ttnn).
- :func:`count_intermediate_and_output_tensors`: outputs are the tensor nodes the last
  ``function_end`` connects to; intermediates the tensors that ``function_end`` nodes named exactly
  ``create_device_tensor`` connect to first, less the outputs.  ttnn names that function
  ``tt::tt_metal::create_device_tensor``, so on its traces and on meshnn's the intermediate count is
  0 (ttnn's own comparison, kept as it is).
- :func:`extract_output_tensors` / :func:`extract_output_info`: the tensor nodes the last
  ``function_end`` connects to, and for each ``buffer`` node connected to one of them a
  :class:`TensorInfo` (the tensor's shape, the buffer's size and type).
- :func:`extract_calltrace`: the name of every ``function_start``, in order.

Layers: imports errors, the device layer's buffer types and the tensor layer's Shape.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.tensor.spec import Shape

_U32, _U64 = 2**32, 2**64


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """``ttnn.graph.TensorInfo``: an output's shape, its buffer's size in bytes and its type."""

    shape: Shape
    size: int
    type: BufferType

    def __repr__(self) -> str:
        kind = self.type.name if self.type in (BufferType.L1, BufferType.DRAM) else "UNKNOWN"
        return f"TensorInfo(shape={self.shape!r}, size={self.size}, type={kind})"


@dataclass(frozen=True, slots=True)
class PeakMemoryUsagePerCore:
    """``ttnn.graph.PeakMemoryUsagePerCore``: peak bytes per core of CBs, of L1 buffers, of both."""

    peak_cb: int
    peak_l1: int
    peak_total: int

    def __str__(self) -> str:
        return (
            f"Peak Memory Usage Per Core:\n  CB:    {self.peak_cb} bytes\n  L1:    {self.peak_l1} bytes\n"
            f"  Total: {self.peak_total} bytes"
        )


def check_trace(trace: object) -> list[dict]:
    """``trace`` as a list of node dicts, or a meshnn error naming ``trace``."""
    if not isinstance(trace, Sequence) or isinstance(trace, str | bytes):
        raise MeshnnTypeError(f"trace must be the node list end_graph_capture returned, got {type(trace).__name__}")
    for i, item in enumerate(trace):
        if not isinstance(item, dict) or not {"node_type", "params", "connections"} <= item.keys():
            raise MeshnnValueError(f"trace[{i}] is not a graph node (a dict with node_type, params and connections)")
    return list(trace)


def _param(node: dict, key: str) -> str:
    try:
        return str(node["params"][key])
    except (KeyError, TypeError):
        raise MeshnnValueError(f"trace node {node.get('counter')} ({node['node_type']}) has no param {key!r}") from None


def _int(node: dict, key: str) -> int:
    text = _param(node, key)
    try:
        return int(text)
    except ValueError:
        raise MeshnnValueError(f"trace node {node.get('counter')}: param {key}={text!r} is not an integer") from None


def _target(trace: list[dict], node: dict) -> dict:
    """The node that ``node``'s first connection names."""
    try:
        return trace[int(node["connections"][0])]
    except (IndexError, ValueError, TypeError):
        raise MeshnnValueError(f"trace node {node.get('counter')} ({node['node_type']}) names no node") from None


def extract_calltrace(trace: object) -> list[str]:
    """The name of every ``function_start``, in trace order."""
    return [_param(v, "name") for v in check_trace(trace) if v["node_type"] == "function_start"]


def extract_peak_L1_memory_usage(trace: object) -> int:
    """Peak L1 bytes of the whole device over the trace (see the module docstring)."""
    nodes = check_trace(trace)
    total_cb = total_buffer = peak = 0
    depth = 0
    i = 0
    while i < len(nodes):
        v, kind = nodes[i], nodes[i]["node_type"]
        if kind == "function_start":
            while depth == 0 and i + 1 < len(nodes):
                following = nodes[i + 1]
                if following["node_type"] == "buffer" and _param(following, "type") == "L1":
                    total_buffer = (total_buffer + _int(following, "size")) % _U32
                elif following["node_type"] != "tensor":
                    break  # anything else ends the scan, a DRAM buffer too (as in ttnn)
                i += 1
            depth += 1
        elif kind == "circular_buffer_allocate":
            total_cb = (total_cb + _int(v, "size")) % _U32
        elif kind == "circular_buffer_deallocate_all":
            total_cb = 0
        elif kind == "buffer_allocate" and _param(v, "type") == "L1":
            total_buffer = (total_buffer + _int(v, "size")) % _U32
        elif kind == "buffer_deallocate":
            buffer = _target(nodes, v)
            if _param(buffer, "type") == "L1":
                total_buffer = (total_buffer - _int(buffer, "size")) % _U32
        elif kind == "function_end":
            depth = max(depth - 1, 0)
        peak = max(peak, (total_cb + total_buffer) % _U32)
        i += 1
    return peak


def _per_core(node: dict, interleaved_storage_cores: int) -> int:
    page = _int(node, "page_size")
    cores = _int(node, "num_cores") or interleaved_storage_cores
    if page <= 0 or cores <= 0:
        raise MeshnnValueError(f"trace node {node.get('counter')}: page_size {page} over {cores} cores")
    return math.ceil(math.ceil(_int(node, "size") / page) / cores) * page


def extract_resource_usage_per_core(trace: object, interleaved_storage_cores: int) -> PeakMemoryUsagePerCore:
    """Worst-case peak bytes per core of CBs, L1 buffers and both (see the module docstring)."""
    nodes = check_trace(trace)
    if isinstance(interleaved_storage_cores, bool) or not isinstance(interleaved_storage_cores, int):
        raise MeshnnTypeError(f"interleaved_storage_cores must be an int, got {interleaved_storage_cores!r}")
    if interleaved_storage_cores <= 0:
        raise MeshnnValueError(f"interleaved_storage_cores must be positive, got {interleaved_storage_cores}")
    cb = l1 = total = peak_cb = peak_l1 = peak_total = 0
    for counter, v in enumerate(nodes):
        if v.get("counter") != counter:
            raise MeshnnValueError(f"trace node {counter} has counter {v.get('counter')!r}: the trace is out of order")
        kind = v["node_type"]
        if kind == "circular_buffer_allocate" and _int(v, "globally_allocated") != 1:
            size = _int(v, "size")
            cb, total = cb + size, total + size
            peak_cb, peak_total = max(peak_cb, cb), max(peak_total, total)
        elif kind == "circular_buffer_deallocate_all":
            total, cb = (total - cb) % _U64, 0
        elif kind in ("buffer_allocate", "buffer_deallocate") and _param(v, "type") != "DRAM":
            size = _per_core(v, interleaved_storage_cores)
            if kind == "buffer_allocate":
                l1, total = l1 + size, total + size
                peak_l1, peak_total = max(peak_l1, l1), max(peak_total, total)
            else:
                l1, total = (l1 - size) % _U64, (total - size) % _U64
    return PeakMemoryUsagePerCore(peak_cb, peak_l1, peak_total)


def _last_function_end(nodes: list[dict]) -> int:
    for i in range(len(nodes) - 1, -1, -1):
        if nodes[i]["node_type"] == "function_end":
            return i
    raise MeshnnValueError("the trace has no function_end: it captured no op")


def extract_output_tensors(trace: object) -> set[int]:
    """The counters of the tensor nodes that the last ``function_end`` connects to."""
    nodes = check_trace(trace)
    end = nodes[_last_function_end(nodes)]
    return {int(c) for c in end["connections"] if nodes[int(c)]["node_type"] == "tensor"}


def count_intermediate_and_output_tensors(trace: object) -> tuple[int, int]:
    """(intermediate tensors, output tensors) of the trace (see the module docstring)."""
    nodes = check_trace(trace)
    if not any(v["node_type"] == "function_start" for v in nodes):
        raise MeshnnValueError("the trace has no function_start: it captured no op")
    outputs = extract_output_tensors(nodes)
    intermediate = {
        int(v["connections"][0])
        for v in nodes
        if v["node_type"] == "function_end" and _param(v, "name") == "create_device_tensor" and v["connections"]
    }
    return len(intermediate - outputs), len(outputs)


def _parse_shape(text: str) -> Shape:
    inside = text[text.find("[") + 1 : text.find("]")] if "[" in text else ""
    return Shape([int(d) for d in re.findall(r"\d+", inside)])


def extract_output_info(trace: object) -> list[TensorInfo]:
    """A :class:`TensorInfo` per (buffer node, output tensor it holds), in buffer-node order."""
    nodes = check_trace(trace)
    outputs = extract_output_tensors(nodes)
    found = []
    for node in nodes:
        if node["node_type"] != "buffer":
            continue
        for tensor in sorted({int(c) for c in node["connections"]} & outputs):
            kind = BufferType.L1 if _param(node, "type") == "L1" else BufferType.DRAM
            found.append(TensorInfo(_parse_shape(_param(nodes[tensor], "shape")), _int(node, "size"), kind))
    return found
