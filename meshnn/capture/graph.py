"""``ttnn.graph``: capture what a run allocates and calls, as ttnn's node list, and analyse it.

``begin_graph_capture()`` starts a capture (captures nest: each sees everything until its own end),
``end_graph_capture()`` ends the innermost one and returns its nodes (see
:mod:`~meshnn.capture.graph_capture` for what an op becomes, :mod:`~meshnn.capture.circular_buffers`
for the circular buffers, :mod:`~meshnn.capture.trace` for the helpers' semantics).  A capture sees
every mesh of the process, as ttnn's does.

Layers: imports errors, the mesh layer's observers and the capture layer's own modules.
"""

from __future__ import annotations

import threading

from meshnn.capture.graph_capture import GraphCapture, RunMode
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
    "PeakMemoryUsagePerCore",
    "RunMode",
    "TensorInfo",
    "begin_graph_capture",
    "count_intermediate_and_output_tensors",
    "end_graph_capture",
    "extract_calltrace",
    "extract_output_info",
    "extract_output_tensors",
    "extract_peak_L1_memory_usage",
    "extract_resource_usage_per_core",
    "is_graph_capture_active",
]

_ACTIVE: list[GraphCapture] = []
_LOCK = threading.Lock()


def begin_graph_capture(run_mode: RunMode = RunMode.NORMAL) -> None:
    """Start capturing every op, allocation and free of every mesh (``run_mode``: see :class:`RunMode`)."""
    if not isinstance(run_mode, RunMode):
        raise MeshnnTypeError(f"begin_graph_capture: run_mode must be a ttnn.graph.RunMode, got {run_mode!r}")
    capture = GraphCapture(run_mode)
    with _LOCK:
        _ACTIVE.append(capture)
        OBSERVERS.add(capture)


def end_graph_capture() -> list[dict]:
    """End the innermost capture and return its nodes (ttnn's list of node dicts)."""
    with _LOCK:
        if not _ACTIVE:
            raise MeshnnValueError("end_graph_capture: no graph capture is active (call begin_graph_capture first)")
        capture = _ACTIVE.pop()
        OBSERVERS.remove(capture)
    return capture.finish()


def is_graph_capture_active() -> bool:
    """Whether a capture begun with :func:`begin_graph_capture` has not ended yet."""
    return bool(_ACTIVE)
