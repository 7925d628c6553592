"""MeshCommandQueue: in-order reads, writes, workloads and events on a mesh.

Each queue executes its work in order.  Work runs on the queue's dispatch thread, except that an
enqueue finding the queue idle runs at once on the caller's thread (the same order, without a
thread hand-off).  Every call validates its arguments before it enqueues anything.  A
non-blocking write owns its data: it copies the caller's bytes when it cannot write them at once.

An error raised while work executes is kept and surfaces at the next blocking call, ``finish``
or ``event_synchronize`` of that queue; the queue stays usable.  Events order work across the
queues of a mesh (``enqueue_wait_for_event``), and every wait is bounded (``MESHNN_WAIT_TIMEOUT``
seconds, default 120): a wait that times out becomes the queue's error instead of a hang.

Argument orders are tt-metal's: writes take ``(mesh_buffer, data)``, reads ``(data, mesh_buffer)``.

Large host copies (``PARALLEL_MIN_BYTES`` and more) are split over the host worker threads
(:func:`parallel_copyto`, which the tensor layer's copies use too); the bytes are those of one
single-threaded copy.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import os
import threading
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from meshnn.device.buffer import ShardOrientation
from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError, QueueError, WrongMeshError
from meshnn.mesh.buffer_config import BufferRegion, ShardedBufferConfig
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange, as_coord
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.slab import EQUAL_ROWS
from meshnn.mesh.workload import MeshWorkload

if TYPE_CHECKING:
    from meshnn.mesh.mesh_device import MeshDevice

_event_ids = itertools.count(1)


def wait_timeout() -> float:
    return float(os.environ.get("MESHNN_WAIT_TIMEOUT", "120"))


# ---------------------------------------------------------------------- host worker threads

PARALLEL_MIN_BYTES = 2 << 20
"""Host copies of fewer bytes run on the calling thread alone: below this size, handing part of
a copy to another thread costs more than the second core saves.  (numpy copies release the
interpreter lock for their whole length, so the threads of a large copy do run at once.)"""

HOST_THREADS_ENV = "MESHNN_HOST_THREADS"
MAX_HOST_THREADS = 8  # beyond this a copy is bound by memory bandwidth, not by cores

_workers: tuple[ThreadPoolExecutor, int] | None = None  # the pool and its thread count
_workers_lock = threading.Lock()
_on_worker = threading.local()


def host_threads() -> int:
    """Threads one large host copy or conversion is split over: ``MESHNN_HOST_THREADS`` when set
    (1 turns splitting off), else the CPUs this process may run on, at most ``MAX_HOST_THREADS``."""
    configured = os.environ.get(HOST_THREADS_ENV)
    if configured:
        if not configured.isdigit() or int(configured) < 1:
            raise MeshnnValueError(f"{HOST_THREADS_ENV} must be a positive integer, got {configured!r}")
        return int(configured)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_HOST_THREADS))


def _worker_pool(count: int) -> ThreadPoolExecutor:
    """At least ``count`` host worker threads, made at the first large copy and then kept (they
    exit with the interpreter).  All of them start at once, so ``threading.active_count()``
    changes then and not at some later copy."""
    global _workers
    with _workers_lock:
        if _workers is None or _workers[1] < count:
            pool = ThreadPoolExecutor(count, "meshnn-host", initializer=_mark_worker)
            started = threading.Barrier(count)  # each task holds its thread until all have one
            for future in [pool.submit(started.wait, wait_timeout()) for _ in range(count)]:
                future.result()
            if _workers is not None:
                _workers[0].shutdown(wait=False)
            _workers = (pool, count)
        return _workers[0]


def on_host_worker() -> bool:
    """Whether the calling thread is one of the host worker threads (where parallel work runs in turn)."""
    return getattr(_on_worker, "active", False)


def _mark_worker() -> None:
    _on_worker.active = True


def _forget_workers() -> None:
    """In a forked child: the parent's threads are gone, so the next large copy starts new ones."""
    global _workers, _workers_lock
    _workers, _workers_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def run_parallel(task: Callable[[int], None], parts: int) -> None:
    """Run ``task(0)``, ..., ``task(parts - 1)`` at the same time: part 0 on the calling thread,
    the others on the host worker threads.  Returns once every part has finished (none is left
    writing), then raises the first error a part raised.  On a worker thread (a nested call), or
    with one host thread, the parts run one after another: a worker never waits for a worker."""
    threads = min(parts, host_threads())
    if threads <= 1 or on_host_worker():
        for part in range(parts):
            task(part)
        return
    pool = _worker_pool(threads - 1)
    futures = [pool.submit(task, part) for part in range(1, parts)]
    try:
        task(0)
    finally:
        errors = [future.exception() for future in futures]  # waits for every part
    for error in errors:
        if error is not None:
            raise error


