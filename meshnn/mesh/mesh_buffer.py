"""MeshBuffer: one allocation, at one address, on every device of a mesh.

Invariant (lock-step): a MeshBuffer reserves ``device_local_size`` bytes at ``address()`` on every
device of its mesh, through the mesh's one allocator; a failed reservation leaves nothing behind.
Its bytes live in ONE slab: a ``(local devices, device_local_size)`` uint8 array whose row ``i``
is the device at the i-th local coordinate (row-major), each row in host page order.  A per-device
:class:`~meshnn.device.buffer.Buffer` is a view of one row, never an allocation of its own.

A buffer created with an explicit ``address=`` is a non-owning view of the live buffer that owns
that address: it shares the owner's slab, and deallocating it only ends the view.

A slab may carry a *memo*: an opaque object that a higher layer attaches to say what it knows
about the slab's current bytes (the ops keep decoded values there).  Whoever may change the bytes
drops it first (:meth:`MeshBuffer.touch`): :meth:`MeshBuffer.slab` does for its caller, a
workload does for each buffer its program writes, a command-queue write does when it runs, and a
free does.  Readers that only read use :meth:`MeshBuffer.rows`, which keeps it.

The mesh layer's own memo is :data:`EQUAL_ROWS`: a command-queue write of one host array to every
local device leaves it, saying only that all rows hold the same bytes (so an op on a replicated
tensor need not compare them); the next change of the bytes drops it like any memo.

A slab may also have a *deferred write* (:meth:`MeshBuffer.defer`): bytes that the higher layer
can produce from its memo and has not written yet.  Every way to the bytes (:meth:`slab`,
:meth:`rows`, a device Buffer view, :meth:`touch`) writes them first; only
:meth:`MeshBuffer.lazy_rows` (for a kernel that reads its inputs through memos) does not.
"""

from __future__ import annotations

import enum
import os
import sys
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from meshnn.device.buffer import (
    Buffer,
    BufferLayout,
    BufferType,
    ShardOrientation,
    ShardSpecBuffer,
    TensorMemoryLayout,
)
from meshnn.errors import DeallocatedError, DeviceClosedError, MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, as_coord

if TYPE_CHECKING:
    from meshnn.mesh.mesh_device import MeshDevice


class MeshBufferLayout(enum.Enum):
    REPLICATED = 0
    SHARDED = 1


@dataclass(frozen=True, slots=True)
class ReplicatedBufferConfig:
    """Every device gets ``size`` bytes."""

    size: int

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int):
            raise MeshnnTypeError(f"ReplicatedBufferConfig size must be an int, got {self.size!r}")
        if self.size < 0:
            raise MeshnnValueError(f"ReplicatedBufferConfig size must be a non-negative int, got {self.size!r}")


@dataclass(frozen=True, slots=True)
class ShardedBufferConfig:
    """A ``global_buffer_shape`` (height, width in datums) array cut into ``shard_shape`` pieces, one
    per device; a 0 in ``shard_shape`` replicates along that dimension.  ``shard_orientation``
    is the order shards are dealt to devices."""

    global_size: int
    global_buffer_shape: tuple[int, int]
    shard_shape: tuple[int, int]
    shard_orientation: ShardOrientation = ShardOrientation.ROW_MAJOR

    def __post_init__(self) -> None:
        if isinstance(self.global_size, bool) or not isinstance(self.global_size, int) or self.global_size < 0:
            raise MeshnnValueError(f"global_size must be a non-negative int, got {self.global_size!r}")
        if not isinstance(self.shard_orientation, ShardOrientation):
            raise MeshnnTypeError(f"shard_orientation must be a ShardOrientation, got {self.shard_orientation!r}")
        for name in ("global_buffer_shape", "shard_shape"):
            value = tuple(getattr(self, name))
            if len(value) != 2 or not all(isinstance(v, int) and v >= 0 for v in value):
                raise MeshnnValueError(f"{name} must be two non-negative ints, got {getattr(self, name)!r}")
            object.__setattr__(self, name, value)
        h, w = self.global_buffer_shape
        if h * w == 0 or self.global_size % (h * w):
            raise MeshnnValueError(
                f"global_size {self.global_size} B is not a whole number of datums of a {h}x{w} buffer"
            )

    def compute_datum_size_bytes(self) -> int:
        h, w = self.global_buffer_shape
        return self.global_size // (h * w)

    def replicated_dims(self) -> tuple[bool, bool]:
        """(height replicated, width replicated)."""
        return self.shard_shape[0] == 0, self.shard_shape[1] == 0

    def physical_shard_shape(self) -> tuple[int, int]:
        (gh, gw), (sh, sw) = self.global_buffer_shape, self.shard_shape
        return sh or gh, sw or gw


