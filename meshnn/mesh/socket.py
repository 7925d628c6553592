"""Sockets between meshes (``ttnn.MeshSocket``): a one-way channel from cores of a sender mesh to
cores of a receiver mesh, as tt-metal makes them, for ``ttnn.experimental.send_async`` /
``recv_async``.

A :class:`SocketConfig` lists :class:`SocketConnection` s, each a sender core
(:class:`MeshCoreCoord`: a device coordinate of the sender mesh and a core) and a receiver core of
the receiver mesh, and a :class:`SocketMemoryConfig` (where the receiver's FIFO lives: L1 or DRAM,
and its ``fifo_size`` bytes).  :func:`create_socket_pair` makes both ends, allocating what
tt-metal allocates, lock-step on each end's mesh:

- a config buffer, HEIGHT_SHARDED in L1 over the end's socket cores, one page per core: on a
  sender tt-metal's sender metadata (7 words, L1-aligned) and, per downstream receiver of the
  busiest sender core, an acknowledgement word and a downstream encoding (each L1-aligned); on a
  receiver the 11 words of a receiver's metadata;
- on the receiver, the data FIFO: ``fifo_size`` bytes on every worker core (L1) or every DRAM bank
  (DRAM), HEIGHT_SHARDED, one page per core.

Words that need no NoC coordinates are written as tt-metal writes them (the FIFO's address and
size, the peer's config address); NoC and fabric words stay 0.  The data moves through a
process-wide channel per pair (the simulator has no fabric): a send puts each connection's shard
in it, a receive takes them in order, waiting (``MESHNN_WAIT_TIMEOUT``) for a send still to come.
``MeshSocket(device, config)`` makes one end of a socket between MPI ranks
(:mod:`meshnn.mesh.socket_ranks`: its data moves over MPI).
Buffers live as long as the socket object.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.host`, :mod:`meshnn.device` and the mesh
layer's buffers, devices, system and the socket's config (:mod:`meshnn.mesh.socket_config`).
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

from meshnn.device.allocator import align_up
from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, ShardSpecBuffer, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError, QueueError
from meshnn.host.settings import wait_timeout
from meshnn.mesh.buffer_config import DeviceLocalBufferConfig, ReplicatedBufferConfig
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.socket_config import MeshCoreCoord, SocketConfig, SocketConnection, SocketEndpoint
from meshnn.mesh.socket_ranks import rank_channel, rank_end
from meshnn.mesh.system import FabricConfig

SENDER_MD_WORDS = 7
"""uint32 words of tt-metal's sender metadata: bytes sent, downstreams, write pointer, the
downstream's bytes-sent address, FIFO address and FIFO size, is-device-to-host."""

DOWNSTREAM_ENCODING_BYTES = 16
"""Bytes of one downstream's encoding on a sender (mesh id, chip id, NoC y, NoC x)."""

RECEIVER_MD_BYTES = 44
"""Bytes of tt-metal's receiver metadata: 6 words, then the packed upstream record (5 words)."""


class _Channel:
    """What a pair's sends put and its receives take, in order: per send, one byte array per
    connection (the sender device's shard)."""

    def __init__(self) -> None:
        self._items: deque[list[np.ndarray]] = deque()
        self._ready = threading.Condition()

    def put(self, payload: list[np.ndarray]) -> None:
        with self._ready:
            self._items.append(payload)
            self._ready.notify_all()

    def take(self, op: str, sizes: list[int] | None = None) -> list[np.ndarray]:
        """The oldest send's payload, waiting for one up to the wait timeout (``sizes``: the bytes
        the receiver expects per connection, checked by the caller)."""
        limit = wait_timeout()
        with self._ready:
            if not self._ready.wait_for(lambda: bool(self._items), timeout=limit):
                raise QueueError(
                    f"ttnn.{op}: no send_async reached this socket within {limit:g} s (MESHNN_WAIT_TIMEOUT); "
                    "a receive waits for its sender's send"
                )
            return self._items.popleft()


