"""ttnn's entry points that open and close devices, beside ``open_mesh_device``: the context
manager ``create_mesh_device``; the single-device ones, each giving a 1x1 mesh (one code path for
one chip and many): ``open_device`` / ``close_device``, ``CreateDevice`` / ``CreateDevices`` /
``CloseDevice`` / ``CloseDevices``, ``manage_device``; ``ReadDeviceProfiler`` (accepted: a
simulated device keeps no profiler buffers); and ttnn's default device (``SetDefaultDevice`` /
``GetDefaultDevice`` / ``ClearDefaultDevice``).

A device id is the chip's index in the simulated system (0 .. get_num_devices() - 1).
``open_device`` returns the device already open for that id, as ttnn does; ``CreateDevice`` opens a
new 1x1 mesh every time (ttnn's ``create_unit_mesh``).

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` and the mesh layer.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator, Sequence

from meshnn.device.arch import system_spec
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshShape
from meshnn.mesh.device_config import DispatchCoreConfig
from meshnn.mesh.mesh_device import MeshDevice, close_mesh_device, open_mesh_device, synchronize_device

_open: dict[tuple[str, int], weakref.ref[MeshDevice]] = {}  # (system, device id) -> its open_device mesh


@contextlib.contextmanager
def create_mesh_device(*args: object, **kwargs: object) -> Iterator[MeshDevice]:
    """``with ttnn.create_mesh_device(mesh_shape, ...) as mesh_device:``: ``open_mesh_device`` with
    the same arguments; the mesh is closed when the block ends, however it ends."""
    mesh_device = open_mesh_device(*args, **kwargs)  # type: ignore[arg-type]
    try:
        yield mesh_device
    finally:
        close_mesh_device(mesh_device)


def _checked_id(device_id: object, name: str = "device_id") -> int:
    if isinstance(device_id, bool) or not isinstance(device_id, int):
        raise MeshnnTypeError(f"{name} must be an int, got {device_id!r}")
    spec = system_spec()
    if not 0 <= device_id < spec.num_devices:
        raise MeshnnValueError(
            f"{name} {device_id} is not a device of the simulated system {spec.name!r} "
            f"(ids 0..{spec.num_devices - 1}; choose another with $MESHNN_SYSTEM)"
        )
    return device_id


def CreateDevice(
    device_id: int,
    num_command_queues: int = 1,
    l1_small_size: int = 0,
    trace_region_size: int = 0,
    dispatch_core_config: DispatchCoreConfig | None = None,
    *,
    worker_l1_size: int = 0,
) -> MeshDevice:
    """A new 1x1 mesh of chip ``device_id`` (``ttnn.CreateDevice``)."""
    return open_mesh_device(
        MeshShape(1, 1),
        l1_small_size=l1_small_size,
        trace_region_size=trace_region_size,
        num_command_queues=num_command_queues,
        dispatch_core_config=dispatch_core_config,
        physical_device_ids=[_checked_id(device_id)],
        worker_l1_size=worker_l1_size,
    )


def CreateDevices(
    device_ids: Sequence[int],
    num_command_queues: int = 1,
    l1_small_size: int = 0,
    trace_region_size: int = 0,
    dispatch_core_config: DispatchCoreConfig | None = None,
    *,
    worker_l1_size: int = 0,
) -> dict[int, MeshDevice]:
    """A 1x1 mesh per id (``ttnn.CreateDevices``), keyed by id; all ids are checked before any opens."""
    if isinstance(device_ids, str | bytes) or not isinstance(device_ids, Sequence):
        raise MeshnnTypeError(f"device_ids must be a list of ints, got {device_ids!r}")
    ids = [_checked_id(i, "device_ids") for i in device_ids]
    if len(set(ids)) != len(ids):
        raise MeshnnValueError(f"device_ids {ids} name a device twice")
    kwargs = {"worker_l1_size": worker_l1_size}
    return {
        i: CreateDevice(i, num_command_queues, l1_small_size, trace_region_size, dispatch_core_config, **kwargs)
        for i in ids
    }


def _checked_device(device: object, op: str) -> MeshDevice:
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"{op}: device must be a ttnn.Device (a MeshDevice), got {type(device).__name__}")
    return device


def CloseDevice(device: MeshDevice) -> None:
    """``ttnn.CloseDevice``: close the device (its buffers are freed)."""
    _checked_device(device, "CloseDevice").close()


def CloseDevices(devices: dict[int, MeshDevice]) -> None:
    """``ttnn.CloseDevices``: close every device of a ``CreateDevices`` result."""
    if not isinstance(devices, dict):
        raise MeshnnTypeError(f"CloseDevices: devices must be a dict of id -> device, got {type(devices).__name__}")
    for device in devices.values():
        _checked_device(device, "CloseDevices")
    for device in devices.values():
        device.close()


def open_device(
    *,
    device_id: int,
    l1_small_size: int = 0,
    trace_region_size: int = 0,
    num_command_queues: int = 1,
    dispatch_core_config: DispatchCoreConfig | None = None,
    worker_l1_size: int = 0,
) -> MeshDevice:
    """``ttnn.open_device``: chip ``device_id`` as a 1x1 mesh; the device already open for that id
    when there is one."""
    key = (system_spec().name, _checked_id(device_id))
    known = _open.get(key)
    device = known() if known is not None else None
    if device is not None and device.is_open():
        return device
    device = CreateDevice(
        device_id,
        num_command_queues,
        l1_small_size,
        trace_region_size,
        dispatch_core_config,
        worker_l1_size=worker_l1_size,
    )
    _open[key] = weakref.ref(device)
    return device


def close_device(device: MeshDevice) -> None:
    """``ttnn.close_device``: finish its queues, then close it."""
    synchronize_device(_checked_device(device, "close_device"))
    device.close()


@contextlib.contextmanager
def manage_device(device_id: int) -> Iterator[MeshDevice]:
    """``with ttnn.manage_device(device_id=0) as device:`` opens the device and always closes it."""
    device = open_device(device_id=device_id)
    try:
        yield device
    finally:
        close_device(device)


PROFILER_READS: list[Callable[[MeshDevice], None]] = []
"""What a ``ReadDeviceProfiler`` also does, each called with the device (meshnn.ops.device_profiler
adds its read of the programs' predicted times)."""


def ReadDeviceProfiler(device: MeshDevice) -> None:
    """``ttnn.ReadDeviceProfiler``: for an open device, the readers of :data:`PROFILER_READS` (a
    simulated device keeps no profiler buffers: the times read are meshnn.perf's predictions)."""
    _checked_device(device, "ReadDeviceProfiler").check_open()
    for read in PROFILER_READS:
        read(device)


_default: list[MeshDevice | None] = [None]  # ttnn's default device: the one slot it keeps


def SetDefaultDevice(device: MeshDevice | None = None) -> None:
    """``ttnn.SetDefaultDevice``: the device ttnn's ops (and tt-metal's helpers, through
    ``GetDefaultDevice``) use when no input is on a device; None clears it.  Recorded only: a
    meshnn op given only host tensors computes on the host either way."""
    if device is not None and not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"SetDefaultDevice: device must be a ttnn.MeshDevice or None, got {device!r}")
    _default[0] = device


def ClearDefaultDevice() -> None:
    """``ttnn.ClearDefaultDevice``: no default device (``SetDefaultDevice(None)``)."""
    _default[0] = None


def GetDefaultDevice() -> MeshDevice | None:
    """``ttnn.GetDefaultDevice``: the device ``SetDefaultDevice`` last set (None: none set; a
    device closed since is still returned, as ttnn keeps its pointer)."""
    return _default[0]
