"""``ttnn.InterProcessCounterChannel`` (tt-metal 2026-06): a monotonic event counter shared between
processes through a POSIX shared-memory segment, ``/dev/shm/<name>``.

Two roles.  The OWNER (``InterProcessCounterChannel(shm_name)``) creates the segment (refused when it
exists: a crashed run's stale segment must be unlinked first) and publishes events with
``inject(n)``.  A CONNECTOR (``InterProcessCounterChannel.connect(shm_name, connect_timeout_ms)``)
waits for the segment, attaches, and drains the events published since the last drain
(``try_consume_all()``; ``pending()`` peeks).  ``had_clean_prior_shutdown()`` tells a connector
whether the previous connector ended with ``shutdown()``.  ``shutdown()`` is idempotent: the owner's
unmaps and unlinks the name, a connector's stamps the clean-exit flag and unmaps.  Calling the other
role's method raises.

The segment's layout is tt-metal's ``InterProcessCounterSegment`` (so a C++ peer shares it):
``producer_counter`` (u32) at byte 0, ``consumer_cursor`` (u32) at 64, ``prior_clean_shutdown`` (u32)
at 68, 128 bytes in all (two 64-byte cache lines).  Counts are u32 and wrap modulo 2**32; the owner
is the counter's sole writer, so its read-add-write under this object's lock is its atomic add (an
aligned 4-byte store is atomic on the host).

Layers: imports :mod:`meshnn.errors`.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import threading
import time

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError

SEGMENT_BYTES = 128
PRODUCER_OFFSET, CURSOR_OFFSET, CLEAN_OFFSET = 0, 64, 68
SHM_ROOT = "/dev/shm"
_U32 = struct.Struct("<I")
_OWNER, _CONNECTOR = "owner", "connector"


def _checked_name(shm_name: object, where: str) -> str:
    if not isinstance(shm_name, str):
        raise MeshnnTypeError(f"InterProcessCounterChannel{where}: shm_name must be a str, got {shm_name!r}")
    if not shm_name.startswith("/") or "/" in shm_name[1:] or len(shm_name) < 2:
        raise MeshnnValueError(
            f"InterProcessCounterChannel{where}: shm_name must start with '/' and contain no other '/', "
            f"got {shm_name!r}"
        )
    return shm_name


class InterProcessCounterChannel:
    """One end of a shared counter: the owner (made by the constructor) or a connector (made by
    :meth:`connect`).  See the module's text for the protocol."""

    def __init__(self, shm_name: str) -> None:
        name = _checked_name(shm_name, "")
        try:
            fd = os.open(SHM_ROOT + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        except OSError as error:
            raise MeshnnError(
                f"InterProcessCounterChannel: shm_open(O_CREAT|O_EXCL) failed ({name}): {error.strerror}"
            ) from None
        try:
            os.ftruncate(fd, SEGMENT_BYTES)  # zero-filled: counter and cursor start at 0
            segment = mmap.mmap(fd, SEGMENT_BYTES)
        except OSError as error:
            os.close(fd)
            os.unlink(SHM_ROOT + name)
            raise MeshnnError(f"InterProcessCounterChannel: mapping {name} failed: {error.strerror}") from None
        os.close(fd)
        _U32.pack_into(segment, CLEAN_OFFSET, 1)  # the first connector sees a clean prior
        self._setup(name, _OWNER, segment, had_clean=True)

    def _setup(self, name: str, role: str, segment: mmap.mmap, *, had_clean: bool) -> None:
        self._name, self._role, self._segment, self._had_clean = name, role, segment, had_clean
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def connect(cls, shm_name: str, connect_timeout_ms: int = 30_000) -> InterProcessCounterChannel:
        """Attach to the owner's segment as a connector, waiting up to ``connect_timeout_ms`` for it
        to appear; reads and clears the previous connector's clean-exit flag."""
        name = _checked_name(shm_name, ".connect")
        if isinstance(connect_timeout_ms, bool) or not isinstance(connect_timeout_ms, int) or connect_timeout_ms < 0:
            raise MeshnnTypeError(
                f"InterProcessCounterChannel.connect: connect_timeout_ms must be a non-negative int, "
                f"got {connect_timeout_ms!r}"
            )
        deadline = time.monotonic() + connect_timeout_ms / 1000
        while True:
            try:
                fd = os.open(SHM_ROOT + name, os.O_RDWR)
                break
            except FileNotFoundError:
                if time.monotonic() >= deadline:
                    raise MeshnnError(
                        f"InterProcessCounterChannel::connect: timed out after {connect_timeout_ms} ms waiting for "
                        f"{name} — owner process has not exported this shm_name"
                    ) from None
                time.sleep(0.005)
            except OSError as error:
                raise MeshnnError(f"InterProcessCounterChannel: shm_open(O_RDWR) failed ({name}): {error}") from None
        try:
            segment = mmap.mmap(fd, SEGMENT_BYTES)
        finally:
            os.close(fd)
        had_clean = _U32.unpack_from(segment, CLEAN_OFFSET)[0] != 0
        _U32.pack_into(segment, CLEAN_OFFSET, 0)
        channel = cls.__new__(cls)
        channel._setup(name, _CONNECTOR, segment, had_clean=had_clean)
        return channel

    @property
    def shm_name(self) -> str:
        """The name the channel was created or connected with."""
        return self._name

    def _need(self, role: str, op: str) -> mmap.mmap:
        if self._role != role:
            raise MeshnnError(
                f"InterProcessCounterChannel::{op}: called on a {self._role} instance but requires a {role} instance"
            )
        if self._closed:
            raise MeshnnError(f"InterProcessCounterChannel::{op}: the channel {self._name} is shut down")
        return self._segment

    def inject(self, n: int) -> None:
        """Publish ``n`` events (owner only)."""
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < 2**32:
            raise MeshnnTypeError(f"InterProcessCounterChannel.inject: n must be an int in [0, 2**32), got {n!r}")
        with self._lock:
            segment = self._need(_OWNER, "inject")
            produced = _U32.unpack_from(segment, PRODUCER_OFFSET)[0]
            _U32.pack_into(segment, PRODUCER_OFFSET, (produced + n) % 2**32)

    def _delta(self, segment: mmap.mmap) -> tuple[int, int]:
        produced = _U32.unpack_from(segment, PRODUCER_OFFSET)[0]
        return produced, (produced - _U32.unpack_from(segment, CURSOR_OFFSET)[0]) % 2**32

    def try_consume_all(self) -> int:
        """Drain every event published since the last drain; how many (connector only)."""
        with self._lock:
            segment = self._need(_CONNECTOR, "try_consume_all")
            produced, delta = self._delta(segment)
            if delta:
                _U32.pack_into(segment, CURSOR_OFFSET, produced)  # the cursor moves before the caller acts
            return delta

    def pending(self) -> int:
        """Events the next :meth:`try_consume_all` would return, now (connector only)."""
        with self._lock:
            return self._delta(self._need(_CONNECTOR, "pending"))[1]

    def had_clean_prior_shutdown(self) -> bool:
        """Whether the previous connector ended with ``shutdown()`` (connector only; a fresh
        segment's first connector: True)."""
        self._need(_CONNECTOR, "had_clean_prior_shutdown")
        return self._had_clean

    def shutdown(self) -> None:
        """End this side (idempotent): the owner unlinks the segment's name, a connector stamps its
        clean exit."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._role == _CONNECTOR:
                _U32.pack_into(self._segment, CLEAN_OFFSET, 1)
            self._segment.close()
            if self._role == _OWNER:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(SHM_ROOT + self._name)

    def __del__(self) -> None:
        if getattr(self, "_lock", None) is not None:
            self.shutdown()

    def __repr__(self) -> str:
        return f"InterProcessCounterChannel({self._name!r}, role={self._role})"
