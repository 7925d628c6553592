"""The free-list allocator of one bank-address range: pure bookkeeping, no bytes.

It gives the addresses tt-metal's ``FreeListOpt`` (search policy FIRST) gives: an allocation of
``size`` bytes takes ``align(max(size, min_allocation_size), alignment)`` bytes from

- bottom-up: the start of the lowest-addressed free block that fits;
- top-down: the high end of the highest-addressed free block that fits;

a free coalesces the block with free neighbours.  Blocks keep tt-metal's block ids (a split keeps
the allocated part in the old id; ids of merged-away blocks are reused last-freed-first), so the
block table reads as tt-metal's ``get_memory_view(...).block_table`` does.

The search index is a max-segment-tree over fixed address chunks: each leaf holds the free
blocks that start in its chunk, kept in address order, and the tree finds the leftmost (or
rightmost) chunk holding a block that fits in O(log chunks) steps.  Frees find their neighbours
through the block links, so every operation is O(log n) in the number of blocks, independent of
how many blocks are live.

Addresses given to and returned by the public methods are absolute (``offset`` included);
block-table addresses are relative to ``offset``, as tt-metal reports them.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from meshnn.errors import InvalidFreeError, MeshnnValueError

NO_BLOCK = -1
_MAX_LEAVES = 1 << 14  # chunks of the search index


def align_up(value: int, alignment: int) -> int:
    """``value`` rounded up to a multiple of ``alignment`` (> 0)."""
    return -(-value // alignment) * alignment


@dataclass(frozen=True, slots=True)
class Statistics:
    """Allocator totals in bytes per bank, as tt-metal's ``allocator::Statistics``."""

    total_allocatable_size_bytes: int
    total_allocated_bytes: int
    total_free_bytes: int
    largest_free_block_bytes: int


