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
What a transfer may hold, and how its checks are made, is :mod:`meshnn.mesh.transfers`'; how a
checked plan is copied into or out of a buffer's slab (over the host worker threads for large
copies) is :mod:`meshnn.mesh.slab_copies`'.

Part of the ``mesh`` layer; imports ``meshnn.errors``, ``meshnn.host`` and ``meshnn.mesh``.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError, QueueError, WrongMeshError
from meshnn.host.threads import wait_timeout
from meshnn.mesh.buffer_config import BufferRegion, ShardedBufferConfig
from meshnn.mesh.coord import MeshCoordinateRange
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.slab_copies import owned_copies, read_rows, same_in_every_row, write_rows
from meshnn.mesh.transfers import (
    ShardDataTransfer,
    host_bytes,
    is_strided,
    read_plan,
    shard_devices,
    shard_view,
    write_plan,
)
from meshnn.mesh.workload import MeshWorkload

if TYPE_CHECKING:
    from meshnn.mesh.mesh_device import MeshDevice

_event_ids = itertools.count(1)


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

    # ------------------------------------------------------------------------------ writes

    def enqueue_write_shards(
        self, mesh_buffer: MeshBuffer, transfers: Sequence[ShardDataTransfer], blocking: bool = False
    ) -> None:
        """Write each transfer's bytes to its device (its region); remote devices are skipped."""
        self._check_buffer(mesh_buffer)
        plan = write_plan(self._mesh, mesh_buffer, transfers)
        slab = mesh_buffer.slab()  # taken now: the write lands even if the buffer is freed meanwhile
        same = same_in_every_row(plan, transfers, slab)

        def write(items=plan) -> None:
            write_rows(mesh_buffer, slab, items, same)

        def owned() -> Callable[[], None]:
            items = owned_copies(plan)  # copied (encoders run) now, at the enqueue: the caller may reuse its memory
            return lambda: write(items)

        self._submit(write, blocking=blocking, own=owned)

    def enqueue_write_mesh_buffer(self, mesh_buffer: MeshBuffer, host_data: Any, blocking: bool = False) -> None:
        """Replicated: the same bytes to every device; sharded: the global buffer cut into shards."""
        self._check_buffer(mesh_buffer)
        data = host_bytes(host_data, writable=False, what="host data")
        if is_strided(data):
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
        shards = shard_view(config, data[: config.global_size])
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
        plan = read_plan(self._mesh, mesh_buffer, transfers)
        slab = mesh_buffer.rows()  # checked above; a read keeps the buffer's memo

        def read() -> None:
            read_rows(slab, plan)

        self._submit(read, blocking=blocking)

    def enqueue_read_mesh_buffer(self, host_data: Any, mesh_buffer: MeshBuffer, blocking: bool = True) -> None:
        """Reassemble a sharded, unreplicated buffer into ``host_data`` (global row-major bytes)."""
        self._check_buffer(mesh_buffer)
        out = host_bytes(host_data, writable=True, what="host array")
        if is_strided(out):
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
        shards = shard_view(config, out[: config.global_size])
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
