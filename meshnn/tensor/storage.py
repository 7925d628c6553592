"""Tensor storage: on the host, a buffer of packed bytes per mesh coordinate; on a device, a MeshBuffer
plus the coordinates it populates.  There is no third kind: a single device is a 1x1 mesh.

Host bytes are in the device format (a TILE bfloat8_b host tensor holds packed bfp8 tiles), so a
host buffer is what a device buffer would hold, byte for byte.  Also here: the reuse of large
result arrays that reads fill (``RESULT_ARRAYS``).

Layer: tensor.  Imports errors and mesh only.
"""

from __future__ import annotations

import enum
import math
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, PlanningError
from meshnn.mesh.coord import MeshCoordinate, MeshShape, as_coord, to_linear_index
from meshnn.mesh.mesh_buffer import MeshBuffer


class StorageType(enum.Enum):
    HOST = 0
    DEVICE = 1

    def __str__(self) -> str:
        return f"StorageType.{self.name}"


class HostBuffer:
    """The packed bytes of one host shard.  ``np.asarray`` and ``np.from_dlpack`` read it as a 1-D
    uint8 array without copying."""

    __slots__ = ("_data",)

    def __init__(self, data: np.ndarray) -> None:
        if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 1:
            raise MeshnnTypeError("a HostBuffer holds a 1-D uint8 array")
        self._data = data

    @property
    def data(self) -> np.ndarray:
        return self._data

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def __len__(self) -> int:
        return self._data.size

    def __array__(self, dtype: object = None, copy: bool | None = None) -> np.ndarray:
        if copy:
            return self._data.astype(dtype or np.uint8, copy=True)
        return self._data if dtype is None else self._data.astype(dtype)

    def __dlpack__(self, **kwargs: object) -> object:
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()

    def __buffer__(self, flags: int) -> memoryview:
        return memoryview(self._data)

    def __repr__(self) -> str:
        return f"HostBuffer({self._data.nbytes} B)"


class NoValues(HostBuffer):
    """A host shard made from a shape-only stand-in (a torch "meta" tensor): its size, no bytes.
    It can go to a planning mesh (which writes nothing); reading its bytes raises."""

    __slots__ = ("_size",)

    def __init__(self, nbytes: int) -> None:
        self._size = nbytes

    @property
    def data(self) -> np.ndarray:
        raise PlanningError(
            "this host tensor was made from a shape-only stand-in (a torch meta tensor): it has a shape "
            "and a dtype but no values; it can only be put on a planning mesh (open_mesh_device(..., "
            "execute=False))"
        )

    @property
    def nbytes(self) -> int:
        return self._size

    def __len__(self) -> int:
        return self._size

    def __array__(self, dtype: object = None, copy: bool | None = None) -> np.ndarray:
        return self.data

    def __dlpack__(self, **kwargs: object) -> object:
        return self.data

    def __buffer__(self, flags: int) -> memoryview:
        return memoryview(self.data)

    def __repr__(self) -> str:
        return f"NoValues({self._size} B)"


def _everywhere(coord: MeshCoordinate) -> bool:
    """The default ``is_local``: every coordinate is this process's."""
    return True


