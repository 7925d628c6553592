"""The FIFO of a host <-> device socket (``ttnn.H2DSocket`` / ``ttnn.D2HSocket``): a ring of
``fifo_size`` bytes and tt-metal's flow-control counters, shared by the producer (the host of an H2D
socket, the sender kernel of a D2H socket) and the consumer (the receiver kernel, the host).

State, as tt-metal keeps it (all counters are uint32 and wrap):

- ``bytes_sent``: bytes the producer has pushed, counting the tail it skips when a page would not
  fit before the end of the ring; ``bytes_acked``: bytes the consumer has popped (likewise).
  ``bytes_sent - bytes_acked`` is what the consumer may still read.  The producer sees the
  consumer's count only when the consumer notifies it (``acked_seen``: tt-metal's acknowledgement
  word in the producer's memory; a D2H host ``read(..., notify_sender=False)`` leaves it behind),
  and ``fifo_size - (bytes_sent - acked_seen)`` is what it may write.
- each side's page size, its pointer (a multiple of its page size) and its ring size
  ``fifo_size - fifo_size % page_size`` (the last partial page is never used).  Setting a page
  size moves the pointer up to the next page boundary, to the start when none is left; the producer
  counts the skipped bytes as sent and the consumer as acknowledged (it waits for them first).

A push waits for free space and a pop for pages (blocking, as tt-metal's host and kernels spin),
up to ``MESHNN_WAIT_TIMEOUT`` seconds, then a :class:`~meshnn.errors.QueueError` (tt-metal would
spin forever).  Bytes move unchanged: a page popped is the page pushed.

Layers: imports :mod:`meshnn.errors` and :mod:`meshnn.host` only.
"""

from __future__ import annotations

import threading

import numpy as np

from meshnn.errors import QueueError
from meshnn.host.settings import wait_timeout

_MASK = 0xFFFFFFFF  # the counters are uint32 words on the device and the host


class RingSide:
    """One side's view of the ring: its page size (bytes; 0 until set), its pointer (bytes from
    the FIFO's start, a multiple of the page size) and its ring size (whole pages that fit)."""

    __slots__ = ("curr_size", "page_size", "ptr")

    def __init__(self, fifo_size: int) -> None:
        self.page_size = 0
        self.ptr = 0
        self.curr_size = fifo_size


