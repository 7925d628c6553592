"""The bytes of a view that sees part of its owner's slab (``ttnn.narrow``'s sub-tensor).

A :class:`WindowStorage` stands where a MeshBuffer keeps its :class:`~meshnn.mesh.slab.SlabStorage`:
``select(owner_rows)`` picks the view's bytes, in the view's own host page order, out of the
owner's ``(local devices, owner size)`` rows, as a numpy view (basic indexing only, never a copy).

- When the selection is one run of bytes in every row (a narrow along the first dimension that is
  not 1), the view's rows ARE the owner's bytes: reads and writes go straight through.
- Otherwise (runs strided through the owner's rows) a read gets a gathered copy, kept while no slab
  anywhere was written (:data:`~meshnn.mesh.slab.WRITES`), read-only, and a write is refused before
  any byte changes (:class:`~meshnn.errors.MeshnnValueError`; an op's ``output_tensor`` is checked
  by :meth:`MeshBuffer.writable`): meshnn's kernels write whole row arrays.

A view keeps no memo of its own (values are decoded from its bytes each time); a write through it
drops its owner's memo, and a write of the owner is seen by the next read of the view.

Layers: imports :mod:`meshnn.errors` and the mesh layer's slab (numpy otherwise).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.mesh.slab import WRITES

Select = Callable[[np.ndarray], np.ndarray]
"""From an owner's ``(local devices, size)`` rows, a view's bytes as ``(local devices, ...)``."""


class WindowStorage:
    """Part of ``owner``'s bytes (a SlabStorage, or another window), ``size`` bytes a row."""

    __slots__ = ("__weakref__", "_copy", "_copy_at", "contiguous", "owner", "rows", "select", "size")

    def __init__(self, owner: object, size: int, select: Select) -> None:
        self.owner, self.size, self.select = owner, size, select
        self.rows: int = owner.rows  # type: ignore[attr-defined]
        self._copy: np.ndarray | None = None
        self._copy_at: tuple[int, int] | None = None
        self.contiguous = self._as_rows(np.zeros((1, owner.size), dtype=np.uint8)) is not None  # type: ignore[attr-defined]

    # What a MeshBuffer, a trace and a workload read of any storage.
    window = None
    dropped = False

    @property
    def root(self) -> object:
        """The SlabStorage that holds the bytes."""
        return self.owner.root  # type: ignore[attr-defined]

    @property
    def live(self) -> bool:
        return self.owner.live  # type: ignore[attr-defined]

    @property
    def pending(self) -> None:
        """Never a deferred write of its own (the owner's is done before any read)."""
        return None

    @pending.setter
    def pending(self, value: object) -> None:
        """A replay clearing a deferred write it found (none here)."""

    @property
    def memo(self) -> None:
        return None

    @memo.setter
    def memo(self, value: object) -> None:
        """Values decoded from a view are not kept (its bytes change with its owner's)."""

    def _as_rows(self, owner_rows: np.ndarray) -> np.ndarray | None:
        """The selection as ``(rows, size)`` without copying, or None when it is strided."""
        picked = self.select(owner_rows)
        try:
            return np.reshape(picked, (picked.shape[0], -1), copy=False)
        except ValueError:
            return None

    def _read(self, owner_rows: np.ndarray, size: int) -> np.ndarray:
        if self.contiguous:
            return self._as_rows(owner_rows)[:, :size]  # type: ignore[index]
        at = (WRITES.value, id(owner_rows.base) if owner_rows.base is not None else id(owner_rows))
        if self._copy is None or self._copy_at != at:
            picked = self.select(owner_rows)
            copy = np.ascontiguousarray(picked).reshape(picked.shape[0], -1)
            copy.flags.writeable = False  # a kernel that would write it fails, never loses its write
            self._copy, self._copy_at = copy, at
        return self._copy[:, :size]

    def first(self, size: int) -> np.ndarray:
        return self._read(self.owner.first(self.owner.size), size)  # type: ignore[attr-defined]

    def unsettled(self, size: int) -> np.ndarray:
        return self.first(size)  # the owner's deferred write is done: the view reads bytes, not memos

    def settle(self) -> None:
        self.owner.settle()  # type: ignore[attr-defined]

    def _check_writable(self) -> None:
        if not self.contiguous:
            raise MeshnnValueError(
                "a narrowed tensor whose bytes are strided through its input's buffer (not one run of "
                "bytes a device) can be read but not written in meshnn: write the input tensor, or "
                "copy the narrowed tensor (ttnn.clone) and write the copy"
            )

    def touch(self) -> None:
        self._check_writable()
        self.owner.touch()  # type: ignore[attr-defined]

    def fresh(self, size: int) -> np.ndarray:
        self._check_writable()
        return self.first(size)

    def defer(self, write: Callable[[np.ndarray], None]) -> None:
        """Write now (a view's bytes are its owner's: nothing to defer)."""
        self.touch()
        write(self.first(self.size))

    def drop_bytes(self, write: Callable[[np.ndarray], None]) -> bool:
        return False

    def release(self) -> None:
        """A view frees nothing (its owner does)."""