def parallel_copyto(dst: np.ndarray, src: np.ndarray) -> None:
    """``np.copyto(dst, src)`` for two arrays of one shape (any strides), split into ranges of
    their first axis long enough to share out when it moves ``PARALLEL_MIN_BYTES`` or more.  Each
    element is copied once, by one thread: the bytes are exactly those of the single copy."""
    parts = host_threads() if dst.nbytes >= PARALLEL_MIN_BYTES else 1
    axis = next((i for i, n in enumerate(dst.shape) if n >= parts), None)
    if parts == 1 or axis is None:
        np.copyto(dst, src)
        return
    length, lead = dst.shape[axis], (slice(None),) * axis

    def copy_part(part: int) -> None:
        piece = (*lead, slice(length * part // parts, length * (part + 1) // parts))
        np.copyto(dst[piece], src[piece])

    run_parallel(copy_part, parts)


@dataclass(frozen=True, slots=True)
class ShardDataTransfer:
    """Host bytes for (or from) the shard at ``shard_coord``, optionally a region of it."""

    shard_coord: MeshCoordinate
    host_data: Any
    region: BufferRegion | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shard_coord", as_coord(self.shard_coord))
        if self.region is not None and not isinstance(self.region, BufferRegion):
            raise MeshnnTypeError(f"region must be a BufferRegion, got {self.region!r}")


@dataclass(frozen=True, slots=True, eq=False)
class HostEncoder:
    """Host data for a write, given as the call that makes it: ``encode(out)`` fills ``out``, a
    C-contiguous uint8 array of ``nbytes``, with the bytes.  The queue hands it the device's own
    memory, so the bytes are made in place with no staging copy (the tensor layer converts a
    shard to its device format this way); an encoder given for several places of one write is
    made in the first and copied from there to the others.  ``encode`` may read only host memory
    that stays as it is until the write runs; a write that cannot run at once (non-blocking,
    queue busy) calls it at enqueue time into a host array that the write then owns, as it
    copies plain bytes.  A transfer's region must be exactly ``nbytes``.  An error raised by
    ``encode`` (or ``together``) surfaces as itself, not as a QueueError: it is the caller's own
    code that failed, not a kernel.

    ``together``, when given, may make the bytes of several encoders at once: the encoders of
    one write that share it are made by one call, ``together([(encoder, out), ...])``, which
    fills every ``out`` as ``encode`` would (so a conversion can spread all of them over the host
    threads in one pass)."""

    nbytes: int
    encode: Callable[[np.ndarray], None]
    together: Callable[[list[tuple[HostEncoder, np.ndarray]]], None] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "nbytes", _byte_count(self.nbytes, "HostEncoder"))
        if not callable(self.encode) or not (self.together is None or callable(self.together)):
            raise MeshnnTypeError("HostEncoder: encode (and together, when given) must be callables")

    def materialize(self) -> np.ndarray:
        """The bytes in a new host array."""
        out = np.empty(self.nbytes, np.uint8)
        _host_code(self.encode, out)
        return out


@dataclass(frozen=True, slots=True, eq=False)
class HostDecoder:
    """A host destination for a read, given as the call that takes the bytes: ``decode(data)``
    gets the region's bytes as a read-only C-contiguous uint8 array of ``nbytes``, the device's
    own memory, valid during the call only (so a tensor shard is decoded straight out of device
    memory, with no staging copy).  A transfer's region must be exactly ``nbytes``; an error
    ``decode`` (or ``together``) raises surfaces as itself.

    ``together``, when given, may take the bytes of several decoders at once: the decoders of
    one read that share it, consecutive in its transfers (a plain read between them ends a run),
    are called as one, ``together([(decoder, data), ...])``."""

    nbytes: int
    decode: Callable[[np.ndarray], None]
    together: Callable[[list[tuple[HostDecoder, np.ndarray]]], None] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "nbytes", _byte_count(self.nbytes, "HostDecoder"))
        if not callable(self.decode) or not (self.together is None or callable(self.together)):
            raise MeshnnTypeError("HostDecoder: decode (and together, when given) must be callables")


def _byte_count(nbytes: object, what: str) -> int:
    try:
        count = operator.index(nbytes)  # type: ignore[arg-type]
    except TypeError:
        raise MeshnnTypeError(f"{what}: nbytes must be an integer, got {nbytes!r}") from None
    if count < 0:
        raise MeshnnValueError(f"{what}: nbytes must be >= 0, got {count}")
    return count


