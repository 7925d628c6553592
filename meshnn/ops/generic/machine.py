"""One program on one device's cores, as meshnn runs it: each core's circular buffers are queues
of pages (a page is ``(k, page bytes)`` uint8, the same page of the ``k`` devices the program runs
on, all at once), and the buffers the kernels address are the io tensors' MeshBuffers, found by
address.  A page ``p`` of a buffer is bytes ``[p * page_size, p * page_size + n)`` of its slab row
(the slab keeps a device's pages in page order: :mod:`meshnn.mesh.slab`), whatever bank tt-metal
would put it in.

A circular buffer's capacity is not modelled: kernels run one after the other in feed-forward
order (readers, then compute, then writers: :class:`Role`), so a queue holds every page a reader
pushes before compute pops them.  A kernel that waits on a page no earlier kernel pushes would
hang a device; meshnn counts the pages each kernel pushes and pops when it binds the program and
refuses such a program before anything runs (:func:`check_balance`).

Layer: ops.  Imports errors, device, formats and mesh.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnValueError, NotImplementedByMeshnn
from meshnn.formats.dtypes import DataType
from meshnn.mesh.mesh_buffer import MeshBuffer


class Role(enum.IntEnum):
    """When a kernel runs on its core: readers fill queues, compute turns pages, writers drain."""

    READER = 0
    COMPUTE = 1
    WRITER = 2


@dataclass
class CircularBuffer:
    """One circular buffer index on one core: its format, its page size in bytes, its pages."""

    index: int
    page_size: int
    dtype: DataType
    tile: tuple[int, int]
    pages: deque = field(default_factory=deque)

    def push(self, page: np.ndarray) -> None:
        self.pages.append(page)

    def pop(self) -> np.ndarray:
        return self.pages.popleft()


@dataclass(frozen=True)
class CBLayout:
    """A circular buffer index as a program declares it on a core (what :class:`CircularBuffer` starts from)."""

    index: int
    page_size: int
    dtype: DataType
    tile: tuple[int, int]


class Memory:
    """The buffers a program addresses (the io tensors' MeshBuffers), and while it runs their slab
    rows (``(devices, device-local bytes)`` views, written in place) with the rows of the devices
    it runs on (``select``: an index array, or every row)."""

    def __init__(self, buffers: Sequence[MeshBuffer]) -> None:
        self.buffers = list(buffers)
        self.rows: Sequence[np.ndarray] = ()
        self.select: np.ndarray | slice = slice(None)

    def find(self, address: int, dram: bool, where: str) -> int:
        """The index of the io buffer at ``address`` in DRAM (or L1), or an error naming ``where``."""
        for i, buffer in enumerate(self.buffers):
            if buffer.address() == address and buffer.buffer_type().is_dram == dram:
                return i
        memory = "DRAM" if dram else "L1"
        raise MeshnnValueError(
            f"{where}: no io tensor's buffer is at {memory} address {address:#x} (meshnn finds a kernel's buffers "
            "among io_tensors, by address)"
        )

    def span(self, index: int, page: int, nbytes: int, where: str) -> tuple[int, int]:
        """Bytes ``[lo, hi)`` of page ``page`` of buffer ``index`` (``nbytes`` of it), checked."""
        buffer = self.buffers[index]
        if not 0 <= page < buffer.num_pages():
            raise MeshnnValueError(f"{where}: page {page} is outside the buffer's {buffer.num_pages()} pages")
        if nbytes > buffer.page_size():
            raise MeshnnValueError(
                f"{where}: a transfer of {nbytes} B a page is larger than the buffer's pages ({buffer.page_size()} B)"
            )
        lo = page * buffer.page_size()
        return lo, lo + nbytes

    def read(self, index: int, lo: int, hi: int) -> np.ndarray:
        return np.array(self.rows[index][self.select, lo:hi])

    def write(self, index: int, lo: int, hi: int, page: np.ndarray) -> None:
        self.rows[index][self.select, lo:hi] = page


Run = Callable[[dict[int, CircularBuffer], Memory], None]
"""A bound kernel's work on one core: its circular buffers by index, the memory."""


@dataclass(frozen=True)
class Bound:
    """A kernel bound to one core: its role, its work, and the pages it pushes and pops per circular buffer."""

    role: Role
    run: Run
    pushes: dict[int, int]
    pops: dict[int, int]
    source: str


def check_balance(core: CoreCoord, kernels: Sequence[Bound]) -> None:
    """Refuse a core whose kernels, in feed-forward order, pop pages no earlier kernel pushed (a hang)."""
    held: dict[int, int] = {}
    for kernel in sorted(kernels, key=lambda k: k.role):
        for index, count in kernel.pops.items():
            if held.get(index, 0) < count:
                raise MeshnnValueError(
                    f"ttnn.generic_op: {kernel.source} on core {core} waits for {count} pages of circular buffer "
                    f"{index}, and the kernels before it push {held.get(index, 0)} (the program would hang)"
                )
            held[index] -= count
        for index, count in kernel.pushes.items():
            held[index] = held.get(index, 0) + count


def not_run(what: str) -> NotImplementedByMeshnn:
    """The error for what meshnn does not run, ``what`` naming it (ttnn's ``ttnn.`` prefix is the error's own)."""
    return NotImplementedByMeshnn(what.removeprefix("ttnn."))
