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
from meshnn.mesh.sub_device import SubDeviceId

_mesh_of: weakref.WeakKeyDictionary[MeshEvent, weakref.ref[MeshDevice]] = weakref.WeakKeyDictionary()


def record_event(
    mesh_device: MeshDevice,
    cq_id: int | None = None,
    sub_device_ids: object = None,
    device_range: MeshCoordinateRange | None = None,
) -> MeshEvent:
    """``ttnn.record_event``: an event that completes when queue ``cq_id`` (default 0) reaches it.
    ``sub_device_ids``: the loaded sub-device manager's sub-devices whose work the event follows
    (checked to be its ids); the simulated queue runs its work in order, so an event follows every
    earlier command whichever sub-devices are named."""
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"record_event: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    if sub_device_ids:
        known = mesh_device.get_sub_device_ids()
        if isinstance(sub_device_ids, str | bytes) or not isinstance(sub_device_ids, list | tuple):
            raise MeshnnTypeError(
                f"record_event: sub_device_ids must be a list of ttnn.SubDeviceId, got {sub_device_ids!r}"
            )
        for given in sub_device_ids:
            if not isinstance(given, SubDeviceId):
                raise MeshnnTypeError(f"record_event: sub_device_ids must hold ttnn.SubDeviceId, got {given!r}")
            if given not in known:
                raise MeshnnValueError(
                    f"record_event: sub_device_ids names {given!r}; the loaded sub-device manager has {known}"
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