def _host_code(function: Callable[[Any], None], argument: Any) -> None:
    """``function(argument)``, the caller's own encoder or decoder code: an error it raises is
    marked so that it surfaces as itself, not as a QueueError (see :meth:`MeshCommandQueue._raise_kept`)."""
    try:
        function(argument)
    except BaseException as e:
        with contextlib.suppress(AttributeError, TypeError):
            e._meshnn_host_code = True  # type: ignore[attr-defined]
        raise


def _codec_size(codec: HostEncoder | HostDecoder, region: BufferRegion, what: str) -> None:
    if codec.nbytes != region.size:
        raise MeshnnValueError(f"{what} is a {type(codec).__name__} of {codec.nbytes} B; the region is {region.size} B")


def _read_only(source: np.ndarray) -> np.ndarray:
    view = source.view()
    view.flags.writeable = False
    return view


def _owned(plan: list[tuple[int, BufferRegion, Any]]) -> list[tuple[int, BufferRegion, np.ndarray]]:
    """``plan`` with its own copy of every host array, each encoder's bytes made (once) in host memory."""
    made: dict[int, np.ndarray] = {}  # by id of the host data (one copy of an array given for several places)
    owned = []
    for row, region, data in plan:
        if id(data) not in made:
            made[id(data)] = data.materialize() if isinstance(data, HostEncoder) else data.copy()
        owned.append((row, region, made[id(data)]))
    return owned


class _EncoderBatch:
    """The places of one write's encoders, in plan order, as they are made: an encoder's first
    place waits to be made (those that share a ``together`` by one call of it, the others one
    by one); a later place of the same encoder is a copy of its first, once that is made.  Every
    write lands in the plan's order: whatever waits is made before a plain copy (:meth:`flush`)
    or before a place that overlaps one waiting; an encoder whose first place a later write
    overlaps before its next place is made once more, in host memory, for that place."""

    def __init__(self) -> None:
        self._waiting: list[tuple[HostEncoder, int, BufferRegion, np.ndarray]] = []
        self._first: dict[int, tuple[int, BufferRegion, np.ndarray]] = {}  # by id of the encoder
        self._overwritten: set[int] = set()  # encoders whose first place a later write overlapped

    def add(self, encoder: HostEncoder, row: int, region: BufferRegion, target: np.ndarray) -> None:
        first = self._first.get(id(encoder))
        if first is not None:
            self.flush()
            source = first[2] if id(encoder) not in self._overwritten else encoder.materialize()
            self.wrote(row, region)
            parallel_copyto(target, source)
            return
        if any(r == row and _overlap(g, region) for _, r, g, _ in self._waiting):
            self.flush()
        self.wrote(row, region)
        self._first[id(encoder)] = (row, region, target)
        self._waiting.append((encoder, row, region, target))

    def wrote(self, row: int, region: BufferRegion) -> None:
        """A write to ``region`` of ``row`` is about to land: the first places it overlaps are spent."""
        for key, (r, g, _) in self._first.items():
            if r == row and _overlap(g, region):
                self._overwritten.add(key)

    def flush(self) -> None:
        waiting, self._waiting = self._waiting, []
        _call_grouped([(encoder, target) for encoder, _, _, target in waiting], lambda encoder: encoder.encode)


def _decode_all(waiting: list[tuple[HostDecoder, np.ndarray]]) -> None:
    """Call the ``waiting`` decoders (emptying it): those that share a ``together`` by one call."""
    pairs, waiting[:] = list(waiting), []
    _call_grouped(pairs, lambda decoder: decoder.decode)


def _call_grouped(pairs: list[tuple[Any, np.ndarray]], own: Callable[[Any], Callable[[np.ndarray], None]]) -> None:
    """Call each ``(codec, array)`` of ``pairs`` (HostEncoders or HostDecoders): one without a
    ``together`` by its own function (``own(codec)``), those that share a ``together`` by one
    call of it, given all their pairs (a lone one by its own function)."""
    groups: dict[Callable, list[tuple[Any, np.ndarray]]] = {}
    for codec, array in pairs:
        if codec.together is None:
            _host_code(own(codec), array)
        else:
            groups.setdefault(codec.together, []).append((codec, array))
    for together, grouped in groups.items():
        if len(grouped) == 1:
            _host_code(own(grouped[0][0]), grouped[0][1])
        else:
            _host_code(together, grouped)


def _overlap(a: BufferRegion, b: BufferRegion) -> bool:
    return a.offset < b.offset + b.size and b.offset < a.offset + a.size