class DistributedHostBuffer:
    """A host buffer per coordinate of a mesh shape; only local, populated shards hold bytes.

    Which coordinates are local is an ``is_local`` predicate (every one by default), or the box
    ``local_shape`` at ``local_offset`` given to :meth:`create`.  Shards are kept, listed and
    visited in coordinate (row-major) order, whatever order they were emplaced in.
    """

    __slots__ = ("_is_local", "_shape", "_shards", "_tried")

    def __init__(
        self,
        shape: MeshShape,
        shards: dict[MeshCoordinate, HostBuffer] | None = None,
        *,
        is_local: Callable[[MeshCoordinate], bool] | None = None,
    ) -> None:
        if not isinstance(shape, MeshShape):
            if isinstance(shape, str) or not isinstance(shape, Sequence):
                raise MeshnnTypeError(f"DistributedHostBuffer: shape must be a MeshShape, got {shape!r}")
            shape = MeshShape(shape)
        self._shape = shape
        self._is_local = is_local or _everywhere
        self._shards: dict[MeshCoordinate, HostBuffer] = {}
        self._tried: list[MeshCoordinate] = []
        for coord, buffer in (shards or {}).items():
            self.emplace_shard(coord, lambda b=buffer: b)

    @classmethod
    def create(
        cls,
        global_shape: MeshShape,
        local_shape: MeshShape | None = None,
        local_offset: MeshCoordinate | None = None,
    ) -> DistributedHostBuffer:
        """A buffer over ``global_shape`` of which this host holds the box ``local_shape`` at
        ``local_offset`` (default: all of it, at the origin)."""
        shape = MeshShape(global_shape)
        local = shape if local_shape is None else MeshShape(local_shape)
        offset = MeshCoordinate.zero_coordinate(shape.dims()) if local_offset is None else as_coord(local_offset)
        if local.dims() != shape.dims():
            raise MeshnnValueError(f"Global shape {shape!r} and local shape {local!r} must have the same dimensions")
        if offset.dims() != shape.dims():
            raise MeshnnValueError(f"Global shape {shape!r} and local offset {offset!r} must have the same dimensions")
        for dim, (o, n, g) in enumerate(zip(offset, local, shape, strict=True)):
            if o + n > g:
                raise MeshnnValueError(
                    f"Local shape {local!r} at offset {offset!r} exceeds global shape {shape!r} at dimension "
                    f"{dim}: {o} + {n} > {g}"
                )
        if local == shape:
            return cls(shape)

        def is_local(coord: MeshCoordinate) -> bool:
            return all(o <= c < o + n for c, o, n in zip(coord, offset, local, strict=True))

        return cls(shape, is_local=is_local)

    def shape(self) -> MeshShape:
        return self._shape

    def _check(self, coord: MeshCoordinate) -> MeshCoordinate:
        coord = as_coord(coord)
        to_linear_index(self._shape, coord)  # raises outside the global shape
        return coord

    def is_local(self, coord: MeshCoordinate) -> bool:
        return self._is_local(self._check(coord))

    def spans_processes(self) -> bool:
        """True when some coordinates may be another process's (an ``is_local`` predicate or a
        local box was given): the same answer on every rank, so every rank takes the same path
        (gathers the others' shards, together) when it reads the buffer."""
        return self._is_local is not _everywhere

    def emplace_shard(self, coord: MeshCoordinate, produce: Callable[[], HostBuffer]) -> None:
        """Store ``produce()`` at ``coord``; for a remote coordinate ``produce`` is not called."""
        coord = self._check(coord)
        if coord not in self._tried:
            self._tried.append(coord)
            self._tried.sort()
        if self._is_local(coord):
            buffer = produce()
            if not isinstance(buffer, HostBuffer):
                raise MeshnnTypeError(f"a shard must be a HostBuffer, got {type(buffer).__name__}")
            self._shards[coord] = buffer

    def emplace_shards(self, coords: Iterable[MeshCoordinate], produce: Callable[[MeshCoordinate], HostBuffer]) -> None:
        """``emplace_shard(coord, produce(coord))`` for each coordinate; remote ones are not produced."""
        for coord in coords:
            self.emplace_shard(coord, lambda c=coord: produce(c))

    def get_shard(self, coord: MeshCoordinate | Iterable[int]) -> HostBuffer | None:
        """The shard at ``coord``, or None when it is unpopulated or remote."""
        return self._shards.get(self._check(coord))  # type: ignore[arg-type]

    def shard_coords(self) -> list[MeshCoordinate]:
        """Every coordinate a shard was written for (remote ones included), in coordinate order."""
        return list(self._tried)

    def local_shards(self) -> dict[MeshCoordinate, HostBuffer]:
        """The local, populated shards, in coordinate order."""
        return {c: self._shards[c] for c in self._tried if c in self._shards}

    def is_uniform(self) -> bool:
        """True when every coordinate of the shape holds a shard (none unpopulated, none remote)."""
        return len(self._shards) == self._shape.mesh_size()

    def transform(self, fn: Callable[[HostBuffer], HostBuffer]) -> DistributedHostBuffer:
        """A new buffer holding ``fn(shard)`` for each local populated shard, in coordinate order."""
        out = DistributedHostBuffer(self._shape, is_local=self._is_local)
        for coord in self._tried:
            if coord in self._shards:
                out.emplace_shard(coord, lambda c=coord: fn(self._shards[c]))
            else:
                out._tried.append(coord)
        return out

    def apply(self, fn: Callable[[HostBuffer], None]) -> None:
        """``fn(shard)`` for each local populated shard, in coordinate order."""
        for coord in self._tried:
            if coord in self._shards:
                fn(self._shards[coord])

    def __repr__(self) -> str:
        return f"DistributedHostBuffer(shape={self._shape!r}, shards={len(self._shards)})"


