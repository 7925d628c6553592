"""Host <-> device sockets (``ttnn.H2DSocket``, ``ttnn.D2HSocket``; ``ttnn.H2DMode`` is
:mod:`meshnn.mesh.socket_config`'s), as tt-metal
makes them (tt-metal of 2026; not in ttnn 0.81.1): a one-way page stream between the host and one
core of one device of a mesh, for ``ttnn.experimental.recv_async_h2d`` / ``send_async_d2h``.

``H2DSocket(mesh_device, recv_core, buffer_type, fifo_size, h2d_mode)``: the host writes pages, a
kernel on ``recv_core`` (a :class:`MeshCoreCoord`) reads them.  ``D2HSocket(mesh_device,
sender_core, fifo_size)``: a kernel on ``sender_core`` writes pages, the host reads them.  The FIFO
(:mod:`meshnn.mesh.hd_fifo`: the ring, tt-metal's ``bytes_sent`` / ``bytes_acked`` counters and
each side's page size and pointer) holds ``fifo_size`` bytes.

What tt-metal allocates, lock-step on the mesh: the config buffer in L1 on the socket core (an H2D
receiver's metadata, 44 bytes; a D2H sender's metadata, acknowledgement word and downstream
encoding, each L1-aligned), and for an ``HOST_PUSH`` H2D socket the data FIFO, ``fifo_size`` plus
the PCIe alignment bytes on every worker core (HEIGHT_SHARDED; a ``DEVICE_PULL`` FIFO and every D2H
FIFO live in pinned host memory).  The FIFO's bytes are kept by the socket object.

tt-metal's checks: ``fifo_size`` and every page size are multiples of the host (PCIe) alignment,
64 bytes on Blackhole and 32 on Wormhole (its HAL; the socket has no other arch check); an H2D
FIFO lives in L1; a page size is at most ``fifo_size``; a write or read needs a page size and a
tensor a whole number of pages.  A write waits for space and a read for pages (tt-metal's host
spins; here up to ``MESHNN_WAIT_TIMEOUT``, then a ``QueueError``); ``barrier(timeout_ms)`` waits for
the other side to have taken everything.

``export_descriptor(socket_id)`` / ``connect(socket_id, timeout_ms)`` pair a connector with its
owner inside this process only (the simulator's devices live in one process): the connector shares
the FIFO and has no mesh device (``get_mesh_device()`` is None), so the ops refuse it.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.host`, :mod:`meshnn.device`, the mesh layer's
buffers and devices, the socket config's ``MeshCoreCoord`` and :mod:`meshnn.mesh.hd_fifo`.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from meshnn.device.allocator import align_up
from meshnn.device.arch import Arch
from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, ShardSpecBuffer, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError, QueueError
from meshnn.host.settings import wait_timeout
from meshnn.mesh.buffer_config import DeviceLocalBufferConfig, ReplicatedBufferConfig
from meshnn.mesh.hd_fifo import HostDeviceFifo, RingSide
from meshnn.mesh.hd_pages import host_view
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.socket_config import H2DMode, MeshCoreCoord

PCIE_ALIGNMENT = {Arch.BLACKHOLE: 64, Arch.WORMHOLE_B0: 32}
"""Bytes of tt-metal's host (PCIe) alignment per arch: the larger of the NoC's PCIe read and write
alignments (Blackhole 64 and 16, Wormhole 32 and 16)."""

H2D_CONFIG_BYTES = 44
"""Bytes of an H2D receiver's metadata (tt-metal's ``receiver_socket_md``)."""

D2H_SENDER_WORDS = (7, 1, 4)
"""uint32 words of a D2H sender's config: its metadata, the acknowledgement, the downstream
encoding (each rounded up to the L1 alignment)."""


_EXPORTED: dict[str, object] = {}  # socket id -> the owner socket (export_descriptor / connect)
_EXPORTED_LOCK = threading.Condition()


def pcie_alignment(mesh: MeshDevice) -> int:
    return PCIE_ALIGNMENT[mesh.arch()]


def _uint32(name: str, what: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise MeshnnTypeError(f"{name}: {what} must be an unsigned 32-bit int, got {value!r}")
    return value


def _check_core(name: str, mesh: object, core: object, what: str) -> MeshDevice:
    if not isinstance(mesh, MeshDevice):
        raise MeshnnTypeError(f"{name}: mesh_device must be a MeshDevice, got {type(mesh).__name__}")
    mesh.check_open()
    if not isinstance(core, MeshCoreCoord):
        raise MeshnnTypeError(f"{name}: {what} must be a ttnn.MeshCoreCoord, got {core!r}")
    coord, shape, grid = tuple(core.device_coord), tuple(mesh.shape), mesh.compute_with_storage_grid_size()
    if len(coord) != len(shape) or any(not 0 <= a < d for a, d in zip(coord, shape, strict=True)):
        raise MeshnnValueError(f"{name}: {what} device {coord} is not a device of the {list(shape)} mesh")
    c = core.core_coord
    if not (0 <= c.x < grid.x and 0 <= c.y < grid.y):
        raise MeshnnValueError(f"{name}: {what} ({c.x}, {c.y}) is outside the {grid.x}x{grid.y} worker grid")
    return mesh


def _sharded(mesh: MeshDevice, cores: list[CoreCoord], page: int) -> MeshBuffer:
    """One ``page``-byte L1 page on each of ``cores``, HEIGHT_SHARDED, on every device."""
    grid = CoreRangeSet([CoreRange(c, c) for c in cores])
    shards = ShardSpecBuffer(ShardSpec(grid, (1, 1), ShardOrientation.ROW_MAJOR), (1, 1), (len(cores), 1))
    local = DeviceLocalBufferConfig(page, BufferType.L1, TensorMemoryLayout.HEIGHT_SHARDED, shards)
    return MeshBuffer.create(ReplicatedBufferConfig(page * len(cores)), local, mesh)


def _worker_cores(mesh: MeshDevice) -> list[CoreCoord]:
    grid = mesh.compute_with_storage_grid_size()
    return [CoreCoord(x, y) for y in range(grid.y) for x in range(grid.x)]


class _HostDeviceSocket:
    """What both kinds share: the core, the FIFO, the page size, the buffers, the descriptor."""

    _KIND = ""
    _HOST_PRODUCES = True

    def __init__(self, mesh: MeshDevice | None, core: MeshCoreCoord, fifo: HostDeviceFifo, alignment: int) -> None:
        self._mesh, self._core, self.fifo, self._alignment = mesh, core, fifo, alignment
        self.config_buffer: MeshBuffer | None = None
        self.data_buffer: MeshBuffer | None = None
        self._config_address = 0

    @property
    def _name(self) -> str:
        return type(self).__name__

    def _side(self) -> RingSide:
        """The host's side of the ring: the producer of an H2D socket, the consumer of a D2H one."""
        return self.fifo.producer if self._HOST_PRODUCES else self.fifo.consumer

    def get_page_size(self) -> int:
        return self._side().page_size

    def get_config_buffer_address(self) -> int:
        """The L1 address of the socket's config buffer on its core."""
        return self._config_address

    def set_page_size(self, page_size: int) -> None:
        """The host side's page size (bytes): a multiple of the PCIe alignment, at most the FIFO."""
        page_size = _uint32(f"{self._name}.set_page_size", "page_size", page_size)
        if page_size % self._alignment != 0:
            raise MeshnnValueError(f"{self._name}.set_page_size: Page size must be PCIE-aligned ({self._alignment} B).")
        if page_size > self.fifo.fifo_size or page_size == 0:
            raise MeshnnValueError(
                f"{self._name}.set_page_size: Page size must be less than or equal to the FIFO size "
                f"({page_size} > {self.fifo.fifo_size}) and non-zero."
            )
        if self._HOST_PRODUCES:
            self.fifo.set_producer_page_size(page_size)
        else:
            self.fifo.set_consumer_page_size(page_size, f"{self._name}.set_page_size")

    def get_active_cores(self) -> list[MeshCoreCoord]:
        return [self._core]

    def get_mesh_device(self) -> MeshDevice | None:
        """The owner's mesh; None for a connector (``connect``)."""
        return self._mesh

    def is_allocated(self) -> bool:
        return self.config_buffer is not None and self.config_buffer.is_allocated()

    def _pages(self, what: str, nbytes: int) -> int:
        page = self.get_page_size()
        if page <= 0:
            raise MeshnnValueError(f"{self._name}.{what}: page_size must be set before calling {what}")
        if nbytes % page != 0:
            raise MeshnnValueError(
                f"{self._name}.{what}: tensor data size ({nbytes}) is not a multiple of page_size ({page})"
            )
        return nbytes // page

    def barrier(self, timeout_ms: int | None = None) -> None:
        """Wait until the other side has taken everything put in the FIFO."""
        if timeout_ms is not None:
            _uint32(f"{self._name}.barrier", "timeout_ms", timeout_ms)
        if self._HOST_PRODUCES:
            what = f"{self._name}.barrier: Timeout waiting for device to send acknowledgement over H2D socket"
        else:
            what = f"{self._name}.barrier: Timeout waiting for host to acknowledge data over D2H socket"
        self.fifo.drained(what, timeout_ms, producer_view=self._HOST_PRODUCES)

    def export_descriptor(self, socket_id: str) -> str:
        """Makes this socket connectable by ``socket_id`` (in this process); the path tt-metal's
        descriptor file would have."""
        if not isinstance(socket_id, str):
            raise MeshnnTypeError(f"{self._name}.export_descriptor: socket_id must be a str, got {socket_id!r}")
        if self._mesh is None:
            raise MeshnnValueError(
                f"{self._name}.export_descriptor: Only the owner process can populate a socket descriptor."
            )
        with _EXPORTED_LOCK:
            _EXPORTED[f"{self._KIND}:{socket_id}"] = self
            _EXPORTED_LOCK.notify_all()
        return f"/dev/shm/tt_{self._KIND}_{socket_id}.bin"

    @classmethod
    def _connect(cls, socket_id: str, timeout_ms: int | None) -> object:
        if not isinstance(socket_id, str):
            raise MeshnnTypeError(f"{cls.__name__}.connect: socket_id must be a str, got {socket_id!r}")
        limit = (
            wait_timeout()
            if timeout_ms is None
            else _uint32(f"{cls.__name__}.connect", "timeout_ms", timeout_ms) / 1000
        )
        key, deadline = f"{cls._KIND}:{socket_id}", time.monotonic() + limit
        with _EXPORTED_LOCK:
            if not _EXPORTED_LOCK.wait_for(lambda: key in _EXPORTED, timeout=max(0.0, deadline - time.monotonic())):
                raise QueueError(
                    f"{cls.__name__}.connect: no socket exported as {socket_id!r} in this process within {limit:g} s "
                    "(meshnn's sockets connect inside one process)"
                )
            owner = _EXPORTED[key]
        connector = cls.__new__(cls)
        _HostDeviceSocket.__init__(connector, None, owner._core, owner.fifo, owner._alignment)  # type: ignore[attr-defined]
        connector._config_address = owner._config_address  # type: ignore[attr-defined]
        if cls is H2DSocket:
            connector._mode = owner._mode  # type: ignore[attr-defined]
        return connector


