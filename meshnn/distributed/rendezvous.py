"""The rendezvous before every collective across ranks, and the exit notices that end a run.

Before the data of a collective moves, every rank sends every other rank a small record (its
channel, the collective's sequence number on that channel, what it is: the operation and the
tensors it moves, MeshBuffer address and spec, as text with a digest of the whole text; and the
bytes it will move) and waits, polling, for theirs.  So a collective never blocks inside MPI on a rank
that will not come: the wait is bounded by ``MESHNN_WAIT_TIMEOUT`` seconds and then names the
ranks that never arrived; ranks that call different collectives (``all_reduce`` on one,
``all_gather`` on another), the same one on different tensors (two weights read in different
orders), or with different sizes, are named at once, both ranks and both tensors, before any
data moves; a rank that
has ended its program (``sys.exit(0)`` while the others wait) is named as soon as its exit notice
arrives.  Each failure ends the run through ``abort`` (every rank at once): raising on one rank
would leave the others waiting.

Channels: ``CONTROL`` (small values on the user's thread: the lock-step check made at each
allocation) and ``DATA`` (the collectives of kernels on a command queue's dispatch thread, and
the exchanges that follow a read of the device: composers, tensor files) keep their own
sequences because the two threads interleave differently on different ranks; each channel holds a lock
from its rendezvous to the end of its collective, so one channel's collectives never overlap.

A collective called on the user's thread (the lock-step check, composers, ``dump_tensor``) also
tells every other rank that this rank's user thread is in it, and when it has left (``USER``
notes).  A rank whose user thread waits in a control-channel collective while another rank's
user thread waits in a data-channel one (a composer against an ``all_gather`` whose output
allocation is lock-step checked) names both at once: neither can reach the other's collective,
and a control-channel record only ever comes from a user thread.

At exit every rank sends an exit notice (its sequence numbers) to every other and waits for
theirs before MPI is finalised; a rank whose notice says it ran fewer collectives than another
waits in is named by that one.  A rank that exits with a non-zero status (``sys.exit(1)``) does
not wait: it ends the whole run at once, as an uncaught error does.

The communicator is passed in (this module does not import mpi4py: :mod:`meshnn.distributed.mpi`
does).  Part of the ``distributed`` layer; imports ``meshnn.errors`` and ``meshnn.host``.
"""

from __future__ import annotations

import hashlib
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from meshnn.host.threads import wait_timeout

CONTROL, DATA, EXIT, USER = 1, 2, 3, 4  # message tags: the channels' records, exit notices, user-thread notes
ENTER, LEAVE = 5, 6  # the kinds of a user-thread note
CHANNEL_NAMES = {CONTROL: "control", DATA: "data"}
TEXT_BYTES = 216  # what a collective is (operation and tensors) is cut to this many bytes of UTF-8
# kind, sequence (data sequence for an exit), bytes (exit status for an exit), control sequence,
# the digest of the whole text, the text
RECORD = struct.Struct(f"<qqqq8s{TEXT_BYTES}s")
POLL_MAX = 0.005  # seconds: the longest sleep between two polls of a wait
LATE_NOTE = 10.0  # seconds a rank waits at exit before it says whom it waits for
FOLLOW = 5.0  # seconds a rank waits for the lowest present rank's abort before it aborts itself


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).digest()


def _pack(kind: int, seq: int, nbytes: int, seq2: int, text: str) -> np.ndarray:
    raw = RECORD.pack(kind, seq, nbytes, seq2, _digest(text), _shown(text).encode("utf-8", "replace"))
    return np.frombuffer(bytearray(raw), dtype=np.uint8)


def _unpack(buffer: np.ndarray) -> tuple[int, int, int, int, bytes, str]:
    kind, seq, nbytes, seq2, digest, text = RECORD.unpack(buffer.tobytes())
    return kind, seq, nbytes, seq2, digest, text.rstrip(b"\0").decode("utf-8", "ignore")


