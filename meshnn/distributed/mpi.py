"""The MPI distributed context: the only module of meshnn that imports mpi4py.

Every rank runs the same program.  Collectives move numpy arrays with mpi4py's buffer interface
(no pickling) on a communicator of their own, because they run inside kernels on a command
queue's dispatch thread while the main thread may be in a control collective (the lock-step
check); small control values use the object interface on ``COMM_WORLD``.  Safeguards keep a failing run
from hanging, or from outliving its job: an uncaught exception on any rank prints ``meshnn: rank
R raised ...`` and aborts every rank (an interrupt, Ctrl-C, prints its traceback once, on the
lowest rank that has it); a rank that calls ``sys.exit`` with a non-zero status ends every rank
at once; a watchdog thread on each rank notices a peer process on the same host that has died
and aborts the run naming it (``mpiexec -disable-auto-cleanup`` lets the survivors say so; by
default MPICH's launcher stops them at once itself), and ends its own rank when the process
that launched it is gone (the job has ended).  An abort always ends the process: when
``MPI_Abort`` cannot reach the launcher any more (a broken pipe) or does not return within
``ABORT_HARD`` seconds, the process exits by itself.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType

import numpy as np

from meshnn.distributed.rendezvous import CONTROL, DATA, Rendezvous
from meshnn.distributed.subcontexts import layout_from_env
from meshnn.errors import DistributedError
from meshnn.host.threads import wait_timeout

try:
    from mpi4py import MPI
except ImportError as error:  # pragma: no cover - exercised only without the mpi extra
    raise DistributedError(
        "this run was started by an MPI launcher but mpi4py is missing: pip install 'meshnn[mpi]'"
    ) from error

WATCH_INTERVAL = 0.5  # seconds between liveness checks of peer processes and of the launcher
ABORT_GRACE = 0.3  # seconds between the abort message and MPI_Abort
ABORT_HARD = 3.0  # seconds MPI_Abort may take before the process exits by itself
ABORT_STATUS = 1  # the exit status of a rank that ends itself after a failed MPI_Abort
INTERRUPTED = 130  # the status of a rank ended by Ctrl-C, as a shell reports python's
RELAY_TAG = 7  # the data communicator's tag of a relay's hand-overs (its results: RELAY_TAG + 1)
RELAY_CHUNK = 4 << 20  # bytes a relay hands on at a time
FOLLOW_INTERRUPT = 2.0  # seconds an interrupted rank above 0 waits for rank 0 to end the job


class MpiContext:
    """A distributed context over ``MPI.COMM_WORLD``, or over this process's sub-context of it when
    tt-run split the job (``TT_RUN_SUBCONTEXT_ID``: :mod:`meshnn.distributed.subcontexts`)."""

    def __init__(self) -> None:
        world = MPI.COMM_WORLD
        self.job_rank, self.job_size = world.Get_rank(), world.Get_size()
        self.layout = layout_from_env(self.job_size, os.environ)
        self.comm = world if self.layout.this_id is None else world.Split(self.layout.this_id, self.job_rank)
        if self.comm.Get_size() != self.layout.sizes[self.layout.this_id or 0]:
            raise DistributedError(
                f"MPI_Comm_split size {self.comm.Get_size()} does not match "
                f"TT_RUN_SUBCONTEXT_SIZES[{self.layout.this_id}]={self.layout.sizes[self.layout.this_id or 0]}"
            )
        self._rank = self.comm.Get_rank()
        self._size = self.comm.Get_size()
        self.data_comm = self.comm.Dup()  # array collectives (dispatch threads), ordered by cq 0
        self.rendezvous = Rendezvous(self.comm.Dup(), self._rank, self._size, self._abort)
        self._aborting = threading.Lock()
        self.exit_status = 0  # what sys.exit was last called with (the status the program ends with)
        self.launcher = os.getppid()  # the process that started this rank: gone means the job has ended
        self.peers: list[tuple[str, int]] = self.comm.allgather((socket.gethostname(), os.getpid()))
        self._install_excepthooks()
        self._watch_exit_status()
        atexit.register(lambda: self.rendezvous.leave(self.exit_status))  # runs before mpi4py finalises MPI
        self._sends: list[tuple] = []  # point-to-point sends in flight: (request, bytes, dest, op)
        self._sends_lock = threading.Lock()
        atexit.register(self._finish_sends_at_exit)  # (atexit runs it first: sends end before leaving)
        self._start_watchdog()

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def world_size(self) -> int:
        return self._size

    def barrier(self, op: str = "barrier") -> None:
        with self.rendezvous.channel_locks[CONTROL]:
            self.rendezvous.arrive(CONTROL, op, user=True)
            self.comm.Barrier()

    def allgather_object(self, value: object, op: str = "allgather_object", *, data: bool = False) -> list[object]:
        """Every rank's ``value`` in rank order; ``data``: on the data channel (after a read of the
        device: in order with the collectives of kernels), else on the control channel."""
        channel, comm = (DATA, self.data_comm) if data else (CONTROL, self.comm)
        with self.rendezvous.channel_locks[channel]:
            self.rendezvous.arrive(channel, op, user=True)
            return comm.allgather(value)

    def gather_object(self, value: object, op: str = "gather_object", *, data: bool = False) -> list[object] | None:
        """Every rank's ``value`` in rank order on rank 0 (None on the others); ``data`` as for
        :meth:`allgather_object`."""
        channel, comm = (DATA, self.data_comm) if data else (CONTROL, self.comm)
        with self.rendezvous.channel_locks[channel]:
            self.rendezvous.arrive(channel, op, user=True)
            return comm.gather(value, root=0)

    def allgather_array(
        self, array: np.ndarray, out: np.ndarray | None = None, op: str = "allgather_array"
    ) -> list[np.ndarray]:
        """Every rank's ``array`` in rank order (same dtype and trailing shape; leading sizes may
        differ), received into ``out`` (C-contiguous, all ranks' rows) when given."""
        local = np.ascontiguousarray(array)
        with self.rendezvous.channel_locks[DATA]:
            self.rendezvous.arrive(DATA, f"{op} [{local.dtype} rows of {list(local.shape[1:])}]")
            return self._allgather(local, out)

    def _allgather(self, local: np.ndarray, out: np.ndarray | None) -> list[np.ndarray]:
        counts = self.data_comm.allgather(local.shape[0] if local.ndim else 1)
        row = int(np.prod(local.shape[1:], dtype=np.int64)) if local.ndim > 1 else 1
        shape = (sum(counts), *local.shape[1:])
        if out is None:
            out = np.empty(shape, dtype=local.dtype)
        elif out.shape != shape or out.dtype != local.dtype or not out.flags.c_contiguous:
            raise DistributedError(f"allgather_array: out must be a C-contiguous {local.dtype} array of shape {shape}")
        if len(set(counts)) == 1:  # equal parts: plain Allgather (MPICH picks better algorithms)
            self.data_comm.Allgather(local.view(np.uint8).reshape(-1), out.view(np.uint8).reshape(-1))
            return list(np.split(out, len(counts))) if out.ndim else [out]
        sizes = [c * row * local.itemsize for c in counts]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
        self.data_comm.Allgatherv(
            local.view(np.uint8).reshape(-1), [out.view(np.uint8).reshape(-1), sizes, offsets, MPI.BYTE]
        )
        parts, start = [], 0
        for count in counts:
            parts.append(out[start : start + count])
            start += count
        return parts

    def allreduce_array(
        self, array: np.ndarray, out: np.ndarray | None = None, op: str = "allreduce_array"
    ) -> np.ndarray:
        """The element-wise sum over ranks of ``array`` (same shape and dtype on every rank), into
        ``out`` (C-contiguous, same shape and dtype) when given."""
        local = np.ascontiguousarray(array)
        if out is None:
            out = np.empty_like(local)
        elif out.shape != local.shape or out.dtype != local.dtype or not out.flags.c_contiguous:
            raise DistributedError(
                f"allreduce_array: out must be a C-contiguous {local.dtype} array of shape {local.shape}"
            )
        with self.rendezvous.channel_locks[DATA]:
            self.rendezvous.arrive(DATA, f"{op} [{local.dtype} sum of {list(local.shape)}]", local.nbytes)
            self.data_comm.Allreduce(local, out, op=MPI.SUM)
        return out

    def relay_array(
        self,
        running: np.ndarray,
        order: Sequence[int],
        visit: Callable[[np.ndarray, int, int], None],
        op: str = "relay_array",
    ) -> np.ndarray:
        """``running`` (C-contiguous; same shape and dtype on every rank) handed from rank to rank
        in ``order`` (every rank once), ``RELAY_CHUNK`` bytes at a time so that the ranks work at
        once: each rank calls ``visit(flat, start, stop)`` on the flat elements ``start:stop`` of
        what the previous rank handed on (the first rank on its own ``running``, whatever it
        holds), in place; the last rank's result is sent to every other rank, chunk by chunk, into
        its ``running``, which is returned.  A sum made this way adds in one fixed order,
        whatever the number of ranks."""
        ring = list(order)
        if sorted(ring) != list(range(self._size)) or not running.flags.c_contiguous:
            raise DistributedError(
                f"relay_array: order must name every rank once (got {ring}) and running be C-contiguous",
                rank=self._rank,
            )
        flat = running.reshape(-1)
        step = max(1, RELAY_CHUNK // max(1, running.itemsize))
        chunks = [(a, min(a + step, flat.size)) for a in range(0, flat.size, step)] or [(0, 0)]
        at, last = ring.index(self._rank), ring[-1]
        with self.rendezvous.channel_locks[DATA]:
            self.rendezvous.arrive(DATA, f"{op} [{running.dtype} relay of {list(running.shape)}]", running.nbytes)
            sent = []
            for a, b in chunks:
                piece = flat[a:b].view(np.uint8)
                if at > 0:
                    self.data_comm.Recv(piece, source=ring[at - 1], tag=RELAY_TAG)
                visit(flat, a, b)
                if at < len(ring) - 1:
                    self.data_comm.Send(piece, dest=ring[at + 1], tag=RELAY_TAG)
                else:  # the result: to every other rank, while the next chunk comes in
                    sent += [self.data_comm.Isend(piece, dest=r, tag=RELAY_TAG + 1) for r in ring[:-1]]
            for a, b in chunks if self._rank != last else ():
                self.data_comm.Recv(flat[a:b].view(np.uint8), source=last, tag=RELAY_TAG + 1)
            MPI.Request.Waitall(sent)
        return running

    def send_bytes(self, payload: np.ndarray, dest: int, tag: int, op: str) -> None:
        """Start sending ``payload`` (bytes) to rank ``dest`` under ``tag`` (point to point, on the
        data communicator) and return: the send completes while this rank goes on, as a socket's
        does; sends still in flight at exit are waited for (:meth:`finish_sends`)."""
        data = np.ascontiguousarray(payload).view(np.uint8).reshape(-1)
        request = self.data_comm.Isend(data, dest=dest, tag=tag)
        with self._sends_lock:
            self._sends = [s for s in self._sends if not s[0].Test()]
            self._sends.append((request, data, dest, op))  # the bytes live until the send completes

    def finish_sends(self) -> None:
        """Wait for the sends still in flight, each at most the wait timeout; one no rank takes
        raises, naming the rank that never received it."""
        with self._sends_lock:
            pending, self._sends = self._sends, []
        for request, _data, dest, op in pending:
            if not _poll(request.Test):
                raise DistributedError(
                    f"{op}: rank {dest} never received from rank {self._rank} within {wait_timeout():g} s "
                    "(MESHNN_WAIT_TIMEOUT); the receiving rank must call its receive",
                    rank=dest,
                )

    def _finish_sends_at_exit(self) -> None:
        try:
            self.finish_sends()
        except DistributedError as error:
            self.abort(str(error))

    def recv_bytes(self, source: int, tag: int, op: str) -> np.ndarray:
        """The bytes rank ``source`` sent under ``tag``, waiting at most the wait timeout, then
        raising naming ``source``."""
        status = MPI.Status()
        if not _poll(lambda: self.data_comm.Iprobe(source=source, tag=tag, status=status)):
            raise DistributedError(
                f"{op}: rank {source} never sent to rank {self._rank} within {wait_timeout():g} s "
                "(MESHNN_WAIT_TIMEOUT); the sending rank must call its send",
                rank=source,
            )
        out = np.empty(status.Get_count(MPI.BYTE), dtype=np.uint8)
        self.data_comm.Recv(out, source=source, tag=tag)
        return out

    def abort(self, message: str) -> None:
        self._abort(message, True)

    def _abort(self, message: str, loud: bool, status: int = ABORT_STATUS) -> None:
        """End every rank: say why (when ``loud``), give the launcher a moment to forward the line,
        then ``MPI_Abort``.  Only the first caller of a process prints and aborts; any later caller
        (another thread) waits for the process to end.  Never returns: a failing ``MPI_Abort`` (the
        launcher gone, a broken pipe) or one that hangs past ``ABORT_HARD`` seconds ends this
        process by itself."""
        if not self._aborting.acquire(blocking=False):
            while True:  # the first caller is ending the process
                time.sleep(1.0)
        if loud:
            _say(f"meshnn: rank {self._rank}: {message}; aborting every rank")
        threading.Thread(target=_exit_after, args=(ABORT_HARD + ABORT_GRACE,), daemon=True).start()
        time.sleep(ABORT_GRACE)  # let the launcher forward this line before it stops every rank
        try:
            self.comm.Abort(status)
        except BaseException as error:
            _say(f"meshnn: rank {self._rank}: MPI_Abort failed ({error}); this rank ends by itself")
        _exit_now(status)

    # ------------------------------------------------------------------------ failure handling

    def _install_excepthooks(self) -> None:
        previous, previous_thread = sys.excepthook, threading.excepthook

        def hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
            if issubclass(kind, KeyboardInterrupt):
                self.interrupted(lambda: previous(kind, error, trace))
            previous(kind, error, trace)
            self.abort(f"raised {kind.__name__}: {error}")

        def thread_hook(args: threading.ExceptHookArgs) -> None:
            if args.exc_type is SystemExit:
                return
            previous_thread(args)
            name = args.thread.name if args.thread is not None else "a thread"
            self.abort(f"raised {args.exc_type.__name__} in thread {name}: {args.exc_value}")

        sys.excepthook = hook
        threading.excepthook = thread_hook

    def interrupted(self, report: Callable[[], None]) -> None:
        """Ctrl-C: the launcher interrupts every rank at once, so only the lowest rank reports
        (``report`` prints the traceback) and ends the job; another rank waits a moment for that
        first, and reports only if the job is still running (it alone was interrupted)."""
        if self._rank != 0:
            time.sleep(FOLLOW_INTERRUPT)
        report()
        self._abort("interrupted (KeyboardInterrupt)", True, INTERRUPTED)

    def _watch_exit_status(self) -> None:
        """Keep the status ``sys.exit`` is called with: a rank that ends with a non-zero status
        ends the whole run at exit (:meth:`Rendezvous.leave`)."""
        original = sys.exit

        def exit_(status: object = None) -> None:
            self.exit_status = 0 if status is None else status if isinstance(status, int) else 1
            original(status)

        exit_.__doc__ = original.__doc__
        sys.exit = exit_

    def _start_watchdog(self) -> None:
        host = socket.gethostname()
        watched = [(r, pid) for r, (h, pid) in enumerate(self.peers) if r != self._rank and h == host]

        def watch() -> None:
            while True:
                time.sleep(WATCH_INTERVAL)
                if os.getppid() != self.launcher:
                    _say(f"meshnn: rank {self._rank}: the job has ended (its launcher, pid {self.launcher}, is gone)")
                    _exit_now(ABORT_STATUS)
                for rank, pid in watched:
                    if not _alive(pid) and rank not in self.rendezvous.poll_exits():
                        time.sleep(WATCH_INTERVAL)  # an exit notice may still be on its way
                        if rank not in self.rendezvous.poll_exits():
                            self.abort(f"rank {rank} (pid {pid}) died")

        threading.Thread(target=watch, name="meshnn-mpi-watchdog", daemon=True).start()

    def __repr__(self) -> str:
        return f"MpiContext(rank={self._rank}, world_size={self._size})"


def _say(line: str) -> None:
    """One line on stderr, whatever state stderr is in (the launcher may be gone)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


def _exit_now(status: int) -> None:
    """End this process at once (no atexit handlers: MPI cannot finalise any more)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(status)


def _exit_after(seconds: float) -> None:
    time.sleep(seconds)
    _say(f"meshnn: MPI_Abort did not end this process within {seconds:g} s; it ends by itself")
    _exit_now(ABORT_STATUS)


def _poll(done: Callable[[], bool]) -> bool:
    """Call ``done`` until it is true (True) or the wait timeout passes (False)."""
    limit = time.monotonic() + wait_timeout()
    pause = 0.0001
    while not done():
        if time.monotonic() > limit:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
    return True


def _alive(pid: int) -> bool:
    status = f"/proc/{pid}/status"
    if os.path.exists("/proc"):
        try:
            with open(status) as f:
                return not any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
