"""``ttnn.device`` under the ttnn alias: the names ttnn keeps in its device module (``from
ttnn.device import Arch``, ``ttnn.device.open_device``, ``ttnn.device.Device``, ...), from meshnn's
public surface, plus what only this module has: the arch questions ``is_wormhole_b0`` /
``is_blackhole`` / ``is_grayskull`` and the report and
kernel-cache switches, each kept in :data:`SWITCHES` (a simulated device compiles no kernels and
writes no reports of its own; the switches are recorded so a test can read them back); and, from
the mesh layer's modules by name (:data:`MESH_NAMES`), tt-metal 2026's dispatch-mode calls and the
real-time profiler's.

(``meshnn.device`` itself is meshnn's chip layer; under the alias ``ttnn.device`` is this module.)

Layers: imports the public root and :mod:`meshnn.errors`.
"""

from __future__ import annotations

import importlib

import meshnn
from meshnn import (  # noqa: F401 - re-exported as ttnn.device's names
    DEFAULT_L1_SMALL_SIZE,
    DEFAULT_TRACE_REGION_SIZE,
    DEFAULT_WORKER_L1_SIZE,
    Arch,
    ClearDefaultDevice,
    CloseDevice,
    CloseDevices,
    CreateDevice,
    CreateDevices,
    Device,
    DispatchCoreAxis,
    DispatchCoreConfig,
    DispatchCoreType,
    GetDefaultDevice,
    GetNumAvailableDevices,
    GetNumPCIeDevices,
    GetPCIeDeviceID,
    ReadDeviceProfiler,
    SetDefaultDevice,
    close_device,
    disable_asynchronous_slow_dispatch,
    dump_device_memory_state,
    enable_asynchronous_slow_dispatch,
    get_allocator_base_address,
    get_arch_name,
    get_memory_view,
    get_optimal_dram_bank_to_logical_worker_assignment,
    manage_device,
    open_device,
    synchronize_device,
)
from meshnn.errors import MeshnnTypeError

SWITCHES: dict[str, bool] = {"persistent_kernel_cache": False, "compilation_reports": False, "memory_reports": False}


def _arch_is(device: object, name: str) -> bool:
    if device is None:
        return get_arch_name() == name
    if not isinstance(device, meshnn.MeshDevice):
        raise MeshnnTypeError(f"is_{name}: device must be a ttnn.Device, got {type(device).__name__}")
    return device.arch().value == name


def is_wormhole_b0(device: meshnn.MeshDevice | None = None) -> bool:
    return _arch_is(device, "wormhole_b0")


def is_blackhole(device: meshnn.MeshDevice | None = None) -> bool:
    return _arch_is(device, "blackhole")


def is_grayskull(device: meshnn.MeshDevice | None = None) -> bool:
    """False on every simulated system (none is a Grayskull)."""
    return _arch_is(device, "grayskull")


def _switch(name: str, on: bool):
    def switch() -> None:
        SWITCHES[name] = on

    return switch


EnablePersistentKernelCache = _switch("persistent_kernel_cache", True)
DisablePersistentKernelCache = _switch("persistent_kernel_cache", False)
EnableCompilationReports = _switch("compilation_reports", True)
DisableCompilationReports = _switch("compilation_reports", False)
EnableMemoryReports = _switch("memory_reports", True)
DisableMemoryReports = _switch("memory_reports", False)


def ClearKernelCache() -> None:
    """Nothing to clear: a simulated device compiles no kernels."""


def DeallocateBuffers(device: meshnn.MeshDevice) -> None:
    """Free every buffer allocated on ``device`` (tensors still holding one become deallocated),
    as tt-metal's ``DeallocateBuffers``; the queues drain first."""
    if not isinstance(device, meshnn.MeshDevice):
        raise MeshnnTypeError(f"ttnn.device.DeallocateBuffers: device must be a MeshDevice, got {device!r}")
    device.quiesce_devices()
    for buffer in device.live_buffers():
        buffer.deallocated_at = "ttnn.device.DeallocateBuffers"
        buffer.deallocate()


MESH_NAMES = {
    "meshnn.mesh.dispatch_mode": (
        "is_asynchronous_slow_dispatch_enabled",
        "initialize_fast_dispatch",
        "terminate_fast_dispatch",
        "setup_fast_dispatch",
    ),
    "meshnn.mesh.realtime_profiler": (
        "ProgramRealtimeRecord",
        "RegisterProgramRealtimeProfilerCallback",
        "UnregisterProgramRealtimeProfilerCallback",
        "IsProgramRealtimeProfilerActive",
    ),
}
"""ttnn.device's names that only it has (not ttnn's top level), each from its mesh-layer module."""

for _module, _names in MESH_NAMES.items():
    globals().update({name: getattr(importlib.import_module(_module), name) for name in _names})