@dataclass(eq=False)
class MeshEvent:
    """A point in a queue's work; ``device_range`` is the devices it was recorded on."""

    cq_id: int
    event_id: int
    device_range: MeshCoordinateRange
    mesh_id: int
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    def is_completed(self) -> bool:
        return self._done.is_set()


def host_bytes(data: Any, *, writable: bool, what: str) -> np.ndarray:
    """A flat uint8 view of ``data`` (any numpy array or buffer-protocol object), without copying.

    A numpy array that is not C-contiguous (a strided view, e.g. one shard of a larger array) is
    returned as it is: its bytes in C order are the transfer, copied element by element straight
    between the array and the device (no staging copy)."""
    if isinstance(data, np.ndarray):
        array = data
    else:
        try:
            array = np.frombuffer(data, dtype=np.uint8) if not writable else np.asarray(memoryview(data))
        except (TypeError, ValueError) as e:
            raise MeshnnTypeError(
                f"{what} must be a numpy array or a bytes-like object, got {type(data).__name__}"
            ) from e
    if writable and not array.flags.writeable:
        raise MeshnnValueError(f"{what} is read-only; a read needs a writable array")
    if not array.flags.c_contiguous:
        if array.dtype.hasobject:
            raise MeshnnTypeError(f"{what} must hold plain numbers, got {array.dtype}")
        return array
    return array.reshape(-1).view(np.uint8)


def _strided(data: np.ndarray) -> bool:
    return data.ndim != 1 or data.dtype != np.uint8


def _region_as(slab_row: np.ndarray, data: np.ndarray) -> np.ndarray:
    """A device row's region bytes viewed with the dtype and shape of a strided host array."""
    return slab_row.view(data.dtype).reshape(data.shape)


def _host_slice(data: np.ndarray, size: int, what: str) -> np.ndarray:
    """The first ``size`` bytes of host data; a strided array must be exactly ``size`` bytes."""
    if not _strided(data):
        return data[:size]
    if data.nbytes != size:
        raise MeshnnValueError(f"{what} is a strided array of {data.nbytes} B; the region is {size} B")
    return data


