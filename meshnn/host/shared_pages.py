"""Rows of one host array that share physical pages, copy-on-write (Linux).

A *mapped slab* is a ``(rows, size)`` uint8 array over an anonymous private mapping of its own
(:func:`new_mapped`): zero pages, touched lazily, as ``np.zeros`` gives them.  When a group of its
rows is to hold the same bytes, :class:`RowSharing` puts those bytes once in a memfd (``staging``:
the caller writes them there) and maps each row of the group over it, ``MAP_PRIVATE|MAP_FIXED``,
at the row's own address.  The array is unchanged to numpy (same address, shape, writable): a
read of any row of the group reads the one copy; a write to a row gets private copies of just
the pages it touches (the kernel does it), the other rows keep the shared bytes.  The memfd's
pages go back to the system when the last row mapping them is written over or unmapped (the
array freed; the fd is closed at once).  A fork copies the mappings as it copies any private
memory.

Rows must be whole pages (``size`` a multiple of the page size) and at least ``MIN_ROW_BYTES``;
elsewhere (not Linux, no ``memfd_create``, ``MESHNN_SHARED_ROWS=0``) or when a call fails, nothing
is shared and the caller writes every row as before: the bytes are the same either way.

Part of the ``host`` layer; imports ``meshnn.host.settings``.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import sys
from collections.abc import Sequence

import numpy as np

from meshnn.host.settings import count

MIN_ROW_BYTES = 1 << 20
"""Rows smaller than this (1 MiB) are never shared: a memfd and a mapping per row cost more."""

PAGE = mmap.PAGESIZE
_PROT = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FIXED = 0x10  # Linux's value (mmap's module does not export it)
_MAP_FAILED = ctypes.c_void_p(-1).value


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux") or not hasattr(os, "memfd_create"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()
ENABLED = _LIBC is not None and count("MESHNN_SHARED_ROWS", 1, what="0 or 1") != 0
"""Whether rows may share pages in this process (Linux with memfd; ``MESHNN_SHARED_ROWS=0`` turns it off)."""


def can_share(rows: int, size: int) -> bool:
    """Whether a ``(rows, size)`` slab may have rows that share pages (then make it by :func:`new_mapped`)."""
    return ENABLED and rows > 1 and size >= MIN_ROW_BYTES and size % PAGE == 0


def new_mapped(rows: int, size: int) -> np.ndarray:
    """A zeroed ``(rows, size)`` uint8 array over a private anonymous mapping of its own."""
    region = mmap.mmap(-1, rows * size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=_PROT)
    return np.frombuffer(region, dtype=np.uint8).reshape(rows, size)


def is_mapped(slab: np.ndarray) -> bool:
    """Whether ``slab`` is a whole array made by :func:`new_mapped` (not a view of part of one)."""
    base = slab.base
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return isinstance(base, mmap.mmap) and slab.ndim == 2 and len(base) == slab.nbytes and slab.flags.c_contiguous


class RowSharing:
    """Groups of ``slab``'s rows to be given the same bytes, a group at a time: write each group's
    bytes into ``staging[i]`` (writable, ``size`` bytes), then :meth:`commit` maps the rows over
    them.  :meth:`start` returns None where nothing can be shared (the caller writes the rows)."""

    def __init__(self, slab: np.ndarray, groups: Sequence[Sequence[int]], fds: list[int], maps: list[mmap.mmap]):
        self.slab, self.groups, self._fds, self._maps = slab, [list(g) for g in groups], fds, maps
        self.staging = [np.frombuffer(m, dtype=np.uint8) for m in maps]

    @classmethod
    def start(cls, slab: np.ndarray, groups: Sequence[Sequence[int]]) -> RowSharing | None:
        rows, size = slab.shape
        if not groups or not can_share(rows, size) or not is_mapped(slab):
            return None
        fds: list[int] = []
        maps: list[mmap.mmap] = []
        try:
            for _ in groups:
                fds.append(os.memfd_create("meshnn-rows", os.MFD_CLOEXEC))
                os.ftruncate(fds[-1], size)
                maps.append(mmap.mmap(fds[-1], size, flags=mmap.MAP_SHARED, prot=_PROT))
        except OSError:  # (no memfd, no room in its filesystem): nothing shared
            _close(fds, maps)
            return None
        return cls(slab, groups, fds, maps)

    def commit(self) -> None:
        """Map every row of each group over its staged bytes (a row that cannot be mapped gets a
        copy of them instead); the staging maps and fds are closed."""
        base = self.slab.__array_interface__["data"][0]
        size = self.slab.shape[1]
        for fd, stage, group in zip(self._fds, self.staging, self.groups, strict=True):
            for row in group:
                at = base + row * size
                got = _LIBC.mmap(at, size, _PROT, mmap.MAP_PRIVATE | _MAP_FIXED, fd, 0)  # type: ignore[union-attr]
                if got != at:
                    if got not in (None, _MAP_FAILED):  # (cannot happen with MAP_FIXED)
                        raise OSError("mmap(MAP_FIXED) mapped a row elsewhere")
                    self._remap_anonymous(at, size)
                    self.slab[row] = stage
        del stage
        self.close()

    def close(self) -> None:
        """Let the staging maps and fds go (the rows mapped over them keep their pages)."""
        self.staging = []
        _close(self._fds, self._maps)

    @staticmethod
    def _remap_anonymous(at: int, size: int) -> None:
        """A row whose mapping failed: fresh private zero pages at its place (the range may have
        been unmapped by the failed call), so the caller can copy into it."""
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_FIXED
        got = _LIBC.mmap(at, size, _PROT, flags, -1, 0)  # type: ignore[union-attr]
        if got != at:
            raise OSError(ctypes.get_errno(), "cannot map a slab row again")


def _close(fds: list[int], maps: list[mmap.mmap]) -> None:
    for m in maps:
        with contextlib.suppress(BufferError):  # a view of it is still held: unmapped when that goes
            m.close()
    for fd in fds:
        os.close(fd)
    fds.clear()
    maps.clear()