class H2DSocket(_HostDeviceSocket):
    """``ttnn.H2DSocket``: the host writes pages, a kernel on ``recv_core`` reads them."""

    _KIND = "h2d"
    _HOST_PRODUCES = True

    def __init__(
        self,
        mesh_device: MeshDevice,
        recv_core: MeshCoreCoord,
        buffer_type: BufferType,
        fifo_size: int,
        h2d_mode: H2DMode,
    ) -> None:
        mesh = _check_core("H2DSocket", mesh_device, recv_core, "recv_core")
        if not isinstance(buffer_type, BufferType):
            raise MeshnnTypeError(f"H2DSocket: buffer_type must be a ttnn.BufferType, got {buffer_type!r}")
        fifo_size = _uint32("H2DSocket", "fifo_size", fifo_size)
        if not isinstance(h2d_mode, H2DMode):
            raise MeshnnTypeError(f"H2DSocket: h2d_mode must be a ttnn.H2DMode, got {h2d_mode!r}")
        alignment = pcie_alignment(mesh)
        if fifo_size % alignment != 0:
            raise MeshnnValueError(
                f"H2DSocket: FIFO size must be PCIE-aligned (fifo_size {fifo_size} is not a multiple of {alignment})."
            )
        if buffer_type is not BufferType.L1:
            raise MeshnnValueError(
                f"H2DSocket: H2D sockets currently only support data buffers in SRAM (buffer_type {buffer_type.name})."
            )
        super().__init__(mesh, recv_core, HostDeviceFifo(fifo_size), alignment)
        self._mode = h2d_mode
        self.config_buffer = _sharded(mesh, [recv_core.core_coord], H2D_CONFIG_BYTES)
        if h2d_mode is H2DMode.HOST_PUSH:
            self.data_buffer = _sharded(mesh, _worker_cores(mesh), fifo_size + alignment)
        self._config_address = self.config_buffer.address()

    def get_h2d_mode(self) -> H2DMode:
        return self._mode

    def write(self, data: int, num_pages: int) -> None:
        """``num_pages`` pages from host memory at address ``data`` (an int) into the FIFO."""
        num_pages = _uint32("H2DSocket.write", "num_pages", num_pages)
        self._pages("write", 0)
        page = self.get_page_size()
        if num_pages * page > self.fifo.producer.curr_size:
            raise MeshnnValueError("H2DSocket.write: Cannot write more pages than the socket FIFO size.")
        self._push(host_view("H2DSocket.write", data, num_pages * page), num_pages, "H2DSocket.write")

    def write_tensor(self, tensor: object) -> None:
        """A host tensor's bytes (a ``ttnn.Tensor`` on host, or a contiguous CPU torch tensor or
        numpy array) into the FIFO, a page at a time, each waiting for space."""
        flat = host_view("H2DSocket.write_tensor", tensor)
        self._push(flat, self._pages("write_tensor", flat.size), "H2DSocket.write_tensor")

    def _push(self, flat: np.ndarray, count: int, what: str) -> None:
        page = self.get_page_size()
        for i in range(count):
            self.fifo.push_page(flat[i * page : (i + 1) * page], what)

    @staticmethod
    def connect(socket_id: str, timeout_ms: int | None = None) -> H2DSocket:
        """A connector to the H2D socket exported as ``socket_id`` (in this process)."""
        return H2DSocket._connect(socket_id, timeout_ms)  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"H2DSocket({self._core}, fifo_size={self.fifo.fifo_size}, {self._mode.name})"


