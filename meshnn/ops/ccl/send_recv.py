"""``ttnn.experimental.send_async`` / ``recv_async``: a tensor's shards sent through a socket
(:mod:`meshnn.mesh.socket`) from a sender mesh to a tensor of a receiver mesh.

``send_async(input_tensor, mesh_socket)`` puts, for each of the socket's connections, the shard of
its sender device; ``recv_async(output_tensor, mesh_socket)`` writes each connection's shard into
its receiver device's shard of ``output_tensor``, byte for byte, in the order of the sends.  Both
return an empty list, as ttnn's do.  The older binding (tt-metal of 2025) takes the mesh and the
config instead, ``send_async(input_tensor, mesh_device, socket_config)``, and makes the socket end
for the call; its ends pair by equal configs.

``send_direct_async(input_tensor, mesh_socket)`` / ``recv_direct_async(output_tensor, mesh_socket,
*, wait_only=False)`` (tt-metal of 2026) move the same bytes, but ttnn's sender writes the pages
straight into the receiver's output tensor: the socket's FIFO carries only the address handshake
and the completion page, so it must live in L1 and need not hold a page.  A direct send pairs with
a direct receive only (on a device the other pairing waits forever; here it is an error), and a
receive with ``wait_only`` (no address write-back) needs a send given ``static_dst_address``, the
output's own buffer address.

ttnn's checks: the socket is a sender (a receiver) socket; its ``fifo_size`` holds one aligned
page of the tensor (the direct ops: its storage is L1); every device of the tensor's mesh is a
device of one of the socket's connections on that end; the tensor is on the socket's mesh.  A
receive checks that each shard it takes is the size of the output's shard.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs and registry, and the point-to-point module's one-process check.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.socket import MeshSocket, legacy_end
from meshnn.mesh.socket_config import SocketConfig, SocketEndpoint
from meshnn.ops.ccl.point_to_point import local_only
from meshnn.ops.checks import device_input
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

DIRECT_OPS = ("send_direct_async", "recv_direct_async")
_DIRECT_MARK = 0x5D1EC7  # the last item of a direct send's payload: this mark, then its static address or -1


def _direct_tag(static_dst_address: int | None) -> np.ndarray:
    address = -1 if static_dst_address is None else static_dst_address
    return np.array([_DIRECT_MARK, address], dtype=np.int64).view(np.uint8)


def _direct_of(payload: list[np.ndarray], shards: int) -> tuple[bool, int | None]:
    """(whether ``payload`` came from a direct send, its static destination address or None)."""
    if len(payload) != shards + 1:
        return False, None
    tag = payload[-1].view(np.int64) if payload[-1].size == 16 else None
    if tag is None or tag[0] != _DIRECT_MARK:
        return False, None
    return True, None if tag[1] < 0 else int(tag[1])


def _end(op: str, socket: object, socket_config: object, endpoint: SocketEndpoint) -> tuple[MeshDevice, SocketConfig]:
    """The mesh and config of the call's socket end: a MeshSocket's, or (the older binding) the
    mesh and config given (not for the direct ops, which have no older binding)."""
    if isinstance(socket, MeshDevice) and op not in DIRECT_OPS:
        if not isinstance(socket_config, SocketConfig):
            raise MeshnnTypeError(
                f"ttnn.experimental.{op}: socket_config must be a ttnn.SocketConfig, got {socket_config!r}"
            )
        socket.check_open()
        return socket, socket_config
    if not isinstance(socket, MeshSocket):
        raise MeshnnTypeError(f"ttnn.experimental.{op}: mesh_socket must be a ttnn.MeshSocket, got {socket!r}")
    if socket_config is not None:
        raise MeshnnTypeError(f"ttnn.experimental.{op}: a MeshSocket carries its config; socket_config must be None")
    if socket.endpoint is not endpoint:
        raise MeshnnValueError(f"ttnn.experimental.{op}: {op} op requires a {endpoint.name} socket")
    if not socket.is_allocated():
        raise MeshnnValueError(f"ttnn.experimental.{op}: the socket's buffers are deallocated (its mesh was closed)")
    return socket.mesh_device, socket.config


def _rows(op: str, tensor: Tensor, mesh: MeshDevice, config: SocketConfig, sender: bool) -> tuple[list[int], int]:
    """For each connection, the index of its device on this end among the tensor's coordinates;
    and the bytes of one shard (after ttnn's checks)."""
    local_only(f"experimental.{op}", tensor.device())
    if tensor.device().mesh_id != mesh.mesh_id:
        raise MeshnnValueError(f"ttnn.experimental.{op}: the tensor is not on the socket's mesh device")
    alignment = mesh.system.arch_spec.l1_alignment
    page = -(-tensor.spec.page_size // alignment) * alignment
    fifo = config.socket_mem_config.fifo_size
    if op in DIRECT_OPS:
        if config.socket_mem_config.socket_storage_type is not BufferType.L1:
            raise MeshnnValueError(f"ttnn.experimental.{op}: {op} requires an L1 socket storage type")
    elif fifo < page:
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: {op} op requires a fifo size greater than or equal to the input tensor page size "
            f"({fifo} < {page} bytes)"
        )
    ends = [c.sender_core if sender else c.receiver_core for c in config.socket_connection_config]
    coords = list(tensor.storage.coords)  # type: ignore[union-attr]
    connected = {tuple(e.device_coord) for e in ends}
    if len(coords) != mesh.shape.mesh_size() or any(tuple(c) not in connected for c in coords):
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: {op} op input tensor devices {mesh.get_device_ids()} is not part of the "
            "connected cores of the socket"
        )
    index = {tuple(c): i for i, c in enumerate(coords)}
    return [index[tuple(e.device_coord)] for e in ends], tensor.spec.compute_packed_buffer_size_bytes()