@dataclass(frozen=True, slots=True)
class HostStorage:
    buffer: DistributedHostBuffer

    def is_uniform_storage(self) -> bool:
        """True when every coordinate of the host buffer's mesh shape holds a shard."""
        return self.buffer.is_uniform()


@dataclass(frozen=True, slots=True)
class DeviceStorage:
    """A MeshBuffer (allocated on every device) and the coordinates whose rows hold this tensor."""

    mesh_buffer: MeshBuffer
    coords: tuple[MeshCoordinate, ...]

    def __post_init__(self) -> None:
        if not self.coords:
            raise MeshnnValueError("a device tensor populates at least one coordinate")

    def is_uniform(self, mesh_shape: MeshShape) -> bool:
        """True when the tensor spans every device of a mesh of ``mesh_shape``."""
        return len(self.coords) == mesh_shape.mesh_size()

    def is_uniform_storage(self) -> bool:
        """True when the tensor spans every device of its mesh (ttnn's ``is_uniform_storage``)."""
        return self.is_uniform(self.mesh_buffer.device().shape)


Storage = HostStorage | DeviceStorage


# ---------------------------------------------------------------------- recycled host arrays

RECYCLE_MIN_BYTES = 16 << 20
"""Results smaller than this (in bytes) are plain ``np.empty`` arrays: the allocator serves them well."""

RECYCLE_MAX_BYTES = 512 << 20
"""Results larger than this (in bytes) are plain ``np.empty`` arrays too, so that no more than
``RECYCLED_ARRAYS * RECYCLE_MAX_BYTES`` (1 GiB) of dropped results is ever held."""

RECYCLED_ARRAYS = 2
"""How many of the latest large results :class:`ResultArrays` remembers; the memory of one the
caller has dropped serves the next result of about its size.  0 turns recycling off."""


class ResultArrays:
    """Memory for large arrays handed to the caller (``to_numpy`` / ``to_torch`` results), reused
    once the caller has dropped every view of them.

    Fresh memory costs a page fault and a zeroed page per 4 KiB (per 2 MiB with huge pages) when
    first written: about twice the copy into it, and far more on a virtual machine whose host
    takes back the pages a guest frees.  A caller who reads a tensor, uses the values and drops
    them (a training or serving loop) gets back the pages it just released.

    Bounded: only the latest ``RECYCLED_ARRAYS`` results of ``RECYCLE_MIN_BYTES`` to
    ``RECYCLE_MAX_BYTES`` are remembered, so at most that many dropped arrays' memory is held
    (until the next large result, or :meth:`clear`).  An array is handed out as a
    view of a buffer export, so every view of it, numpy's or torch's, keeps that export alive:
    memory is reused only when its export has died, never under a live view.  The memory of a
    reused array holds old bytes: the caller must write every element (as the readers do)."""

    def __init__(
        self,
        remembered: int = RECYCLED_ARRAYS,
        min_bytes: int = RECYCLE_MIN_BYTES,
        max_bytes: int = RECYCLE_MAX_BYTES,
    ) -> None:
        self._min_bytes, self._max_bytes = min_bytes, max_bytes
        self._recent: deque[tuple[weakref.ref[np.ndarray], np.ndarray]] = deque(maxlen=max(0, remembered))
        self._lock = threading.Lock()

    def empty(self, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
        """An uninitialised C-contiguous array of ``shape`` and ``dtype``: recycled memory of at
        least its size (at most twice) when a remembered result has been dropped, else new."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if not self._min_bytes <= nbytes <= self._max_bytes or self._recent.maxlen == 0:
            return np.empty(shape, dtype)
        with self._lock:
            memory = self._take_dropped(nbytes)
        if memory is None:
            memory = np.empty(nbytes, np.uint8)
        export = np.frombuffer(memoryview(memory), np.uint8, nbytes)  # every view's base: see above
        with self._lock:
            self._recent.append((weakref.ref(export), memory))
        return export.view(dtype).reshape(shape)

    def _take_dropped(self, nbytes: int) -> np.ndarray | None:
        """The memory of a remembered, dropped result of ``nbytes`` to ``2 * nbytes`` bytes."""
        for index, (export, memory) in enumerate(self._recent):
            if export() is None and nbytes <= memory.nbytes <= 2 * nbytes:
                del self._recent[index]
                return memory
        return None

    def clear(self) -> None:
        """Forget every remembered result (the memory of dropped ones is freed)."""
        with self._lock:
            self._recent.clear()


RESULT_ARRAYS = ResultArrays()
