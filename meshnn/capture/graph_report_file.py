"""The report file ``ttnn.graph.end_graph_capture_to_file(path)`` writes: newer ttnn's graph report JSON.

One JSON object (``REPORT_VERSION`` 1, the keys tt-metal's ``GraphProcessor::get_report`` writes):

- ``version``; ``graph``: the capture's report node list (see
  :mod:`~meshnn.capture.graph_report_capture`), each node with ttnn's ``stacking_level`` (a
  top-level function 1, the nodes inside it 1, a nested function 2...) and ``input_tensors`` (a
  function's input tensor nodes), integer params as JSON numbers (``size``, ``address``,
  ``tensor_id``, ``device_id``, ``buffer_type``, ``page_size``, ``num_cores``,
  ``max_size_per_bank``), every other param a string;
- ``devices``: one object per device of every mesh the capture saw (``ttnn.reports.get_device_info``'s
  figures, ``device_id``, ``arch``, ``num_dram_channels``, ``dram_size_per_channel``);
- ``metadata``: ``capture_timestamp_ns`` (wall clock at the capture's start), ``total_duration_ns``,
  ``rank`` and ``world_size`` (this process in the run's distributed context);
- ``cluster_descriptor`` and ``mesh_coordinate_mapping``: the system's YAML texts (the first mesh's);
- with detailed buffer tracing: ``per_operation_buffers`` (every live buffer after each top-level
  function, keyed by its ``function_start`` counter as a string) and ``buffer_pages`` (every page
  of every live L1 buffer at the end, ``ttnn.reports.get_buffer_pages``'s rows).

Layers: imports the capture layer's own modules, the mesh layer's reports and the distributed context.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from meshnn.capture.cluster_desc import cluster_descriptor, mesh_coordinate_mapping
from meshnn.capture.graph_builder import GraphBuilder
from meshnn.capture.graph_report_capture import ReportCapture
from meshnn.distributed.context import get_context
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.reports import get_buffer_pages

REPORT_VERSION = 1
"""``ttnn.graph.REPORT_VERSION``: the report format version a report file states."""

INTEGER_PARAMS = frozenset(
    {"size", "address", "tensor_id", "device_id", "buffer_type", "page_size", "num_cores", "max_size_per_bank"}
)


def report_nodes(build: GraphBuilder) -> list[dict]:
    """The builder's nodes as a report file holds them (see the module docstring)."""
    nodes = []
    for index, node in enumerate(build.nodes):
        params = {k: int(v) if k in INTEGER_PARAMS and _is_int(v) else v for k, v in node["params"].items()}
        made = {**node, "params": params, "connections": list(node["connections"])}
        made["input_tensors"] = list(build.inputs.get(index, ()))
        made["stacking_level"] = build.levels[index]
        nodes.append(made)
    return nodes


def _is_int(text: object) -> bool:
    return isinstance(text, str) and text.lstrip("-").isdecimal()


def device_rows(meshes: list[Any]) -> list[dict]:
    """One ``devices`` object per device of ``meshes`` (every device of a mesh is alike)."""
    rows, seen = [], set()
    for mesh in meshes:
        info = mesh.allocator.device_info()
        for device_id in mesh.get_device_ids():
            if device_id in seen:
                continue
            seen.add(device_id)
            rows.append(
                {
                    "device_id": device_id,
                    **info,
                    "arch": mesh.arch().name,
                    "num_dram_channels": mesh.num_dram_channels(),
                    "dram_size_per_channel": mesh.dram_size_per_channel(),
                }
            )
    return rows


def build_report(capture: ReportCapture) -> dict[str, object]:
    """The report object of an ended capture."""
    meshes = list(capture.meshes.values())
    context = get_context()
    metadata = {
        "capture_timestamp_ns": capture.started_wall_ns,
        "total_duration_ns": capture.report.nodes[-1].get("duration_ns", 0),
        "rank": int(context.rank),
        "world_size": int(context.world_size),
    }
    report: dict[str, object] = {
        "version": REPORT_VERSION,
        "graph": report_nodes(capture.report),
        "devices": device_rows(meshes),
        "metadata": metadata,
    }
    if meshes:
        report["cluster_descriptor"] = cluster_descriptor(meshes[0].system)
        report["mesh_coordinate_mapping"] = mesh_coordinate_mapping(meshes[0].system)
    if capture.detailed_buffers:
        report["per_operation_buffers"] = {str(k): v for k, v in capture.per_operation_buffers.items()}
        open_meshes = [m for m in meshes if m.is_open()]
        pages = get_buffer_pages(open_meshes) if open_meshes else []
        report["buffer_pages"] = [{**p, "buffer_type": p["buffer_type"].value} for p in pages]
    return report


def write_report(path: object, report: dict[str, object]) -> Path:
    """Write ``report`` to ``path`` (its folders made), as JSON indented by 2; the path written."""
    if not isinstance(path, str | Path):
        raise MeshnnTypeError(f"end_graph_capture_to_file: report_path must be a str or a Path, got {path!r}")
    target = Path(path)
    if target.is_dir():
        raise MeshnnValueError(f"Failed to open graph report file for writing: {target} (a directory)")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(report, indent=2))
    return target
