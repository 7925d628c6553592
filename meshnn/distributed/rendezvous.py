"""The rendezvous before every collective across ranks, and the exit notices that end a run.

Before the data of a collective moves, every rank sends every other rank a 64-byte record (its
channel, the collective's sequence number on that channel, the operation's name and the bytes it
will move) and waits, polling, for theirs.  So a collective never blocks inside MPI on a rank
that will not come: the wait is bounded by ``MESHNN_WAIT_TIMEOUT`` seconds and then names the
ranks that never arrived; ranks that call different collectives (``all_reduce`` on one,
``all_gather`` on another), or the same one with different sizes, are named at once; a rank that
has ended its program (``sys.exit(0)`` while the others wait) is named as soon as its exit notice
arrives.  Each failure ends the run through ``abort`` (every rank at once): raising on one rank
would leave the others waiting.

Channels: ``CONTROL`` (small values on the user's thread: the lock-step check, composers) and
``DATA`` (arrays, inside kernels on a command queue's dispatch thread) keep their own sequences
because the two threads interleave differently on different ranks; each channel holds a lock
from its rendezvous to the end of its collective, so one channel's collectives never overlap.

At exit every rank sends an exit notice (its sequence numbers) to every other and waits for
theirs before MPI is finalised; a rank whose notice says it ran fewer collectives than another
waits in is named by that one.

The communicator is passed in (this module does not import mpi4py: :mod:`meshnn.distributed.mpi`
does).  Part of the ``distributed`` layer; imports ``meshnn.errors`` and ``meshnn.host``.
"""

from __future__ import annotations

import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from meshnn.host.threads import wait_timeout

CONTROL, DATA, EXIT = 1, 2, 3  # message tags: the two channels' records, and exit notices
CHANNEL_NAMES = {CONTROL: "control", DATA: "data"}
OP_BYTES = 48  # an operation's name is cut to this many bytes of UTF-8
RECORD = struct.Struct(f"<qqqq{OP_BYTES}s")  # kind, sequence (data sequence for an exit), bytes, control sequence, op
POLL_MAX = 0.005  # seconds: the longest sleep between two polls of a wait
LATE_NOTE = 10.0  # seconds a rank waits at exit before it says whom it waits for
FOLLOW = 5.0  # seconds a rank waits for the lowest present rank's abort before it aborts itself


def _pack(kind: int, seq: int, nbytes: int, seq2: int, op: str) -> np.ndarray:
    raw = RECORD.pack(kind, seq, nbytes, seq2, op.encode("utf-8", "replace"))
    return np.frombuffer(bytearray(raw), dtype=np.uint8)


def _unpack(buffer: np.ndarray) -> tuple[int, int, int, int, str]:
    kind, seq, nbytes, seq2, op = RECORD.unpack(buffer.tobytes())
    return kind, seq, nbytes, seq2, op.rstrip(b"\0").decode("utf-8", "replace")


class _Backoff:
    """Sleeps between polls: none at first (a collective's peers are usually there), then
    growing to ``POLL_MAX`` so that a long wait does not hold a core."""

    def __init__(self) -> None:
        self.polls = 0

    def pause(self) -> None:
        self.polls += 1
        time.sleep(0 if self.polls < 50 else min(POLL_MAX, 1e-5 * (self.polls - 49)))


