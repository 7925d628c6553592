"""The configuration of a socket between meshes (:mod:`meshnn.mesh.socket`): its endpoints, its
connections (a sender core to a receiver core, each a device coordinate and a core) and the
receiver FIFO's memory, with ttnn's names and checks.  Frozen: a config pairs a socket's two
ends by equality.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` and the mesh layer's coordinates and
sub-devices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.sub_device import SubDeviceId


class H2DMode(Enum):
    """``ttnn.H2DMode``: how a host-to-device socket (``ttnn.H2DSocket``,
    :mod:`meshnn.mesh.hd_socket`) moves its pages."""

    HOST_PUSH = 0  # the host writes the device's FIFO (TLB writes)
    DEVICE_PULL = 1  # the device reads pinned host memory over PCIe


class SocketEndpoint(Enum):
    """``ttnn.SocketEndpoint``: which end of a socket."""

    SENDER = 0
    RECEIVER = 1


@dataclass(frozen=True)
class MeshCoreCoord:
    """``ttnn.MeshCoreCoord(device_coord, core_coord)``: one core of one device of a mesh."""

    device_coord: MeshCoordinate
    core_coord: CoreCoord

    def __post_init__(self) -> None:
        if not isinstance(self.device_coord, MeshCoordinate):
            raise MeshnnTypeError(
                f"MeshCoreCoord: device_coord must be a ttnn.MeshCoordinate, got {self.device_coord!r}"
            )
        if not isinstance(self.core_coord, CoreCoord):
            raise MeshnnTypeError(f"MeshCoreCoord: core_coord must be a ttnn.CoreCoord, got {self.core_coord!r}")


@dataclass(frozen=True)
class SocketConnection:
    """``ttnn.SocketConnection(sender_core, receiver_core)``."""

    sender_core: MeshCoreCoord
    receiver_core: MeshCoreCoord

    def __post_init__(self) -> None:
        for name in ("sender_core", "receiver_core"):
            if not isinstance(getattr(self, name), MeshCoreCoord):
                raise MeshnnTypeError(
                    f"SocketConnection: {name} must be a ttnn.MeshCoreCoord, got {getattr(self, name)!r}"
                )


@dataclass(frozen=True)
class SocketMemoryConfig:
    """``ttnn.SocketMemoryConfig(socket_storage_type, fifo_size, sender_sub_device=None,
    receiver_sub_device=None)``: the receiver's FIFO (L1 or DRAM, bytes per core)."""

    socket_storage_type: BufferType
    fifo_size: int
    sender_sub_device: SubDeviceId | None = None
    receiver_sub_device: SubDeviceId | None = None

    def __post_init__(self) -> None:
        if self.socket_storage_type not in (BufferType.L1, BufferType.DRAM):
            raise MeshnnValueError(
                "SocketMemoryConfig: socket_storage_type must be BufferType.L1 or DRAM, "
                f"got {self.socket_storage_type!r}"
            )
        size = self.fifo_size
        if isinstance(size, bool) or not isinstance(size, int | np.integer) or not 0 < size < 1 << 32:
            raise MeshnnValueError(f"SocketMemoryConfig: fifo_size must be a positive uint32 (bytes), got {size!r}")
        for name in ("sender_sub_device", "receiver_sub_device"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, SubDeviceId):
                raise MeshnnTypeError(f"SocketMemoryConfig: {name} must be a ttnn.SubDeviceId or None, got {value!r}")


@dataclass(frozen=True, init=False)
class SocketConfig:
    """``ttnn.SocketConfig(connections, memory_config, sender_rank=None, receiver_rank=None)`` or
    ``SocketConfig(connections, memory_config, sender_mesh_id, receiver_mesh_id)``."""

    socket_connection_config: tuple[SocketConnection, ...]
    socket_mem_config: SocketMemoryConfig
    sender_rank: int | None
    receiver_rank: int | None
    sender_mesh_id: int | None
    receiver_mesh_id: int | None

    def __init__(
        self,
        connections: Sequence[SocketConnection],
        memory_config: SocketMemoryConfig,
        sender_rank: int | None = None,
        receiver_rank: int | None = None,
        *,
        sender_mesh_id: int | None = None,
        receiver_mesh_id: int | None = None,
    ) -> None:
        if not isinstance(connections, list | tuple) or not all(isinstance(c, SocketConnection) for c in connections):
            raise MeshnnTypeError(
                f"SocketConfig: connections must be a list of ttnn.SocketConnection, got {connections!r}"
            )
        if not connections:
            raise MeshnnValueError("SocketConfig: Socket connection config cannot be empty.")
        if not isinstance(memory_config, SocketMemoryConfig):
            raise MeshnnTypeError(
                f"SocketConfig: memory_config must be a ttnn.SocketMemoryConfig, got {memory_config!r}"
            )
        ids = {"sender_rank": sender_rank, "receiver_rank": receiver_rank}
        ids |= {"sender_mesh_id": sender_mesh_id, "receiver_mesh_id": receiver_mesh_id}
        for name, value in ids.items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise MeshnnTypeError(f"SocketConfig: {name} must be a non-negative int or None, got {value!r}")
        if (sender_mesh_id is None) != (receiver_mesh_id is None):
            raise MeshnnValueError("SocketConfig must specify both sender and receiver mesh IDs or neither.")
        object.__setattr__(self, "socket_connection_config", tuple(connections))
        object.__setattr__(self, "socket_mem_config", memory_config)
        for name, value in ids.items():
            object.__setattr__(self, name, value)
