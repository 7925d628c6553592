"""Decoded weights: the bfloat16 values a block-float (or bfloat16) buffer's bytes decode to, kept
on the buffer as its memo, so that a weight is decoded once, not once per use.

Every value of a bfloat8_b or bfloat4_b block (a 7- or 3-bit magnitude times a power of two of
the block, subnormal ones included) and of a bfloat16 tensor is a bfloat16 value: a
:class:`Decoded` memo holds them exactly, in half the memory of float32 values, in the form
torch's bfloat16 matrix products read (``torch.matmul`` on bfloat16 operands accumulates in
float32 and rounds once to bfloat16, as meshnn's float32 product rounded to a bfloat16 output).

A Decoded memo lives in the buffer's memo slot (:mod:`meshnn.mesh.slab`), so it goes wherever a
:class:`~meshnn.ops.memo.Known` memo goes: dropped by anything that may change the bytes (a queue
write, a program writing the buffer, ``MeshBuffer.slab()``, a free), never read stale.  A reader
of float32 values (:func:`~meshnn.ops.memo.known_values`) gets them widened from it.

Bounded: the memos of all buffers together hold at most ``MESHNN_DECODED_BYTES`` (default 8 GiB,
or a quarter of the machine's memory when that is less; 0 turns them off), counted as their values
less the bytes they stand for (a weight whose bytes were let go: :mod:`meshnn.ops.decoded_bytes`).
A weight that does not fit is decoded at each use: a model reads its weights in the same order every step, so keeping
the first ones gives every step the same hits, where dropping the least recently used would
drop each weight just before its next use.  Memos left unused while the cache was asked for
:data:`STALE_FACTOR` times as many others as it holds make room for new ones.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` (the spec) and
:mod:`meshnn.ops.memo` (:mod:`meshnn.ops.wide` when a memo is patched).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.host.interrupts import passes_interrupts
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.tensor.spec import TensorSpec

BF16_EXACT = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B)
"""The dtypes whose every value is a bfloat16 value."""

DECODED_BYTES_ENV = "MESHNN_DECODED_BYTES"

STALE_FACTOR = 4
"""A memo not used while ``STALE_FACTOR`` x (memos held) others were asked for may be dropped to
admit a new one."""

MIN_DECODED_BYTES = 64 << 10
"""Smaller tensors (bfloat16 bytes on all local devices) are decoded every time."""


class Decoded:
    """The bfloat16 values ``values`` (a torch tensor, bfloat16, or float32 for a weight read by
    float32 products) that a buffer's bytes decode to under
    ``spec``: ``(k, *spec.shape)`` for the ``k`` local devices, or ``(1, *spec.shape)`` when every
    device holds the same values; or, ``sides`` true, the ``k`` matrices ``(K, N)`` side by side
    as one ``(K, k * N)`` matrix (a column-parallel weight read by one product).  Read-only."""

    __slots__ = ("__weakref__", "equal_rows", "other", "sides", "spec", "tick", "values", "wide")

    def __init__(self, spec: TensorSpec, values: Any, *, sides: bool = False) -> None:
        self.spec, self.values, self.sides = spec, values, sides
        self.equal_rows = not sides and values.shape[0] == 1
        self.tick = 0
        self.other: Any = None  # the values in the other dtype (bfloat16 / float32), once kept
        self.wide: tuple | None = None  # (key, float32 blocks) kept by meshnn.ops.wide

    @property
    def nbytes(self) -> int:
        return self.values.numel() * self.values.element_size()

    def in_dtype(self, dtype: Any) -> Any:
        """The values (same layout) as torch ``dtype``, bfloat16 or float32: ``values``, or their
        copy in the other dtype, kept beside them when the bound has room (a weight read by
        products of both kinds, e.g. a bfloat8_b output in prefill and a bfloat16 one in decode,
        converts once, not at every use), else made now.  Exact either way."""
        if self.values.dtype == dtype:
            return self.values
        other = self.other
        if other is not None and other.dtype == dtype:
            return other
        other = self.values.to(dtype)
        if DECODED.grow(self, other.numel() * other.element_size()):
            self.other = other
        return other

    def stacked(self, k: int, values: Any = None) -> Any:
        """``(k, *spec.shape)`` values (a view: expanded, or the side-by-side matrix regrouped) of
        ``values`` (this memo's, or the same in another dtype: :meth:`in_dtype`)."""
        values = self.values if values is None else values
        if self.sides:
            big_k, width = values.shape
            return values.reshape(big_k, k, width // k).permute(1, 0, 2)
        if values.shape[0] != k:
            return values.expand(k, *values.shape[1:])
        return values

    def patch(self, index: tuple, values: np.ndarray) -> None:
        """Set the values at ``index`` (numpy integer arrays into ``(k, *spec.shape)``) to float32
        ``values`` of the buffer's format (so bfloat16 values: exact), in place; float32 blocks
        kept of the old values (:mod:`meshnn.ops.wide`) are dropped."""
        if self.wide is not None:
            from meshnn.ops.wide import WIDE

            WIDE.discard(self)
        torch = _torch()
        where = tuple(torch.from_numpy(np.asarray(i, np.int64)) for i in index)
        new = torch.from_numpy(np.ascontiguousarray(values, np.float32))
        self.values[where] = new.to(self.values.dtype)
        if self.other is not None:
            self.other[where] = new.to(self.other.dtype)

    def floats(self, k: int) -> np.ndarray:
        """``(k, *spec.shape)`` float32 values (a new array, or a read-only broadcast of one row)."""
        torch = _torch()
        one = self.equal_rows and k > 1
        source = self.values if one else self.stacked(k)
        out = np.empty(tuple(source.shape), np.float32)
        torch.from_numpy(out).copy_(source)
        if one:
            out = np.broadcast_to(out, (k, *out.shape[1:]))
        out.flags.writeable = False
        return out


def _torch() -> Any:
    import sys

    return sys.modules["torch"]


class Bounded:
    """A bound of ``limit`` bytes on what memos hold, the entries held by id (oldest first), a tick
    counting what was asked for, and counts of hits, misses and refusals."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit = limit_bytes
        self._held: OrderedDict[int, list] = OrderedDict()  # id -> the entry (its memo's weak ref first)
        self._bytes = 0
        self._tick = 0
        self._lock = threading.RLock()
        self.hits = self.misses = self.refused = 0

    @property
    def nbytes(self) -> int:
        """Bytes counted against the bound now."""
        return self._bytes


class DecodedCache(Bounded):
    """The bound on :class:`Decoded` memos: ``put`` attaches one to a buffer when it fits,
    ``get`` finds it (or None).  Counted: the live memos' values, less the bytes they stand for;
    an entry is ``[memo ref, buffer ref, bytes counted]``."""

    def get(self, buffer: MeshBuffer, spec: TensorSpec) -> Decoded | None:
        """The Decoded memo of ``buffer``'s current bytes under ``spec``, or None."""
        memo = buffer.memo
        if type(memo) is not Decoded or not (memo.spec is spec or memo.spec == spec):
            self.misses += 1
            return None
        self.hits += 1
        with self._lock:
            self._tick += 1
            memo.tick = self._tick
            key = id(memo)
            if key in self._held:
                self._held.move_to_end(key)
        return memo

    def has_room(self, size: int) -> bool:
        """Whether ``size`` more bytes of values fit the bound now (stale memos aside)."""
        return size >= MIN_DECODED_BYTES and self._bytes + size <= self.limit

    def make_room(self, size: int) -> bool:
        """Whether :meth:`put` would keep ``size`` bytes of values now, after dropping memos gone
        stale to make room for them (as :meth:`put` does)."""
        if size > self.limit or size < MIN_DECODED_BYTES:
            return False
        with self._lock:
            if self._bytes + size > self.limit:
                self._drop_stale(size)
            return self._bytes + size <= self.limit

    def put(self, buffer: MeshBuffer, spec: TensorSpec, values: Any, *, sides: bool = False) -> Decoded | None:
        """Attach ``values`` (see :class:`Decoded`) to ``buffer`` when the bound has room for them
        (after dropping memos gone stale); None when nothing was attached."""
        size = values.numel() * values.element_size()
        if size > self.limit or size < MIN_DECODED_BYTES:
            return None
        memo = Decoded(spec, values, sides=sides)
        with self._lock:
            self._tick += 1
            memo.tick = self._tick
            if self._bytes + size > self.limit:
                self._drop_stale(size)
            if self._bytes + size > self.limit:
                self.refused += 1
                return None
            key = id(memo)
            self._held[key] = [weakref.ref(memo, self._gone(key)), weakref.ref(buffer), size]
            self._bytes += size
        buffer.memo = memo
        return memo

    def _drop_stale(self, size: int) -> None:
        """Drop memos, least recently used first, that went unused for the stale span."""
        span = STALE_FACTOR * len(self._held)
        while self._held and self._bytes + size > self.limit:
            key = next(iter(self._held))
            memo_ref, buffer_ref, held = self._held[key]
            memo = memo_ref()
            if memo is not None and self._tick - memo.tick <= span:
                return
            del self._held[key]
            self._drop(memo, buffer_ref(), held)

    def grow(self, memo: Decoded, size: int) -> bool:
        """Count ``size`` more bytes for ``memo`` (its values in a second dtype) when they fit the
        bound; False (nothing counted) when they do not, or the memo is no longer held."""
        with self._lock:
            entry = self._held.get(id(memo))
            if entry is None or entry[0]() is not memo or self._bytes + size > self.limit:
                return False
            entry[2] += size
            self._bytes += size
            return True

    def credit(self, memo: Decoded, released: int) -> None:
        """``memo``'s buffer let ``released`` bytes of its slab go (the memo stands in for them):
        the memo counts that much less against the bound."""
        with self._lock:
            entry = self._held.get(id(memo))
            if entry is not None and entry[0]() is memo:
                entry[2] -= released
                self._bytes -= released

    def _gone(self, key: int):
        @passes_interrupts
        def callback(_ref: weakref.ref) -> None:  # the memo was dropped by whoever changed the bytes
            with self._lock:
                entry = self._held.pop(key, None)
                if entry is not None:
                    self._bytes -= entry[2]

        return callback

    def _drop(self, memo: Decoded | None, buffer: MeshBuffer | None, size: int) -> None:
        if memo is not None:
            self._bytes -= size
            if buffer is not None and buffer.memo is memo:
                buffer.touch()  # (bytes let go are made again first)

    def clear(self) -> None:
        """Drop every Decoded memo (their buffers decode their bytes again)."""
        with self._lock:
            while self._held:
                _, (memo_ref, buffer_ref, size) = self._held.popitem(last=False)
                self._drop(memo_ref(), buffer_ref(), size)
            self._bytes = 0


def decoded_limit_from_env() -> int:
    """The bound in bytes: ``MESHNN_DECODED_BYTES`` when set (a non-negative integer; 0 turns
    Decoded memos off), else 8 GiB or a quarter of the machine's memory, whichever is less: a
    model's host memory is about its device bytes plus this bound (what is kept decoded stands for
    the bytes it lets go), so a Llama-3.1-8B on a T3000 (8 GB of bfloat8_b bytes) keeps 6.4 GB
    decoded on a 24 GiB machine, 18 to 20 GB in all (extrapolated from 8 and 16 layers; a third of
    the machine took it to 20 GB, measured)."""
    configured = os.environ.get(DECODED_BYTES_ENV, "").strip()
    if configured:
        if not (configured.isascii() and configured.isdigit()):
            raise MeshnnValueError(f"{DECODED_BYTES_ENV} must be a non-negative integer (bytes), got {configured!r}")
        return int(configured)
    try:
        machine = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        machine = 24 << 30
    return min(8 << 30, machine // 4)


DECODED = DecodedCache(decoded_limit_from_env())
"""The Decoded memos of every mesh of this process, within one bound."""
