"""``ttnn.graph``: capture what a run allocates and calls, as ttnn's node list, and analyse it.

``begin_graph_capture()`` starts a capture (captures nest: each sees everything until its own end),
``end_graph_capture()`` ends the innermost one and returns its nodes (see
:mod:`~meshnn.capture.graph_capture` for what an op becomes, :mod:`~meshnn.capture.circular_buffers`
for the circular buffers, :mod:`~meshnn.capture.trace` for the helpers' semantics).  A capture sees
every mesh of the process, as ttnn's does.

Layers: imports errors, the mesh layer's observers and the capture layer's own modules.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from meshnn.capture.graph_capture import RunMode
from meshnn.capture.graph_levels import extract_levelized_graph
from meshnn.capture.graph_report import (
    extract_operation_durations,
    extract_total_duration_from_graph,
    import_report,
)
from meshnn.capture.graph_report_capture import ReportCapture
from meshnn.capture.graph_report_file import REPORT_VERSION, build_report, write_report
from meshnn.capture.graph_visualize import pretty_format, pretty_print, visualize
from meshnn.capture.trace import (
    PeakMemoryUsagePerCore,
    TensorInfo,
    count_intermediate_and_output_tensors,
    extract_calltrace,
    extract_output_info,
    extract_output_tensors,
    extract_peak_L1_memory_usage,
    extract_resource_usage_per_core,
)
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.observers import OBSERVERS

__all__ = [
    "REPORT_VERSION",
    "PeakMemoryUsagePerCore",
    "RunMode",
    "TensorInfo",
    "begin_graph_capture",
    "count_intermediate_and_output_tensors",
    "disable_detailed_buffer_tracing",
    "disable_python_stack_traces",
    "enable_detailed_buffer_tracing",
    "enable_python_stack_traces",
    "end_graph_capture",
    "end_graph_capture_to_file",
    "extract_calltrace",
    "extract_levelized_graph",
    "extract_operation_durations",
    "extract_output_info",
    "extract_output_tensors",
    "extract_peak_L1_memory_usage",
    "extract_resource_usage_per_core",
    "extract_total_duration_from_graph",
    "import_report",
    "is_detailed_buffer_tracing_enabled",
    "is_graph_capture_active",
    "is_python_stack_trace_enabled",
    "pretty_format",
    "pretty_print",
    "visualize",
]

_ACTIVE: list[ReportCapture] = []
_LOCK = threading.Lock()
_DETAILED = {"buffers": False, "stack_traces": False}  # process-wide switches, as ttnn's


def enable_python_stack_traces() -> None:
    """Record the user's Python stack trace of each top-level op in the report file's
    ``python_io`` sidecar (captures begun from now on; also on with ``ttnn.CONFIG``'s
    ``enable_detailed_tensor_report`` or ``enable_graph_python_stack_traces``)."""
    _DETAILED["stack_traces"] = True


def disable_python_stack_traces() -> None:
    """Stop what :func:`enable_python_stack_traces` starts."""
    _DETAILED["stack_traces"] = False


def is_python_stack_trace_enabled() -> bool:
    """Whether :func:`enable_python_stack_traces` is on (off by default)."""
    return _DETAILED["stack_traces"]


def _stack_traces_asked() -> bool:
    if _DETAILED["stack_traces"]:
        return True
    config = sys.modules.get("meshnn.capture.config")
    settings = getattr(config, "CONFIG", None)
    return any(
        getattr(settings, name, False) for name in ("enable_detailed_tensor_report", "enable_graph_python_stack_traces")
    )


def enable_detailed_buffer_tracing() -> None:
    """Record every live buffer after each top-level op and the L1 pages in the report file of the
    captures begun from now on (``end_graph_capture_to_file``)."""
    _DETAILED["buffers"] = True


def disable_detailed_buffer_tracing() -> None:
    """Stop what :func:`enable_detailed_buffer_tracing` starts (for captures begun from now on)."""
    _DETAILED["buffers"] = False


def is_detailed_buffer_tracing_enabled() -> bool:
    """Whether detailed buffer tracing is on (off by default)."""
    return _DETAILED["buffers"]


def begin_graph_capture(run_mode: RunMode = RunMode.NORMAL) -> None:
    """Start capturing every op, allocation and free of every mesh (``run_mode``: see :class:`RunMode`)."""
    if not isinstance(run_mode, RunMode):
        raise MeshnnTypeError(f"begin_graph_capture: run_mode must be a ttnn.graph.RunMode, got {run_mode!r}")
    capture = ReportCapture(run_mode, detailed_buffers=_DETAILED["buffers"], stack_traces=_stack_traces_asked())
    with _LOCK:
        _ACTIVE.append(capture)
        OBSERVERS.add(capture)


def _end(call: str) -> ReportCapture:
    with _LOCK:
        if not _ACTIVE:
            raise MeshnnValueError(f"{call}: no graph capture is active (call begin_graph_capture first)")
        capture = _ACTIVE.pop()
        OBSERVERS.remove(capture)
    return capture


def end_graph_capture() -> list[dict]:
    """End the innermost capture and return its nodes (ttnn's list of node dicts)."""
    return _end("end_graph_capture").finish()


def end_graph_capture_to_file(report_path: str | os.PathLike) -> list[dict]:
    """End the innermost capture, write its report file to ``report_path`` (newer ttnn's graph
    report JSON: :mod:`~meshnn.capture.graph_report_file`; its folders are made) and return the
    report's node list.  A path that is not a str / Path, or a folder, is refused before the
    capture ends."""
    if not isinstance(report_path, str | os.PathLike) or os.path.isdir(report_path):
        raise MeshnnTypeError(
            f"end_graph_capture_to_file: report_path must be a file path (str or Path), got {report_path!r}"
        )
    capture = _end("end_graph_capture_to_file")
    capture.finish_report()
    report = build_report(capture)
    written = write_report(os.fspath(report_path), report)
    if capture.python_io:  # ttnn's sidecar: each Python op's arguments and tensor ids, beside the report
        written.with_suffix(".python_io.json").write_text(json.dumps(capture.python_io))
    return report["graph"]  # type: ignore[return-value]


def is_graph_capture_active() -> bool:
    """Whether a capture begun with :func:`begin_graph_capture` has not ended yet."""
    return bool(_ACTIVE)
