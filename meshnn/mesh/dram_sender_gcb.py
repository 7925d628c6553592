"""Global circular buffers whose senders are DRAM cores
(``ttnn.experimental.create_global_circular_buffer_with_dram_senders``), the buffers the tensor
prefetcher (:mod:`meshnn.ops.tensor_prefetcher`) streams weights into.

On Blackhole with programmable DRAM cores (tt-metal's ``TT_METAL_ENABLE_BLACKHOLE_DRAM_PROGRAMMABLE_CORES=1``)
each DRAM bank's RISC can push pages to worker cores.  The buffer is one FIFO of ``size`` bytes on
each receiver core (HEIGHT_SHARDED L1 or L1_SMALL, one page a core, at the same address on every
core and device) and one config page a core; the senders' state lives in the DRAM cores' own L1,
which no allocator here reaches, so it takes none of the workers' memory.

Senders: one per listed bank (``CoreCoord(bank, 0)``), or with ``dual_senders_per_bank`` two
(``CoreCoord(bank, 0)`` and ``CoreCoord(bank, 1)``) that split the bank's receivers, taken row by
row, ceil / floor.  The pages a prefetcher pushed into any global circular buffer and no consumer
took yet are held by :func:`pending_pages` (the simulator's stand-in for the FIFO's bytes).

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` and the mesh layer.
"""

from __future__ import annotations

import os
import weakref
from collections import deque
from collections.abc import Sequence

import numpy as np

from meshnn.device.arch import Arch
from meshnn.device.buffer import BufferType
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.global_circular_buffer import (
    CONFIG_WORDS,
    GlobalCircularBuffer,
    allocate_fifo_and_config,
    check_cores,
    check_size,
)
from meshnn.mesh.mesh_device import MeshDevice

DRAM_CORES_ENV = "TT_METAL_ENABLE_BLACKHOLE_DRAM_PROGRAMMABLE_CORES"
"""tt-metal's switch that makes Blackhole's DRAM cores programmable ("1": on)."""

_OP = "experimental.create_global_circular_buffer_with_dram_senders"

_PENDING: weakref.WeakKeyDictionary[GlobalCircularBuffer, deque] = weakref.WeakKeyDictionary()


def pending_pages(gcb: GlobalCircularBuffer) -> deque:
    """The pages pushed into ``gcb`` that no consumer took yet, oldest first: one entry
    ``(tensor, block_count, page bytes)`` a pushed tensor (``block_count`` pages of it a receiver)."""
    pages = _PENDING.get(gcb)
    if pages is None:
        pages = _PENDING[gcb] = deque()
    return pages


def has_programmable_dram_cores(mesh_device: MeshDevice) -> bool:
    """True on Blackhole when :data:`DRAM_CORES_ENV` is ``"1"`` (tt-metal's HAL has the DRAM core
    type then, and only then)."""
    return mesh_device.arch() is Arch.BLACKHOLE and os.environ.get(DRAM_CORES_ENV, "") == "1"


class DramSenderGlobalCircularBuffer(GlobalCircularBuffer):
    """A global circular buffer fed by DRAM cores; ``dual``: two senders a bank."""

    __slots__ = ("dual",)

    def sender_core_type(self) -> str:
        """``"dram"``: the senders are DRAM cores."""
        return "dram"

    def sender_cores(self) -> CoreRangeSet:
        return CoreRangeSet([])  # no worker core sends

    def all_cores(self) -> CoreRangeSet:
        """The receiver cores (the senders are DRAM cores, not workers), one range each."""
        return CoreRangeSet([CoreRange(c, c) for c in _receivers_row_major(self.mapping)])


def _receivers_row_major(mapping: Sequence[tuple[CoreCoord, CoreRangeSet]]) -> list[CoreCoord]:
    return sorted((c for _, r in mapping for c in r.cores()), key=lambda c: (c.y, c.x))


def _row_wise(receivers: CoreRangeSet) -> list[CoreCoord]:
    return sorted(receivers.cores(), key=lambda c: (c.y, c.x))


