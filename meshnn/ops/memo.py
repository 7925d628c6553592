"""What the ops know about a buffer's bytes: the float values they decode to, kept on the buffer.

Decoding a device tensor's bytes (untilize, widen bfloat16 to float32, unpack block floats) is a
pure function of the bytes and the spec.  An op that has just written its output knows the values
its bytes decode to (it rounded them itself), and an op that has decoded an input knows them
until the bytes change; either attaches them to the MeshBuffer as its *memo*.  The next op that
reads the buffer with the same spec takes the values instead of decoding the bytes.

Invalidation is the mesh layer's (:mod:`meshnn.mesh.mesh_buffer`): whoever may change the bytes
drops the memo first (a command-queue write when it runs, a workload for each buffer its program
writes, ``MeshBuffer.slab()`` for its caller, a free).  The ops only read memos they find there.

A memo also says when every device holds the same values (its values have one row for all):
an op over replicated inputs then needs no byte comparison to know they are equal.

Bounded: at most ``MESHNN_VALUES_MEMO_BYTES`` (default 256 MiB; 0 turns memos off) of values
on all buffers together, least recently used dropped first; smaller tensors than
``MIN_BYTES`` per mesh are not memoised (decoding them is cheap).  Values are read-only.

While a kernel runs over whole slabs, :func:`bind_rows` records which buffer each of its row
arrays is (:data:`BOUND_ROWS`), so that the values it reads and writes
(:mod:`meshnn.ops.values`) find that buffer's memo; :func:`known_values`, :func:`relaid_memo`
and :func:`settled` are what a kernel asks of its bound rows.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh` and :mod:`meshnn.tensor` (the spec).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.host.interrupts import passes_interrupts
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.ops.decoded import Decoded
from meshnn.tensor.spec import TensorSpec

MIN_BYTES = 64 << 10
"""Tensors of fewer bytes (on all local devices together) are decoded every time."""


class Known:
    """The float32 values ``values`` that a buffer's bytes decode to under ``spec``: shape
    ``(k, *spec.shape)`` for the ``k`` local devices, or ``(1, *spec.shape)`` when every device
    holds the same values.  Read-only."""

    __slots__ = ("__weakref__", "equal_rows", "spec", "values")

    def __init__(self, spec: TensorSpec, values: np.ndarray) -> None:
        self.spec, self.values = spec, values
        self.equal_rows = values.shape[0] == 1


class _MemoRef(weakref.ref):
    """A weak reference to a :class:`Known` memo carrying its entry's key and size (bytes)."""

    __slots__ = ("key", "size")


class ValuesMemo:
    """The bound on memos: ``put`` attaches one to a buffer, ``get`` finds it (or None)."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit = limit_bytes
        self._held: OrderedDict[int, tuple[_MemoRef, weakref.ref, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.RLock()  # re-entered when a dropped memo's callback runs inside a drop
        self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        """Bytes of values held by live memos now."""
        return self._bytes

    def get(self, buffer: MeshBuffer, spec: TensorSpec) -> Known | None:
        """The memo of ``buffer``'s current bytes under ``spec``, or None."""
        known = buffer.memo
        if type(known) is not Known or not (known.spec is spec or known.spec == spec):
            self.misses += 1
            return None
        self.hits += 1
        with self._lock:
            key = id(known)
            if key in self._held:
                self._held.move_to_end(key)
        return known

    def put(self, buffer: MeshBuffer, spec: TensorSpec, values: np.ndarray) -> bool:
        """Attach ``values`` (see :class:`Known`; float32, any non-negative strides over memory
        of their own, made read-only here) to ``buffer``, within the bound; False when nothing was
        attached."""
        size = values.nbytes
        if size > self.limit or size < MIN_BYTES:
            return False
        values.flags.writeable = False
        known = Known(spec, values)
        with self._lock:
            while self._held and self._bytes + size > self.limit:
                _, (known_ref, buffer_ref, _) = self._held.popitem(last=False)
                self._drop(known_ref, buffer_ref)
            key = id(known)
            ref = _MemoRef(known, self._gone)
            ref.key, ref.size = key, size
            self._held[key] = (ref, weakref.ref(buffer), size)
            self._bytes += size
        buffer.memo = known
        return True

    @passes_interrupts
    def _gone(self, ref: _MemoRef) -> None:
        """``ref``'s memo was dropped by whoever changed the bytes: its entry and bytes go (one
        callback for every memo, its key and size on the reference: no closure made per op)."""
        with self._lock:
            if self._held.pop(ref.key, None) is not None:
                self._bytes -= ref.size

    def _drop(self, known_ref: weakref.ref, buffer_ref: weakref.ref) -> None:
        """Drop a memo whose entry was just taken out of ``_held`` (its bytes with it)."""
        known, buffer = known_ref(), buffer_ref()
        if known is not None:
            self._bytes -= known.values.nbytes
            if buffer is not None and buffer.memo is known:
                buffer.touch()  # writes the bytes first if they were left to the memo

    def clear(self) -> None:
        """Drop every memo (their buffers decode their bytes again)."""
        with self._lock:
            while self._held:
                _, (known_ref, buffer_ref, _) = self._held.popitem(last=False)
                self._drop(known_ref, buffer_ref)
            self._bytes = 0


