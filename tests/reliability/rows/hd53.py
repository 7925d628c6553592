"""Bad calls of the host <-> device sockets (``ttnn.H2DSocket``, ``ttnn.D2HSocket``) and their ops
(``ttnn.experimental.recv_async_h2d`` / ``send_async_d2h``): refused before any buffer is made.
The table's mesh is a Wormhole T3000 (PCIe alignment 32 bytes)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import CLOSED, TYPE, VALUE, Case

CC = ttnn.CoreCoord
L1, DRAM, PUSH = ttnn.BufferType.L1, ttnn.BufferType.DRAM, ttnn.H2DMode.HOST_PUSH


def _core(x=0, y=0, coord=(0, 0)):
    return ttnn.MeshCoreCoord(ttnn.MeshCoordinate(*coord), ttnn.CoreCoord(x, y))


def rows() -> list[Case]:
    h2d, d2h, H, D = ttnn.H2DSocket, ttnn.D2HSocket, "H2DSocket", "D2HSocket"
    recv, send = ttnn.experimental.recv_async_h2d, ttnn.experimental.send_async_d2h
    return [
        Case(H, "mesh_device is a str", lambda e: h2d("mesh", _core(), L1, 256, PUSH), TYPE, "mesh_device"),
        Case(H, "recv_core is a CoreCoord", lambda e: h2d(e.mesh, CC(0, 0), L1, 64, PUSH), TYPE, "recv_core"),
        Case(H, "recv_core off the mesh", lambda e: h2d(e.mesh, _core(coord=(2, 0)), L1, 64, PUSH), VALUE, "recv_core"),
        Case(H, "recv_core off the grid", lambda e: h2d(e.mesh, _core(x=64), L1, 256, PUSH), VALUE, "recv_core"),
        Case(H, "fifo_size not PCIe-aligned", lambda e: h2d(e.mesh, _core(), L1, 100, PUSH), VALUE, "fifo_size"),
        Case(H, "fifo_size negative", lambda e: h2d(e.mesh, _core(), L1, -64, PUSH), TYPE, "fifo_size"),
        Case(H, "a DRAM FIFO", lambda e: h2d(e.mesh, _core(), DRAM, 256, PUSH), VALUE, "buffer_type"),
        Case(H, "buffer_type is a str", lambda e: h2d(e.mesh, _core(), "L1", 256, PUSH), TYPE, "buffer_type"),
        Case(H, "h2d_mode is a str", lambda e: h2d(e.mesh, _core(), L1, 256, "push"), TYPE, "h2d_mode"),
        Case(D, "sender_core is None", lambda e: d2h(e.mesh, None, 256), TYPE, "sender_core"),
        Case(D, "sender_core off the grid", lambda e: d2h(e.mesh, _core(y=64), 256), VALUE, "sender_core"),
        Case(D, "fifo_size not PCIe-aligned", lambda e: d2h(e.mesh, _core(), 48), VALUE, "fifo_size"),
        Case(D, "fifo_size is a float", lambda e: d2h(e.mesh, _core(), 256.0), TYPE, "fifo_size"),
        Case(D, "a closed mesh", lambda e: d2h(e.closed_mesh, _core(), 256), CLOSED, "closed"),
        Case("experimental.recv_async_h2d", "no socket", lambda e: recv(e.rm, None), TYPE, "h2d_socket"),
        Case("experimental.recv_async_h2d", "a mesh as the socket", lambda e: recv(e.rm, e.mesh), TYPE, "h2d_socket"),
        Case("experimental.send_async_d2h", "no socket", lambda e: send(e.rm, None), TYPE, "d2h_socket"),
        Case("experimental.send_async_d2h", "a mesh as the socket", lambda e: send(e.rm, e.mesh), TYPE, "d2h_socket"),
    ]  # fmt: skip