class MeshSocket:
    """One end of a socket on a mesh (see the module's text).  Made in pairs by
    :func:`create_socket_pair`."""

    __slots__ = ("channel", "config", "config_buffer", "data_buffer", "endpoint", "mesh_device")

    def __init__(self, device: object = None, config: object = None) -> None:
        """``ttnn.MeshSocket(device, socket_config)``: this rank's end of a socket between MPI ranks
        (:mod:`meshnn.mesh.socket_ranks`); two ends in one process are made together by
        ``ttnn.create_socket_pair``."""
        if not isinstance(device, MeshDevice):
            raise MeshnnTypeError(f"MeshSocket: device must be a MeshDevice, got {type(device).__name__}")
        device.check_open()
        if not isinstance(config, SocketConfig):
            raise MeshnnTypeError(f"MeshSocket: socket_config must be a ttnn.SocketConfig, got {config!r}")
        if not device.all_local:
            raise MeshnnValueError(
                "MeshSocket: this mesh is shared by the MPI ranks (rows dealt to ranks); a socket between ranks "
                "joins each rank's own mesh: launch with tt-run and a rank binding (TT_MESH_ID)"
            )
        endpoint = rank_end(config)
        sender = endpoint is SocketEndpoint.SENDER
        _check_end(config, device, sender)
        buffers = _end_buffers(device, config, sender)  # before the channel's number: a failure leaves none used
        self.mesh_device, self.config, self.endpoint = device, config, endpoint
        self.config_buffer, self.data_buffer = buffers
        self.channel = rank_channel(config)

    def get_config_buffer_address(self) -> int:
        """The L1 address of this end's config pages (the same on every socket core and device)."""
        return self.config_buffer.address()

    def get_active_cores(self) -> list[MeshCoreCoord]:
        """The cores of this end, one per connection."""
        sender = self.endpoint is SocketEndpoint.SENDER
        return [c.sender_core if sender else c.receiver_core for c in self.config.socket_connection_config]

    def get_mesh_device(self) -> MeshDevice:
        return self.mesh_device

    def get_connection_config(self) -> list[SocketConnection]:
        return list(self.config.socket_connection_config)

    def get_config(self) -> SocketConfig:
        return self.config

    def get_socket_endpoint_type(self) -> SocketEndpoint:
        return self.endpoint

    def get_data_buffer_address(self) -> int:
        """The address of the receiver's FIFO (a sender has none)."""
        if self.data_buffer is None:
            raise MeshnnValueError("MeshSocket: a sender socket has no data buffer")
        return self.data_buffer.address()

    def is_allocated(self) -> bool:
        return self.config_buffer.is_allocated() and (self.data_buffer is None or self.data_buffer.is_allocated())

    def __repr__(self) -> str:
        return f"MeshSocket({self.endpoint.name}, {len(self.config.socket_connection_config)} connections)"


def _cores(config: SocketConfig, sender: bool) -> list[CoreCoord]:
    """The distinct cores of one end, in first-use order."""
    cores: list[CoreCoord] = []
    for c in config.socket_connection_config:
        core = (c.sender_core if sender else c.receiver_core).core_coord
        if core not in cores:
            cores.append(core)
    return cores


def _check_end(config: SocketConfig, mesh: MeshDevice, sender: bool) -> None:
    name = "sender" if sender else "receiver"
    grid, shape, used = mesh.compute_with_storage_grid_size(), tuple(mesh.shape), set()
    for c in config.socket_connection_config:
        end = c.sender_core if sender else c.receiver_core
        coord, core = tuple(end.device_coord), end.core_coord
        if len(coord) != len(shape) or any(not 0 <= a < d for a, d in zip(coord, shape, strict=True)):
            raise MeshnnValueError(
                f"create_socket_pair: {name} device {coord} is not a device of the {list(shape)} mesh"
            )
        if not (0 <= core.x < grid.x and 0 <= core.y < grid.y):
            raise MeshnnValueError(
                f"create_socket_pair: {name} core ({core.x}, {core.y}) is outside the {grid.x}x{grid.y} worker grid"
            )
        if not sender and (coord, core) in used:
            raise MeshnnValueError("create_socket_pair: Cannot reuse receiver cores in a single socket.")
        used.add((coord, core))


