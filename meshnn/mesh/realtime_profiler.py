"""tt-metal's real-time profiler (tt-metal 2026-06, experimental): ``ttnn.device.
RegisterProgramRealtimeProfilerCallback`` / ``UnregisterProgramRealtimeProfilerCallback`` /
``IsProgramRealtimeProfilerActive`` and the ``ProgramRealtimeRecord`` a callback receives.

The real-time profiler needs a dispatch core reserved for it and a D2H socket, which a simulated
device does not have; so, as tt-metal on a configuration without them, it is not active: callbacks
register (their handles count from 1) and never fire.  (Predicted per-program times are
:mod:`meshnn.ops.device_profiler`'s readbacks.)

Layers: imports :mod:`meshnn.errors`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass

from meshnn.errors import MeshnnTypeError


@dataclass(frozen=True)
class ProgramRealtimeRecord:
    """What a real-time profiler callback receives (tt-metal's fields; never made here: the
    profiler is not active on a simulated device)."""

    runtime_id: int = 0
    start_timestamp: int = 0
    end_timestamp: int = 0
    frequency: float = 0.0
    chip_id: int = 0
    kernel_sources: tuple[str, ...] = ()


_CALLBACKS: dict[int, Callable[[ProgramRealtimeRecord], object]] = {}
_HANDLES = itertools.count(1)
_LOCK = threading.Lock()


def RegisterProgramRealtimeProfilerCallback(callback: Callable[[ProgramRealtimeRecord], object]) -> int:
    """Register ``callback`` for real-time profiler records; returns its handle.  It never fires:
    the real-time profiler is not active (:func:`IsProgramRealtimeProfilerActive`)."""
    if not callable(callback):
        raise MeshnnTypeError(
            f"RegisterProgramRealtimeProfilerCallback: callback must be callable, got {type(callback).__name__}"
        )
    with _LOCK:
        handle = next(_HANDLES)
        _CALLBACKS[handle] = callback
    return handle


def UnregisterProgramRealtimeProfilerCallback(handle: int) -> None:
    """Forget the callback of ``handle`` (an unknown handle is ignored, as in tt-metal)."""
    if isinstance(handle, bool) or not isinstance(handle, int) or handle < 0:
        raise MeshnnTypeError(
            f"UnregisterProgramRealtimeProfilerCallback: handle must be a non-negative int, got {handle!r}"
        )
    with _LOCK:
        _CALLBACKS.pop(handle, None)


def IsProgramRealtimeProfilerActive() -> bool:
    """False: a simulated device reserves no real-time profiler core (registered callbacks never fire)."""
    return False
