"""Bad calls of ``ttnn.MeshSocket(device, socket_config)``: one end of a socket between MPI ranks
(issue 30).  In one process every call is refused: there is no second rank."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import CLOSED, TYPE, VALUE, Case

CC = ttnn.CoreCoord


def _config(shape, *ranks: int) -> ttnn.SocketConfig:
    links = [
        ttnn.SocketConnection(ttnn.MeshCoreCoord(c, CC(0, 0)), ttnn.MeshCoreCoord(c, CC(0, 1)))
        for c in ttnn.MeshCoordinateRange(shape)
    ]
    return ttnn.SocketConfig(links, ttnn.SocketMemoryConfig(ttnn.BufferType.L1, 4096), *ranks)


def rows() -> list[Case]:
    name = "MeshSocket"
    socket = ttnn.MeshSocket
    return [
        Case(name, "config without ranks", lambda e: socket(e.mesh, _config(e.mesh.shape)), VALUE, "sender_rank"),
        Case(name, "ranks not of this run", lambda e: socket(e.mesh, _config(e.mesh.shape, 0, 1)), VALUE, "not ranks"),
        Case(name, "both ends one rank", lambda e: socket(e.mesh, _config(e.mesh.shape, 0, 0)), VALUE, "both 0"),
        Case(name, "device a string", lambda e: socket("mesh", _config(e.mesh.shape, 0, 1)), TYPE, "device"),
        Case(name, "config a list", lambda e: socket(e.mesh, []), TYPE, "socket_config"),
        Case(name, "mesh closed", lambda e: socket(e.closed_sub, _config((1, 1), 0, 1)), CLOSED, "closed"),
    ]
