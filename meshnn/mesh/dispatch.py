"""How a command queue runs its work: in order, on a dispatch thread of its own, or at once on
the caller's thread when the queue is idle (the same order, without a thread hand-off).

An error raised while work executes is kept (without its stack frames, which would hold the
caller's dropped tensors alive; its traceback is kept as text) and surfaces at the next blocking
call or ``finish``; the queue stays usable.  An interrupt (Ctrl-C) in work running on the
caller's thread is not kept: it surfaces at once.  Every wait is bounded (``MESHNN_WAIT_TIMEOUT``).
Closing a mesh shuts its queues down: no new work is taken, what was taken is drained, the
dispatch thread stops and every waiter gets DeviceClosedError.

The queue is finite, as a device's command queue is: it holds at most ``MESHNN_QUEUE_DEPTH``
pieces of work waiting to run (default ``DEFAULT_DEPTH``); a thread that enqueues more waits until
the dispatch thread has taken one (bounded by ``MESHNN_WAIT_TIMEOUT``).  So what queued work
holds alive (outputs the caller dropped, host copies) and how long a blocking read waits behind it
are bounded too.  An allocation that finds device memory full while work is queued waits for the
queues to drain (:func:`drained_for_memory`) and tries once more: queued work keeps the buffers it
uses alive, and ttnn would have freed the dropped ones already.

A process forked while a mesh is open (``os.fork``, ``multiprocessing``) waits for the queues to
be idle first (bounded), and the child starts its queues afresh: new locks, no dispatch thread
until it enqueues work.

:class:`QueueEngine` is the base of :class:`~meshnn.mesh.command_queue.MeshCommandQueue`, which
adds what a queue enqueues (reads, writes, workloads, events, traces).

Part of the ``mesh`` layer; imports ``meshnn.errors`` and ``meshnn.host``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from meshnn.errors import DeviceClosedError, MeshnnError, QueueError
from meshnn.host.settings import count
from meshnn.host.threads import wait_timeout

if TYPE_CHECKING:
    from meshnn.mesh.mesh_device import MeshDevice


DEPTH_ENV = "MESHNN_QUEUE_DEPTH"
DEFAULT_DEPTH = 64  # pieces of work a queue holds waiting to run before an enqueuer waits
IDLE_POLL = 1.0  # seconds an idle dispatch thread waits between looks, if nothing wakes it first

_ENGINES: weakref.WeakSet[QueueEngine] = weakref.WeakSet()  # every queue, for the fork hooks
_ON_DISPATCH = threading.local()  # ``active`` on a dispatch thread


def queue_depth() -> int:
    """Pieces of work one queue may hold waiting (``MESHNN_QUEUE_DEPTH``, at least 1)."""
    return count(DEPTH_ENV, DEFAULT_DEPTH, minimum=1, what="a queue depth")


def on_dispatch_thread() -> bool:
    """Whether the calling thread is a command queue's dispatch thread."""
    return getattr(_ON_DISPATCH, "active", False)


