"""Decoded operands whose bytes did not change: a bounded memo of ``logical_values``.

Decoding is a pure function of an operand's bytes and its spec, so a decoded array can be used
again whenever the bytes are the ones it was decoded from.  That is checked by comparing the
bytes, never assumed: writes, ops and frees need not tell the memo anything, and a stale entry can
only cost time.  A comparison is one pass over the bytes; decoding bfloat16 or block-float tiles
is several (decode, untilize, widen), so a constant operand, such as a model's weights fed to
``ttnn.linear`` again and again, decodes once.

Bounded: at most ``MESHNN_OPERAND_MEMO_BYTES`` (default 256 MiB; 0 turns it off) of saved bytes
plus decoded values, least recently used out first; only operands of at least ``MIN_BYTES`` are
kept.  Operands that change on every call (activations) cost one extra copy of their bytes each.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from meshnn.tensor.spec import TensorSpec

MIN_BYTES = 1 << 20
"""Smaller operands are decoded every time (their decode is cheap)."""


class _Entry(NamedTuple):
    raw: np.ndarray  # a copy of the bytes the values were decoded from
    values: np.ndarray  # read-only


class OperandMemo:
    """``values(rows, spec, decode)``: ``decode(rows, spec)``, reused while ``rows`` holds the same bytes."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit = limit_bytes
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        """Bytes held now (saved bytes plus decoded values)."""
        return self._bytes

    def values(self, rows: np.ndarray, spec: TensorSpec, decode: Callable[[np.ndarray, TensorSpec], np.ndarray]):
        """The decoded values of device rows ``rows`` (``(k, bytes)`` uint8) in ``spec``; read-only
        when they come from the memo."""
        if self.limit <= 0 or rows.nbytes < MIN_BYTES:
            return decode(rows, spec)
        key = (rows.__array_interface__["data"][0], rows.shape, rows.strides, spec)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        if entry is not None and _same_bytes(entry.raw, rows):
            self.hits += 1
            return entry.values
        self.misses += 1
        values = decode(rows, spec)
        if np.may_share_memory(values, rows):  # a view of the bytes themselves: nothing to save
            return values
        values.flags.writeable = False
        self._keep(key, _Entry(rows.copy(), values))
        return values

    def _keep(self, key: tuple, entry: _Entry) -> None:
        size = entry.raw.nbytes + entry.values.nbytes
        if size > self.limit:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.raw.nbytes + old.values.nbytes
            while self._entries and self._bytes + size > self.limit:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.raw.nbytes + dropped.values.nbytes
            self._entries[key] = entry
            self._bytes += size

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


def _same_bytes(saved: np.ndarray, rows: np.ndarray) -> bool:
    if saved.shape != rows.shape:
        return False
    if rows.flags.c_contiguous and rows.nbytes % 8 == 0:  # compare 8 bytes at a time
        return bool(np.array_equal(saved.reshape(-1).view(np.uint64), rows.reshape(-1).view(np.uint64)))
    return bool(np.array_equal(saved, rows))


OPERAND_MEMO = OperandMemo(int(os.environ.get("MESHNN_OPERAND_MEMO_BYTES", str(256 << 20))))