def _shown(text: str) -> str:
    """``text`` as a record carries it (cut to ``TEXT_BYTES``, marked when cut)."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= TEXT_BYTES:
        return text
    return raw[: TEXT_BYTES - 3].decode("utf-8", "ignore") + "..."


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
        self.board = _UserBoard(comm, self.peers)
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
                    _, data, _, control, _, _ = _unpack(self._notice_buffers[peer])
                    self.exits[peer] = (control, data)
                    del self._notice_requests[peer]
            return dict(self.exits)

    # ---------------------------------------------------------------------------- rendezvous

    def arrive(self, channel: int, op: str, nbytes: int = -1, *, user: bool = False) -> None:
        """Wait until every rank has reached this channel's next collective, the same one
        (``op``: the operation and the tensors it moves; ``nbytes``, -1: any size); ends the run
        naming the ranks and what each called otherwise.  ``user``: called on the user's thread
        (the other ranks are told, :class:`_UserBoard`).  The caller holds
        ``channel_locks[channel]`` until its collective is done."""
        if self.size == 1:
            return
        self.seq[channel] += 1
        seq = self.seq[channel]
        if user:
            self.board.note(ENTER, channel, seq, op)
        try:
            self._meet(channel, seq, op, nbytes, user)
        finally:
            if user:
                self.board.note(LEAVE, channel, seq, op)

    def _meet(self, channel: int, seq: int, op: str, nbytes: int, user: bool) -> None:
        record = _pack(channel, seq, nbytes, 0, op)
        sends = [self.comm.Isend(record, dest=p, tag=channel) for p in self.peers]
        buffers = {p: np.zeros(RECORD.size, np.uint8) for p in self.peers}
        receives = {p: self.comm.Irecv(buffers[p], source=p, tag=channel) for p in self.peers}
        deadline = time.monotonic() + wait_timeout()
        backoff = _Backoff()
        arrived: dict[int, tuple[bytes, int, str]] = {self.rank: (_digest(op), nbytes, _shown(op))}
        while receives:
            for peer in [p for p, r in receives.items() if r.Test()]:
                del receives[peer]
                _, their_seq, their_bytes, _, digest, their_op = _unpack(buffers[peer])
                if their_seq != seq:
                    digest, their_op = b"", f"{their_op} as #{their_seq}"
                arrived[peer] = (digest, their_bytes, their_op)
            if not receives:
                break
            self._check_gone(channel, seq, _shown(op), receives, arrived)
            if user and channel == CONTROL:
                self._check_elsewhere(seq, _shown(op), receives)
            if time.monotonic() > deadline:
                self._fail_late(channel, seq, _shown(op), receives, arrived)
            backoff.pause()
        for send in sends:
            send.Wait()
        if len({(digest, size) for digest, size, _ in arrived.values()}) > 1:
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

    def _check_elsewhere(self, seq: int, op: str, waiting: dict) -> None:
        """This rank's user thread waits in control collective ``seq``: a rank that has not
        arrived and whose user thread waits in a data-channel collective never will."""
        elsewhere = {p: at for p, at in self.board.poll().items() if p in waiting and at[0] == DATA}
        if elsewhere:
            calls = "; ".join(
                [f"rank {self.rank}: {self._where(CONTROL, seq, op)}"]
                + [f"rank {p}: {self._where(DATA, s, o)}" for p, (_, s, o) in sorted(elsewhere.items())]
            )
            self._end(
                f"ranks called different collectives on their user threads ({calls}); every rank must run the "
                "same collectives, on the same tensors, in the same order",
                (),
            )

    def _fail_late(self, channel: int, seq: int, op: str, waiting: dict, arrived: dict) -> None:
        self._end(
            f"rank(s) {_ranks(waiting)} never arrived at {self._where(channel, seq, op)} within "
            f"{wait_timeout():g} s (MESHNN_WAIT_TIMEOUT) while rank(s) {_ranks(arrived)} waited there",
            waiting,
        )

    def _fail_mismatch(self, channel: int, seq: int, arrived: dict[int, tuple[bytes, int, str]]) -> None:
        calls = "; ".join(f"rank {r}: {o}" + (f", {b} B" if b >= 0 else "") for r, (_, b, o) in sorted(arrived.items()))
        self._end(
            f"ranks called different collectives as collective #{seq} on the {CHANNEL_NAMES[channel]} "
            f"channel ({calls}); every rank must run the same collectives, on the same tensors, in the "
            "same order",
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

    def leave(self, status: int = 0) -> None:
        """At the end of the program: tell every rank, and wait until every rank has ended too
        (a rank still waiting in a collective sees the notice and ends the run).  A program ending
        with a non-zero ``status`` ends the whole run at once instead: the others may be computing,
        far from any collective, and would never notice."""
        if self.size == 1 or self.exiting:
            return
        self.exiting = True
        if status:
            self._abort(f"exited with status {status}", True)
        notice = _pack(EXIT, self.seq[DATA], status, self.seq[CONTROL], "exit")
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
        self.board.flush()


class _UserBoard:
    """Where the other ranks' user threads are: each rank's ENTER and LEAVE notes of its
    user-thread collectives (in order: one source and tag), received on ``USER``."""

    def __init__(self, comm: Any, peers: list[int]) -> None:
        self.comm, self.peers = comm, peers
        self._lock = threading.Lock()
        self._buffers = {p: np.zeros(RECORD.size, np.uint8) for p in peers}
        self._requests = {p: comm.Irecv(self._buffers[p], source=p, tag=USER) for p in peers}
        self._sends: list[tuple[Any, np.ndarray]] = []  # notes on their way (their buffers kept)
        self.at: dict[int, tuple[int, int, str]] = {}  # rank -> (channel, seq, op) its user thread waits in

    def note(self, kind: int, channel: int, seq: int, op: str) -> None:
        """Tell every other rank that this rank's user thread enters (leaves) a collective."""
        record = _pack(kind, seq, channel, 0, op)
        with self._lock:
            self._sends = [(r, b) for r, b in self._sends if not r.Test()]
            self._sends += [(self.comm.Isend(record, dest=p, tag=USER), record) for p in self.peers]

    def flush(self) -> None:
        """Wait until every note sent has left (before MPI is finalised)."""
        with self._lock:
            for request, _ in self._sends:
                request.Wait()
            self._sends = []

    def poll(self) -> dict[int, tuple[int, int, str]]:
        """The notes received so far: where each rank's user thread waits now."""
        with self._lock:
            for peer in self.peers:
                while self._requests[peer].Test():
                    kind, seq, channel, _, _, op = _unpack(self._buffers[peer])
                    if kind == ENTER:
                        self.at[peer] = (channel, seq, op)
                    else:
                        self.at.pop(peer, None)
                    self._requests[peer] = self.comm.Irecv(self._buffers[peer], source=peer, tag=USER)
            return dict(self.at)


def _ranks(ranks: Any) -> str:
    return ", ".join(str(r) for r in sorted(ranks))
