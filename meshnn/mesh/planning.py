"""Planning meshes: meshes that validate and allocate but compute nothing.

A mesh opened with ``open_mesh_device(..., execute=False)`` (or inside ``with planning():``) has
the same allocator, addresses, op checks and out-of-memory errors as an executing one; its
MeshBuffers have an address and a size but no bytes (:class:`~meshnn.mesh.slab.NoBytes`), its
command queues check every write and workload and then drop it, and a read raises
:class:`~meshnn.errors.PlanningError`.  So the host memory of a plan grows with the number of
buffers and ops, never with the size of the tensors.

This module holds the process-wide default (``execute=None`` means "what :func:`planning`
says", executing unless a ``with planning():`` block or ``meshnn plan`` is active) and the one
check every reader of values makes (:func:`check_executes`).

Layers: imports :mod:`meshnn.errors` only (a MeshDevice is duck-typed: ``executes``, ``shape``).
"""

from __future__ import annotations

import threading
from types import TracebackType

from meshnn.errors import MeshnnTypeError, PlanningError

_DEPTH = [0]  # how many planning() blocks are open (process-wide, like ttnn's device defaults)
_LOCK = threading.Lock()


class planning:
    """``with meshnn.planning():`` opens every mesh whose ``execute`` is not given as a planning
    mesh (``execute=False``); nestable; ``enter()`` / ``exit()`` for a whole session (pytest)."""

    def __init__(self, active: bool = True) -> None:
        if not isinstance(active, bool):
            raise MeshnnTypeError(f"planning: active must be a bool, got {active!r}")
        self.active = active
        self._entered = False

    def __enter__(self) -> planning:
        with _LOCK:
            if self.active and not self._entered:
                _DEPTH[0] += 1
                self._entered = True
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, trace: TracebackType | None) -> None:
        with _LOCK:
            if self._entered:
                _DEPTH[0] -= 1
                self._entered = False

    enter = __enter__

    def exit(self) -> None:
        self.__exit__(None, None, None)


def default_execute() -> bool:
    """Whether a mesh opened now without ``execute=`` executes (False inside :func:`planning`)."""
    return _DEPTH[0] == 0


def resolve_execute(execute: object) -> bool:
    """``open_mesh_device``'s ``execute`` argument: None takes the default; else a bool."""
    if execute is None:
        return default_execute()
    if not isinstance(execute, bool):
        raise MeshnnTypeError(f"open_mesh_device: execute must be a bool or None, got {execute!r}")
    return execute


def check_executes(mesh: object, what: str) -> None:
    """Raise :class:`PlanningError` when ``mesh`` is a planning mesh: ``what`` needs values."""
    if getattr(mesh, "executes", True):
        return
    shape = getattr(mesh, "shape", "?")
    raise PlanningError(
        f"cannot {what}: the {shape} mesh is a planning mesh (opened with execute=False, by "
        f"`meshnn plan` or --meshnn-plan): it checks every op and allocates its outputs at their real "
        f"addresses, but computes and stores no values. Read values on a mesh opened with execute=True"
    )


NO_BYTES = (
    "a MeshBuffer of a planning mesh (opened with execute=False) has an address and a size but no bytes: "
    "it computes and stores no values; use a mesh opened with execute=True to read or write bytes"
)
"""What a buffer of a planning mesh says when its bytes are asked for."""