class D2HSocket(_HostDeviceSocket):
    """``ttnn.D2HSocket``: a kernel on ``sender_core`` writes pages, the host reads them."""

    _KIND = "d2h"
    _HOST_PRODUCES = False

    def __init__(self, mesh_device: MeshDevice, sender_core: MeshCoreCoord, fifo_size: int) -> None:
        mesh = _check_core("D2HSocket", mesh_device, sender_core, "sender_core")
        fifo_size = _uint32("D2HSocket", "fifo_size", fifo_size)
        alignment = pcie_alignment(mesh)
        if fifo_size % alignment != 0:
            raise MeshnnValueError(
                f"D2HSocket: FIFO size must be PCIe-aligned (fifo_size {fifo_size} is not a multiple of {alignment})."
            )
        super().__init__(mesh, sender_core, HostDeviceFifo(fifo_size), alignment)
        l1 = mesh.system.arch_spec.l1_alignment
        config = sum(align_up(4 * words, l1) for words in D2H_SENDER_WORDS)
        self.config_buffer = _sharded(mesh, [sender_core.core_coord], config)
        self._config_address = self.config_buffer.address()

    def read(self, data: int, num_pages: int, notify_sender: bool = True) -> None:
        """``num_pages`` pages from the FIFO into host memory at address ``data`` (an int), waiting
        for them; ``notify_sender`` False leaves the freed space unseen by the sender until a later
        notifying read (or ``discard_pending_pages``)."""
        num_pages = _uint32("D2HSocket.read", "num_pages", num_pages)
        self._pages("read", 0)
        page = self.get_page_size()
        if num_pages * page > self.fifo.consumer.curr_size:
            raise MeshnnValueError("D2HSocket.read: Cannot read more pages than the socket FIFO size.")
        self._pop(host_view("D2HSocket.read", data, num_pages * page, writable=True), num_pages, notify_sender)

    def read_tensor(self, tensor: object, notify_sender: bool = True) -> None:
        """Pages from the FIFO into a pre-allocated host tensor (a ``ttnn.Tensor`` on host, or a
        contiguous CPU torch tensor or numpy array), a page at a time, waiting for them."""
        out = host_view("D2HSocket.read_tensor", tensor, writable=True)
        self._pop(out, self._pages("read_tensor", out.size), notify_sender)

    def _pop(self, out: np.ndarray, count: int, notify_sender: object) -> None:
        if not isinstance(notify_sender, bool):
            raise MeshnnTypeError(f"D2HSocket.read: notify_sender must be a bool, got {notify_sender!r}")
        page = self.get_page_size()
        for i in range(count):
            out[i * page : (i + 1) * page] = self.fifo.pop_page("D2HSocket.read", notify=notify_sender)

    def discard_pending_pages(self) -> int:
        """Every whole page available now, acknowledged unread; how many."""
        self._pages("discard_pending_pages", 0)
        return self.fifo.discard_pages()

    @staticmethod
    def connect(socket_id: str, timeout_ms: int | None = None) -> D2HSocket:
        """A connector to the D2H socket exported as ``socket_id`` (in this process)."""
        return D2HSocket._connect(socket_id, timeout_ms)  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"D2HSocket({self._core}, fifo_size={self.fifo.fifo_size})"
