"""MANY chips in lock-step: mesh coordinates, devices, buffers, queues and workloads.

Layers: the mesh layer may import :mod:`meshnn.errors`, ``meshnn.host``, :mod:`meshnn.device` and
:mod:`meshnn.distributed`.
"""

from meshnn.mesh.buffer_config import (
    BufferRegion,
    DeviceLocalBufferConfig,
    MeshBufferLayout,
    ReplicatedBufferConfig,
    ShardedBufferConfig,
)
from meshnn.mesh.command_queue import MeshCommandQueue
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange, MeshShape, to_linear_index
from meshnn.mesh.events import MeshEvent, event_query, event_synchronize
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import Device, MeshDevice, close_mesh_device, open_mesh_device, synchronize_device
from meshnn.mesh.range_set import MeshCoordinateRangeSet, subtract
from meshnn.mesh.transfers import HostDecoder, HostEncoder, ShardDataTransfer
from meshnn.mesh.workload import MeshWorkload, Program, ProgramContext

__all__ = [
    "BufferRegion",
    "Device",
    "DeviceLocalBufferConfig",
    "HostDecoder",
    "HostEncoder",
    "MeshBuffer",
    "MeshBufferLayout",
    "MeshCommandQueue",
    "MeshCoordinate",
    "MeshCoordinateRange",
    "MeshCoordinateRangeSet",
    "MeshDevice",
    "MeshEvent",
    "MeshShape",
    "MeshWorkload",
    "Program",
    "ProgramContext",
    "ReplicatedBufferConfig",
    "ShardDataTransfer",
    "ShardedBufferConfig",
    "close_mesh_device",
    "event_query",
    "event_synchronize",
    "open_mesh_device",
    "subtract",
    "synchronize_device",
    "to_linear_index",
]