class Rendezvous:
    """The records, notices and waits of one process; ``abort(message, loud)`` ends the run
    (only ``loud`` callers print: the lowest rank that sees a failure)."""

    def __init__(self, comm: Any, rank: int, size: int, abort: Callable[[str, bool], None]) -> None:
        self.comm = comm  # a communicator of its own: records and notices only
        self.rank, self.size = rank, size
        self.peers = [r for r in range(size) if r != rank]
        self._abort = abort
        self.seq = {CONTROL: 0, DATA: 0}
        self.channel_locks = {CONTROL: threading.RLock(), DATA: threading.RLock()}
        self.exits: dict[int, tuple[int, int]] = {}  # rank -> its (control, data) sequences at exit
        self._notice_lock = threading.Lock()
        self._notice_buffers = {p: np.zeros(RECORD.size, np.uint8) for p in self.peers}
        self._notice_requests = {p: comm.Irecv(self._notice_buffers[p], source=p, tag=EXIT) for p in self.peers}
        self.exiting = False

    # ---------------------------------------------------------------------------- notices

    def poll_exits(self) -> dict[int, tuple[int, int]]:
        """The exit notices received so far (any thread may poll)."""
        with self._notice_lock:
            for peer, request in list(self._notice_requests.items()):
                if request.Test():
                    _, data, _, control, _ = _unpack(self._notice_buffers[peer])
                    self.exits[peer] = (control, data)
                    del self._notice_requests[peer]
            return dict(self.exits)

    # ---------------------------------------------------------------------------- rendezvous

    def arrive(self, channel: int, op: str, nbytes: int = -1) -> None:
        """Wait until every rank has reached this channel's next collective, the same one
        (``op`` and ``nbytes``, -1: any size); ends the run naming the ranks otherwise.  The
        caller holds ``channel_locks[channel]`` until its collective is done."""
        if self.size == 1:
            return
        self.seq[channel] += 1
        seq = self.seq[channel]
        op = op.encode("utf-8", "replace")[:OP_BYTES].decode("utf-8", "ignore")  # as the others will read it
        record = _pack(channel, seq, nbytes, 0, op)
        sends = [self.comm.Isend(record, dest=p, tag=channel) for p in self.peers]
        buffers = {p: np.zeros(RECORD.size, np.uint8) for p in self.peers}
        receives = {p: self.comm.Irecv(buffers[p], source=p, tag=channel) for p in self.peers}
        deadline = time.monotonic() + wait_timeout()
        backoff = _Backoff()
        arrived: dict[int, tuple[str, int]] = {self.rank: (op, nbytes)}
        while receives:
            for peer in [p for p, r in receives.items() if r.Test()]:
                del receives[peer]
                _, their_seq, their_bytes, _, their_op = _unpack(buffers[peer])
                arrived[peer] = (their_op if their_seq == seq else f"{their_op} as #{their_seq}", their_bytes)
            if not receives:
                break
            self._check_gone(channel, seq, op, receives, arrived)
            if time.monotonic() > deadline:
                self._fail_late(channel, seq, op, receives, arrived)
            backoff.pause()
        for send in sends:
            send.Wait()
        if len(set(arrived.values())) > 1:
            self._fail_mismatch(channel, seq, arrived)

    def _where(self, channel: int, seq: int, op: str) -> str:
        return f"{op} (collective #{seq} on the {CHANNEL_NAMES[channel]} channel)"

    def _check_gone(self, channel: int, seq: int, op: str, waiting: dict, arrived: dict) -> None:
        exits = self.poll_exits()
        index = 1 if channel == DATA else 0
        gone = sorted(p for p in waiting if p in exits and exits[p][index] < seq)
        if gone:
            self._end(
                f"rank(s) {_ranks(gone)} ended (returned or called sys.exit) after "
                f"{min(exits[p][index] for p in gone)} collective(s) on the {CHANNEL_NAMES[channel]} channel, "
                f"while rank(s) {_ranks(arrived)} wait in {self._where(channel, seq, op)}",
                gone,
            )

    def _fail_late(self, channel: int, seq: int, op: str, waiting: dict, arrived: dict) -> None:
        self._end(
            f"rank(s) {_ranks(waiting)} never arrived at {self._where(channel, seq, op)} within "
            f"{wait_timeout():g} s (MESHNN_WAIT_TIMEOUT) while rank(s) {_ranks(arrived)} waited there",
            waiting,
        )

    def _fail_mismatch(self, channel: int, seq: int, arrived: dict[int, tuple[str, int]]) -> None:
        calls = "; ".join(f"rank {r}: {o}" + (f", {b} B" if b >= 0 else "") for r, (o, b) in sorted(arrived.items()))
        self._end(
            f"ranks called different collectives as collective #{seq} on the {CHANNEL_NAMES[channel]} "
            f"channel ({calls}); every rank must run the same collectives in the same order",
            (),
        )

    def _end(self, message: str, absent: Any) -> None:
        """Abort, the failure said once: the lowest rank not among ``absent`` (the ranks that ended
        or never arrived; every other rank sees the failure too, each with its own view of who had
        arrived) says so and ends the run; the others wait a moment for it, and say it themselves
        only if the run has not ended by then (that rank was busy elsewhere)."""
        present = [r for r in range(self.size) if r not in absent]
        if present and self.rank != min(present):
            time.sleep(FOLLOW)
        self._abort(message, True)

    # ---------------------------------------------------------------------------- exit

    def leave(self) -> None:
        """At the end of the program: tell every rank, and wait until every rank has ended too
        (a rank still waiting in a collective sees the notice and ends the run)."""
        if self.size == 1 or self.exiting:
            return
        self.exiting = True
        notice = _pack(EXIT, self.seq[DATA], 0, self.seq[CONTROL], "exit")
        sends = [self.comm.Isend(notice, dest=p, tag=EXIT) for p in self.peers]
        backoff, start, noted = _Backoff(), time.monotonic(), False
        while len(self.poll_exits()) < len(self.peers):
            if not noted and time.monotonic() - start > LATE_NOTE:
                waiting = [p for p in self.peers if p not in self.exits]
                print(
                    f"meshnn: rank {self.rank} has ended; waiting for rank(s) {_ranks(waiting)} to end",
                    file=sys.stderr,
                    flush=True,
                )
                noted = True
            backoff.pause()
        for send in sends:
            send.Wait()


def _ranks(ranks: Any) -> str:
    return ", ".join(str(r) for r in sorted(ranks))