class MeshCommandQueue:
    """One command queue (``cq_id``) of a mesh device."""

    def __init__(self, mesh: MeshDevice, cq_id: int) -> None:
        self._mesh = mesh
        self.cq_id = cq_id
        self._work: deque[Callable[[], None]] = deque()
        # A plain lock under the condition: the enqueue path takes it directly (a C-level context
        # manager); nothing acquires it re-entrantly, and no finalizer or weakref callback
        # (which might run inside a locked block) touches a queue.
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self._finishing = 0  # threads waiting in finish(), under the lock
        self._busy = False
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False

    def id(self) -> int:
        return self.cq_id

    # ------------------------------------------------------------------------------- engine

    def _submit(
        self,
        work: Callable[[], None],
        *,
        blocking: bool,
        inline: bool = True,
        own: Callable[[], Callable[[], None]] | None = None,
    ) -> None:
        """Run ``work`` in order; ``own`` makes a copy of the work that owns its host data.

        Work finding the queue idle (nothing queued, nothing running) runs here and now; its end
        wakes the waiters that need it: the dispatch thread when work was queued meanwhile (it
        waits for the queue to be idle), and any ``finish``."""
        owned = None
        if own is not None and not blocking and (self._work or self._busy):  # a guess, made before the lock
            owned = own()  # copies (and runs encoders) outside the lock: other callers need not wait
        with self._lock:
            run_here = inline and not self._work and not self._busy
            if run_here:
                self._busy = True
            else:
                if owned is None and own is not None and not blocking:
                    owned = own()  # the queue became busy meanwhile
                self._work.append(owned or work)
                self._ensure_thread()
                self._cv.notify_all()
        if run_here:
            try:
                work()
            except BaseException as e:  # kept for the next blocking call, like the thread's errors
                self._keep(e)
            finally:
                with self._lock:
                    self._busy = False
                    if self._work or self._finishing:
                        self._cv.notify_all()
        if blocking:
            self.finish()

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stopping = False
            self._thread = threading.Thread(target=self._dispatch, name=f"meshnn-cq{self.cq_id}", daemon=True)
            self._thread.start()

    def _dispatch(self) -> None:
        while True:
            with self._cv:
                while (not self._work or self._busy) and not self._stopping:
                    self._cv.wait(timeout=1.0)
                if self._stopping and not self._work:
                    return
                work = self._work.popleft()
                self._busy = True
            try:
                work()
            except BaseException as e:
                self._keep(e)
            finally:
                del work  # the wait below must not hold the last work's buffers (and so their memory)
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()

    def _keep(self, error: BaseException) -> None:
        """Keep the first error for the next blocking call, without its stack frames: a kept
        traceback would hold every local of the enqueuing call stack (the user's dropped tensors
        and their MeshBuffers) alive until the error surfaced.  The traceback is kept as text."""
        released = _without_frames(error)
        with self._cv:
            if self._error is None:
                self._error = released

    def _raise_kept(self) -> None:
        with self._cv:
            error, self._error = self._error, None
        if error is None:
            return
        if (
            isinstance(error, MeshnnError)
            or not isinstance(error, Exception)
            or getattr(error, "_meshnn_host_code", False)
        ):
            raise error  # meshnn's own errors, an interrupt, or the caller's encoder / decoder failing
        raise QueueError(f"work enqueued on cq {self.cq_id} failed: {type(error).__name__}: {error}") from error

    def finish(self) -> None:
        """Wait until every enqueued piece of work has run; raise the first error kept."""
        deadline = 2 * wait_timeout() + 1  # beyond any one wait's own timeout, so that one reports first
        with self._cv:
            self._finishing += 1
            try:
                drained = self._cv.wait_for(lambda: not self._work and not self._busy, timeout=deadline)
            finally:
                self._finishing -= 1
            if not drained:
                raise QueueError(f"cq {self.cq_id} did not drain within {deadline} s (is it waiting for an event?)")
        self._raise_kept()

    def shutdown(self) -> None:
        """Drain and stop the dispatch thread (the mesh is closing); errors are dropped."""
        with contextlib.suppress(MeshnnError):
            self.finish()
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=wait_timeout())

    # ------------------------------------------------------------------------------ checks

    def _check_buffer(self, mesh_buffer: MeshBuffer) -> None:
        if not isinstance(mesh_buffer, MeshBuffer):
            raise MeshnnTypeError(f"expected a MeshBuffer, got {type(mesh_buffer).__name__}")
        self._mesh.check_open()
        mesh_buffer.check_allocated()
        if mesh_buffer.mesh_id != self._mesh.mesh_id:
            raise WrongMeshError("the MeshBuffer belongs to another mesh device than this queue's")

    def _region(self, mesh_buffer: MeshBuffer, transfer: ShardDataTransfer) -> BufferRegion:
        local = mesh_buffer.device_local_size()
        region = transfer.region or BufferRegion(0, local)
        if region.offset + region.size > local:
            raise MeshnnValueError(
                f"region (offset {region.offset}, size {region.size}) runs past the {local} B buffer on "
                f"device {transfer.shard_coord}"
            )
        return region

    # ------------------------------------------------------------------------------ writes

    def enqueue_write_shards(
        self, mesh_buffer: MeshBuffer, transfers: Sequence[ShardDataTransfer], blocking: bool = False
    ) -> None:
        """Write each transfer's bytes to its device (its region); remote devices are skipped."""
        self._check_buffer(mesh_buffer)
        plan = []
        for transfer in transfers:
            if not isinstance(transfer, ShardDataTransfer):
                raise MeshnnTypeError(f"transfers must be ShardDataTransfers, got {type(transfer).__name__}")
            self._mesh.is_local(transfer.shard_coord)  # raises when outside the mesh
            region = self._region(mesh_buffer, transfer)
            what = f"host data for {transfer.shard_coord}"
            if isinstance(transfer.host_data, HostEncoder):
                _codec_size(transfer.host_data, region, what)
                if self._mesh.is_local(transfer.shard_coord):
                    plan.append((self._mesh.local_row(transfer.shard_coord), region, transfer.host_data))
                continue
            data = host_bytes(transfer.host_data, writable=False, what=what)
            if data.nbytes < region.size:
                raise MeshnnValueError(
                    f"host data for device {transfer.shard_coord} has {data.nbytes} B, the region needs {region.size} B"
                )
            if self._mesh.is_local(transfer.shard_coord):
                plan.append((self._mesh.local_row(transfer.shard_coord), region, _host_slice(data, region.size, what)))

        slab = mesh_buffer.slab()  # taken now: the write lands even if the buffer is freed meanwhile
        # one host array to every local device, whole rows: they hold the same bytes afterwards
        same = (
            len(plan) == slab.shape[0] > 1
            and len({row for row, _, _ in plan}) == len(plan)
            and all(t.host_data is transfers[0].host_data for t in transfers)
            and all(region.offset == 0 and region.size == slab.shape[1] for _, region, _ in plan)
        )

        def write(items=plan) -> None:
            mesh_buffer.touch()  # also when it runs: a memo made since the enqueue is stale now
            first = items[0][2] if items else None
            if same and isinstance(first, HostEncoder):  # made on the first device, copied to the others
                _host_code(first.encode, slab[0])
                parallel_copyto(slab[1:], np.broadcast_to(slab[0], slab[1:].shape))
                mesh_buffer.memo = EQUAL_ROWS
                return
            if same and not _strided(first):  # one copy, the host bytes broadcast over the rows
                parallel_copyto(slab, np.broadcast_to(first, slab.shape))
                mesh_buffer.memo = EQUAL_ROWS
                return
            batch = _EncoderBatch()
            for rows, region, data in _coalesced(items, slab.shape[1]):
                target = slab[rows, region.offset : region.offset + region.size]
                if isinstance(data, HostEncoder):
                    batch.add(data, rows, region, target)
                    continue
                batch.flush()  # the encoders before this copy land before it
                for row in range(slab.shape[0])[rows] if isinstance(rows, slice) else [rows]:
                    batch.wrote(row, region)
                parallel_copyto(_region_as(target, data) if _strided(data) else target, data)
            batch.flush()
            if same:
                mesh_buffer.memo = EQUAL_ROWS

        def owned() -> Callable[[], None]:
            items = _owned(plan)  # copied (encoders run) now, at the enqueue: the caller may reuse its memory
            return lambda: write(items)

        self._submit(write, blocking=blocking, own=owned)

    def enqueue_write_mesh_buffer(self, mesh_buffer: MeshBuffer, host_data: Any, blocking: bool = False) -> None:
        """Replicated: the same bytes to every device; sharded: the global buffer cut into shards."""
        self._check_buffer(mesh_buffer)
        data = host_bytes(host_data, writable=False, what="host data")
        if _strided(data):
            data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        config = mesh_buffer.global_config()
        if isinstance(config, ShardedBufferConfig):
            self._write_sharded(mesh_buffer, config, data, blocking)
            return
        local = mesh_buffer.device_local_size()
        if data.size < local:
            raise MeshnnValueError(f"host data has {data.size} B, the buffer holds {local} B per device")
        coords = self._mesh.local_coords()
        self.enqueue_write_shards(mesh_buffer, [ShardDataTransfer(c, data[:local]) for c in coords], blocking)

    def enqueue_write_shard_to_sub_grid(
        self,
        mesh_buffer: MeshBuffer,
        host_data: Any,
        device_range: MeshCoordinateRange,
        blocking: bool = False,
        region: BufferRegion | None = None,
    ) -> None:
        """The same bytes to every device of ``device_range``."""
        self._check_buffer(mesh_buffer)
        if isinstance(mesh_buffer.global_config(), ShardedBufferConfig):
            self.enqueue_write_mesh_buffer(mesh_buffer, host_data, blocking)
            return
        transfers = [ShardDataTransfer(c, host_data, region) for c in device_range if self._mesh.is_local(c)]
        self.enqueue_write_shards(mesh_buffer, transfers, blocking)

    def _write_sharded(
        self, mesh_buffer: MeshBuffer, config: ShardedBufferConfig, data: np.ndarray, blocking: bool
    ) -> None:
        if data.size < config.global_size:
            raise MeshnnValueError(f"host data has {data.size} B, the sharded buffer holds {config.global_size} B")
        shards = _shard_view(config, data[: config.global_size])
        coords = list(self._mesh.shape.coords())
        transfers = [
            ShardDataTransfer(coords[i], shards[k])
            for k, devices in enumerate(shard_devices(config, self._mesh.num_rows, self._mesh.num_cols))
            for i in devices
        ]
        self.enqueue_write_shards(mesh_buffer, transfers, blocking)

    # ------------------------------------------------------------------------------- reads

    def enqueue_read_shards(
        self, transfers: Sequence[ShardDataTransfer], mesh_buffer: MeshBuffer, blocking: bool = True
    ) -> None:
        """Read each transfer's device (its region) into its host array; remote devices are skipped."""
        self._check_buffer(mesh_buffer)
        plan = []
        for transfer in transfers:
            if not isinstance(transfer, ShardDataTransfer):
                raise MeshnnTypeError(f"transfers must be ShardDataTransfers, got {type(transfer).__name__}")
            if not self._mesh.is_local(transfer.shard_coord):
                continue
            region = self._region(mesh_buffer, transfer)
            what = f"host array for {transfer.shard_coord}"
            if isinstance(transfer.host_data, HostDecoder):
                _codec_size(transfer.host_data, region, what)
                plan.append((self._mesh.local_row(transfer.shard_coord), region, transfer.host_data))
                continue
            out = host_bytes(transfer.host_data, writable=True, what=what)
            if out.nbytes < region.size:
                raise MeshnnValueError(
                    f"host array for device {transfer.shard_coord} has {out.nbytes} B, the region needs {region.size} B"
                )
            plan.append((self._mesh.local_row(transfer.shard_coord), region, _host_slice(out, region.size, what)))

        slab = mesh_buffer.rows()  # checked above; a read keeps the buffer's memo

        def read() -> None:
            waiting: list[tuple[HostDecoder, np.ndarray]] = []  # decoders of the current run
            for rows, region, out in _coalesced(plan, slab.shape[1]):
                source = slab[rows, region.offset : region.offset + region.size]
                if isinstance(out, HostDecoder):
                    waiting.append((out, _read_only(source)))
                    continue
                _decode_all(waiting)
                parallel_copyto(out, _region_as(source, out) if _strided(out) else source)
            _decode_all(waiting)

        self._submit(read, blocking=blocking)

    def enqueue_read_mesh_buffer(self, host_data: Any, mesh_buffer: MeshBuffer, blocking: bool = True) -> None:
        """Reassemble a sharded, unreplicated buffer into ``host_data`` (global row-major bytes)."""
        self._check_buffer(mesh_buffer)
        out = host_bytes(host_data, writable=True, what="host array")
        if _strided(out):
            raise MeshnnValueError("host array must be C-contiguous to be read into")
        config = mesh_buffer.global_config()
        if not isinstance(config, ShardedBufferConfig):
            if self._mesh.get_num_devices() != 1:
                raise MeshnnValueError("Can only read a Sharded MeshBuffer from a MeshDevice.")
            local = mesh_buffer.device_local_size()
            self.enqueue_read_shards(
                [ShardDataTransfer(self._mesh.local_coords()[0], out[:local])], mesh_buffer, blocking
            )
            return
        if any(config.replicated_dims()):
            raise MeshnnValueError("Cannot read a MeshBuffer that is replicated along any dimension.")
        if out.size < config.global_size:
            raise MeshnnValueError(f"host array has {out.size} B, the sharded buffer holds {config.global_size} B")
        shards = _shard_view(config, out[: config.global_size])
        staging = np.empty((shards.shape[0], mesh_buffer.device_local_size()), dtype=np.uint8)
        owners = shard_devices(config, self._mesh.num_rows, self._mesh.num_cols)
        coords = list(self._mesh.shape.coords())
        transfers = [ShardDataTransfer(coords[devices[0]], staging[k]) for k, devices in enumerate(owners)]
        self.enqueue_read_shards(transfers, mesh_buffer, blocking=False)

        def scatter() -> None:
            shards[...] = staging.reshape(shards.shape)

        self._submit(scatter, blocking=blocking)

    # ---------------------------------------------------------------------- workloads, events

    def enqueue_mesh_workload(self, workload: MeshWorkload, blocking: bool = False) -> None:
        if not isinstance(workload, MeshWorkload):
            raise MeshnnTypeError(f"expected a MeshWorkload, got {type(workload).__name__}")
        self._mesh.check_open()
        workload.validate(self._mesh)
        bound = workload.bind()
        self._submit(lambda: workload.run(self._mesh, bound), blocking=blocking)

    def enqueue_record_event(self, device_range: MeshCoordinateRange | None = None) -> MeshEvent:
        """An event that completes when this queue reaches it."""
        self._mesh.check_open()
        span = device_range or MeshCoordinateRange(self._mesh.shape)
        event = MeshEvent(self.cq_id, next(_event_ids), span, self._mesh.mesh_id)
        self._submit(event._done.set, blocking=False)
        return event

    enqueue_record_event_to_host = enqueue_record_event

    def enqueue_wait_for_event(self, event: MeshEvent) -> None:
        """Make this queue wait (not the host) until ``event`` completes."""
        if not isinstance(event, MeshEvent):
            raise MeshnnTypeError(f"expected a MeshEvent, got {type(event).__name__}")
        if event.mesh_id != self._mesh.mesh_id:
            raise WrongMeshError("the event was recorded on another mesh device")
        if event.is_completed():
            return

        def wait() -> None:
            if not event._done.wait(timeout=wait_timeout()):
                raise QueueError(
                    f"cq {self.cq_id} timed out after {wait_timeout()} s waiting for event {event.event_id} "
                    f"of cq {event.cq_id}"
                )

        self._submit(wait, blocking=False, inline=False)


