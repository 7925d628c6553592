"""The bytes of a MeshBuffer: its slab, the memo and deferred write it may carry, and the pool
that keeps released slabs for reuse.

A slab is ONE ``(local devices, device_local_size)`` uint8 array whose row ``i`` is the device at
the i-th local coordinate (row-major), each row in host page order; an owning MeshBuffer and its
views share one :class:`SlabStorage`.

A slab may carry a *memo*: an opaque object that a higher layer attaches to say what it knows
about the slab's current bytes (the ops keep decoded values there).  Whoever may change the bytes
drops it first (:meth:`MeshBuffer.touch`): :meth:`MeshBuffer.slab` does for its caller, a
workload does for each buffer its program writes, a command-queue write does when it runs, and a
free does.  Readers that only read use :meth:`MeshBuffer.rows`, which keeps it.

The mesh layer's own memo is :data:`EQUAL_ROWS`: a command-queue write of one host array to every
local device leaves it, saying only that all rows hold the same bytes (so an op on a replicated
tensor need not compare them); the next change of the bytes drops it like any memo.

A slab may also have a *deferred write* (:meth:`MeshBuffer.defer`): bytes that the higher layer
can produce from its memo and has not written yet.  Bytes already written may be let go the same
way (:meth:`SlabStorage.drop_bytes`: a memo that can make them again, e.g. a weight's decoded
values, stands in for them, and their memory goes back to the system).  Every way to the bytes (:meth:`MeshBuffer.slab`,
:meth:`MeshBuffer.rows`, a device Buffer view, :meth:`MeshBuffer.touch`) writes them first; only
:meth:`MeshBuffer.lazy_rows` (for a kernel that reads its inputs through memos) does not.

A buffer of a planning mesh (:mod:`meshnn.mesh.planning`) has :class:`NoBytes` storage instead:
the same bookkeeping, and a :class:`~meshnn.errors.PlanningError` wherever bytes are asked for.

Rows that hold the same bytes may share memory: a large slab (rows of whole pages, 1 MiB and
more, Linux) is made over a mapping of its own (:mod:`meshnn.host.shared_pages`), and a write that
gives several devices the same host bytes, whole rows (a replicated tensor, a shard replicated
along a mesh axis: :func:`meshnn.mesh.slab_copies.write_rows`), puts them in memory once and maps
those rows over them copy-on-write.  To every path the slab is still one writable array; a
device that writes its row gets its own copy of the pages it writes.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.host` (settings, memory, shared_pages) and
:mod:`meshnn.mesh.planning` (numpy otherwise).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import numpy as np

from meshnn.errors import PlanningError
from meshnn.host import shared_pages
from meshnn.host.memory import available_bytes
from meshnn.host.settings import count
from meshnn.mesh.planning import NO_BYTES


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
        """A ``(rows, size)`` uint8 slab: a pooled one, or a new zeroed one (one whose rows may
        share pages where :func:`meshnn.host.shared_pages.can_share` says so)."""
        if rows * size >= self.MIN_BYTES:
            with self._lock:
                kept = self._free.get((rows, size))
                if kept:
                    self._bytes -= rows * size
                    return kept.pop()
        if shared_pages.can_share(rows, size):  # rows that may share pages (meshnn.host.shared_pages)
            return shared_pages.new_mapped(rows, size)
        return np.zeros((rows, size), dtype=np.uint8)  # calloc: pages touched lazily

    def give(self, slab: np.ndarray) -> None:
        """Keep ``slab`` for reuse if the bound allows; otherwise let it go."""
        if slab.nbytes < self.MIN_BYTES or not (slab.flags.owndata or shared_pages.is_mapped(slab)):
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


HOST_CHECK_MIN_BYTES = 64 << 20
"""Slabs of this many bytes and more are checked against the host's available memory before their
buffer is allocated (reading it costs about 50 us: smaller slabs are not worth the check)."""


def host_shortfall(rows: int, size: int) -> tuple[int, int] | None:
    """``(needed, available)`` bytes when a ``(rows, size)`` slab would not fit in the host memory
    available now (the simulator keeps device memory in host memory), else None.  Slabs under
    ``HOST_CHECK_MIN_BYTES`` are not checked.  Inside :func:`distinct_rows` the rows that will
    share pages are counted once (:func:`rows_held`); elsewhere every row is counted, since a
    buffer's creation cannot know what its rows will hold."""
    needed = rows_held(rows, size, getattr(_DISTINCT, "count", rows)) * size
    if needed < HOST_CHECK_MIN_BYTES:
        return None
    available = available_bytes()
    if available is None or needed <= available + SLAB_POOL.nbytes:  # pooled slabs can be given back
        return None
    return needed, available


def rows_held(rows: int, size: int, distinct: int) -> int:
    """How many rows' worth of memory a ``(rows, size)`` slab takes once written with only
    ``distinct`` different rows, each written whole: ``distinct`` where its rows can share pages
    (:func:`meshnn.host.shared_pages.can_share`), else ``rows``."""
    return max(1, min(rows, distinct)) if shared_pages.can_share(rows, size) else rows


_DISTINCT = threading.local()


