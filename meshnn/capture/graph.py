"""``ttnn.graph``: capture what a run allocates and calls, as ttnn's node list, and analyse it.

``begin_graph_capture()`` starts a capture (captures nest: each sees everything until its own end),
``end_graph_capture()`` ends the innermost one and returns its nodes (see
:mod:`~meshnn.capture.graph_capture` for what an op becomes, :mod:`~meshnn.capture.circular_buffers`
for the circular buffers, :mod:`~meshnn.capture.trace` for the helpers' semantics).  A capture sees
every mesh of the process, as ttnn's does.

The Python-level records of the outermost capture are ttnn's ``_python_io_data`` (each top-level
op's, and :func:`record_python_operation`'s); ``_cpp_begin_graph_capture`` / ``_cpp_end_graph_capture``
/ ``_cpp_end_graph_capture_to_file`` are ttnn's binary calls under its Python wrappers (the wrappers
call them by name, so a test may replace one).

Layers: imports errors, the mesh layer's observers and the capture layer's own modules.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

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
from meshnn.capture.python_io import _safe_arg_str, python_io_record  # noqa: F401 - (ttnn.graph._safe_arg_str)
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
from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn
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
    "record_python_operation",
    "store_captured_graph",
    "store_output_tensor_ids",
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


_python_io_data: list[dict] = []
"""The outermost capture's Python-level records (ttnn's name): each top-level op's name, arguments as
text and tensor ids, and :func:`record_python_operation`'s; emptied when an outermost capture begins."""
_AUTO_TRACES = [False]  # the outermost capture turned stack traces on (and its end turns them off)


def _configure_python_stack_traces_for_outer_graph_capture(ttnn_module: object = None) -> None:
    """At an outermost capture's begin, as ttnn: turn stack traces on when ``ttnn.CONFIG`` asks for
    them (``enable_graph_python_stack_traces`` or ``enable_detailed_tensor_report``) and they are
    off, noting it so that the capture's end turns them off again."""
    if _DETAILED["stack_traces"]:
        _AUTO_TRACES[0] = False
        return
    _AUTO_TRACES[0] = _stack_traces_asked()
    if _AUTO_TRACES[0]:
        enable_python_stack_traces()


def record_python_operation(name: str, function_args: tuple | list, function_kwargs: dict) -> None:
    """``ttnn.graph.record_python_operation``: append a Python-level op's record to
    :data:`_python_io_data` (its keyword arguments, then positional ones by index, as text; the ids
    of its input tensors; the user's stack trace while stack traces are on)."""
    if not isinstance(function_args, tuple | list) or not isinstance(function_kwargs, dict):
        raise MeshnnTypeError(
            "record_python_operation: function_args must be a tuple or list and function_kwargs a dict, got "
            f"{type(function_args).__name__} and {type(function_kwargs).__name__}"
        )
    _python_io_data.append(python_io_record(str(name), function_args, function_kwargs, _DETAILED["stack_traces"]))


def store_output_tensor_ids(output_tensor_ids: list[int]) -> None:
    """Attach output tensor ids to the latest record of :data:`_python_io_data` (none: nothing)."""
    if _python_io_data:
        _python_io_data[-1]["output_tensor_ids"] = output_tensor_ids


def store_captured_graph(captured_graph_json: object) -> None:
    """Attach a per-op captured graph to the latest record of :data:`_python_io_data` (none: nothing)."""
    if _python_io_data:
        _python_io_data[-1]["captured_graph"] = captured_graph_json


def begin_graph_capture(run_mode: RunMode = RunMode.NORMAL) -> None:
    """Start capturing every op, allocation and free of every mesh (``run_mode``: see :class:`RunMode`).
    An outermost capture empties :data:`_python_io_data` (its records go there) and may turn stack
    traces on (:func:`_configure_python_stack_traces_for_outer_graph_capture`)."""
    global _python_io_data
    if not isinstance(run_mode, RunMode):
        raise MeshnnTypeError(f"begin_graph_capture: run_mode must be a ttnn.graph.RunMode, got {run_mode!r}")
    outermost = not _ACTIVE
    if outermost:
        _configure_python_stack_traces_for_outer_graph_capture()
    capture = ReportCapture(run_mode, detailed_buffers=_DETAILED["buffers"], stack_traces=_stack_traces_asked())
    if outermost:
        _python_io_data = capture.python_io
    with _LOCK:
        _ACTIVE.append(capture)
        OBSERVERS.add(capture)


_cpp_begin_graph_capture = begin_graph_capture  # (ttnn's binary call under its Python wrapper: one here)


def _end(call: str) -> ReportCapture:
    with _LOCK:
        if not _ACTIVE:
            raise MeshnnValueError(f"{call}: no graph capture is active (call begin_graph_capture first)")
        capture = _ACTIVE.pop()
        OBSERVERS.remove(capture)
    return capture


def _after_end() -> None:
    """An outermost capture ended: stack traces its begin turned on go off."""
    if not _ACTIVE and _AUTO_TRACES[0]:
        disable_python_stack_traces()
        _AUTO_TRACES[0] = False


def _cpp_end_graph_capture() -> list[dict]:
    """The innermost capture's end and node list (ttnn's binary call)."""
    return _end("end_graph_capture").finish()


def end_graph_capture() -> list[dict]:
    """End the innermost capture and return its nodes (ttnn's list of node dicts)."""
    result = _cpp_end_graph_capture()
    _after_end()
    return result


def _cpp_end_graph_capture_to_file(report_path: str | os.PathLike) -> list[dict]:
    """The innermost capture's end, its report file written (ttnn's binary call); the node list."""
    capture = _end("end_graph_capture_to_file")
    capture.finish_report()
    report = build_report(capture)
    write_report(os.fspath(report_path), report)
    return report["graph"]  # type: ignore[return-value]


def end_graph_capture_to_file(report_path: str | os.PathLike) -> list[dict]:
    """End the innermost capture, write its report file to ``report_path`` (newer ttnn's graph
    report JSON: :mod:`~meshnn.capture.graph_report_file`; its folders are made) and return the
    report's node list; the outermost capture's Python-level records (:data:`_python_io_data`), when
    there are any, go to the ``.python_io.json`` sidecar beside it, as ttnn writes them.  A path that
    is not a str / Path, or a folder, is refused before the capture ends."""
    if not isinstance(report_path, str | os.PathLike) or os.path.isdir(report_path):
        raise MeshnnTypeError(
            f"end_graph_capture_to_file: report_path must be a file path (str or Path), got {report_path!r}"
        )
    result = _cpp_end_graph_capture_to_file(report_path)
    if _python_io_data:  # ttnn's sidecar: the Python-level records, beside the report
        Path(report_path).with_suffix(".python_io.json").write_text(json.dumps(_python_io_data))
    _after_end()
    return json.loads(result) if isinstance(result, str) else result


def is_graph_capture_active() -> bool:
    """Whether a capture begun with :func:`begin_graph_capture` has not ended yet."""
    return bool(_ACTIVE)


def __getattr__(name: str) -> object:
    """A name of ttnn's graph module that meshnn does not have: NotImplementedByMeshnn naming it."""
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    raise NotImplementedByMeshnn(f"graph.{name}")
