"""The banks of one chip: a bank manager per buffer type, and the chip's allocator of them.

A bank manager owns ONE free list for all banks of its type, so an allocation returns a single
address valid in every bank.  Its per-bank footprint is ``ceil(pages / banks)`` aligned pages
(interleaved) or one shard of aligned pages (sharded, one bank per shard core), and the free
list itself works at the DRAM alignment for every type, so a small L1 buffer still takes 32 B
(Wormhole) or 64 B (Blackhole) per bank.

Memory map of one chip (bytes)::

    DRAM bank:  [reserved | DRAM (bottom-up) ............ | TRACE]   one view per bank
    L1 bank:    [reserved | L1 (top-down) ........ | L1_SMALL]        one bank per compute core

Layers: imports only :mod:`meshnn.errors` and the device layer (the free list, arch, buffer).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from meshnn.device.allocator import FreeList, Statistics, align_up
from meshnn.device.arch import ArchSpec, SystemSpec
from meshnn.device.buffer import BankFacts, BufferLayout, BufferType
from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnTypeError, MeshnnValueError, OutOfMemoryError

# Interleaved address generators have a fast modulo only for these non-power-of-two bank counts.
_NON_POW2_BANK_COUNTS = frozenset({7, 12, 20, 48, 56, 63, 70, 72, 80, 94, 108, 110, 117, 120, 124, 126, 130, 140})
_TRACE_PAGE = 4096  # the TRACE region of each bank is a whole number of 4 KiB trace pages


@dataclass(frozen=True, slots=True)
class MemoryView:
    """``ttnn.get_memory_view``: one buffer type of one device; sizes in bytes per bank."""

    num_banks: int
    total_bytes_per_bank: int
    total_bytes_allocated_per_bank: int
    total_bytes_free_per_bank: int
    largest_contiguous_bytes_free_per_bank: int
    block_table: list[dict[str, str]] = field(default_factory=list, compare=False)

    def as_dict(self, *, with_blocks: bool = True) -> dict[str, object]:
        fields = {
            "num_banks": self.num_banks,
            "total_bytes_per_bank": self.total_bytes_per_bank,
            "total_bytes_allocated_per_bank": self.total_bytes_allocated_per_bank,
            "total_bytes_free_per_bank": self.total_bytes_free_per_bank,
            "largest_contiguous_bytes_free_per_bank": self.largest_contiguous_bytes_free_per_bank,
        }
        if with_blocks:
            fields["block_table"] = self.block_table
        return fields


FOOTPRINTS_KEPT = 1024
"""Layouts whose footprint a bank manager remembers (a model allocates few distinct ones)."""


class BankManager:
    """The banks of one buffer type and their shared free list."""

    def __init__(
        self,
        buffer_type: BufferType,
        *,
        bank_offsets: tuple[int, ...],
        size: int,
        base: int,
        alignment: int,
        free_list_alignment: int,
        max_shards: int,
        core_grid: tuple[int, int] | None = None,
    ) -> None:
        num_banks = len(bank_offsets)
        interleaved_ok = num_banks == 0 or num_banks & (num_banks - 1) == 0 or num_banks in _NON_POW2_BANK_COUNTS
        if buffer_type is not BufferType.L1_SMALL and not interleaved_ok:
            raise MeshnnValueError(f"invalid number of {buffer_type.name} banks: {num_banks}")
        self.buffer_type = buffer_type
        self.bank_offsets = bank_offsets
        self.base = base
        self.alignment = alignment
        self.max_shards = max_shards
        self.core_grid = core_grid  # (x, y) of the cores holding the banks (L1 types), None for DRAM
        self.free_list = FreeList(
            size=size, offset=base, min_allocation_size=free_list_alignment, alignment=free_list_alignment
        )
        self._footprints: dict[BufferLayout, tuple[int, int]] = {}  # footprint() of layouts seen, bounded
        # the same by the layout object's id (a layout's hash is computed in Python); an entry
        # holds its layout, so the id cannot be reused while the entry exists
        self._footprint_ids: dict[int, tuple[BufferLayout, tuple[int, int]]] = {}

    @property
    def num_banks(self) -> int:
        return len(self.bank_offsets)

    @property
    def bank_size(self) -> int:
        return self.free_list.size

    @property
    def facts(self) -> BankFacts:
        return BankFacts(self.num_banks, self.bank_offsets, self.alignment)

    def aligned_page_size(self, page_size: int) -> int:
        return align_up(page_size, self.alignment)

    def footprint(self, layout: BufferLayout) -> tuple[int, int]:
        """``(banks used, bytes per bank)`` of ``layout``; validates it for this bank type."""
        aligned_page = self.aligned_page_size(layout.page_size) if layout.page_size else 0
        if layout.shard is None:
            if self.buffer_type is BufferType.L1_SMALL:
                raise MeshnnValueError("L1_SMALL only supports sharded allocations, see validate_num_banks")
            if self.num_banks == 0:
                raise MeshnnValueError(f"this device has no {self.buffer_type.name} banks")
            return self.num_banks, -(-layout.num_pages // self.num_banks) * aligned_page
        shards = layout.shard.num_cores
        if shards > self.max_shards:
            raise MeshnnValueError(
                f"Expected number of shards {shards} to be less than or equal to total number of "
                f"{self.buffer_type.name} banks {self.max_shards}"
            )
        if self.core_grid is not None:
            self._check_cores(layout.shard.spec.grid.bounding_box().end)
        return shards, layout.shard.pages_per_core * aligned_page

    def _check_cores(self, corner: CoreCoord) -> None:
        """A shard core outside the compute grid has no bank (tt-metal maps L1 banks to
        compute-with-storage cores only)."""
        assert self.core_grid is not None
        gx, gy = self.core_grid
        if corner.x >= gx or corner.y >= gy:
            raise MeshnnValueError(
                f"shard grid reaches core ({corner.x}, {corner.y}), which has no {self.buffer_type.name} bank: "
                f"the compute-with-storage grid is {gx}x{gy} (it follows the mesh's dispatch_core_config)"
            )

    def allocate(self, layout: BufferLayout, *, bottom_up: bool) -> int:
        """Reserve ``layout`` in every bank and return the address; raises before any change."""
        seen = self._footprint_ids.get(id(layout))
        if seen is not None and seen[0] is layout:
            banks, per_bank = seen[1]
        else:
            known = self._footprints.get(layout)
            if known is None:
                if len(self._footprints) >= FOOTPRINTS_KEPT:
                    self._footprints.clear()
                known = self._footprints[layout] = self.footprint(layout)
            if len(self._footprint_ids) >= FOOTPRINTS_KEPT:
                self._footprint_ids.clear()
            self._footprint_ids[id(layout)] = (layout, known)
            banks, per_bank = known
        if layout.size == 0:
            return 0  # zero-size buffers never touch the allocator
        address = self.free_list.allocate(per_bank, bottom_up=bottom_up)
        if address is None:
            stats = self.free_list.statistics()
            raise OutOfMemoryError(
                buffer_type=self.buffer_type.name,
                size=layout.size,
                num_banks=banks,
                size_per_bank=per_bank,
                bank_size=self.bank_size,
                allocated=stats.total_allocated_bytes,
                free=stats.total_free_bytes,
                largest_free=stats.largest_free_block_bytes,
            )
        return address

    def deallocate(self, address: int) -> None:
        self.free_list.free(address)

    def statistics(self) -> Statistics:
        return self.free_list.statistics()

    def memory_view(self) -> MemoryView:
        stats = self.free_list.statistics()
        return MemoryView(
            num_banks=self.num_banks,
            total_bytes_per_bank=stats.total_allocatable_size_bytes,
            total_bytes_allocated_per_bank=stats.total_allocated_bytes,
            total_bytes_free_per_bank=stats.total_free_bytes,
            largest_contiguous_bytes_free_per_bank=stats.largest_free_block_bytes,
            block_table=self.free_list.block_table(),
        )


def _reserved_per_bank(arch: ArchSpec, l1_small_size: int, trace_region_size: int) -> tuple[int, int]:
    """``(L1_SMALL bytes per L1 bank, TRACE bytes per DRAM bank)`` for the sizes asked of a device,
    checked to be non-negative ints that leave room for the L1 and DRAM regions."""
    for name, value in (("l1_small_size", l1_small_size), ("trace_region_size", trace_region_size)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise MeshnnTypeError(f"{name} must be an int, got {value!r}")
        if value < 0:
            raise MeshnnValueError(f"{name} must be a non-negative int, got {value!r}")
    l1_small = align_up(l1_small_size, arch.dram_alignment)
    if l1_small >= arch.l1_bank_size:
        raise MeshnnValueError(
            f"l1_small_size {l1_small_size} B must be less than the L1 bank size {arch.l1_bank_size} B"
        )
    trace_per_bank = align_up(-(-trace_region_size // arch.num_dram_banks), _TRACE_PAGE)
    if trace_per_bank >= arch.dram_bank_size:
        raise MeshnnValueError(
            f"trace_region_size {trace_region_size} B does not fit in {arch.num_dram_banks} DRAM banks"
        )
    return l1_small, trace_per_bank


def _bank_managers(system: SystemSpec, l1_small: int, trace_per_bank: int) -> dict[BufferType, BankManager]:
    """The bank managers of one chip: in every DRAM bank DRAM below TRACE, in every L1 bank (one
    per compute core) L1 below L1_SMALL."""
    arch = system.arch_spec
    dram_size = arch.dram_bank_size - trace_per_bank
    l1_size = arch.l1_bank_size - l1_small
    cores = system.num_l1_banks
    common = {"free_list_alignment": arch.dram_alignment}
    return {
        BufferType.DRAM: BankManager(
            BufferType.DRAM,
            bank_offsets=arch.dram_bank_offsets,
            size=dram_size,
            base=arch.dram_unreserved_base,
            alignment=arch.dram_alignment,
            max_shards=arch.num_dram_banks,
            **common,
        ),
        BufferType.L1: BankManager(
            BufferType.L1,
            bank_offsets=(0,) * cores,
            size=l1_size,
            base=arch.l1_unreserved_base,
            alignment=arch.l1_alignment,
            max_shards=cores,
            core_grid=system.compute_grid,
            **common,
        ),
        BufferType.L1_SMALL: BankManager(
            BufferType.L1_SMALL,
            bank_offsets=(0,) * (cores if l1_small else 0),
            size=l1_small,
            base=arch.l1_unreserved_base + l1_size,
            alignment=arch.l1_alignment,
            max_shards=cores if l1_small else 0,
            core_grid=system.compute_grid,
            **common,
        ),
        BufferType.TRACE: BankManager(
            BufferType.TRACE,
            bank_offsets=arch.dram_bank_offsets,
            size=trace_per_bank,
            base=arch.dram_unreserved_base + dram_size,
            alignment=arch.dram_alignment,
            max_shards=arch.num_dram_banks,
            **common,
        ),
    }


class DeviceAllocator:
    """The bank managers of one chip (tt-metal's ``L1BankingAllocator``).

    Thread-safe: a lock serialises every allocation and free, so several threads may create and
    free buffers on one device (or one mesh, which shares one allocator).
    """

    def __init__(self, system: SystemSpec, *, l1_small_size: int = 0, trace_region_size: int = 0) -> None:
        arch = system.arch_spec
        l1_small, trace_per_bank = _reserved_per_bank(arch, l1_small_size, trace_region_size)
        self.system = system
        self.arch = arch
        self.l1_small_size = l1_small
        self.trace_region_size = trace_per_bank * arch.num_dram_banks
        self.lock = threading.RLock()
        self.managers: dict[BufferType, BankManager] = _bank_managers(system, l1_small, trace_per_bank)
        self._busy = 0  # the lock holder's allocator calls in progress (a finalizer may enter one)
        self._deferred: list[tuple[BufferType, int]] = []  # frees that arrived while busy
        self.dram_marks: list[int] | None = None  # [allocation, deletion] high-water marks, while tracked

    def manager(self, buffer_type: BufferType) -> BankManager:
        if not isinstance(buffer_type, BufferType):
            raise MeshnnTypeError(f"buffer_type must be a ttnn.BufferType, got {buffer_type!r}")
        try:
            return self.managers[buffer_type]
        except KeyError:
            raise MeshnnValueError(f"buffers of type {buffer_type} cannot be allocated on a device") from None

    def allocate(self, layout: BufferLayout, *, bottom_up: bool | None = None) -> int:
        """Reserve ``layout``; DRAM and TRACE default to bottom-up, L1 to top-down."""
        kind = layout.buffer_type
        manager = self.managers.get(kind) or self.manager(kind)
        direction = (kind is BufferType.DRAM or kind is BufferType.TRACE) if bottom_up is None else bottom_up  # is_dram
        with self.lock:
            self._busy += 1
            try:
                address = manager.allocate(layout, bottom_up=direction)
                if self.dram_marks is not None and kind is BufferType.DRAM:
                    self._mark(0, address)
                return address
            finally:
                self._busy -= 1
                if self._deferred and not self._busy:
                    self._done_deferred()

    def deallocate(self, buffer_type: BufferType, address: int) -> None:
        """Free ``address``.  A free that arrives while this thread is inside an allocator call (a
        dropped buffer's finalizer, run by the garbage collector in the middle of it) waits until
        that call is done: the free list is never changed under its own feet."""
        manager = self.managers.get(buffer_type) or self.manager(buffer_type)
        with self.lock:
            if self._busy:
                self._deferred.append((buffer_type, address))
                return
            self._busy += 1
            try:
                if self.dram_marks is not None and buffer_type is BufferType.DRAM:
                    self._mark(1, address)
                manager.free_list.free(address)  # BankManager.deallocate, without its frame: every free comes here
            finally:
                self._busy -= 1
                if self._deferred and not self._busy:
                    self._done_deferred()

    def _done_deferred(self) -> None:
        """At the end of the outermost allocator call (the lock held): run the frees deferred meanwhile."""
        while not self._busy and self._deferred:
            buffer_type, address = self._deferred.pop()
            self._busy += 1
            try:
                if self.dram_marks is not None and buffer_type is BufferType.DRAM:
                    self._mark(1, address)
                self.managers[buffer_type].free_list.free(address)
            finally:
                self._busy -= 1

    def _mark(self, which: int, address: int) -> None:
        """Raise high-water mark ``which`` (0: allocations, 1: deletions) to the end of the DRAM
        allocation at ``address`` (its address plus its bytes per bank; a zero-size one has none)."""
        size = self.managers[BufferType.DRAM].free_list.allocation_size(address)
        if size is not None and self.dram_marks is not None:
            self.dram_marks[which] = max(self.dram_marks[which], address + size)

    def begin_dram_high_water_mark_tracking(self) -> None:
        """Start (or restart from 0) recording the highest end address of the DRAM buffers allocated
        and of those freed, per bank (tt-metal's, while a trace is captured with no trace region)."""
        with self.lock:
            self.dram_marks = [0, 0]

    def end_dram_high_water_mark_tracking(self) -> tuple[int, int]:
        """Stop recording; ``(allocation, deletion)`` high-water marks in bytes (0: none seen)."""
        with self.lock:
            marks, self.dram_marks = self.dram_marks or [0, 0], None
            return marks[0], marks[1]

    def memory_view(self, buffer_type: BufferType) -> MemoryView:
        with self.lock:
            return self.manager(buffer_type).memory_view()

    def base_address(self, buffer_type: BufferType) -> int:
        """``ttnn.get_allocator_base_address``: DRAM's unreserved base, else L1's (as ttnn reports)."""
        self.manager(buffer_type)
        return self.arch.dram_unreserved_base if buffer_type is BufferType.DRAM else self.arch.l1_unreserved_base

    def device_info(self) -> dict[str, int]:
        """``ttnn.reports.get_device_info`` of one device."""
        arch, system = self.arch, self.system
        l1 = self.managers[BufferType.L1]
        cores = system.num_l1_banks
        return {
            "address_at_first_l1_bank": 0,
            "address_at_first_l1_cb_buffer": arch.l1_unreserved_base,
            "cb_limit": arch.l1_bank_size,
            "l1_bank_size": l1.bank_size,
            "l1_num_banks": l1.num_banks,
            "num_banks_per_storage_core": 1,
            "num_compute_cores": cores,
            "num_storage_cores": 0,
            "num_x_compute_cores": system.compute_grid[0],
            "num_x_cores": system.worker_grid[0],
            "num_y_compute_cores": system.compute_grid[1],
            "num_y_cores": system.worker_grid[1],
            "total_l1_for_interleaved_buffers": cores * l1.bank_size,
            "total_l1_for_sharded_buffers": cores * l1.bank_size,
            "total_l1_for_tensors": 0,
            "total_l1_memory": cores * arch.worker_l1_size,
            "worker_l1_size": arch.worker_l1_size,
        }