@contextlib.contextmanager
def distinct_rows(count: int) -> Iterator[None]:
    """Within: a buffer created on this thread is about to be written, whole rows, with only
    ``count`` different rows (a replicated tensor: 1; a shard replicated along a mesh axis: the
    shards), so its host-room check counts what its rows will really hold."""
    before = getattr(_DISTINCT, "count", None)
    _DISTINCT.count = count
    try:
        yield
    finally:
        if before is None:
            del _DISTINCT.count
        else:
            _DISTINCT.count = before


SLAB_POOL = SlabPool(count("MESHNN_SLAB_POOL_BYTES", 1 << 30, what="a number of bytes"))


class EqualRows:
    """The memo (see the module docstring) that says every local device's row holds the same bytes."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "EQUAL_ROWS"


EQUAL_ROWS = EqualRows()


_SETTLING = threading.Lock()  # deferred writes, one at a time


class WriteCount:
    """How many times any slab's bytes may have changed in this process: counted wherever a memo
    is dropped for a write (:meth:`SlabStorage.touch`, a deferred write set, a program's in-place
    write, a free).  Equal counts at two moments mean no byte of any slab changed between them
    (:func:`meshnn.mesh.workload.run_programs` skips a program that repeats the one before it on
    unchanged bytes).  Thread-safe: every count is kept."""

    __slots__ = ("_lock", "value")

    def __init__(self) -> None:
        self.value = 0
        self._lock = threading.Lock()

    def bump(self) -> None:
        with self._lock:
            self.value += 1


WRITES = WriteCount()
"""The process's one count of slab writes."""


class SlabStorage:
    """The slab of an owning buffer, shared with its views; ``data`` is None until first used and
    once released.  ``window`` caches the last ``(rows, n)`` view of the slab's first ``n`` bytes
    per row.  ``live`` is True until the owner is released (its release has run).  ``memo``: what a
    higher layer knows about the current bytes (None once they may have changed); ``pending``: a
    deferred write of the whole slab."""

    __slots__ = ("__weakref__", "data", "dropped", "live", "memo", "pending", "rows", "size", "window")

    def __init__(self, rows: int, size: int) -> None:
        self.rows, self.size = rows, size
        self.data: np.ndarray | None = None
        self.window: np.ndarray | None = None
        self.live = True
        self.memo: object = None
        self.pending: Callable[[np.ndarray], None] | None = None
        self.dropped = False  # the bytes were let go (drop_bytes) and not made again since

    @property
    def root(self) -> SlabStorage:
        """The storage that holds the bytes: itself (a view's window names its owner's)."""
        return self

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
                self.dropped = False

    def touch(self) -> None:
        """The bytes are about to change: any deferred write done first (a partial write lands on
        the bytes before it), the memo dropped, the write counted (:data:`WRITES`)."""
        if self.pending is not None:
            self.settle()
        self.memo = None
        WRITES.bump()

    def defer(self, write: Callable[[np.ndarray], None]) -> None:
        """Leave the bytes to ``write(slab)`` (after any deferred write before it); counted."""
        if self.pending is not None:
            self.settle()
        self.pending = write
        WRITES.bump()

    def array(self) -> np.ndarray:
        if self.data is None:
            self.data = SLAB_POOL.take(self.rows, self.size)
        return self.data

    def drop_bytes(self, write: Callable[[np.ndarray], None]) -> bool:
        """The bytes can be made again by ``write(slab)`` (from what a memo holds): let them go,
        their memory back to the system, and keep ``write`` as the deferred write (every way to
        the bytes makes them first).  False, nothing done, when a deferred write is pending."""
        with _SETTLING:
            if self.pending is not None or self.data is None:
                return False
            self.data = self.window = None
            self.pending, self.dropped = write, True
        return True

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
                if rows * row_size < SlabPool.MIN_BYTES or self.dropped:
                    # (dropped bytes: untouched zero pages, which cost no memory until written)
                    data = self.data = np.zeros((rows, row_size), dtype=np.uint8)
                else:
                    data = self.array()
            window = self.window = data[:, :size]
        return window

    def fresh(self, size: int) -> np.ndarray:
        """:meth:`unsettled` for the writer of a new buffer that writes every byte of it before
        anything reads them: a small slab not made yet is made without zeroing it (it holds what the
        memory held before, as device memory does, and as a pooled slab does)."""
        small = self.rows * self.size < SlabPool.MIN_BYTES  # (larger ones come from the pool, or zeroed pages)
        if self.data is None and self.pending is None and not self.dropped and small:
            self.data = np.empty((self.rows, self.size), dtype=np.uint8)
        return self.unsettled(size)

    def release(self) -> None:
        """The owner is freed: drop the memo and any deferred write, and pool or drop the bytes."""
        self.live = self.dropped = False
        self.memo = self.pending = None
        WRITES.bump()
        data = self.data
        if data is not None and data.nbytes >= SLAB_POOL.MIN_BYTES:
            SLAB_POOL.give(data)
        self.data = self.window = None


class NoBytes(SlabStorage):
    """The storage of a MeshBuffer of a planning mesh: its size, never its bytes (no slab is made,
    so a plan's host memory does not grow with its tensors).  Every way to the bytes raises."""

    __slots__ = ()

    def array(self) -> np.ndarray:
        raise PlanningError(NO_BYTES)

    def first(self, size: int) -> np.ndarray:
        raise PlanningError(NO_BYTES)

    def unsettled(self, size: int) -> np.ndarray:
        raise PlanningError(NO_BYTES)

    def settle(self) -> None:
        self.pending = None  # nothing is ever written