class FreeList:
    """First-fit allocator over ``[offset, offset + size)``.  It never touches memory."""

    def __init__(self, *, size: int, offset: int, min_allocation_size: int, alignment: int) -> None:
        if size < 0 or offset < 0:
            raise MeshnnValueError(f"allocator size and offset must be >= 0, got {size}, {offset}")
        if alignment <= 0 or min_allocation_size <= 0:
            raise MeshnnValueError(f"alignment must be > 0, got {alignment}")
        self.size = size
        self.offset = offset
        self.alignment = alignment
        self.min_allocation_size = min_allocation_size
        chunk_shift = 0
        while (size >> chunk_shift) >= _MAX_LEAVES:
            chunk_shift += 1
        self._shift = chunk_shift
        chunks = ((max(size, 1) - 1) >> chunk_shift) + 1
        self._nleaves = 1 << (chunks - 1).bit_length()
        self._tree = [0] * (2 * self._nleaves)
        self._leaves: dict[int, list[int]] = {}  # chunk -> free block ids starting there, by address
        self._reset()

    # ----------------------------------------------------------------------------- bookkeeping

    def _reset(self) -> None:
        self._addr: list[int] = [0]
        self._size: list[int] = [self.size]
        self._prev: list[int] = [NO_BLOCK]
        self._next: list[int] = [NO_BLOCK]
        self._used: list[bool] = [False]
        self._live: list[bool] = [True]
        self._spare: list[int] = []  # ids of merged-away blocks, reused last first
        self._allocated: dict[int, int] = {}  # relative address -> block id
        self._allocated_bytes = 0
        self._tree[:] = [0] * len(self._tree)
        self._leaves.clear()
        self._index_insert(0)

    def _new_block(self, addr: int, size: int, prev: int, nxt: int) -> int:
        if self._spare:
            bid = self._spare.pop()
            self._addr[bid], self._size[bid] = addr, size
            self._prev[bid], self._next[bid] = prev, nxt
            self._used[bid], self._live[bid] = False, True
            return bid
        self._addr.append(addr)
        self._size.append(size)
        self._prev.append(prev)
        self._next.append(nxt)
        self._used.append(False)
        self._live.append(True)
        return len(self._addr) - 1

    def _drop_block(self, bid: int) -> None:
        self._live[bid] = False
        self._spare.append(bid)

    # ---------------------------------------------------------------------------- search index

    def _set_leaf(self, leaf: int, value: int) -> None:
        tree = self._tree
        i = leaf + self._nleaves
        if tree[i] == value:
            return
        tree[i] = value
        i >>= 1
        while i:
            left, right = tree[2 * i], tree[2 * i + 1]
            best = left if left >= right else right
            if tree[i] == best:
                return
            tree[i] = best
            i >>= 1

    def _index_insert(self, bid: int) -> None:
        leaf = self._addr[bid] >> self._shift
        blocks = self._leaves.get(leaf)
        if blocks is None:
            blocks = self._leaves[leaf] = []
        bisect.insort(blocks, bid, key=self._addr.__getitem__)
        if self._size[bid] > self._tree[leaf + self._nleaves]:
            self._set_leaf(leaf, self._size[bid])

    def _index_remove(self, bid: int) -> None:
        leaf = self._addr[bid] >> self._shift
        blocks = self._leaves[leaf]
        blocks.remove(bid)
        if not blocks:
            del self._leaves[leaf]
            self._set_leaf(leaf, 0)
        elif self._size[bid] >= self._tree[leaf + self._nleaves]:
            sizes = self._size
            self._set_leaf(leaf, max((sizes[b] for b in blocks), default=0))

    def _find(self, need: int, bottom_up: bool) -> int:
        """Id of the lowest (bottom_up) or highest free block of at least ``need`` bytes."""
        tree = self._tree
        if tree[1] < need:
            return NO_BLOCK
        i, n = 1, self._nleaves
        if bottom_up:
            while i < n:
                i *= 2
                if tree[i] < need:
                    i += 1
            candidates = self._leaves[i - n]
        else:
            while i < n:
                i = 2 * i + 1
                if tree[i] < need:
                    i -= 1
            candidates = reversed(self._leaves[i - n])
        sizes = self._size
        for bid in candidates:
            if sizes[bid] >= need:
                return bid
        raise AssertionError("search index out of step with the free blocks")

    # ------------------------------------------------------------------------------ public API

    def aligned_size(self, size: int) -> int:
        """Bytes an allocation of ``size`` bytes takes from the free list."""
        return align_up(max(size, self.min_allocation_size), self.alignment)

    def allocate(self, size: int, *, bottom_up: bool) -> int | None:
        """Reserve ``size`` bytes; the absolute address, or None when no free block fits."""
        if size <= 0:
            raise MeshnnValueError(f"allocation size must be > 0 bytes, got {size}")
        need = self.aligned_size(size)
        bid = self._find(need, bottom_up)
        if bid == NO_BLOCK:
            return None
        self._index_remove(bid)
        return self._take(bid, need, 0 if bottom_up else self._size[bid] - need)

    def allocate_at(self, address: int, size: int) -> int | None:
        """Reserve ``size`` bytes at ``address`` (absolute); None if that range is not free."""
        if size <= 0:
            raise MeshnnValueError(f"allocation size must be > 0 bytes, got {size}")
        need = self.aligned_size(size)
        start = address - self.offset
        if start < 0 or start % self.alignment or start + need > self.size:
            return None
        for leaf in range(start >> self._shift, -1, -1):
            for bid in reversed(self._leaves.get(leaf, ())):
                lo = self._addr[bid]
                if lo <= start:
                    if start + need > lo + self._size[bid]:
                        return None
                    self._index_remove(bid)
                    return self._take(bid, need, start - lo)
        return None

    def _take(self, bid: int, need: int, offset: int) -> int:
        """Allocate ``need`` bytes at ``offset`` inside free block ``bid`` (already unindexed)."""
        size = self._size[bid]
        if offset:
            left = self._new_block(self._addr[bid], offset, self._prev[bid], bid)
            if self._prev[bid] != NO_BLOCK:
                self._next[self._prev[bid]] = left
            self._prev[bid] = left
            self._addr[bid] += offset
            self._size[bid] -= offset
            self._index_insert(left)
        if offset + need < size:
            nxt = self._next[bid]
            right = self._new_block(self._addr[bid] + need, self._size[bid] - need, bid, nxt)
            if nxt != NO_BLOCK:
                self._prev[nxt] = right
            self._next[bid] = right
            self._size[bid] = need
            self._index_insert(right)
        self._used[bid] = True
        self._allocated[self._addr[bid]] = bid
        self._allocated_bytes += need
        return self._addr[bid] + self.offset

    def free(self, address: int) -> None:
        """Release the allocation at ``address`` (absolute) and merge it with free neighbours."""
        bid = self._allocated.pop(address - self.offset, None)
        if bid is None:
            raise InvalidFreeError(
                f"address {address} is not allocated (a double free, or an address never handed out)"
            )
        self._used[bid] = False
        self._allocated_bytes -= self._size[bid]
        prev, nxt = self._prev[bid], self._next[bid]
        if prev != NO_BLOCK and not self._used[prev]:
            self._index_remove(prev)
            self._size[prev] += self._size[bid]
            self._next[prev] = nxt
            if nxt != NO_BLOCK:
                self._prev[nxt] = prev
            self._drop_block(bid)
            bid = prev
        if nxt != NO_BLOCK and not self._used[nxt]:
            self._index_remove(nxt)
            self._size[bid] += self._size[nxt]
            after = self._next[nxt]
            self._next[bid] = after
            if after != NO_BLOCK:
                self._prev[after] = bid
            self._drop_block(nxt)
        self._index_insert(bid)

    def allocation_size(self, address: int) -> int | None:
        """Bytes reserved by the allocation at ``address`` (absolute), or None."""
        bid = self._allocated.get(address - self.offset)
        return None if bid is None else self._size[bid]

    def is_allocated(self, address: int) -> bool:
        return (address - self.offset) in self._allocated

    @property
    def num_allocations(self) -> int:
        return len(self._allocated)

    def allocations(self) -> list[tuple[int, int]]:
        """``(absolute address, reserved bytes)`` of every live allocation, by address."""
        return sorted((a + self.offset, self._size[b]) for a, b in self._allocated.items())

    def statistics(self) -> Statistics:
        """Totals per bank; with nothing allocated the whole range counts as free (as tt-metal)."""
        if not self._allocated:
            return Statistics(self.size, 0, self.size, self.size)
        return Statistics(
            total_allocatable_size_bytes=self.size,
            total_allocated_bytes=self._allocated_bytes,
            total_free_bytes=self.size - self._allocated_bytes,
            largest_free_block_bytes=self._tree[1],
        )

    def block_table(self) -> list[dict[str, str]]:
        """tt-metal's memory block table: one dict of strings per block, by block id."""
        unsigned = (1 << 64) - 1

        def ref(bid: int) -> str:
            return str(bid if bid != NO_BLOCK else unsigned)

        return [
            {
                "allocated": "yes" if self._used[bid] else "no",
                "nextID": ref(self._next[bid]),
                "prevID": ref(self._prev[bid]),
                "size": str(self._size[bid]),
                "address": str(self._addr[bid]),
                "blockID": str(bid),
            }
            for bid in range(len(self._addr))
            if self._live[bid]
        ]

    def free_blocks(self) -> list[tuple[int, int]]:
        """``(absolute address, bytes)`` of every free block, by address."""
        return sorted(
            (self._addr[b] + self.offset, self._size[b])
            for leaf in self._leaves.values()
            for b in leaf
            if self._size[b] > 0
        )

    def clear(self) -> None:
        """Forget every allocation: one free block spans the range again."""
        self._reset()
