"""A mesh's dispatch mode, as tt-metal's ``DispatchContext`` keeps it (tt-metal 2026-06:
``ttnn.enable_asynchronous_slow_dispatch`` / ``disable_asynchronous_slow_dispatch`` /
``ttnn.device.is_asynchronous_slow_dispatch_enabled``, and the manual Fast Dispatch session
``ttnn.device.initialize_fast_dispatch`` / ``terminate_fast_dispatch`` / ``setup_fast_dispatch``).

tt-metal runs in Slow Dispatch when ``$TT_METAL_SLOW_DISPATCH_MODE`` is set (any value), else in
Fast Dispatch.  meshnn's queues execute the same either way (the in-order engine of
:mod:`meshnn.mesh.dispatch`), so a mode here is the state tt-metal keeps and checks, with its
refusals, not a different engine:
- asynchronous slow dispatch (several non-overlapping programs at once on one device) is a flag of
  the mesh's Slow Dispatch queue: setting or clearing it needs Slow Dispatch; reading it needs a
  Slow Dispatch queue (a mesh in a manual Fast Dispatch session has none);
- a manual Fast Dispatch session needs Slow Dispatch mode, no other session running, and a Galaxy
  or Blackhole cluster (tt-metal's refusals); it drains the mesh's queues and keeps the Slow Dispatch
  queues' state (the asynchronous flag) for :func:`terminate_fast_dispatch` to restore.

Layers: imports :mod:`meshnn.errors` and the mesh device.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

from meshnn.device.arch import Arch
from meshnn.errors import MeshnnError, MeshnnTypeError
from meshnn.mesh.mesh_device import MeshDevice

SLOW_DISPATCH_ENV = "TT_METAL_SLOW_DISPATCH_MODE"
"""Set (to any value): tt-metal runs in Slow Dispatch mode."""

_FD_SYSTEMS = frozenset({"galaxy"})
"""Wormhole systems that are UBB Galaxy clusters (Blackhole systems all qualify)."""


@dataclass(slots=True)
class _MeshDispatch:
    """One mesh's state: its Slow Dispatch queue's asynchronous flag, and whether a manual Fast
    Dispatch session holds it (its Slow Dispatch queue stashed meanwhile)."""

    asynchronous: bool = False
    fast_session: bool = False


_STATE: weakref.WeakKeyDictionary[MeshDevice, _MeshDispatch] = weakref.WeakKeyDictionary()
_SESSIONS = [0]  # manual Fast Dispatch sessions running in the process (tt-metal allows one)
_LOCK = threading.Lock()


def slow_dispatch_mode() -> bool:
    """Whether tt-metal would run in Slow Dispatch (``$TT_METAL_SLOW_DISPATCH_MODE`` set)."""
    return os.environ.get(SLOW_DISPATCH_ENV) is not None


def _mesh(device: object, name: str) -> MeshDevice:
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{name}: device must be a ttnn.MeshDevice, got {type(device).__name__}")
    device.check_open()
    return device


def _sd_queue(device: MeshDevice, name: str) -> _MeshDispatch:
    """The mesh's Slow Dispatch queue state; refused when a Fast Dispatch queue stands in its place."""
    state = _STATE.setdefault(device, _MeshDispatch())
    if state.fast_session or not slow_dispatch_mode():
        raise MeshnnError(
            f"ttnn.{name}: the mesh's command queue is a Fast Dispatch queue, not a Slow Dispatch one "
            f"(run with ${SLOW_DISPATCH_ENV}=1, outside a setup_fast_dispatch block)"
        )
    return state


def _needs_slow_dispatch(name: str) -> None:
    if not slow_dispatch_mode():
        raise MeshnnError(f"ttnn.{name} can only be called when Fast Dispatch is disabled (set ${SLOW_DISPATCH_ENV}=1)")


def enable_asynchronous_slow_dispatch(device: MeshDevice) -> None:
    """Let Slow Dispatch run several non-overlapping programs at once on ``device`` (experimental).
    Needs Slow Dispatch mode."""
    mesh = _mesh(device, "enable_asynchronous_slow_dispatch")
    _needs_slow_dispatch("enable_asynchronous_slow_dispatch")
    with _LOCK:
        _sd_queue(mesh, "enable_asynchronous_slow_dispatch").asynchronous = True


def disable_asynchronous_slow_dispatch(device: MeshDevice) -> None:
    """Undo :func:`enable_asynchronous_slow_dispatch` (experimental).  Needs Slow Dispatch mode."""
    mesh = _mesh(device, "disable_asynchronous_slow_dispatch")
    _needs_slow_dispatch("disable_asynchronous_slow_dispatch")
    with _LOCK:
        _sd_queue(mesh, "disable_asynchronous_slow_dispatch").asynchronous = False


def is_asynchronous_slow_dispatch_enabled(device: MeshDevice) -> bool:
    """Whether asynchronous slow dispatch is on for ``device`` (its Slow Dispatch queue's flag)."""
    mesh = _mesh(device, "device.is_asynchronous_slow_dispatch_enabled")
    with _LOCK:
        return _sd_queue(mesh, "device.is_asynchronous_slow_dispatch_enabled").asynchronous


def initialize_fast_dispatch(device: MeshDevice) -> None:
    """Start a manual Fast Dispatch session on ``device`` (opened in Slow Dispatch): its queues
    drain first.  Refused outside Slow Dispatch, while another session runs, and on a cluster that
    is neither a Galaxy nor Blackhole (tt-metal's three refusals, in its order)."""
    mesh = _mesh(device, "device.initialize_fast_dispatch")
    if not slow_dispatch_mode():
        raise MeshnnError(
            "Fast Dispatch can only be manually enabled when running the workload with Slow Dispatch mode."
        )
    with _LOCK:
        if _SESSIONS[0]:
            raise MeshnnError(
                "Fast Dispatch is already manually initialized. Terminate the current manual Fast Dispatch "
                "session before initializing another one."
            )
        if mesh.arch() is not Arch.BLACKHOLE and mesh.system.name not in _FD_SYSTEMS:
            raise MeshnnError(
                "Manually setting up and tearing down Fast Dispatch is only supported on Galaxy and Blackhole "
                f"clusters (this system is {mesh.system.name})."
            )
        mesh.quiesce_devices()
        _STATE.setdefault(mesh, _MeshDispatch()).fast_session = True
        _SESSIONS[0] += 1


def terminate_fast_dispatch(device: MeshDevice) -> None:
    """End the manual Fast Dispatch session of ``device``: its queues drain and its Slow Dispatch
    queue (with its asynchronous flag) is back."""
    mesh = _mesh(device, "device.terminate_fast_dispatch")
    with _LOCK:
        state = _STATE.get(mesh)
        if state is None or not state.fast_session:
            raise MeshnnError("Can only manually terminate fast dispatch after initializing it.")
        mesh.quiesce_devices()
        state.fast_session = False
        _SESSIONS[0] -= 1


@contextlib.contextmanager
def setup_fast_dispatch(device: MeshDevice) -> Iterator[None]:
    """``with ttnn.device.setup_fast_dispatch(mesh_device):`` Fast Dispatch for the block, Slow
    Dispatch again after it (even when the block raises)."""
    initialize_fast_dispatch(device)
    try:
        yield
    finally:
        terminate_fast_dispatch(device)
