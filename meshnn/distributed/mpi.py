"""The MPI distributed context: the only module of meshnn that imports mpi4py.

Every rank runs the same program.  Collectives move numpy arrays with mpi4py's buffer interface
(no pickling) on a communicator of their own, because they run inside kernels on a command
queue's dispatch thread while the main thread may be in a control collective (the lock-step
check); small control values use the object interface on ``COMM_WORLD``.  Two safeguards keep a failing run
from hanging: an uncaught exception on any rank prints ``meshnn: rank R raised ...`` and aborts
every rank, and a watchdog thread on each rank notices a peer process on the same host that has
died and aborts the run naming it (``mpiexec -disable-auto-cleanup`` lets the survivors say so;
by default MPICH's launcher stops them at once itself).
"""

from __future__ import annotations

import atexit
import os
import socket
import sys
import threading
import time
from types import TracebackType

import numpy as np

from meshnn.distributed.rendezvous import CONTROL, DATA, Rendezvous
from meshnn.errors import DistributedError

try:
    from mpi4py import MPI
except ImportError as error:  # pragma: no cover - exercised only without the mpi extra
    raise DistributedError(
        "this run was started by an MPI launcher but mpi4py is missing: pip install 'meshnn[mpi]'"
    ) from error

WATCH_INTERVAL = 0.5  # seconds between liveness checks of peer processes
ABORT_GRACE = 0.3  # seconds between the abort message and MPI_Abort


class MpiContext:
    """A distributed context over ``MPI.COMM_WORLD``."""

    def __init__(self) -> None:
        self.comm = MPI.COMM_WORLD
        self._rank = self.comm.Get_rank()
        self._size = self.comm.Get_size()
        self.data_comm = self.comm.Dup()  # array collectives (dispatch threads), ordered by cq 0
        self.rendezvous = Rendezvous(self.comm.Dup(), self._rank, self._size, self._abort)
        self._aborting = threading.Lock()
        self.peers: list[tuple[str, int]] = self.comm.allgather((socket.gethostname(), os.getpid()))
        self._install_excepthooks()
        atexit.register(self.rendezvous.leave)  # runs before mpi4py finalises MPI
        self._start_watchdog()

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def world_size(self) -> int:
        return self._size

    def barrier(self, op: str = "barrier") -> None:
        with self.rendezvous.channel_locks[CONTROL]:
            self.rendezvous.arrive(CONTROL, op)
            self.comm.Barrier()

    def allgather_object(self, value: object, op: str = "allgather_object") -> list[object]:
        with self.rendezvous.channel_locks[CONTROL]:
            self.rendezvous.arrive(CONTROL, op)
            return self.comm.allgather(value)

    def gather_object(self, value: object, op: str = "gather_object") -> list[object] | None:
        """Every rank's ``value`` in rank order on rank 0 (None on the others)."""
        with self.rendezvous.channel_locks[CONTROL]:
            self.rendezvous.arrive(CONTROL, op)
            return self.comm.gather(value, root=0)

    def allgather_array(
        self, array: np.ndarray, out: np.ndarray | None = None, op: str = "allgather_array"
    ) -> list[np.ndarray]:
        """Every rank's ``array`` in rank order (same dtype and trailing shape; leading sizes may
        differ), received into ``out`` (C-contiguous, all ranks' rows) when given."""
        local = np.ascontiguousarray(array)
        with self.rendezvous.channel_locks[DATA]:
            self.rendezvous.arrive(DATA, op)
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
            self.rendezvous.arrive(DATA, f"{op} ({local.dtype} sum)", local.nbytes)
            self.data_comm.Allreduce(local, out, op=MPI.SUM)
        return out

    def abort(self, message: str) -> None:
        self._abort(message, True)

    def _abort(self, message: str, loud: bool) -> None:
        """End every rank: say why (when ``loud``), give the launcher a moment to forward the line,
        then ``MPI_Abort``.  Only the first caller of a process prints."""
        if self._aborting.acquire(blocking=False):
            if loud:
                print(f"meshnn: rank {self._rank}: {message}; aborting every rank", file=sys.stderr, flush=True)
            time.sleep(ABORT_GRACE)  # let the launcher forward this line before it stops every rank
        self.comm.Abort(1)

    # ------------------------------------------------------------------------ failure handling

    def _install_excepthooks(self) -> None:
        previous, previous_thread = sys.excepthook, threading.excepthook

        def hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
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

    def _start_watchdog(self) -> None:
        host = socket.gethostname()
        watched = [(r, pid) for r, (h, pid) in enumerate(self.peers) if r != self._rank and h == host]
        if not watched:
            return

        def watch() -> None:
            while True:
                time.sleep(WATCH_INTERVAL)
                for rank, pid in watched:
                    if not _alive(pid) and rank not in self.rendezvous.poll_exits():
                        time.sleep(WATCH_INTERVAL)  # an exit notice may still be on its way
                        if rank not in self.rendezvous.poll_exits():
                            self.abort(f"rank {rank} (pid {pid}) died")
                            return

        threading.Thread(target=watch, name="meshnn-mpi-watchdog", daemon=True).start()

    def __repr__(self) -> str:
        return f"MpiContext(rank={self._rank}, world_size={self._size})"


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
