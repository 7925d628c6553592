"""Mesh events: a point in a command queue's work (:class:`MeshEvent`), waited for by the host
(``event_synchronize``, bounded by ``MESHNN_WAIT_TIMEOUT``) or queried (``event_query``).

Part of the ``mesh`` layer; imports ``meshnn.errors``, ``meshnn.host`` and ``meshnn.mesh.coord``.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

from meshnn.errors import MeshnnTypeError, QueueError
from meshnn.host.threads import wait_timeout
from meshnn.mesh.coord import MeshCoordinateRange

_event_ids = itertools.count(1)


def new_event_id() -> int:
    return next(_event_ids)  # atomic under the interpreter lock


@dataclass(eq=False)
class MeshEvent:
    """A point in a queue's work; ``device_range`` is the devices it was recorded on."""

    cq_id: int
    event_id: int
    device_range: MeshCoordinateRange
    mesh_id: int
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    def is_completed(self) -> bool:
        return self._done.is_set()


def event_synchronize(event: MeshEvent) -> None:
    """Block the host until ``event`` completes (bounded by ``MESHNN_WAIT_TIMEOUT``)."""
    if not isinstance(event, MeshEvent):
        raise MeshnnTypeError(f"expected a MeshEvent, got {type(event).__name__}")
    if not event._done.wait(timeout=wait_timeout()):
        raise QueueError(f"event {event.event_id} of cq {event.cq_id} did not complete within {wait_timeout()} s")


def event_query(event: MeshEvent) -> bool:
    """Whether ``event`` has completed (never blocks)."""
    if not isinstance(event, MeshEvent):
        raise MeshnnTypeError(f"event_query: event must be a MeshEvent, got {type(event).__name__}")
    return event.is_completed()
