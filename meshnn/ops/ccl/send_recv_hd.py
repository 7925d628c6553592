"""``ttnn.experimental.recv_async_h2d`` / ``send_async_d2h`` (tt-metal of 2026; not in ttnn 0.81.1):
a device tensor's pages streamed from an ``H2DSocket`` or to a ``D2HSocket``
(:mod:`meshnn.mesh.hd_socket`), one page at a time, on the socket's one device.

``recv_async_h2d(output_tensor, h2d_socket)`` returns ``[output_tensor]``: its kernel sets the
socket's receiver page size to the output's aligned page size, then takes each page from the FIFO
(waiting for the host's ``write_tensor``: the op is dispatched first and runs on the queue's
dispatch thread, as ttnn's kernel parks in ``socket_wait_for_pages``) and writes it, unchanged, to
page ``i`` of the output on the socket's device.  ``send_async_d2h(input_tensor, d2h_socket)``
returns ``[]``: its kernel sets the sender page size and puts each page of the input on the socket's
device into the FIFO, waiting for space the host's reads free.  A page moves with its aligned size;
the bytes past the tensor's own page size are 0 on the way out and dropped on the way in.

ttnn's checks, in its order: the socket is an H2DSocket (a D2HSocket); an H2D socket is
``HOST_PUSH``; the tensor is on device; the socket is the owner (it has a mesh device, not a
``connect`` ed connector); the socket's page size, when set, equals the tensor's aligned page size;
the socket's device is one of the tensor's devices.  meshnn also requires the tensor to be on the
socket's mesh (ttnn would run the kernel on another mesh's device with this one's addresses).

Timed by the perf model as one hop of the tensor's pages over a link (family POINT_TO_POINT, as
``send_async`` / ``recv_async``): the PCIe link is not modelled apart.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs and registry.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.hd_socket import D2HSocket, H2DMode, H2DSocket
from meshnn.ops.ccl.point_to_point import local_only
from meshnn.ops.checks import device_input
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor


def _checked(op: str, name: str, value: object, socket: H2DSocket | D2HSocket, noun: str) -> tuple[Tensor, int, int]:
    """The tensor (after ttnn's checks), the row of the socket's device among its coordinates and
    its aligned page size."""
    tensor = device_input(f"experimental.{op}", name, value)
    if socket.get_mesh_device() is None:
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: {type(socket).__name__} has no MeshDevice; this op requires the owner-side "
            "socket, not a cross-process connector"
        )
    if not socket.is_allocated():
        raise MeshnnValueError(f"ttnn.experimental.{op}: the socket's buffers are deallocated (its mesh was closed)")
    local_only(f"experimental.{op}", tensor.device())
    page = tensor.buffer_aligned_page_size()
    socket_page = socket.get_page_size()
    if socket_page not in (0, page):
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: {type(socket).__name__} page size ({socket_page}) must equal {noun} tensor "
            f"aligned page size ({page}) when set"
        )
    core = socket.get_active_cores()[0]
    coords = [tuple(c) for c in tensor.storage.coords]  # type: ignore[union-attr]
    if tuple(core.device_coord) not in coords:
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: {type(socket).__name__} device coordinate is not part of the {noun} tensor's "
            "coordinate set"
        )
    if tensor.device().mesh_id != socket.get_mesh_device().mesh_id:  # type: ignore[union-attr]
        raise MeshnnValueError(f"ttnn.experimental.{op}: the tensor is not on the socket's mesh device")
    return tensor, coords.index(tuple(core.device_coord)), page


@register(
    name="experimental.recv_async_h2d",
    kind=OpKind.COLLECTIVE,
    family=OpFamily.POINT_TO_POINT,
    device_operation="RecvAsyncH2DDeviceOperation",
)
def recv_async_h2d(output_tensor: Tensor, h2d_socket: H2DSocket) -> list[Tensor]:
    """``output_tensor``'s pages on the socket's device received from ``h2d_socket`` (see the
    module's text); returns ``[output_tensor]``."""
    op = "recv_async_h2d"
    if not isinstance(h2d_socket, H2DSocket):
        raise MeshnnTypeError(f"ttnn.experimental.{op}: h2d_socket must be a ttnn.H2DSocket, got {h2d_socket!r}")
    if h2d_socket.get_h2d_mode() is not H2DMode.HOST_PUSH:
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: recv_async_h2d currently onlys supports HOST_PUSH H2DMode, but got "
            f"{h2d_socket.get_h2d_mode().name}"
        )
    tensor, row, page = _checked(op, "output_tensor", output_tensor, h2d_socket, "output")
    raw, pages, fifo, name = tensor.spec.page_size, tensor.buffer_num_pages(), h2d_socket.fifo, f"experimental.{op}"

    def kernel(_in: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        fifo.set_consumer_page_size(page, f"ttnn.{name}")
        out = out_rows[0][row]
        for i in range(pages):
            out[i * raw : (i + 1) * raw] = fifo.pop_page(f"ttnn.{name}")[:raw]

    coords = tensor.storage.coords  # type: ignore[union-attr]
    attrs = {"h2d_socket": h2d_socket, "hops": 1}
    out = [Output(tensor.spec, coords=coords)]
    launch(name, tensor.device(), [], out, kernel, coords=coords, into=[tensor], attrs=attrs, waits=True)
    return [tensor]


@register(
    name="experimental.send_async_d2h",
    kind=OpKind.COLLECTIVE,
    family=OpFamily.POINT_TO_POINT,
    device_operation="SendAsyncD2HDeviceOperation",
)
def send_async_d2h(input_tensor: Tensor, d2h_socket: D2HSocket) -> list[Tensor]:
    """``input_tensor``'s pages on the socket's device sent into ``d2h_socket`` (see the module's
    text); returns ``[]``."""
    op = "send_async_d2h"
    if not isinstance(d2h_socket, D2HSocket):
        raise MeshnnTypeError(f"ttnn.experimental.{op}: d2h_socket must be a ttnn.D2HSocket, got {d2h_socket!r}")
    tensor, row, page = _checked(op, "input_tensor", input_tensor, d2h_socket, "input")
    raw, pages, fifo, name = tensor.spec.page_size, tensor.buffer_num_pages(), d2h_socket.fifo, f"experimental.{op}"

    def kernel(in_rows: list[np.ndarray], _out: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        fifo.set_producer_page_size(page)
        source, staged = in_rows[0][row], np.zeros(page, dtype=np.uint8)
        for i in range(pages):
            staged[:raw] = source[i * raw : (i + 1) * raw]
            fifo.push_page(staged, f"ttnn.{name}")

    coords = tensor.storage.coords  # type: ignore[union-attr]
    attrs = {"d2h_socket": d2h_socket, "hops": 1}
    launch(name, tensor.device(), [tensor], [], kernel, coords=coords, attrs=attrs, waits=True)
    return []
