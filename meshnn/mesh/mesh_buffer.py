"""MeshBuffer: one allocation, at one address, on every device of a mesh.

Invariant (lock-step): a MeshBuffer reserves ``device_local_size`` bytes at ``address()`` on every
device of its mesh, through the mesh's one allocator; a failed reservation leaves nothing behind.
Its bytes live in ONE slab (:mod:`meshnn.mesh.slab`: the slab, its memo and deferred write): a
``(local devices, device_local_size)`` uint8 array whose row ``i`` is the device at the i-th local
coordinate (row-major), each row in host page order.  A per-device :class:`~meshnn.device.buffer.Buffer`
is a view of one row, never an allocation of its own.  Configs: :mod:`meshnn.mesh.buffer_config`.

A buffer created with an explicit ``address=`` is a non-owning view of the live buffer that owns
that address: it shares the owner's slab, and deallocating it only ends the view; ``within=(owner,
select)`` views part of ``owner`` (:mod:`meshnn.mesh.slab_window`) with ``address`` inside it.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.host`, :mod:`meshnn.device` and the mesh layer's
coordinates, buffer configs and slab (a MeshDevice only for types).
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from meshnn.device.buffer import Buffer, BufferLayout, BufferType
from meshnn.errors import (
    DeallocatedError,
    DeviceClosedError,
    HostMemoryError,
    MeshnnTypeError,
    MeshnnValueError,
    OutOfMemoryError,
    format_bytes,
)
from meshnn.host.interrupts import passes_interrupts
from meshnn.mesh.buffer_config import (
    DeviceLocalBufferConfig,
    MeshBufferConfig,
    MeshBufferLayout,
    ReplicatedBufferConfig,
    ShardedBufferConfig,
    device_local_size,
    layout_of,
)
from meshnn.mesh.coord import MeshCoordinate, as_coord
from meshnn.mesh.dispatch import drained_for_memory, queues_sharing_memory
from meshnn.mesh.lockstep import called_from
from meshnn.mesh.observers import OBSERVERS, BufferEvent
from meshnn.mesh.slab import HOST_CHECK_MIN_BYTES, NoBytes, SlabStorage, host_shortfall
from meshnn.mesh.slab_window import Select, WindowStorage

if TYPE_CHECKING:
    from meshnn.mesh.mesh_device import MeshDevice


def _release(
    allocator: object,
    buffer_type: BufferType,
    address: int,
    storage: SlabStorage,
    mesh: weakref.ref,
    key: int,
    layout: BufferLayout,
) -> None:
    """Free an owned buffer's address and pool or drop its slab.  The address is freed even when
    the mesh has closed meanwhile (a release racing the close, or a submesh dropped first): it is
    this buffer's own, released once, and a submesh shares its parent's allocator."""
    storage.release()
    device = mesh()
    if device is not None:
        device.forget_buffer(key)
    if storage.size:
        allocator.deallocate(buffer_type, address)  # type: ignore[attr-defined]
        if OBSERVERS and device is not None:
            OBSERVERS.deallocated(
                BufferEvent(device, key, buffer_type, address, storage.size, layout.page_size, None, layout)
            )


def _check_host_room(mesh: MeshDevice, local_size: int, undo: Callable[[], None]) -> None:
    """Refuse (HostMemoryError) a buffer whose bytes the host has not the memory for, after its
    address was found (a buffer the device cannot hold is the device's OutOfMemoryError) and
    before anything else: ``undo`` gives the address back, so nothing stays allocated.  Every
    path that allocates device memory (creation ops, op outputs, transfers, loads) comes here."""
    short = host_shortfall(len(mesh.local), local_size)
    if short is not None:
        undo()
        name, site = called_from()
        raise HostMemoryError(
            op=f"ttnn.{name} (called at {site})",
            needed=short[0],
            available=short[1],
            what=f"{format_bytes(local_size)} of device memory on each of {len(mesh.local)} local device(s) of the "
            f"{mesh.shape} mesh, which the simulator keeps in host memory",
        )


class MeshBuffer:
    """A lock-step allocation on a mesh.  Create with :meth:`create`."""

    def __init__(self, *_: object, **__: object) -> None:
        raise MeshnnTypeError("use MeshBuffer.create(config, device_local_config, mesh_device)")

    # ------------------------------------------------------------------------------ creation

    @classmethod
    def create(
        cls,
        config: MeshBufferConfig,
        device_local_config: DeviceLocalBufferConfig,
        mesh_device: MeshDevice,
        address: int | None = None,
        *,
        layout: BufferLayout | None = None,
        within: tuple[MeshBuffer, Select] | None = None,
    ) -> MeshBuffer:
        """Allocate on every device of ``mesh_device`` (or view the buffer owning ``address``).
        ``layout``: what :func:`~meshnn.mesh.buffer_config.layout_of` gave for a Replicated
        ``config``'s size laid out by ``device_local_config``, for a caller that made the three
        once and allocates them again and again (a tensor spec's buffer: every op's output);
        they are not checked again."""
        if layout is None:
            if not isinstance(config, (ReplicatedBufferConfig, ShardedBufferConfig)):  # a tuple: faster than a union
                raise MeshnnTypeError(f"config must be a Replicated- or ShardedBufferConfig, got {config!r}")
            if not isinstance(device_local_config, DeviceLocalBufferConfig):
                raise MeshnnTypeError(
                    f"device_local_config must be a DeviceLocalBufferConfig, got {device_local_config!r}"
                )
            mesh_device.check_open()
            local_size = device_local_size(config, mesh_device)
            layout = layout_of(local_size, device_local_config)
        else:
            mesh_device.check_open()
            local_size = config.size
        self = object.__new__(cls)
        self._config, self._local_config, self._layout = config, device_local_config, layout
        self._mesh_ref = weakref.ref(mesh_device)
        self._mesh_id = mesh_device.mesh_id
        self._owner: MeshBuffer | None = None
        self._view_open = True
        self.deallocated_at: str | None = None  # set by whoever deallocates, for error messages
        self.views: object = None  # the layer above's record of the tensors viewing this buffer (opaque here)
        self._pending: list[tuple] = []  # an owner's release, until it runs (see __del__)
        if address is None:
            try:
                self._allocate_owned(mesh_device, local_size)
            except OutOfMemoryError:  # queued work may hold buffers its callers dropped: let it run, once
                if not drained_for_memory(queues_sharing_memory(mesh_device)):
                    raise
                self._allocate_owned(mesh_device, local_size)
        elif within is not None:
            self._owner, self._address = within[0], address
            self._storage = WindowStorage(within[0]._storage, local_size, within[1])
        else:
            self._view_of(mesh_device, address, local_size)
        return self

    def _allocate_owned(self, mesh_device: MeshDevice, local_size: int) -> None:
        """Reserve this buffer's address on every device, its bytes (none on a planning mesh) and
        its release; observers hear of it."""
        local, layout = self._local_config, self._layout
        with mesh_device.allocation_lock:  # a close either sees this buffer registered, or refuses it
            if mesh_device.closing:
                raise DeviceClosedError(f"mesh device {mesh_device.shape} is closed (closing): nothing allocated")
            self._address = mesh_device.allocate_lockstep(layout, bottom_up=local.bottom_up)
            if mesh_device.executes and local_size * len(mesh_device.local) >= HOST_CHECK_MIN_BYTES:
                _check_host_room(  # it fits the device: does it fit the host that keeps its bytes?
                    mesh_device, local_size, lambda: mesh_device.allocator.deallocate(local.buffer_type, self._address)
                )
            storage = SlabStorage if mesh_device.executes else NoBytes  # a planning mesh keeps no bytes
            self._storage = storage(len(mesh_device.local), local_size)
            key = mesh_device.register_buffer(self, local.buffer_type, self._address)
            release = (mesh_device.allocator, local.buffer_type, self._address, self._storage, self._mesh_ref, key)
            self._pending.append((*release, layout))  # before the lock is let go: a close's deallocate runs it
        if OBSERVERS:
            OBSERVERS.allocated(
                BufferEvent(
                    mesh_device, key, local.buffer_type, self._address, local_size, local.page_size, self, layout
                )
            )

    def _view_of(self, mesh_device: MeshDevice, address: int, local_size: int) -> None:
        """A view of the live buffer that owns ``address``: its bytes, no allocation of its own
        (a view frees nothing, and is not registered: its owner is)."""
        buffer_type = self._local_config.buffer_type
        owner = mesh_device.buffer_at(buffer_type, address)
        if owner is None:
            raise MeshnnValueError(
                f"address={address} is not the address of a live {buffer_type.name} MeshBuffer on this mesh"
            )
        if local_size > owner.device_local_size():
            raise MeshnnValueError(
                f"a view of {local_size} B per device does not fit the {owner.device_local_size()} B buffer "
                f"at address {address}"
            )
        self._owner, self._address, self._storage = owner, address, owner._storage

    def _release_once(self) -> None:
        """Run the owner's release if it has not run: ``list.pop`` is atomic, so of several
        threads deallocating one buffer exactly one releases it."""
        try:
            pending = self._pending.pop()
        except IndexError:
            return
        _release(*pending)

    @passes_interrupts
    def __del__(self, _finalizing: Callable[[], bool] = sys.is_finalizing) -> None:
        """An owner dropped while allocated frees its address (as ttnn's buffers do), but not at
        interpreter exit.  A Ctrl-C landing in the release is raised again in the main thread."""
        if getattr(self, "_pending", None) and not _finalizing():
            self._release_once()

    # ------------------------------------------------------------------------------- state

    def is_allocated(self) -> bool:
        """False once deallocated (by :meth:`deallocate` or by closing the mesh)."""
        mesh = self._mesh_ref()
        if mesh is None or not mesh._open:  # is_open(), read directly: every op asks this of each buffer
            return False
        if self._owner is not None:
            return self._view_open and self._owner.is_allocated()
        return self._storage.live  # False once its release has run

    @property
    def owns_data(self) -> bool:
        return self._owner is None

    def deallocate(self) -> None:
        """Free the address on every device at once; safe to repeat."""
        if self._owner is not None:
            self._view_open = False
        else:
            self._release_once()

    def check_allocated(self, what: str = "MeshBuffer") -> None:
        if self.is_allocated():
            return
        mesh = self._mesh_ref()
        if mesh is None or mesh.closing:
            raise DeviceClosedError(f"{what} at address {self._address} belongs to a closed mesh device")
        raise DeallocatedError(f"{what} at address {self._address} is deallocated")

    # --------------------------------------------------------------------------- properties

    def device(self) -> MeshDevice:
        mesh = self._mesh_ref()
        if mesh is None or not mesh.is_open():
            where = f" (closed at {mesh.closed_at})" if mesh is not None and mesh.closed_at else ""
            raise DeviceClosedError(f"Can't get device from mesh buffer: its mesh device is closed{where}")
        return mesh

    @property
    def mesh_id(self) -> int:
        return self._mesh_id

    def address(self) -> int:
        return self._address

    def size(self) -> int:
        """Replicated: bytes per device; sharded: bytes of the whole global buffer."""
        if isinstance(self._config, ReplicatedBufferConfig):
            return self._config.size
        return self._config.global_size

    def device_local_size(self) -> int:
        return self._layout.size

    def global_layout(self) -> MeshBufferLayout:
        if isinstance(self._config, ShardedBufferConfig):
            return MeshBufferLayout.SHARDED
        return MeshBufferLayout.REPLICATED

    def global_config(self) -> MeshBufferConfig:
        return self._config

    def global_shard_spec(self) -> ShardedBufferConfig:
        if not isinstance(self._config, ShardedBufferConfig):
            raise MeshnnValueError("global_shard_spec: this MeshBuffer is not SHARDED")
        return self._config

    def device_local_config(self) -> DeviceLocalBufferConfig:
        return self._local_config

    @property
    def layout(self) -> BufferLayout:
        return self._layout

    def buffer_type(self) -> BufferType:
        return self._layout.buffer_type

    def page_size(self) -> int:
        return self._layout.page_size

    def num_pages(self) -> int:
        return self._layout.num_pages

    def datum_size_bytes(self) -> int:
        return self.global_shard_spec().compute_datum_size_bytes()

    def physical_shard_shape(self) -> tuple[int, int]:
        return self.global_shard_spec().physical_shard_shape()

    def replicated_dims(self) -> tuple[bool, bool]:
        return self.global_shard_spec().replicated_dims()

    # ------------------------------------------------------------------------------- bytes

    def slab(self) -> np.ndarray:
        """The bytes of every local device: ``(local devices, device_local_size)`` uint8, for a
        caller that may write them (the memo is dropped: see :mod:`meshnn.mesh.slab`)."""
        if not self.is_allocated():
            self.check_allocated()
        window = self._storage.first(self._layout.size)
        self._storage.touch()
        return window

    def rows(self) -> np.ndarray:
        """:meth:`slab`, keeping the memo, for a caller that has just checked :meth:`is_allocated`
        and either only reads the bytes or calls :meth:`touch` before it writes them (a workload
        binding its validated buffers, a queued read or write)."""
        storage = self._storage
        window = storage.window
        if window is not None and window.shape[1] == self._layout.size and storage.pending is None:
            return window
        return self._storage.first(self._layout.size)

    def fresh_rows(self) -> np.ndarray:
        """:meth:`rows` for a new buffer's writer that writes every byte first (:meth:`SlabStorage.fresh`)."""
        return self._storage.fresh(self._layout.size)

    def writable(self) -> bool:
        """False for a view whose bytes are strided through its owner's (read, never written)."""
        return getattr(self._storage, "contiguous", True)

    def shares_bytes(self, other: MeshBuffer) -> bool:
        """Whether ``other`` is this buffer, its owner, or another view of the same slab."""
        return self._storage.root is other._storage.root

    def lazy_rows(self) -> np.ndarray:
        """:meth:`rows` without a deferred write, for a kernel that reads through the memo (or settles first)."""
        return self._storage.unsettled(self._layout.size)

    def settle(self) -> None:
        """Do the deferred write, if any."""
        self._storage.settle()

    def defer(self, write: Callable[[np.ndarray], None]) -> None:
        """Leave the slab's bytes to ``write(slab)``, called with the whole ``(local devices,
        device_local_size)`` slab before anything else reads or writes them.  For the writer of a
        buffer no queued work knows yet (an op's new output, on the enqueuing thread)."""
        self._storage.defer(write)

    def has_deferred_write(self) -> bool:
        return self._storage.pending is not None

    def drop_bytes(self, write: Callable[[np.ndarray], None]) -> bool:
        """Let the bytes go, ``write(slab)`` making them again when asked for (``SlabStorage.drop_bytes``)."""
        return self._storage.drop_bytes(write)

    def touch(self) -> None:
        """The bytes are about to change: any deferred write done first, the memo (views' too) dropped."""
        self._storage.touch()

    @property
    def memo(self) -> object:
        """What a higher layer attached about the current bytes, or None (see
        :mod:`meshnn.mesh.slab`); shared by an owner and its views."""
        return self._storage.memo

    @memo.setter
    def memo(self, value: object) -> None:
        self._storage.memo = value

    def get_device_buffer(self, coord: MeshCoordinate | tuple[int, ...]) -> Buffer:
        """The device at ``coord``'s view of this buffer (its slab row plus the address)."""
        coord = as_coord(coord)
        mesh = self.device()
        row = mesh.local_row(coord)
        return Buffer(
            self._layout,
            self._address,
            mesh.allocator.manager(self._layout.buffer_type).facts,
            device_id=mesh.get_device_id(coord),
            data=lambda: self.slab()[row],
            is_allocated=self.is_allocated,
        )

    def get_reference_buffer(self) -> Buffer:
        """The view of the first local device."""
        return self.get_device_buffer(self.device().local_coords()[0])

    def __repr__(self) -> str:
        state = "allocated" if self.is_allocated() else "deallocated"
        return (
            f"MeshBuffer({self.global_layout().name}, address={self._address}, "
            f"device_local_size={self._layout.size}, {self._layout.buffer_type}, {state})"
        )