class QueueEngine:
    """The in-order engine of one command queue (``cq_id``) of a mesh."""

    def __init__(self, mesh: MeshDevice, cq_id: int) -> None:
        self._mesh = mesh
        self.cq_id = cq_id
        self.depth = queue_depth()  # checked when the mesh opens
        self._work: deque[Callable[[], None]] = deque()
        self._reset_locks()
        self._finishing = 0  # threads waiting in finish(), under the lock
        self._taken = 0  # pieces of work taken so far (queued or run at once), under the lock
        self._waiting: deque[object] = deque()  # the turns of threads waiting for room, in order
        self._done = 0  # pieces of work finished so far: they finish in the order they were taken
        self._busy = False
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._closing = False  # the mesh is closing: no new work is taken (under the lock)
        self._closed = False  # drained and stopped: waiters are released with DeviceClosedError
        _ENGINES.add(self)

    def _reset_locks(self) -> None:
        # A plain lock under the condition, taken directly by the enqueue path; nothing acquires it
        # re-entrantly, and no finalizer or weakref callback (run inside a locked block?) touches a queue.
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)

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
        waits for the queue to be idle), and any ``finish``.  A ``blocking`` call waits for this
        work (and so for all work taken before it), not for the queue to be empty: other threads
        may keep it busy."""
        owned = None
        if own is not None and not blocking and (self._work or self._busy):  # a guess, made before the lock
            owned = own()  # copies (and runs encoders) outside the lock: other callers need not wait
        with self._lock:
            if self._closing:
                raise self._closed_error()
            run_here = inline and not self._work and not self._busy
            if run_here:
                self._busy = True
            else:
                if owned is None and own is not None and not blocking:
                    owned = own()  # the queue became busy meanwhile
                self._wait_for_room()
                self._work.append(owned or work)
                self._ensure_thread()
                self._cv.notify_all()
            self._taken += 1
            ticket = self._taken
        if run_here:
            self._run_here(work)
        if blocking:
            self._finish_to(ticket)

    def _run_here(self, work: Callable[[], None]) -> None:
        """Run ``work``, taken while the queue was idle (``_busy`` set under the lock), on this
        thread; its end wakes the waiters that need it."""
        try:
            work()
        except Exception as e:  # kept for the next blocking call, like the thread's errors
            self._keep(e)
        finally:
            with self._lock:
                self._busy = False
                self._done += 1
                if self._work or self._finishing:
                    self._cv.notify_all()

    def run_if_idle(self, work: Callable[[], None]) -> bool:
        """Run ``work`` here and now, as a non-blocking :meth:`_submit` of it would, when the queue
        is idle (nothing queued, nothing running): the same order, the same errors (kept for the
        next blocking call).  False, nothing done, when the queue is busy: the caller enqueues its
        work the ordinary way (an op's launch tries this first, so that a call on an idle queue
        makes no workload to hand over)."""
        with self._lock:
            if self._closing:
                raise self._closed_error()
            if self._work or self._busy:
                return False
            self._busy = True
            self._taken += 1
        self._run_here(work)
        return True

    def _wait_for_room(self) -> None:
        """Under the lock: wait while the queue holds ``depth`` pieces of work, in turn with the
        other threads waiting (first come, first served: a thread that reads is not overtaken
        again and again by threads that issue ops).  A dispatch thread never waits: it may be the
        one that makes room."""
        if on_dispatch_thread() or (len(self._work) < self.depth and not self._waiting):
            return
        self._ensure_thread()
        turn = object()
        self._waiting.append(turn)
        try:
            room = self._cv.wait_for(
                lambda: (len(self._work) < self.depth and self._waiting[0] is turn) or self._closing,
                timeout=wait_timeout(),
            )
        finally:
            self._waiting.remove(turn)
            self._cv.notify_all()  # the next in turn
        if self._closing:
            raise self._closed_error()
        if not room:
            raise QueueError(
                f"cq {self.cq_id} stayed full ({self.depth} pieces of work, {DEPTH_ENV}) for {wait_timeout():g} s "
                "(is its work waiting for an event?)"
            )

    def _closed_error(self) -> DeviceClosedError:
        return DeviceClosedError(
            f"mesh device {self._mesh.shape} is closed (or closing): cq {self.cq_id} takes no work"
        )

    def _ensure_thread(self) -> None:
        """Start the dispatch thread (under the lock, never once the queue is closing); it runs
        until the queue is closed, so no work is ever left without a thread to run it."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._dispatch, name=f"meshnn-cq{self.cq_id}", daemon=True)
            self._thread.start()

    def _dispatch(self) -> None:
        _ON_DISPATCH.active = True
        while True:
            with self._cv:
                while (not self._work or self._busy) and not self._closed:
                    self._cv.wait(timeout=IDLE_POLL)
                if self._closed:
                    self._work.clear()  # left by a drain that timed out: its waiters get DeviceClosedError
                    return
                work = self._work.popleft()
                self._busy = True
                self._cv.notify_all()  # room for an enqueuer waiting on a full queue
            try:
                work()
            except BaseException as e:
                self._keep(e)
            finally:
                del work  # the wait below must not hold the last work's buffers (and so their memory)
                with self._cv:
                    self._busy = False
                    self._done += 1
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
        """Wait until every piece of work enqueued before this call has run (work other threads
        enqueue meanwhile is not waited for); raise the first error kept.  On a queue whose mesh
        has closed (or closes meanwhile), raise DeviceClosedError."""
        with self._cv:
            ticket = self._taken
        self._finish_to(ticket)

    def _finish_to(self, ticket: int) -> None:
        """Wait until the first ``ticket`` pieces of work taken have run; raise the first error kept."""
        deadline = 2 * wait_timeout() + 1  # beyond any one wait's own timeout, so that one reports first
        with self._cv:
            if self._closed:
                raise self._closed_error()
            if self._work:
                self._ensure_thread()  # (a forked child's queue starts its thread here)
            self._finishing += 1
            try:
                drained = self._cv.wait_for(lambda: self._done >= ticket or self._closed, timeout=deadline)
            finally:
                self._finishing -= 1
            if self._closed:
                raise self._closed_error()
            if not drained:
                raise QueueError(f"cq {self.cq_id} did not drain within {deadline} s (is it waiting for an event?)")
        self._raise_kept()

    def shutdown(self) -> None:
        """The mesh is closing: take no new work, drain what was taken (errors are dropped), then
        stop the dispatch thread and release every waiter."""
        with self._cv:
            self._closing = True
            self._cv.notify_all()  # an enqueuer waiting for room gets DeviceClosedError
        with contextlib.suppress(MeshnnError):
            self.finish()
        with self._cv:
            self._closed = True
            self._cv.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=wait_timeout())

    def has_work(self) -> bool:
        """Work is queued or running."""
        return bool(self._work) or self._busy

    def wait_idle(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until the work taken before this call has run,
        without raising the kept error (it stays for the next blocking call).  True when it has."""
        with self._cv:
            ticket = self._taken
            if self._work:
                self._ensure_thread()
            self._finishing += 1
            try:
                return self._cv.wait_for(lambda: self._done >= ticket or self._closed, timeout)
            finally:
                self._finishing -= 1

    def _after_fork_in_child(self) -> None:
        """In a forked child: the parent's dispatch thread does not exist here, and the locks may
        have been held by a thread that does not exist either.  Work queued at the fork stays
        queued (a dispatch thread starts for it at the next enqueue or finish); work that was
        running at the fork did not finish here, which the next blocking call says."""
        self._reset_locks()
        self._thread, self._finishing, self._waiting = None, 0, deque()
        if self._busy:
            self._busy = False
            self._done += 1  # (lost here: no waiter waits for it)
            if self._error is None:
                self._error = QueueError(
                    f"cq {self.cq_id}: this process was forked while work of cq {self.cq_id} was running; "
                    "that work did not finish in this process"
                )


def queues_sharing_memory(mesh: MeshDevice) -> list:
    """The command queues whose work may hold buffers of ``mesh``'s allocator: its own, its
    parent's (a submesh shares its parent's allocator) and its submeshes'."""
    top = mesh
    while top._parent is not None:
        top = top._parent
    meshes = [top, *(sub for sub in (ref() for ref in top._submeshes) if sub is not None)]
    return [queue for m in meshes for queue in m._queues]