MEMO_BYTES_ENV = "MESHNN_VALUES_MEMO_BYTES"


def memo_limit_from_env() -> int:
    """The memo bound in bytes: ``MESHNN_VALUES_MEMO_BYTES`` when set (a non-negative integer; 0
    turns memos off), else 256 MiB."""
    return bytes_from_env(MEMO_BYTES_ENV, 256 << 20)


def bytes_from_env(name: str, default: int) -> int:
    """A bound in bytes from the environment variable ``name`` (a non-negative integer), or
    ``default`` when it is not set; anything else is a :class:`MeshnnValueError` naming it."""
    configured = os.environ.get(name, "").strip()
    if not configured:
        return default
    if not (configured.isascii() and configured.isdigit()):
        raise MeshnnValueError(f"{name} must be a non-negative integer (bytes), got {configured!r}")
    return int(configured)


VALUES_MEMO = ValuesMemo(memo_limit_from_env())
"""The memos of every mesh of this process, within one bound."""

MEMO_MIN_BYTES = 64 << 10
"""Outputs of fewer float32 bytes leave no memo (see :data:`MIN_BYTES`)."""

MEMO_MIN_DEVICE_BYTES = 16 << 10
"""An op whose largest buffer holds fewer bytes per device runs without memos: for a tiny op the
bookkeeping costs more than the decoding it saves."""


# ------------------------------------------------------------------------ a kernel's rows


class BoundRows(NamedTuple):
    """The buffer whose slab rows a running kernel was given as ``rows``.  ``first``: ``rows`` is
    the first device's row only; ``keep``: a decoded input may leave its values as a memo;
    ``defer``: an output that may leave its bytes to a deferred write."""

    rows: np.ndarray
    buffer: MeshBuffer
    first: bool
    keep: bool
    defer: bool = False


BOUND_ROWS: dict[int, BoundRows] = {}
"""id(rows) -> the buffer behind them, while a kernel given those rows runs (see
:func:`meshnn.ops.launch.launch`)."""


def bound_rows(rows: np.ndarray) -> BoundRows | None:
    bound = BOUND_ROWS.get(id(rows))
    return bound if bound is not None and bound.rows is rows else None


def bind_rows(
    rows: Sequence[np.ndarray], buffers: Sequence[MeshBuffer], n_in: int, *, first: bool, defer: bool
) -> None:
    """Tell :func:`meshnn.ops.values.logical_values` and :func:`meshnn.ops.values.write_values`
    which buffer each of ``rows`` is (the inputs first, then the outputs).  An input whose bytes an
    output shares (``output_tensor=`` the input) leaves no memo when decoded: the kernel is about to
    change them."""
    outputs = buffers[n_in:]
    for i, (r, buffer) in enumerate(zip(rows, buffers, strict=True)):
        keep = not any(buffer.shares_bytes(o) for o in outputs)
        BOUND_ROWS[id(r)] = BoundRows(r, buffer, first, keep, defer and i >= n_in)


