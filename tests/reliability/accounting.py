"""Shared checks of the reliability suites: the allocator's books and memory snapshots.

``check_books(mesh, expected)`` asserts that a mesh's memory adds up:

- per buffer type, the blocks of ``ttnn.get_memory_view`` tile the bank exactly (no gap, no
  overlap), allocated + free = total, and the largest free block is the largest free block;
- the allocated blocks are exactly the live MeshBuffers of that type (one block per buffer, at
  the buffer's address, of the buffer's per-bank footprint);
- when ``expected`` is given, the live MeshBuffers are exactly those (nothing leaked, nothing lost).

``snapshot(mesh)`` is everything an operation could leave behind: the live buffers and every
memory view, block tables included (as addresses and sizes: block ids are bookkeeping).
"""

from __future__ import annotations

from collections.abc import Iterable

import meshnn as ttnn
from meshnn.device.allocator import align_up

BUFFER_TYPES = (ttnn.BufferType.DRAM, ttnn.BufferType.L1)


def blocks(view: ttnn.MemoryView) -> list[tuple[int, int, bool]]:
    """``(relative address, bytes, allocated)`` of every block, by address."""
    return sorted((int(b["address"]), int(b["size"]), b["allocated"] == "yes") for b in view.block_table)


def footprint(mesh: ttnn.MeshDevice, buffer: ttnn.MeshBuffer) -> int:
    """Bytes per bank the free list reserves for ``buffer``."""
    manager = mesh.allocator.manager(buffer.buffer_type())
    _, per_bank = manager.footprint(buffer.layout)
    free_list = manager.free_list
    return align_up(max(per_bank, free_list.min_allocation_size), free_list.alignment)


def check_books(mesh: ttnn.MeshDevice, expected: Iterable[ttnn.MeshBuffer] | None = None) -> None:
    """Assert that ``mesh``'s memory adds up (see the module docstring)."""
    live = mesh.live_buffers()
    if expected is not None:
        want = sorted(id(b) for b in expected)
        got = sorted(id(b) for b in live)
        assert got == want, (
            f"live MeshBuffers differ from the model: {len(got)} live, {len(want)} expected; "
            f"extra {[b for b in live if id(b) not in want][:3]}"
        )
    for buffer_type in BUFFER_TYPES:
        view = ttnn.get_memory_view(mesh, buffer_type)
        table = blocks(view)
        position = 0
        for address, size, _ in table:
            assert address == position, f"{buffer_type}: block at {address} but the previous one ended at {position}"
            position += size
        assert position == view.total_bytes_per_bank, f"{buffer_type}: blocks cover {position} of the bank"
        used = sum(size for _, size, allocated in table if allocated)
        free = [size for _, size, allocated in table if not allocated]
        assert used == view.total_bytes_allocated_per_bank
        assert sum(free) == view.total_bytes_free_per_bank
        assert used + sum(free) == view.total_bytes_per_bank
        assert view.largest_contiguous_bytes_free_per_bank == max(free, default=0)
        base = mesh.allocator.manager(buffer_type).base
        owned = sorted(
            (b.address() - base, footprint(mesh, b))
            for b in live
            if b.buffer_type() is buffer_type and b.device_local_size() > 0
        )
        allocated = [(address, size) for address, size, is_used in table if is_used]
        assert owned == allocated, f"{buffer_type}: live buffers {owned[:4]} vs allocated blocks {allocated[:4]}"


def snapshot(mesh: ttnn.MeshDevice) -> list:
    """Everything an operation could allocate on ``mesh``: live buffers and memory views."""
    state: list = [sorted((b.buffer_type().value, b.address(), b.device_local_size()) for b in mesh.live_buffers())]
    for buffer_type in BUFFER_TYPES:
        view = ttnn.get_memory_view(mesh, buffer_type)
        state.append((view.as_dict(with_blocks=False), blocks(view)))
    return state


def all_free(allocator: object) -> bool:
    """True when no block of any buffer type of ``allocator`` is allocated (e.g. after close)."""
    return all(allocator.memory_view(t).total_bytes_allocated_per_bank == 0 for t in BUFFER_TYPES)  # type: ignore[attr-defined]