def _checked_banks(
    mesh_device: MeshDevice, bank_to_receivers: object, dual: bool
) -> list[tuple[CoreCoord, CoreRangeSet]]:
    """The sender mapping tt-metal builds: each bank once, with receivers; receivers inside the
    compute grid and disjoint; two receivers or more a bank when ``dual``."""
    if (
        isinstance(bank_to_receivers, str | bytes)
        or not isinstance(bank_to_receivers, Sequence)
        or not bank_to_receivers
    ):
        raise MeshnnValueError(f"ttnn.{_OP}: bank_to_receivers must be a non-empty list of (bank_id, CoreRangeSet)")
    banks = mesh_device.system.arch_spec.num_dram_banks
    grid = mesh_device.compute_with_storage_grid_size()
    mapping: list[tuple[CoreCoord, CoreRangeSet]] = []
    seen: set[int] = set()
    for pair in bank_to_receivers:
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise MeshnnTypeError(f"ttnn.{_OP}: each entry must be (bank_id, CoreRangeSet), got {pair!r}")
        bank, receivers = pair
        if isinstance(bank, bool) or not isinstance(bank, int | np.integer) or not isinstance(receivers, CoreRangeSet):
            raise MeshnnTypeError(f"ttnn.{_OP}: each entry must be (bank_id, CoreRangeSet), got {pair!r}")
        if not 0 <= bank < banks:
            raise MeshnnValueError(f"ttnn.{_OP}: DRAM bank {bank} is out of range [0, {banks})")
        n = receivers.num_cores()
        if n == 0:
            raise MeshnnValueError(f"ttnn.{_OP}: DRAM bank {bank} has no receivers")
        if int(bank) in seen:
            raise MeshnnValueError(f"ttnn.{_OP}: DRAM bank {bank} appears more than once in bank_to_receivers")
        seen.add(int(bank))
        if not dual:
            mapping.append((CoreCoord(int(bank), 0), receivers))
            continue
        if n < 2:
            raise MeshnnValueError(
                f"ttnn.{_OP}: DRAM bank {bank} has a single receiver, but dual_senders_per_bank needs at least 2"
            )
        cores, first = _row_wise(receivers), (n + 1) // 2
        for sub, part in ((0, cores[:first]), (1, cores[first:])):
            mapping.append((CoreCoord(int(bank), sub), CoreRangeSet([CoreRange(c, c) for c in part])))
    check_cores(_OP, _receivers_row_major(mapping), grid, "receiver sets must be disjoint")
    return mapping


def create_global_circular_buffer_with_dram_senders(
    mesh_device: MeshDevice,
    bank_to_receivers: Sequence[tuple[int, CoreRangeSet]],
    size: int,
    buffer_type: BufferType = BufferType.L1,
    dual_senders_per_bank: bool = False,
) -> DramSenderGlobalCircularBuffer:
    """A FIFO of ``size`` bytes on each receiver core of ``bank_to_receivers`` (``(bank id, receiver
    cores)`` pairs), fed by those DRAM banks' cores; needs programmable DRAM cores."""
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{_OP}: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    mesh_device.check_open()
    if not has_programmable_dram_cores(mesh_device):
        raise MeshnnValueError(
            f"ttnn.{_OP}: DRAM-sender GlobalCircularBuffer requires programmable DRAM cores (Blackhole with "
            f"{DRAM_CORES_ENV}=1); this is {mesh_device.arch().name}"
        )
    if buffer_type not in (BufferType.L1, BufferType.L1_SMALL):
        raise MeshnnValueError(f"ttnn.{_OP}: Global circular buffer can only be created for L1 buffer types")
    check_size(_OP, size, "receiver")
    if not isinstance(dual_senders_per_bank, bool):
        raise MeshnnTypeError(f"ttnn.{_OP}: dual_senders_per_bank must be a bool, got {dual_senders_per_bank!r}")
    mapping = _checked_banks(mesh_device, bank_to_receivers, dual_senders_per_bank)
    cores = _receivers_row_major(mapping)
    alignment = mesh_device.system.arch_spec.l1_alignment
    page = -(-4 * CONFIG_WORDS // alignment) * alignment + 2 * alignment  # its config words, its pages-sent slot pair
    fifo, config = allocate_fifo_and_config(mesh_device, cores, int(size), page, buffer_type)
    gcb = object.__new__(DramSenderGlobalCircularBuffer)
    gcb.mesh_device, gcb.mapping, gcb.size_, gcb.buffer_type = mesh_device, tuple(mapping), int(size), buffer_type
    gcb.cb, gcb.config, gcb.dual = fifo, config, dual_senders_per_bank
    return gcb
