"""ttnn's event functions over a mesh's command queues: ``record_event(mesh_device, cq_id)`` marks a
point in one queue's work, and ``wait_for_event(cq_id, event)`` makes ANOTHER queue of that mesh
(not the host) wait until that point is reached.  ``event_synchronize`` (the host waits) and
``event_query`` live with the queue's events.

``wait_for_event`` takes no mesh, so the mesh of each event ``record_event`` made is kept here,
weakly (an event keeps no mesh alive).  An event recorded with the queue's own
``enqueue_record_event`` is waited for with the queue's ``enqueue_wait_for_event``.

Layers: imports :mod:`meshnn.errors` and the mesh layer.
"""

from __future__ import annotations

import weakref

from meshnn.errors import DeviceClosedError, MeshnnTypeError, MeshnnValueError
from meshnn.mesh.command_queue import MeshEvent
from meshnn.mesh.coord import MeshCoordinateRange
from meshnn.mesh.mesh_device import MeshDevice

_mesh_of: weakref.WeakKeyDictionary[MeshEvent, weakref.ref[MeshDevice]] = weakref.WeakKeyDictionary()


def record_event(
    mesh_device: MeshDevice,
    cq_id: int | None = None,
    sub_device_ids: object = None,
    device_range: MeshCoordinateRange | None = None,
) -> MeshEvent:
    """``ttnn.record_event``: an event that completes when queue ``cq_id`` (default 0) reaches it.
    ``sub_device_ids`` is accepted when empty (a simulated mesh has one sub-device)."""
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"record_event: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    if sub_device_ids:
        raise MeshnnTypeError(
            f"record_event: sub_device_ids must be empty (no sub-devices are set up), got {sub_device_ids!r}"
        )
    if device_range is not None and not isinstance(device_range, MeshCoordinateRange):
        raise MeshnnTypeError(f"record_event: device_range must be a MeshCoordinateRange, got {device_range!r}")
    event = mesh_device.mesh_command_queue(0 if cq_id is None else cq_id).enqueue_record_event(device_range)
    _mesh_of[event] = weakref.ref(mesh_device)
    return event


def wait_for_event(cq_id: int, event: MeshEvent) -> None:
    """``ttnn.wait_for_event``: queue ``cq_id`` of the event's mesh waits (the host does not)."""
    if not isinstance(event, MeshEvent):
        raise MeshnnTypeError(f"wait_for_event: event must be a MeshEvent (from record_event), got {event!r}")
    ref = _mesh_of.get(event)
    if ref is None:
        raise MeshnnValueError(
            "wait_for_event: the event was not made by ttnn.record_event; wait for a queue's own event with "
            "mesh_device.mesh_command_queue(cq_id).enqueue_wait_for_event(event)"
        )
    mesh = ref()
    if mesh is None:
        raise DeviceClosedError(f"wait_for_event: the mesh event {event.event_id} was recorded on is gone")
    mesh.mesh_command_queue(cq_id).enqueue_wait_for_event(event)