def _check_fabric(config: SocketConfig, sender: MeshDevice, receiver: MeshDevice) -> None:
    """A connection between two devices needs the fabric (tt-metal's check); one within a device does not."""
    if sender.fabric_config not in (None, FabricConfig.DISABLED):
        return
    for c in config.socket_connection_config:
        if sender.get_device_id(c.sender_core.device_coord) != receiver.get_device_id(c.receiver_core.device_coord):
            raise MeshnnValueError(
                "create_socket_pair: Can only create multi-device sockets with fabric enabled "
                "(ttnn.set_fabric_config before the mesh opens, or device_params' fabric_config)"
            )


def _height_sharded(mesh: MeshDevice, cores: list[CoreCoord], page: int, buffer_type: BufferType) -> MeshBuffer:
    grid = CoreRangeSet([CoreRange(c, c) for c in cores])
    shards = ShardSpecBuffer(ShardSpec(grid, (1, 1), ShardOrientation.ROW_MAJOR), (1, 1), (len(cores), 1))
    local = DeviceLocalBufferConfig(page, buffer_type, TensorMemoryLayout.HEIGHT_SHARDED, shards)
    return MeshBuffer.create(ReplicatedBufferConfig(page * len(cores)), local, mesh)


def _downstreams(config: SocketConfig) -> dict[MeshCoreCoord, int]:
    """Receivers per sender core (a device's core)."""
    per_core: dict[MeshCoreCoord, int] = {}
    for c in config.socket_connection_config:
        per_core[c.sender_core] = per_core.get(c.sender_core, 0) + 1
    return per_core


def _sender_page(config: SocketConfig, alignment: int) -> int:
    downstreams = max(_downstreams(config).values())
    md = align_up(4 * SENDER_MD_WORDS, alignment)
    return md + downstreams * (align_up(4, alignment) + align_up(DOWNSTREAM_ENCODING_BYTES, alignment))


def _data_cores(mesh: MeshDevice, storage: BufferType) -> list[CoreCoord]:
    grid = mesh.dram_grid_size() if storage is BufferType.DRAM else mesh.compute_with_storage_grid_size()
    return [CoreCoord(x, y) for y in range(grid.y) for x in range(grid.x)]


def _end(
    mesh: MeshDevice, config: SocketConfig, endpoint: SocketEndpoint, buffers: tuple, channel: _Channel
) -> MeshSocket:
    socket = object.__new__(MeshSocket)
    socket.mesh_device, socket.config, socket.endpoint, socket.channel = mesh, config, endpoint, channel
    socket.config_buffer, socket.data_buffer = buffers
    return socket


