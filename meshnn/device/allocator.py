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
        self._leaves: dict[int, list[int]] = {}  # chunk -> relative addresses of its free blocks, ascending
        self._leaf_bids: dict[int, list[int]] = {}  # chunk -> the ids of those blocks, same order
        self._leaf_sizes: dict[int, list[int]] = {}  # chunk -> sizes of those blocks, ascending
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
        self._leaf_bids.clear()
        self._leaf_sizes.clear()
        self._refresh(self._index_insert(0))

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
    # Each chunk's free blocks are three parallel-by-construction lists: their relative addresses
    # (ascending), their ids (same order) and their sizes (ascending, for the chunk's largest).
    # Every search is a C-level bisection; a block that keeps its place in address order (the
    # free remainder of a split, a merge) is updated in place.

    def _refresh(self, leaf: int) -> None:
        """Bring chunk ``leaf``'s largest free block, and its size-class bits, up to date after
        its blocks changed (a bit flips only when the largest block's size class changes)."""
        sizes = self._leaf_sizes.get(leaf)
        if sizes:
            value = sizes[-1]
        else:
            if sizes is not None:
                del self._leaves[leaf], self._leaf_bids[leaf], self._leaf_sizes[leaf]
            value = 0
        old = self._leaf_max[leaf]
        if old == value:
            return
        self._leaf_max[leaf] = value
        low, high = old.bit_length(), value.bit_length()
        if low != high:
            if low > high:
                low, high = high, low
            bit, masks = 1 << leaf, self._masks
            for size_class in range(low, high):  # classes whose membership of this leaf flips
                masks[size_class] ^= bit

    def _index_insert(self, bid: int) -> int:
        """Index free block ``bid``; its chunk."""
        address = self._addr[bid]
        leaf = address >> self._shift
        addresses = self._leaves.get(leaf)
        if addresses is None:
            self._leaves[leaf] = [address]
            self._leaf_bids[leaf] = [bid]
            self._leaf_sizes[leaf] = [self._size[bid]]
            return leaf
        at = bisect.bisect_left(addresses, address)
        addresses.insert(at, address)
        self._leaf_bids[leaf].insert(at, bid)
        bisect.insort(self._leaf_sizes[leaf], self._size[bid])
        return leaf

    def _index_remove(self, address: int, size: int) -> int:
        """Unindex the free block at relative ``address`` of ``size`` bytes; its chunk."""
        leaf = address >> self._shift
        addresses = self._leaves[leaf]
        at = bisect.bisect_left(addresses, address)
        del addresses[at], self._leaf_bids[leaf][at]
        sizes = self._leaf_sizes[leaf]
        del sizes[bisect.bisect_left(sizes, size)]
        return leaf

    def _index_replace(self, old_address: int, old_size: int, new: int) -> int:
        """Free block ``new`` (at its address and size) takes the index entry of the block that
        was at ``old_address`` with ``old_size`` bytes; returns ``new``'s chunk.

        The caller guarantees that no other free block lies between the two addresses, so the
        entry keeps its place in address order; across chunks it is a remove and an insert.  The
        caller refreshes the chunks."""
        address, size = self._addr[new], self._size[new]
        leaf = old_address >> self._shift
        if address >> self._shift != leaf:
            self._index_remove(old_address, old_size)
            return self._index_insert(new)
        addresses, sizes = self._leaves[leaf], self._leaf_sizes[leaf]
        at = bisect.bisect_left(addresses, old_address)
        addresses[at] = address
        self._leaf_bids[leaf][at] = new
        if len(sizes) == 1:
            sizes[0] = size
        elif old_size != size:
            del sizes[bisect.bisect_left(sizes, old_size)]
            bisect.insort(sizes, size)
        return leaf

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

    # ------------------------------------------------------------------------------ public API

    def aligned_size(self, size: int) -> int:
        """Bytes an allocation of ``size`` bytes takes from the free list."""
        return align_up(max(size, self.min_allocation_size), self.alignment)

    def allocate(self, size: int, *, bottom_up: bool) -> int | None:
        """Reserve ``size`` bytes; the absolute address, or None when no free block fits."""
        if size <= 0:
            raise MeshnnValueError(f"allocation size must be > 0 bytes, got {size}")
        minimum, alignment = self.min_allocation_size, self.alignment
        need = -(-(size if size > minimum else minimum) // alignment) * alignment
        leaf = self._find_leaf(need, bottom_up)
        if leaf == NO_BLOCK:
            return None
        sizes = self._size
        for bid in self._leaf_bids[leaf] if bottom_up else reversed(self._leaf_bids[leaf]):
            if sizes[bid] >= need:
                return self._take(bid, need, 0 if bottom_up else sizes[bid] - need)
        raise AssertionError("search index out of step with the free blocks")

    def allocate_at(self, address: int, size: int) -> int | None:
        """Reserve ``size`` bytes at ``address`` (absolute); None if that range is not free."""
        if size <= 0:
            raise MeshnnValueError(f"allocation size must be > 0 bytes, got {size}")
        need = self.aligned_size(size)
        start = address - self.offset
        if start < 0 or start % self.alignment or start + need > self.size:
            return None
        for leaf in range(start >> self._shift, -1, -1):
            addresses = self._leaves.get(leaf)
            if not addresses:
                continue
            at = bisect.bisect_right(addresses, start) - 1
            if at < 0:
                continue
            bid, lo = self._leaf_bids[leaf][at], addresses[at]
            if start + need > lo + self._size[bid]:
                return None
            return self._take(bid, need, start - lo)
        return None

    def _take(self, bid: int, need: int, offset: int) -> int:
        """Allocate ``need`` bytes at ``offset`` inside indexed free block ``bid``.

        A free part left on either side takes ``bid``'s entry in the index (no other free block
        lies inside ``bid``), the left one first; ``bid`` itself keeps the allocation, and new
        blocks are made left then right (tt-metal's block ids)."""
        address, size = self._addr[bid], self._size[bid]
        left_over = size - offset - need
        leaf = address >> self._shift
        if offset:  # a free block on the left: it takes bid's entry
            left = self._new_block(address, offset, self._prev[bid], bid)
            if self._prev[bid] != NO_BLOCK:
                self._next[self._prev[bid]] = left
            self._prev[bid] = left
            self._index_replace(address, size, left)
            self._addr[bid], self._size[bid] = address + offset, size - offset
            if left_over:  # and one on the right: a new entry
                self._refresh(self._index_insert(self._split_right(bid, need)))
        elif left_over:  # only a free block on the right: it takes bid's entry
            moved = self._index_replace(address, size, self._split_right(bid, need))
            if moved != leaf:
                self._refresh(moved)
        else:
            self._index_remove(address, size)
        self._refresh(leaf)
        self._used[bid] = True
        self._allocated[self._addr[bid]] = bid
        self._allocated_bytes += need
        return self._addr[bid] + self.offset

    def _split_right(self, bid: int, need: int) -> int:
        """A new free block (linked, not indexed) for the part of ``bid`` past its first ``need``
        bytes; ``bid`` shrinks to ``need``."""
        nxt = self._next[bid]
        right = self._new_block(self._addr[bid] + need, self._size[bid] - need, bid, nxt)
        if nxt != NO_BLOCK:
            self._prev[nxt] = right
        self._next[bid] = right
        self._size[bid] = need
        return right

    def free(self, address: int) -> None:
        """Release the allocation at ``address`` (absolute) and merge it with free neighbours."""
        bid = self._allocated.pop(address - self.offset, None)
        if bid is None:
            raise InvalidFreeError(
                f"address {address} is not allocated (a double free, or an address never handed out)"
            )
        used, sizes, addrs = self._used, self._size, self._addr
        used[bid] = False
        self._allocated_bytes -= sizes[bid]
        prev, nxt = self._prev[bid], self._next[bid]
        merge_next = nxt != NO_BLOCK and not used[nxt]
        if merge_next:  # unlink next: bid spans it
            after = self._next[nxt]
            self._next[bid] = after
            if after != NO_BLOCK:
                self._prev[after] = bid
            next_address, next_size = addrs[nxt], sizes[nxt]
            sizes[bid] += next_size
        if prev != NO_BLOCK and not used[prev]:  # prev grows in place over bid (and next)
            after = self._next[bid]
            self._next[prev] = after
            if after != NO_BLOCK:
                self._prev[after] = prev
            old_size = sizes[prev]
            sizes[prev] += sizes[bid]
            self._drop_block(bid)
            if merge_next:
                self._refresh(self._index_remove(next_address, next_size))
                self._drop_block(nxt)
            self._refresh(self._index_replace(addrs[prev], old_size, prev))
        elif merge_next:  # bid takes next's entry (no free block lies between them)
            self._drop_block(nxt)
            old_leaf = next_address >> self._shift
            leaf = self._index_replace(next_address, next_size, bid)
            if old_leaf != leaf:
                self._refresh(old_leaf)
            self._refresh(leaf)
        else:
            self._refresh(self._index_insert(bid))

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
            for bids in self._leaf_bids.values()
            for b in bids
            if self._size[b] > 0
        )

    def clear(self) -> None:
        """Forget every allocation: one free block spans the range again."""
        self._reset()