MeshBufferConfig = ReplicatedBufferConfig | ShardedBufferConfig


@dataclass(frozen=True, slots=True)
class DeviceLocalBufferConfig:
    """How ONE device lays the buffer out over its banks."""

    page_size: int
    buffer_type: BufferType = BufferType.DRAM
    buffer_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED
    shard_parameters: ShardSpecBuffer | None = None
    bottom_up: bool | None = None  # None: DRAM bottom-up, L1 top-down

    def __post_init__(self) -> None:
        if isinstance(self.page_size, bool) or not isinstance(self.page_size, int):
            raise MeshnnTypeError(f"page_size must be an int, got {self.page_size!r}")
        if self.page_size <= 0:
            raise MeshnnValueError(f"page_size must be positive, got {self.page_size}")
        if not isinstance(self.buffer_type, BufferType):
            raise MeshnnTypeError(f"buffer_type must be a ttnn.BufferType, got {self.buffer_type!r}")
        if not isinstance(self.buffer_layout, TensorMemoryLayout):
            raise MeshnnTypeError(f"buffer_layout must be a ttnn.TensorMemoryLayout, got {self.buffer_layout!r}")
        if self.bottom_up is not None and not isinstance(self.bottom_up, bool):
            raise MeshnnTypeError(f"bottom_up must be a bool or None, got {self.bottom_up!r}")


@dataclass(frozen=True, slots=True)
class BufferRegion:
    """``size`` bytes from ``offset`` in one device's buffer."""

    offset: int
    size: int

    def __post_init__(self) -> None:
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (self.offset, self.size)):
            raise MeshnnTypeError(f"BufferRegion needs ints offset and size, got ({self.offset!r}, {self.size!r})")
        if not all(v >= 0 for v in (self.offset, self.size)):
            raise MeshnnValueError(
                f"BufferRegion needs non-negative offset and size, got ({self.offset!r}, {self.size!r})"
            )


