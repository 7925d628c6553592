"""How a command queue runs its work: in order, on a dispatch thread of its own, or at once on
the caller's thread when the queue is idle (the same order, without a thread hand-off).

An error raised while work executes is kept (without its stack frames, which would hold the
caller's dropped tensors alive; its traceback is kept as text) and surfaces at the next blocking
call or ``finish``; the queue stays usable.  Every wait is bounded (``MESHNN_WAIT_TIMEOUT``).
Closing a mesh shuts its queues down: no new work is taken, what was taken is drained, the
dispatch thread stops and every waiter gets DeviceClosedError.

:class:`QueueEngine` is the base of :class:`~meshnn.mesh.command_queue.MeshCommandQueue`, which
adds what a queue enqueues (reads, writes, workloads, events, traces).

Part of the ``mesh`` layer; imports ``meshnn.errors`` and ``meshnn.host``.
"""

from __future__ import annotations

import contextlib
import threading
import traceback
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from meshnn.errors import DeviceClosedError, MeshnnError, QueueError
from meshnn.host.threads import wait_timeout

if TYPE_CHECKING:
    from meshnn.mesh.mesh_device import MeshDevice


class QueueEngine:
    """The in-order engine of one command queue (``cq_id``) of a mesh."""

    def __init__(self, mesh: MeshDevice, cq_id: int) -> None:
        self._mesh = mesh
        self.cq_id = cq_id
        self._work: deque[Callable[[], None]] = deque()
        # A plain lock under the condition, taken directly by the enqueue path; nothing acquires it
        # re-entrantly, and no finalizer or weakref callback (run inside a locked block?) touches a queue.
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self._finishing = 0  # threads waiting in finish(), under the lock
        self._busy = False
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._closing = False  # the mesh is closing: no new work is taken (under the lock)
        self._closed = False  # drained and stopped: waiters are released with DeviceClosedError

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
            if self._closing:
                raise self._closed_error()
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
        while True:
            with self._cv:
                while (not self._work or self._busy) and not self._closed:
                    self._cv.wait(timeout=1.0)
                if self._closed:
                    self._work.clear()  # left by a drain that timed out: its waiters get DeviceClosedError
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
        """Wait until every enqueued piece of work has run; raise the first error kept.  On a
        queue whose mesh has closed (or closes meanwhile), raise DeviceClosedError."""
        deadline = 2 * wait_timeout() + 1  # beyond any one wait's own timeout, so that one reports first
        with self._cv:
            if self._closed:
                raise self._closed_error()
            self._finishing += 1
            try:
                drained = self._cv.wait_for(
                    lambda: (not self._work and not self._busy) or self._closed, timeout=deadline
                )
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
        with contextlib.suppress(MeshnnError):
            self.finish()
        with self._cv:
            self._closed = True
            self._cv.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=wait_timeout())


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