def _without_frames(error: BaseException) -> BaseException:
    """``error`` (and the errors chained to it) with the tracebacks dropped and written into a note."""
    if error.__traceback__ is None:
        return error
    text = "".join(traceback.format_exception(error)).rstrip()
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        item = pending.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        item.__traceback__ = None
        pending += [item.__cause__, item.__context__]
    error.add_note(f"raised on the queue's dispatch (traceback kept as text):\n{text}")
    return error


def event_synchronize(event: MeshEvent) -> None:
    """Block the host until ``event`` completes (bounded by ``MESHNN_WAIT_TIMEOUT``)."""
    if not isinstance(event, MeshEvent):
        raise MeshnnTypeError(f"expected a MeshEvent, got {type(event).__name__}")
    if not event._done.wait(timeout=wait_timeout()):
        raise QueueError(f"event {event.event_id} of cq {event.cq_id} did not complete within {wait_timeout()} s")


def event_query(event: MeshEvent) -> bool:
    """Whether ``event`` has completed (never blocks)."""
    if not isinstance(event, MeshEvent):
        raise MeshnnTypeError(f"event_query: event must be a MeshEvent, got {type(event).__name__}")
    return event.is_completed()


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _coalesced(plan: list[tuple[int, BufferRegion, np.ndarray]], row_size: int):
    """Yield ``(rows, region, data)`` copies: whole-row transfers to consecutive slab rows whose
    host bytes lie back to back in one array become ONE copy (one large memcpy runs markedly
    faster than eight per-device ones), everything else stays a copy per transfer."""
    i = 0
    while i < len(plan):
        row, region, data = plan[i]
        j = i + 1
        whole = region.offset == 0 and region.size == row_size and isinstance(data, np.ndarray)
        if whole and not _strided(data) and data.size == row_size:
            root, start = _root(data), data.__array_interface__["data"][0]
            while j < len(plan):
                nrow, nregion, ndata = plan[j]
                if (
                    nrow != row + (j - i)
                    or nregion != region
                    or not isinstance(ndata, np.ndarray)
                    or _strided(ndata)
                    or _root(ndata) is not root
                    or ndata.__array_interface__["data"][0] != start + (j - i) * row_size
                ):
                    break
                j += 1
            if j - i > 1 and root.flags.c_contiguous:
                flat = root.reshape(-1).view(np.uint8)
                offset = start - flat.__array_interface__["data"][0]
                block = flat[offset : offset + (j - i) * row_size].reshape(j - i, row_size)
                yield slice(row, row + j - i), region, block
                i = j
                continue
        yield row, region, data
        i += 1