def _prepared(op: str, name: str, value: object, socket: object, config: object, end: SocketEndpoint) -> tuple:
    """The checked tensor, the socket end (made now for the older binding, after every check),
    each connection's row and the shard bytes."""
    tensor = device_input(f"experimental.{op}", name, value)
    mesh, checked = _end(op, socket, config, end)
    rows, size = _rows(op, tensor, mesh, checked, end is SocketEndpoint.SENDER)
    made = socket if isinstance(socket, MeshSocket) else legacy_end(op, mesh, checked, end)
    return tensor, made, rows, size


@register(
    name="experimental.send_async", kind=OpKind.COLLECTIVE, family=OpFamily.POINT_TO_POINT, device_operation="SendAsync"
)
def send_async(
    input_tensor: Tensor, mesh_socket: MeshSocket, socket_config: SocketConfig | None = None
) -> list[Tensor]:
    """Each connection's shard of ``input_tensor`` sent through ``mesh_socket`` (see the module's text)."""
    return _send("send_async", input_tensor, mesh_socket, socket_config, None)


def _send(op: str, input_tensor: object, mesh_socket: object, socket_config: object, tag: np.ndarray | None) -> list:
    """A send: each connection's shard put on the socket's channel (then ``tag``, a direct send's)."""
    tensor, socket, rows, size = _prepared(
        op, "input_tensor", input_tensor, mesh_socket, socket_config, SocketEndpoint.SENDER
    )
    channel = socket.channel
    extra = [] if tag is None else [tag]

    def kernel(in_rows: list[np.ndarray], _out: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        channel.put([in_rows[0][row, :size].copy() for row in rows] + extra)

    coords = tensor.storage.coords  # type: ignore[union-attr]
    attrs = {"mesh_socket": socket, "hops": 1}
    launch(f"experimental.{op}", tensor.device(), [tensor], [], kernel, coords=coords, attrs=attrs)
    return []


@register(
    name="experimental.recv_async", kind=OpKind.COLLECTIVE, family=OpFamily.POINT_TO_POINT, device_operation="RecvAsync"
)
def recv_async(
    output_tensor: Tensor, mesh_socket: MeshSocket, socket_config: SocketConfig | None = None
) -> list[Tensor]:
    """``output_tensor``'s shards on the connections' receiver devices written with the oldest send's
    shards (see the module's text)."""
    op = "recv_async"
    end = SocketEndpoint.RECEIVER
    tensor, socket, rows, size = _prepared(op, "output_tensor", output_tensor, mesh_socket, socket_config, end)
    channel, name = socket.channel, f"experimental.{op}"

    def kernel(_in: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        payload = channel.take(name, [size] * len(rows))
        if _direct_of(payload, len(rows))[0]:
            raise MeshnnValueError(
                f"ttnn.{name}: a send_direct_async reached this socket; receive it with recv_direct_async"
            )
        _write_shards(name, payload, rows, size, out_rows)

    coords = tensor.storage.coords  # type: ignore[union-attr]
    attrs = {"mesh_socket": socket, "hops": 1}
    out = [Output(tensor.spec, coords=coords)]
    launch(name, tensor.device(), [], out, kernel, coords=coords, into=[tensor], attrs=attrs, waits=True)
    return []


def _write_shards(name: str, payload: list[np.ndarray], rows: list[int], size: int, out_rows: list) -> None:
    """Each connection's shard into its receiver device's row of the output."""
    for row, shard in zip(rows, payload, strict=True):
        if shard.size != size:
            raise MeshnnValueError(
                f"ttnn.{name}: a shard of {shard.size} bytes reached an output whose shards hold {size} bytes"
            )
        out_rows[0][row, :size] = shard


@register(
    name="experimental.send_direct_async",
    kind=OpKind.COLLECTIVE,
    family=OpFamily.POINT_TO_POINT,
    device_operation="SendDirectAsyncDeviceOperation",
)
def send_direct_async(
    input_tensor: Tensor, mesh_socket: MeshSocket, *, static_dst_address: int | None = None
) -> list[Tensor]:
    """``send_async`` written straight into the receiver's output (see the module's text);
    ``static_dst_address``: the receiver's output address, known ahead (for ``wait_only``)."""
    if static_dst_address is not None and (
        isinstance(static_dst_address, bool) or not isinstance(static_dst_address, int) or static_dst_address < 0
    ):
        raise MeshnnTypeError(
            f"ttnn.experimental.send_direct_async: static_dst_address must be a buffer address (int >= 0) or None, "
            f"got {static_dst_address!r}"
        )
    return _send("send_direct_async", input_tensor, mesh_socket, None, _direct_tag(static_dst_address))


@register(
    name="experimental.recv_direct_async",
    kind=OpKind.COLLECTIVE,
    family=OpFamily.POINT_TO_POINT,
    device_operation="RecvDirectAsyncDeviceOperation",
)
def recv_direct_async(output_tensor: Tensor, mesh_socket: MeshSocket, *, wait_only: bool = False) -> list[Tensor]:
    """``output_tensor`` written by the oldest ``send_direct_async`` (see the module's text);
    returns ``[output_tensor]``, as ttnn's does."""
    if not isinstance(wait_only, bool):
        raise MeshnnTypeError(f"ttnn.experimental.recv_direct_async: wait_only must be a bool, got {wait_only!r}")
    op = "recv_direct_async"
    end = SocketEndpoint.RECEIVER
    tensor, socket, rows, size = _prepared(op, "output_tensor", output_tensor, mesh_socket, None, end)
    channel, name = socket.channel, f"experimental.{op}"
    address = tensor.buffer_address()

    def kernel(_in: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        payload = channel.take(name, [size] * len(rows))
        direct, static = _direct_of(payload, len(rows))
        if not direct:
            raise MeshnnValueError(f"ttnn.{name}: a send_async reached this socket; receive it with recv_async")
        if wait_only and static is None:
            raise MeshnnValueError(
                f"ttnn.{name}: wait_only needs a send_direct_async given static_dst_address (nothing tells the "
                "sender where to write)"
            )
        if static is not None and static != address:
            raise MeshnnValueError(
                f"ttnn.{name}: the sender writes to static_dst_address {static}, but this output is at {address}"
            )
        _write_shards(name, payload[:-1], rows, size, out_rows)

    coords = tensor.storage.coords  # type: ignore[union-attr]
    attrs = {"mesh_socket": socket, "hops": 1, "wait_only": wait_only}
    out = [Output(tensor.spec, coords=coords)]
    launch(name, tensor.device(), [], out, kernel, coords=coords, into=[tensor], attrs=attrs, waits=True)
    return [tensor]