class HostDeviceFifo:
    """The ring and counters of one host <-> device socket (see the module's text)."""

    def __init__(self, fifo_size: int) -> None:
        self.fifo_size = fifo_size
        self.data = np.zeros(fifo_size, dtype=np.uint8)  # the ring's bytes (device L1 or pinned host memory)
        self.bytes_sent = 0
        self.bytes_acked = 0
        self.acked_seen = 0  # the producer's view of bytes_acked, as last notified
        self.producer = RingSide(fifo_size)
        self.consumer = RingSide(fifo_size)
        self._changed = threading.Condition()

    # -- state ---------------------------------------------------------------------------
    def pending_bytes(self) -> int:
        """Bytes pushed and not yet popped (``bytes_sent - bytes_acked``, uint32)."""
        return (self.bytes_sent - self.bytes_acked) & _MASK

    def free_bytes(self) -> int:
        """Bytes the producer may write: what the last notification freed."""
        return self.fifo_size - ((self.bytes_sent - self.acked_seen) & _MASK)

    def notify(self) -> None:
        """The consumer's count published to the producer (tt-metal's ``notify_sender``)."""
        with self._changed:
            self.acked_seen = self.bytes_acked
            self._changed.notify_all()

    def _wait(self, ready: object, what: str, timeout_s: float | None) -> None:
        limit = wait_timeout() if timeout_s is None else timeout_s
        if not self._changed.wait_for(ready, timeout=limit):  # type: ignore[arg-type]
            raise QueueError(f"{what} (after {limit:g} s; MESHNN_WAIT_TIMEOUT)")

    # -- page sizes ----------------------------------------------------------------------
    def set_producer_page_size(self, page_size: int) -> None:
        """The producer's page size: its pointer moves to the next page boundary (the start when
        none is left, the skipped tail counted as sent)."""
        with self._changed:
            side = self.producer
            nxt, curr = self._next_boundary(side.ptr, page_size)
            if nxt >= curr:
                self.bytes_sent = (self.bytes_sent + self.fifo_size - nxt) & _MASK
                nxt = 0
            side.ptr, side.page_size, side.curr_size = nxt, page_size, curr
            self._changed.notify_all()

    def set_consumer_page_size(self, page_size: int, what: str) -> None:
        """The consumer's page size: its pointer moves likewise, after waiting for the producer's
        skipped tail (counted as acknowledged)."""
        with self._changed:
            side = self.consumer
            nxt, curr = self._next_boundary(side.ptr, page_size)
            if nxt >= curr:
                skip = self.fifo_size - nxt
                self._wait(
                    lambda: self.pending_bytes() >= skip, f"{what}: the producer never reached the FIFO's end", None
                )
                self.bytes_acked = (self.bytes_acked + skip) & _MASK
                nxt = 0
            side.ptr, side.page_size, side.curr_size = nxt, page_size, curr
            self._changed.notify_all()

    def _next_boundary(self, ptr: int, page_size: int) -> tuple[int, int]:
        return -(-ptr // page_size) * page_size, self.fifo_size - self.fifo_size % page_size

    # -- moving pages --------------------------------------------------------------------
    def push_page(self, page: np.ndarray, what: str, *, block: bool = True, timeout_s: float | None = None) -> bool:
        """One producer page (``page``: uint8, the producer's page size) into the ring, waiting
        for space; with ``block=False`` False (nothing pushed) when there is none."""
        with self._changed:
            side = self.producer
            n = side.page_size
            if not block and self.free_bytes() < n:
                return False
            self._wait(lambda: self.free_bytes() >= n, f"{what}: the FIFO stayed full (nothing consumed it)", timeout_s)
            self.data[side.ptr : side.ptr + n] = page
            if side.ptr + n >= side.curr_size:
                side.ptr = side.ptr + n - side.curr_size
                self.bytes_sent = (self.bytes_sent + n + self.fifo_size - side.curr_size) & _MASK
            else:
                side.ptr += n
                self.bytes_sent = (self.bytes_sent + n) & _MASK
            self._changed.notify_all()
            return True

    def pop_page(self, what: str, *, notify: bool = True, timeout_s: float | None = None) -> np.ndarray:
        """The oldest page (a copy, the consumer's page size), waiting for it; its space freed for
        the producer when ``notify``."""
        with self._changed:
            side = self.consumer
            n = side.page_size
            need = n + (self.fifo_size - side.curr_size if side.ptr + n >= side.curr_size else 0)
            self._wait(lambda: self.pending_bytes() >= need, f"{what}: no page reached the FIFO", timeout_s)
            page = self.data[side.ptr : side.ptr + n].copy()
            if side.ptr + n >= side.curr_size:
                side.ptr = side.ptr + n - side.curr_size
            else:
                side.ptr += n
            self.bytes_acked = (self.bytes_acked + need) & _MASK
            if notify:
                self.acked_seen = self.bytes_acked
            self._changed.notify_all()
            return page

    def discard_pages(self) -> int:
        """Every whole page the consumer could read now, acknowledged unread (tt-metal's
        ``discard_pending_pages``, which notifies the producer); the number of pages."""
        with self._changed:
            side = self.consumer
            pages = self.pending_bytes() // side.page_size
            if pages:
                drop = pages * side.page_size
                side.ptr = (side.ptr + drop) % side.curr_size
                self.bytes_acked = (self.bytes_acked + drop) & _MASK
            self.acked_seen = self.bytes_acked
            self._changed.notify_all()
            return pages

    def drained(self, what: str, timeout_ms: int | None, *, producer_view: bool) -> None:
        """Wait until everything pushed has been popped (``barrier``), as the producer sees it
        (``producer_view``: the notified count) or the consumer; with ``timeout_ms`` an error after
        that many milliseconds, else after the wait timeout.  ``what`` leads the error."""
        with self._changed:
            limit = None if timeout_ms is None else timeout_ms / 1000.0

            def done() -> bool:
                acked = self.acked_seen if producer_view else self.bytes_acked
                return (self.bytes_sent - acked) & _MASK == 0

            self._wait(done, f"{what}. Bytes sent: {self.bytes_sent}, Bytes acknowledged: {self.bytes_acked}", limit)