class SlabPool:
    """Released slabs kept for the next buffer of the same (rows, size), so that a model that
    allocates and frees the same shapes again and again writes into memory whose pages are
    already mapped, as device memory is.

    Bounded: at most ``limit`` bytes are kept (``MESHNN_SLAB_POOL_BYTES``, default 1 GiB; 0 turns
    pooling off); a slab that does not fit is dropped and its memory goes back to the system.
    Only slabs of at least ``MIN_BYTES`` are pooled.  A reused slab holds the bytes its previous
    buffer left, like device memory after a free; meshnn never hands out a slab's memory to a
    host tensor (reads copy), so no host data can change under a user.
    """

    MIN_BYTES = 1 << 20

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._free: dict[tuple[int, int], list[np.ndarray]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes held by the pool now."""
        return self._bytes

    def take(self, rows: int, size: int) -> np.ndarray:
        """A ``(rows, size)`` uint8 slab: a pooled one, or a new zeroed one."""
        if rows * size >= self.MIN_BYTES:
            with self._lock:
                kept = self._free.get((rows, size))
                if kept:
                    self._bytes -= rows * size
                    return kept.pop()
        return np.zeros((rows, size), dtype=np.uint8)  # calloc: pages touched lazily

    def give(self, slab: np.ndarray) -> None:
        """Keep ``slab`` for reuse if the bound allows; otherwise let it go."""
        if slab.nbytes < self.MIN_BYTES or not slab.flags.owndata:
            return
        with self._lock:
            if self._bytes + slab.nbytes <= self.limit:
                self._free.setdefault(slab.shape, []).append(slab)
                self._bytes += slab.nbytes

    def clear(self) -> None:
        """Return every pooled slab to the system."""
        with self._lock:
            self._free.clear()
            self._bytes = 0


SLAB_POOL = SlabPool(int(os.environ.get("MESHNN_SLAB_POOL_BYTES", str(1 << 30))))


class EqualRows:
    """The memo (see the module docstring) that says every local device's row holds the same bytes."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "EQUAL_ROWS"


EQUAL_ROWS = EqualRows()


class _Storage:
    """The slab of an owning buffer, shared with its views; ``data`` is None until first used and
    once released.  ``window`` caches the last ``(rows, n)`` view of the slab's first ``n`` bytes
    per row.  ``live`` is True until the owner is released (its release has run).  ``memo``: what a
    higher layer knows about the current bytes (None once they may have changed); ``pending``: a
    deferred write of the whole slab."""

    __slots__ = ("__weakref__", "data", "live", "memo", "pending", "rows", "size", "window")

    def __init__(self, rows: int, size: int) -> None:
        self.rows, self.size = rows, size
        self.data: np.ndarray | None = None
        self.window: np.ndarray | None = None
        self.live = True
        self.memo: object = None
        self.pending: Callable[[np.ndarray], None] | None = None

    def settle(self) -> None:
        """Write the deferred bytes, if any (cleared only once written: a reader on another thread
        that finds ``pending`` None may read at once)."""
        if self.pending is None:
            return
        with _SETTLING:
            write = self.pending
            if write is not None:
                write(self.array())
                self.pending = None

    def array(self) -> np.ndarray:
        if self.data is None:
            self.data = SLAB_POOL.take(self.rows, self.size)
        return self.data

    def first(self, size: int) -> np.ndarray:
        """The first ``size`` bytes of every row (a view, made once per size in a row), with any
        deferred write done."""
        if self.pending is not None:
            self.settle()
        return self.unsettled(size)

    def unsettled(self, size: int) -> np.ndarray:
        """:meth:`first` without doing a deferred write."""
        window = self.window
        if window is None or window.shape[1] != size:
            data = self.data
            if data is None:  # array(), inline; small slabs are never pooled (SlabPool.take)
                rows, row_size = self.rows, self.size
                if rows * row_size < SlabPool.MIN_BYTES:
                    data = self.data = np.zeros((rows, row_size), dtype=np.uint8)
                else:
                    data = self.array()
            window = self.window = data[:, :size]
        return window


def _validate_sharded(config: ShardedBufferConfig, mesh_device: MeshDevice) -> None:
    (gh, gw), (ph, pw) = config.global_buffer_shape, config.physical_shard_shape()
    if gh % ph or gw % pw:
        raise MeshnnValueError(
            "Global buffer shape must be aligned with the shard shape: requested buffer shape: "
            f"({gh}, {gw}), shard shape: ({ph}, {pw})"
        )
    shards = (gh // ph) * (gw // pw)
    rows, cols = mesh_device.num_rows, mesh_device.num_cols
    height_rep, width_rep = config.replicated_dims()
    if height_rep and width_rep:
        shards *= rows * cols
    elif height_rep or width_rep:
        shards *= rows if config.shard_orientation is ShardOrientation.ROW_MAJOR else cols
    if shards > mesh_device.get_num_devices():
        raise MeshnnValueError(
            f"The sharded tensor does not fit on the Mesh. Num shards in buffer {shards}, "
            f"Num Devices {mesh_device.get_num_devices()}"
        )


def _release(
    allocator: object, buffer_type: BufferType, address: int, storage: _Storage, mesh: weakref.ref, key: int
) -> None:
    """Free an owned buffer's address (if its mesh is still open) and pool or drop its slab."""
    storage.live = False
    storage.memo = storage.pending = None
    data = storage.data
    if data is not None and data.nbytes >= SLAB_POOL.MIN_BYTES:
        SLAB_POOL.give(data)
    storage.data = storage.window = None
    device = mesh()
    if device is None:
        return
    device.forget_buffer(key)
    if device.is_open() and storage.size:
        allocator.deallocate(buffer_type, address)  # type: ignore[attr-defined]


_SETTLING = threading.Lock()  # deferred writes, one at a time

_layouts: dict[tuple[int, DeviceLocalBufferConfig], BufferLayout] = {}  # validated layouts, reused
_layouts_of: dict[tuple[int, int], tuple[DeviceLocalBufferConfig, BufferLayout]] = {}
"""The same, keyed by the config object's id (a config's hash is computed in Python, on every
call): an entry holds its config, so the id cannot be reused while the entry exists."""


def _layout(local_size: int, local: DeviceLocalBufferConfig) -> BufferLayout:
    """The validated layout of ``local_size`` bytes per device laid out by ``local`` (made once)."""
    layout = _layouts.get((local_size, local))
    if layout is None:
        if len(_layouts) > 4096:
            _layouts.clear()
        layout = _layouts[(local_size, local)] = BufferLayout(
            local_size, local.page_size, local.buffer_type, local.buffer_layout, local.shard_parameters
        )
    if len(_layouts_of) > 4096:
        _layouts_of.clear()
    _layouts_of[(local_size, id(local))] = (local, layout)
    return layout


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
    ) -> MeshBuffer:
        """Allocate on every device of ``mesh_device`` (or view the buffer owning ``address``)."""
        if not isinstance(config, (ReplicatedBufferConfig, ShardedBufferConfig)):  # a tuple: faster than a union
            raise MeshnnTypeError(f"config must be a Replicated- or ShardedBufferConfig, got {config!r}")
        if not isinstance(device_local_config, DeviceLocalBufferConfig):
            raise MeshnnTypeError(f"device_local_config must be a DeviceLocalBufferConfig, got {device_local_config!r}")
        mesh_device.check_open()
        if isinstance(config, ShardedBufferConfig):
            _validate_sharded(config, mesh_device)
            ph, pw = config.physical_shard_shape()
            local_size = config.compute_datum_size_bytes() * ph * pw
        else:
            local_size = config.size
        local = device_local_config
        known = _layouts_of.get((local_size, id(local)))
        layout = known[1] if known is not None and known[0] is local else _layout(local_size, local)
        self = object.__new__(cls)
        self._config, self._local_config, self._layout = config, local, layout
        self._mesh_ref = weakref.ref(mesh_device)
        self._mesh_id = mesh_device.mesh_id
        self._owner: MeshBuffer | None = None
        self._view_open = True
        self.deallocated_at: str | None = None  # set by whoever deallocates, for error messages
        self.views: object = None  # the layer above's record of the tensors viewing this buffer (opaque here)
        self._pending: list[tuple] = []  # an owner's release, until it runs (see __del__)
        if address is None:
            self._address = mesh_device.allocate_lockstep(layout, bottom_up=local.bottom_up)
            self._storage = _Storage(len(mesh_device.local), local_size)
            key = mesh_device.register_buffer(self)
            self._pending.append(
                (mesh_device.allocator, local.buffer_type, self._address, self._storage, self._mesh_ref, key)
            )
        else:
            owner = mesh_device.buffer_at(local.buffer_type, address)
            if owner is None:
                raise MeshnnValueError(
                    f"address={address} is not the address of a live {local.buffer_type.name} MeshBuffer on this mesh"
                )
            if local_size > owner.device_local_size():
                raise MeshnnValueError(
                    f"a view of {local_size} B per device does not fit the {owner.device_local_size()} B buffer "
                    f"at address {address}"
                )
            self._owner, self._address, self._storage = owner, address, owner._storage
            # a view frees nothing, and is not registered: its owner is
        return self

    def _release_once(self) -> None:
        """Run the owner's release if it has not run: ``list.pop`` is atomic, so of several
        threads deallocating one buffer exactly one releases it."""
        try:
            pending = self._pending.pop()
        except IndexError:
            return
        _release(*pending)

    def __del__(self, _finalizing: Callable[[], bool] = sys.is_finalizing) -> None:
        """An owner dropped while allocated frees its address (as ttnn's buffers do).  (A
        ``weakref.finalize`` did this before; it cost a registry entry per buffer.)  At interpreter
        exit nothing is freed: the process's memory goes with it."""
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
        if mesh is None or not mesh.is_open():
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
        caller that may write them (the memo is dropped: see the module docstring)."""
        if not self.is_allocated():
            self.check_allocated()
        storage = self._storage
        window = storage.first(self._layout.size)
        storage.memo = None
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

    def shares_bytes(self, other: MeshBuffer) -> bool:
        """Whether ``other`` is this buffer, its owner, or another view of the same slab."""
        return self._storage is other._storage

    def lazy_rows(self) -> np.ndarray:
        """:meth:`rows` without doing a deferred write: for a kernel that reads this buffer only
        through its memo (or calls :meth:`settle` before it reads the bytes)."""
        return self._storage.unsettled(self._layout.size)

    def settle(self) -> None:
        """Do the deferred write, if any."""
        self._storage.settle()

    def defer(self, write: Callable[[np.ndarray], None]) -> None:
        """Leave the slab's bytes to ``write(slab)``, called with the whole ``(local devices,
        device_local_size)`` slab before anything else reads or writes them.  For the writer of a
        buffer no queued work knows yet (an op's new output, on the enqueuing thread)."""
        storage = self._storage
        if storage.pending is not None:
            storage.settle()
        storage.pending = write

    def has_deferred_write(self) -> bool:
        return self._storage.pending is not None

    def touch(self) -> None:
        """The bytes are about to change: do any deferred write (a partial write lands on the
        bytes before it) and drop the memo (shared with this buffer's views)."""
        storage = self._storage
        if storage.pending is not None:
            storage.settle()
        storage.memo = None

    @property
    def memo(self) -> object:
        """What a higher layer attached about the current bytes, or None (see the module
        docstring); shared by an owner and its views."""
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
