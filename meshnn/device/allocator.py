"""The free-list allocator of one bank-address range: pure bookkeeping, no bytes.

It gives the addresses tt-metal's ``FreeListOpt`` (search policy FIRST) gives: an allocation of
``size`` bytes takes ``align(max(size, min_allocation_size), alignment)`` bytes from

- bottom-up: the start of the lowest-addressed free block that fits;
- top-down: the high end of the highest-addressed free block that fits;

a free coalesces the block with free neighbours.  Blocks keep tt-metal's block ids (a split keeps
the allocated part in the old id; ids of merged-away blocks are reused last-freed-first), so the
block table reads as tt-metal's ``get_memory_view(...).block_table`` does.

The search index cuts the address range into at most 4096 fixed chunks.  Each chunk keeps the free
blocks that start in it, in address order, and the size of its largest one; per power-of-two size
class a bitmask (a Python int) marks the chunks holding a block of at least that class, so the
lowest (or highest) chunk that surely fits is one bit operation away, and a block's change of size
updates a bit only when its class changes.  Frees find their neighbours through the block links.
No step depends on how many blocks are live.

Addresses given to and returned by the public methods are absolute (``offset`` included);
block-table addresses are relative to ``offset``, as tt-metal reports them.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from meshnn.errors import InvalidFreeError, MeshnnValueError

NO_BLOCK = -1
_MAX_LEAVES = 1 << 12  # chunks of the search index


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
        self._nleaves = ((max(size, 1) - 1) >> chunk_shift) + 1
        self._leaf_max = [0] * self._nleaves  # largest free block starting in each chunk
        self._masks = [0] * (max(size, 1).bit_length() + 1)  # size class -> bitmask of chunks
        self._leaves: dict[int, list[int]] = {}  # chunk -> free block ids starting there, by address
        self._leaf_sizes: dict[int, list[int]] = {}  # chunk -> sizes of those blocks, ascending
        self._dirty: set[int] = set()  # chunks changed by the operation under way
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
        self._leaf_max[:] = [0] * self._nleaves
        self._masks[:] = [0] * len(self._masks)
        self._leaves.clear()
        self._leaf_sizes.clear()
        self._index_insert(0)
        self._flush()

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
        """Record that the largest free block starting in chunk ``leaf`` has ``value`` bytes."""
        old = self._leaf_max[leaf]
        if old == value:
            return
        self._leaf_max[leaf] = value
        low, high = sorted((old.bit_length(), value.bit_length()))
        if low != high:
            bit, masks = 1 << leaf, self._masks
            for size_class in range(low, high):  # classes whose membership of this leaf flips
                masks[size_class] ^= bit

    def _index_insert(self, bid: int) -> None:
        leaf = self._addr[bid] >> self._shift
        blocks = self._leaves.get(leaf)
        if blocks is None:
            blocks = self._leaves[leaf] = []
            self._leaf_sizes[leaf] = []
        bisect.insort(blocks, bid, key=self._addr.__getitem__)
        bisect.insort(self._leaf_sizes[leaf], self._size[bid])
        self._dirty.add(leaf)

    def _index_remove(self, bid: int) -> None:
        address = self._addr[bid]
        leaf = address >> self._shift
        blocks = self._leaves[leaf]
        del blocks[bisect.bisect_left(blocks, address, key=self._addr.__getitem__)]
        sizes = self._leaf_sizes[leaf]
        del sizes[bisect.bisect_left(sizes, self._size[bid])]
        self._dirty.add(leaf)

    def _flush(self) -> None:
        """Apply the chunk changes of one operation (a split or merge touches a chunk up to three
        times; its size class is updated once)."""
        for leaf in self._dirty:
            sizes = self._leaf_sizes[leaf]
            if sizes:
                self._set_leaf(leaf, sizes[-1])
            else:
                del self._leaves[leaf], self._leaf_sizes[leaf]
                self._set_leaf(leaf, 0)
        self._dirty.clear()

    def _find_leaf(self, need: int, bottom_up: bool) -> int:
        """The lowest (bottom_up) or highest chunk holding a free block of at least ``need`` bytes.

        ``masks[c]`` has bit j set when chunk j holds a block of at least 2**c bytes.  Chunks in
        class ``need.bit_length()`` surely fit; chunks only in the class below might, and are
        checked one by one, but only those lying beyond the best sure fit.
        """
        masks, leaf_max = self._masks, self._leaf_max
        below = need.bit_length() - 1
        maybe = masks[below] if below < len(masks) else 0
        sure = masks[below + 1] if need & (need - 1) and below + 1 < len(masks) else maybe
        if bottom_up:
            best = (sure & -sure).bit_length() - 1 if sure else len(leaf_max)
            while maybe:
                leaf = (maybe & -maybe).bit_length() - 1
                if leaf >= best:
                    break
                if leaf_max[leaf] >= need:
                    return leaf
                maybe ^= 1 << leaf
            return best if sure else NO_BLOCK
        best = sure.bit_length() - 1  # -1 when nothing surely fits
        while maybe:
            leaf = maybe.bit_length() - 1
            if leaf <= best:
                break
            if leaf_max[leaf] >= need:
                return leaf
            maybe ^= 1 << leaf
        return best

    def _find(self, need: int, bottom_up: bool) -> int:
        """Id of the lowest (bottom_up) or highest free block of at least ``need`` bytes."""
        leaf = self._find_leaf(need, bottom_up)
        if leaf == NO_BLOCK:
            return NO_BLOCK
        blocks = self._leaves[leaf]
        sizes = self._size
        for bid in blocks if bottom_up else reversed(blocks):
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
        self._flush()
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
        self._flush()

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
            largest_free_block_bytes=max(self._leaf_max),
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