def unbind_rows(rows: Sequence[np.ndarray]) -> None:
    for r in rows:
        BOUND_ROWS.pop(id(r), None)


def settle(buffers: Sequence[MeshBuffer]) -> None:
    """Do the deferred writes of ``buffers``."""
    for buffer in buffers:
        if buffer.has_deferred_write():
            buffer.settle()


def settled(rows: np.ndarray) -> np.ndarray:
    """``rows`` of a running kernel's input, with its buffer's deferred write done: for a kernel
    launched with ``reads_memos`` before it reads the bytes themselves."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is not None and bound.buffer.has_deferred_write():
        bound.buffer.settle()
    return rows


def known_values(rows: np.ndarray, spec: TensorSpec) -> np.ndarray | None:
    """The ``(k, *spec.shape)`` float32 values of ``rows`` that its buffer's memo holds, or None."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is None:
        return None
    known = VALUES_MEMO.get(bound.buffer, spec)
    if known is None:
        decoded = bound.buffer.memo
        if type(decoded) is Decoded and (decoded.spec is spec or decoded.spec == spec):
            return _widened(decoded, rows.shape[0], bound.first)
        return None
    values, k = known.values, rows.shape[0]
    if values.shape[0] == k:
        return values
    if known.equal_rows:
        return np.broadcast_to(values, (k, *values.shape[1:]))
    return values[:1] if bound.first else None


def _widened(decoded: Decoded, k: int, first: bool) -> np.ndarray | None:
    """A Decoded memo's values as float32 for ``k`` rows of its buffer (read-only, made now)."""
    if decoded.equal_rows:
        return decoded.floats(k)
    held = decoded.values.shape[1] // decoded.spec.shape[-1] if decoded.sides else decoded.values.shape[0]
    if first:
        return decoded.floats(held)[:1]
    return decoded.floats(k) if held == k else None


def relaid_memo(rows: np.ndarray, spec: TensorSpec, values: np.ndarray) -> bool:
    """Give the buffer behind a running kernel's input ``rows`` the memo ``values``: the values
    its memo holds already, in other strides (a layout its consumer reads faster, e.g. a weight's
    column shards side by side for one product).  False when the buffer keeps no such memo."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is None or not bound.keep or bound.first:
        return False
    known = VALUES_MEMO.get(bound.buffer, spec)
    if known is None or known.values.shape != values.shape:
        return False
    return VALUES_MEMO.put(bound.buffer, spec, values)


def patch_known(rows: np.ndarray, spec: TensorSpec, index: tuple, values: np.ndarray) -> None:
    """A running kernel (launched with ``keeps_memos``) changed the bytes of its output ``rows``
    at ``index`` (an index into ``(k, *spec.shape)`` values) and nowhere else: set its buffer's memo
    to ``values`` there, in place.  A memo that cannot be patched so (of another spec, one row for
    every device, or over memory of another array) is dropped instead."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is None:
        return  # not bound for memos: launch dropped the memo before the kernel ran
    buffer = bound.buffer
    known = buffer.memo
    if known is None:
        return
    if type(known) is Known and (known.spec is spec or known.spec == spec) and known.values.shape[0] == rows.shape[0]:
        array = known.values
        try:
            array.flags.writeable = True
        except ValueError:  # a view of memory the memo does not own
            buffer.touch()
            return
        array[index] = values
        array.flags.writeable = False
        return
    if type(known) is Decoded and known.spec == spec and not known.sides and known.values.shape[0] == rows.shape[0]:
        known.patch(index, values)  # (a bfloat16 memo: the values written are of the cache's format)
        return
    buffer.touch()


def drop_known(rows: np.ndarray) -> None:
    """Drop the memo of a running kernel's output ``rows`` (a kernel launched with ``keeps_memos``
    that cannot patch it)."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is not None:
        bound.buffer.touch()