def drained_for_memory(queues: Iterable[QueueEngine]) -> bool:
    """Before a second try at an allocation that found device memory full: wait until ``queues``
    have run their queued work, which keeps alive buffers their callers dropped.  False (nothing
    waited for) on a dispatch thread, or when no queue has work."""
    busy = [q for q in queues if q.has_work()]
    if not busy or on_dispatch_thread():
        return False
    deadline = time.monotonic() + wait_timeout()
    return all(q.wait_idle(max(0.0, deadline - time.monotonic())) for q in busy)


_HELD_AT_FORK: list[QueueEngine] = []
FORK_WAIT = 5.0  # seconds a fork waits for busy queues (one waiting for an event may never be idle)


def _before_fork() -> None:
    """Let every queue finish its work (at most ``FORK_WAIT`` seconds in all) and hold its lock
    while the process forks, so the child gets no queue mid-change and no lock held by a thread
    it does not have."""
    engines = [e for e in list(_ENGINES) if not e._closed]
    deadline = time.monotonic() + min(wait_timeout(), FORK_WAIT)
    dispatching = on_dispatch_thread()  # (a kernel that forks: its own queue is busy with it)
    for engine in engines:
        while True:
            if not dispatching:
                engine.wait_idle(max(0.0, deadline - time.monotonic()))
            if not engine._lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
                break
            if dispatching or not engine.has_work() or time.monotonic() >= deadline:
                _HELD_AT_FORK.append(engine)  # idle, or out of time: held while the process forks
                break
            engine._lock.release()  # another thread queued work after the wait: wait for it too


def _after_fork_in_parent() -> None:
    while _HELD_AT_FORK:
        _HELD_AT_FORK.pop()._lock.release()


def _after_fork_in_child() -> None:
    _HELD_AT_FORK.clear()
    for engine in list(_ENGINES):
        engine._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)


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