def _shard_view(config: ShardedBufferConfig, flat: np.ndarray) -> np.ndarray:
    """``flat`` (global row-major bytes) as ``(shards, shard_h, shard_w * datum)``, shard_y outer."""
    (gh, gw), (ph, pw) = config.global_buffer_shape, config.physical_shard_shape()
    datum = config.compute_datum_size_bytes()
    blocks = flat.reshape(gh // ph, ph, gw // pw, pw * datum).transpose(0, 2, 1, 3)
    return blocks.reshape(-1, ph, pw * datum) if blocks.flags.c_contiguous else _BlockView(blocks)  # type: ignore[return-value]


class _BlockView:
    """Shards of a global buffer, indexable as ``[k]`` and assignable as a whole, without copying."""

    def __init__(self, blocks: np.ndarray) -> None:
        self._blocks = blocks
        self.shape = (blocks.shape[0] * blocks.shape[1], blocks.shape[2], blocks.shape[3])

    def __getitem__(self, k: int) -> np.ndarray:
        return np.ascontiguousarray(self._blocks[k // self._blocks.shape[1], k % self._blocks.shape[1]])

    def __setitem__(self, key: object, value: np.ndarray) -> None:
        self._blocks[...] = value.reshape(self._blocks.shape[0], self._blocks.shape[1], *self.shape[1:])


def shard_devices(config: ShardedBufferConfig, rows: int, cols: int) -> list[list[int]]:
    """For each shard (shard_y outer, shard_x inner), the row-major indices of the devices it is
    written to on a ``rows`` x ``cols`` mesh."""
    (gh, gw), (ph, pw) = config.global_buffer_shape, config.physical_shard_shape()
    count = (gh // ph) * (gw // pw)
    height_rep, width_rep = config.replicated_dims()
    row_major = config.shard_orientation is ShardOrientation.ROW_MAJOR
    if height_rep and width_rep:
        return [list(range(rows * cols)) for _ in range(count)]
    if height_rep or width_rep:
        if row_major:  # shard k fills mesh column k
            return [[r * cols + k for r in range(rows)] for k in range(count)]
        return [[k * cols + c for c in range(cols)] for k in range(count)]
    if row_major:
        return [[k] for k in range(count)]
    return [[(k % rows) * cols + k // rows] for k in range(count)]
