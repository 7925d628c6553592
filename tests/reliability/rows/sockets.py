"""Bad calls of sockets: ``ttnn.create_socket_pair``, the socket configs, and
``ttnn.experimental.send_async`` / ``recv_async`` (both bindings).  ``e.sockets`` is a pair over
``e.mesh`` (2x4) from core (0, 0) to core (0, 1) of each device, FIFO 10 KiB in L1;
``e.small_fifo_sockets`` the same with a 64-byte FIFO (smaller than a page)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import CLOSED, DEAD, TYPE, VALUE, Case

C, CC = ttnn.MeshCoordinate, ttnn.CoreCoord
L1 = ttnn.BufferType.L1


def _connections(shape, send=(0, 0), receive=(0, 1)) -> list[ttnn.SocketConnection]:
    return [
        ttnn.SocketConnection(ttnn.MeshCoreCoord(c, CC(*send)), ttnn.MeshCoreCoord(c, CC(*receive)))
        for c in ttnn.MeshCoordinateRange(shape)
    ]


def _config(connections, fifo: int = 10 * 1024) -> ttnn.SocketConfig:
    return ttnn.SocketConfig(connections, ttnn.SocketMemoryConfig(L1, fifo))


def socket_pairs(mesh) -> tuple[tuple, tuple]:
    """The env's two pairs (made before the env fills L1)."""
    return (
        ttnn.create_socket_pair(mesh, mesh, _config(_connections(mesh.shape))),
        ttnn.create_socket_pair(mesh, mesh, _config(_connections(mesh.shape), fifo=64)),
    )


def _pair(e, connections, fifo: int = 10 * 1024):
    return ttnn.create_socket_pair(e.mesh, e.mesh, _config(connections, fifo))


def _end(device: tuple, core: tuple) -> ttnn.MeshCoreCoord:
    return ttnn.MeshCoreCoord(C(*device), CC(*core))


def _reused(e) -> list[ttnn.SocketConnection]:
    return [ttnn.SocketConnection(_end((0, i), (0, 0)), _end((0, 0), (0, 1))) for i in range(2)]


def rows() -> list[Case]:
    send, recv, pair = "experimental.send_async", "experimental.recv_async", "create_socket_pair"
    sender, receiver = (lambda e: e.sockets[0]), (lambda e: e.sockets[1])
    shape = lambda e: e.mesh.shape  # noqa: E731
    return [
        Case(
            send, "a receiver socket", lambda e: ttnn.experimental.send_async(e.a, receiver(e)), VALUE, "SENDER socket"
        ),
        Case(recv, "a sender socket", lambda e: ttnn.experimental.recv_async(e.a, sender(e)), VALUE, "RECEIVER socket"),
        Case(send, "socket is a string", lambda e: ttnn.experimental.send_async(e.a, "socket"), TYPE, "mesh_socket"),
        Case(
            send,
            "config beside a socket",
            lambda e: ttnn.experimental.send_async(e.a, sender(e), _config(_connections(shape(e)))),
            TYPE,
            "socket_config",
        ),
        Case(
            send,
            "older binding, no config",
            lambda e: ttnn.experimental.send_async(e.a, e.mesh, "c"),
            TYPE,
            "socket_config",
        ),
        Case(
            send,
            "input on another mesh",
            lambda e: ttnn.experimental.send_async(e.other, sender(e)),
            VALUE,
            "socket's mesh",
        ),
        Case(
            send, "input deallocated", lambda e: ttnn.experimental.send_async(e.freed, sender(e)), DEAD, "input_tensor"
        ),
        Case(
            send,
            "FIFO smaller than a page",
            lambda e: ttnn.experimental.send_async(e.a, e.small_fifo_sockets[0]),
            VALUE,
            "fifo size",
        ),
        Case(
            pair,
            "sender device outside the mesh",
            lambda e: _pair(e, [ttnn.SocketConnection(_end((0, 4), (0, 0)), _end((0, 0), (0, 1)))]),
            VALUE,
            "sender device",
        ),
        Case(pair, "receiver core used twice", lambda e: _pair(e, _reused(e)), VALUE, "receiver cores"),
        Case(pair, "core outside the grid", lambda e: _pair(e, _connections(shape(e), send=(0, 40))), VALUE, "core"),
        Case(pair, "config is a list", lambda e: ttnn.create_socket_pair(e.mesh, e.mesh, []), TYPE, "socket_config"),
        Case(
            pair,
            "sender mesh closed",
            lambda e: ttnn.create_socket_pair(e.closed_sub, e.mesh, _config(_connections((1, 1)))),
            CLOSED,
            "closed",
        ),
        Case("SocketConfig", "no connections", lambda e: _config([]), VALUE, "connection"),
        Case(
            "SocketConfig",
            "one mesh id",
            lambda e: ttnn.SocketConfig(_connections(shape(e)), ttnn.SocketMemoryConfig(L1, 1024), sender_mesh_id=0),
            VALUE,
            "mesh IDs",
        ),
        Case(
            "SocketMemoryConfig",
            "L1_SMALL storage",
            lambda e: ttnn.SocketMemoryConfig(ttnn.BufferType.L1_SMALL, 1024),
            VALUE,
            "socket_storage_type",
        ),
        Case("SocketMemoryConfig", "fifo_size 0", lambda e: ttnn.SocketMemoryConfig(L1, 0), VALUE, "fifo_size"),
        Case(
            "SocketMemoryConfig",
            "sub-device an int",
            lambda e: ttnn.SocketMemoryConfig(L1, 1024, sender_sub_device=3),
            TYPE,
            "sender_sub_device",
        ),
        Case("MeshCoreCoord", "device a tuple", lambda e: ttnn.MeshCoreCoord((0, 0), CC(0, 0)), TYPE, "device_coord"),
        Case(
            "SocketConnection",
            "receiver a string",
            lambda e: ttnn.SocketConnection(_end((0, 0), (0, 0)), "core"),
            TYPE,
            "receiver_core",
        ),
        Case(  # the fabric a socket between devices needs
            "set_fabric_config",
            "reliability mode a string",
            lambda e: ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED, "strict"),
            TYPE,
            "reliability_mode",
        ),
        Case(pair, "no L1 left for the FIFO", lambda e: _pair(e, _connections(shape(e))), ttnn.OutOfMemoryError, "L1"),
    ]