def _write_configs(send: MeshSocket, receive: MeshSocket, page: int, alignment: int) -> None:
    """The config words tt-metal writes that need no NoC or fabric coordinates."""
    config = send.config
    fifo, size = receive.data_buffer.address(), config.socket_mem_config.fifo_size  # type: ignore[union-attr]
    send_cores, recv_cores = _cores(config, True), _cores(config, False)
    words = np.zeros(page * len(send_cores) // 4, dtype=np.uint32)
    per_core = _downstreams(config)  # (a replicated page: a core's count on its busiest device)
    downstreams = [max(n for end, n in per_core.items() if end.core_coord == core) for core in send_cores]
    for i, n in enumerate(downstreams):
        at = i * page // 4
        words[at : at + SENDER_MD_WORDS] = (0, n, fifo, receive.get_config_buffer_address(), fifo, size, 0)
    send.mesh_device.mesh_command_queue(0).enqueue_write_mesh_buffer(send.config_buffer, words.view(np.uint8))
    recv_page = align_up(RECEIVER_MD_BYTES, alignment)
    words = np.zeros(recv_page * len(recv_cores) // 4, dtype=np.uint32)
    acked = send.get_config_buffer_address() + align_up(4 * SENDER_MD_WORDS, alignment)
    for i in range(len(recv_cores)):
        at = i * recv_page // 4
        words[at : at + 6] = (0, fifo, fifo, size, 0, 0)
        words[at + 10] = acked  # the upstream's bytes-acked address
    receive.mesh_device.mesh_command_queue(0).enqueue_write_mesh_buffer(receive.config_buffer, words.view(np.uint8))


def _end_buffers(mesh: MeshDevice, config: SocketConfig, sender: bool) -> tuple[MeshBuffer, MeshBuffer | None]:
    """One end's buffers on ``mesh``: its config pages, and on a receiver the FIFO (none on a sender);
    an allocation that fails frees the one made before it."""
    if sender:
        page = _sender_page(config, mesh.system.arch_spec.l1_alignment)
        return _height_sharded(mesh, _cores(config, True), page, BufferType.L1), None
    pages = _height_sharded(mesh, _cores(config, False), RECEIVER_MD_BYTES, BufferType.L1)
    memory = config.socket_mem_config
    try:
        storage = memory.socket_storage_type
        return pages, _height_sharded(mesh, _data_cores(mesh, storage), memory.fifo_size, storage)
    except BaseException:
        pages.deallocate()
        raise


def create_socket_pair(
    sender_mesh_device: MeshDevice, receiver_mesh_device: MeshDevice, socket_config: SocketConfig
) -> tuple[MeshSocket, MeshSocket]:
    """``ttnn.create_socket_pair``: the sender and receiver sockets of ``socket_config`` between two
    meshes of this process (they may be the same mesh); see the module's text."""
    for name, mesh in (("sender_mesh_device", sender_mesh_device), ("receiver_mesh_device", receiver_mesh_device)):
        if not isinstance(mesh, MeshDevice):
            raise MeshnnTypeError(f"create_socket_pair: {name} must be a MeshDevice, got {type(mesh).__name__}")
        mesh.check_open()
    if not isinstance(socket_config, SocketConfig):
        raise MeshnnTypeError(f"create_socket_pair: socket_config must be a ttnn.SocketConfig, got {socket_config!r}")
    _check_end(socket_config, sender_mesh_device, True)
    _check_end(socket_config, receiver_mesh_device, False)
    _check_fabric(socket_config, sender_mesh_device, receiver_mesh_device)
    sent = _end_buffers(sender_mesh_device, socket_config, True)
    try:
        received = _end_buffers(receiver_mesh_device, socket_config, False)
    except BaseException:
        sent[0].deallocate()  # out of memory leaves the allocators as they were
        raise
    channel = _Channel()
    send = _end(sender_mesh_device, socket_config, SocketEndpoint.SENDER, sent, channel)
    receive = _end(receiver_mesh_device, socket_config, SocketEndpoint.RECEIVER, received, channel)
    _write_configs(send, receive, send.config_buffer.page_size(), sender_mesh_device.system.arch_spec.l1_alignment)
    return send, receive


_LEGACY_CHANNELS: dict[SocketConfig, _Channel] = {}
"""The older binding's channels, one per config: its send and receive ends pair by equal configs."""


def legacy_end(op: str, mesh: MeshDevice, config: SocketConfig, endpoint: SocketEndpoint) -> MeshSocket:
    """One end made for one call of the older binding (``send_async(tensor, mesh_device,
    socket_config)``, tt-metal of 2025): its buffers on ``mesh``, as :func:`create_socket_pair`
    makes them, freed with the socket after the call; its channel the config's."""
    mesh.check_open()
    sender = endpoint is SocketEndpoint.SENDER
    _check_end(config, mesh, sender)
    buffers = _end_buffers(mesh, config, sender)
    channel = _LEGACY_CHANNELS.setdefault(config, _Channel())
    return _end(mesh, config, endpoint, buffers, channel)
