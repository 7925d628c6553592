"""The free-list allocator of one bank-address range: pure bookkeeping, no bytes.

It gives the addresses tt-metal's ``FreeListOpt`` (search policy FIRST) gives: an allocation of
``size`` bytes takes ``align(max(size, min_allocation_size), alignment)`` bytes from

- bottom-up: the start of the lowest-addressed free block that fits;
- top-down: the high end of the highest-addressed free block that fits;

a free coalesces the block with free neighbours.  Blocks keep tt-metal's block ids (a split keeps
the allocated part in the old id; ids of merged-away blocks are reused last-freed-first), so the
block table reads as tt-metal's ``get_memory_view(...).block_table`` does.

Invariants: the live blocks tile the range in address order through their prev/next links, and no
two free blocks are neighbours.  All sizes are in bytes.  Free blocks are found through the search
index of the base class (:mod:`meshnn.device.free_index`); frees find their neighbours through the
block links.

Addresses given to and returned by the public methods are absolute (``offset`` included);
block-table addresses are relative to ``offset``, as tt-metal reports them.

A free undone by the same allocation (an op's output dropped, then the next op's output of the
same size: every tiny op of a loop) is not done twice.  When :meth:`FreeList.free` frees the
last allocation :meth:`FreeList.allocate` made, nothing having changed since, and that allocation
took the start of its free block (bottom-up always; top-down when the block fitted exactly), the
free is *parked*: the block leaves the allocations and their byte count at once, and its merge
with the free rest waits.  An allocation of the same bytes and direction takes it back: first
fit over the same free ranges picks the same block, and the free and the allocation undone
would leave every block, id, link and index entry as they are now (the rest's id spared by the
merge is the one the split takes back), so nothing is done.  Anything else does the merge first
(:meth:`FreeList._settle`); what it reads or returns is what the free and the allocation done in
full give.

Layers: imports only :mod:`meshnn.errors` (and the free list's index beside it).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from meshnn.device.free_index import NO_BLOCK, FreeBlockIndex
from meshnn.errors import InvalidFreeError, MeshnnValueError


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


class FreeList(FreeBlockIndex):
    """First-fit allocator over ``[offset, offset + size)`` bytes.  It never touches memory."""

    def __init__(self, *, size: int, offset: int, min_allocation_size: int, alignment: int) -> None:
        if size < 0 or offset < 0:
            raise MeshnnValueError(f"allocator size and offset must be >= 0, got {size}, {offset}")
        if alignment <= 0 or min_allocation_size <= 0:
            raise MeshnnValueError(f"alignment must be > 0, got {alignment}")
        self.size = size
        self.offset = offset
        self.alignment = alignment
        self.min_allocation_size = min_allocation_size
        super().__init__(size)
        self._reset()

    # ----------------------------------------------------------------------------- bookkeeping
    # Blocks are parallel lists indexed by block id.  A merged-away id stays in the lists, its
    # ``_used`` entry None, and waits in ``_spare`` for reuse.

    def _reset(self) -> None:
        self._addr: list[int] = [0]  # relative address
        self._size: list[int] = [self.size]  # bytes
        self._prev: list[int] = [NO_BLOCK]
        self._next: list[int] = [NO_BLOCK]
        self._used: list[bool | None] = [False]  # True: allocated, False: free, None: merged away
        self._spare: list[int] = []  # ids of merged-away blocks, reused last first
        self._allocated: dict[int, int] = {}  # absolute address -> block id
        self._allocated_bytes = 0
        self._undo: tuple[int, int, int, bool] | None = None  # the last allocation, while its free would be parked
        self._parked: tuple[int, int, int, bool] | None = None  # that allocation, freed, its merge not yet done
        self._clear_index()
        self._index_add(0, 0, self.size)

    def _new_block(self, addr: int, size: int, prev: int, nxt: int) -> int:
        """A free block of ``size`` bytes at relative ``addr``, linked in between blocks ``prev``
        and ``nxt`` but not indexed; its id is the last spare one, else a new one."""
        addrs, sizes, prevs, nexts, used = self._addr, self._size, self._prev, self._next, self._used
        if self._spare:
            bid = self._spare.pop()
            addrs[bid], sizes[bid], prevs[bid], nexts[bid], used[bid] = addr, size, prev, nxt, False
        else:
            bid = len(addrs)
            addrs.append(addr)
            sizes.append(size)
            prevs.append(prev)
            nexts.append(nxt)
            used.append(False)
        if prev != NO_BLOCK:
            nexts[prev] = bid
        if nxt != NO_BLOCK:
            prevs[nxt] = bid
        return bid

    # ------------------------------------------------------------------------------ public API

    def aligned_size(self, size: int) -> int:
        """Bytes an allocation of ``size`` bytes takes from the free list."""
        return align_up(max(size, self.min_allocation_size), self.alignment)

    def allocate(self, size: int, *, bottom_up: bool) -> int | None:
        """Reserve ``size`` bytes; the absolute address, or None (nothing changed) when no free
        block fits."""
        if size <= 0:
            raise MeshnnValueError(f"allocation size must be > 0 bytes, got {size}")
        minimum, alignment = self.min_allocation_size, self.alignment
        need = -(-(size if size > minimum else minimum) // alignment) * alignment
        if need > self.size:
            return None
        parked = self._parked
        if parked is not None:
            if parked[1] == need and parked[3] == bottom_up:  # the free undone (see the module's text)
                address, _, bid, _ = self._undo = parked
                self._parked = None
                self._allocated[address] = bid
                self._allocated_bytes += need
                return address
            self._settle()
        leaf = self._find_leaf(need, bottom_up)
        if leaf == NO_BLOCK:
            return None
        bids, sizes = self._chunks[leaf].bids, self._size
        if bottom_up:
            for at, bid in enumerate(bids):
                if sizes[bid] >= need:
                    address = self._take(leaf, at, bid, need, 0)
                    self._undo = (address, need, bid, True)
                    return address
        else:
            for at in range(len(bids) - 1, -1, -1):
                bid = bids[at]
                if sizes[bid] >= need:
                    rest = sizes[bid] - need
                    address = self._take(leaf, at, bid, need, rest)
                    self._undo = None if rest else (address, need, bid, False)
                    return address
        raise AssertionError("search index out of step with the free blocks")

    def allocate_at(self, address: int, size: int) -> int | None:
        """Reserve ``size`` bytes at ``address`` (absolute); None (nothing changed) if that range
        is not free."""
        if size <= 0:
            raise MeshnnValueError(f"allocation size must be > 0 bytes, got {size}")
        need = self.aligned_size(size)
        start = address - self.offset
        if start < 0 or start % self.alignment or start + need > self.size:
            return None
        self._settle()
        self._undo = None
        for leaf in range(start >> self._shift, -1, -1):
            chunk = self._chunks[leaf]
            at = -1 if chunk is None else bisect_right(chunk.addresses, start) - 1
            if at < 0:
                continue
            lo, bid = chunk.addresses[at], chunk.bids[at]
            if start + need > lo + self._size[bid]:
                return None
            return self._take(leaf, at, bid, need, start - lo)
        return None

    def _take(self, leaf: int, at: int, bid: int, need: int, offset: int) -> int:
        """Allocate ``need`` bytes at ``offset`` bytes into free block ``bid``, entry ``at`` of chunk
        ``leaf``; the absolute address.

        ``bid`` keeps the allocation.  A free part left on either side is a new block, the left
        one made first (tt-metal's block ids).  The left part takes ``bid``'s index entry (same
        address), else the right part does (no other free block starts inside ``bid``); a right
        part beside a left one gets an entry of its own."""
        addrs, sizes = self._addr, self._size
        address, size = addrs[bid], sizes[bid]
        right_size = size - offset - need
        if offset:
            left = self._new_block(address, offset, self._prev[bid], bid)
            self._index_set(leaf, at, size, left, address, offset)
            address += offset
            addrs[bid] = address
            if right_size:
                right = self._new_block(address + need, right_size, bid, self._next[bid])
                self._index_add(right, address + need, right_size)
        elif right_size:
            right = self._new_block(address + need, right_size, bid, self._next[bid])
            self._index_set(leaf, at, size, right, address + need, right_size)
        else:
            self._index_drop(leaf, at, size)
        sizes[bid] = need
        self._used[bid] = True
        self._allocated_bytes += need
        address += self.offset
        self._allocated[address] = bid
        return address

    def free(self, address: int) -> None:
        """Release the allocation at ``address`` (absolute) and merge it with free neighbours."""
        bid = self._allocated.pop(address, None)
        if bid is None:
            raise InvalidFreeError(
                f"address {address} is not allocated (a double free, or an address never handed out)"
            )
        self._allocated_bytes -= self._size[bid]
        undo = self._undo
        self._undo = None
        if undo is not None and undo[0] == address:
            self._parked = undo  # (nothing was parked: the allocation it undoes came after any park)
            return
        if self._parked is not None:
            self._settle()
        self._merge(bid)

    def _settle(self) -> None:
        """Do the merge of a parked free (see the module's text), if one waits."""
        parked = self._parked
        if parked is not None:
            self._parked = None
            self._merge(parked[2])

    def _merge(self, bid: int) -> None:
        """Make freed block ``bid`` (out of the allocations already) free, merged with its free
        neighbours, and index it."""
        addrs, sizes, prevs, nexts, used = self._addr, self._size, self._prev, self._next, self._used
        size = sizes[bid]
        prev, nxt = prevs[bid], nexts[bid]
        merge_prev = prev != NO_BLOCK and not used[prev]
        merge_next = nxt != NO_BLOCK and not used[nxt]
        if not (merge_prev or merge_next):
            used[bid] = False
            self._index_add(bid, addrs[bid], size)
            return
        # One block stays (prev if free, else bid) and spans the others; their ids are spared,
        # bid's first.
        first, last = prev if merge_prev else bid, nxt if merge_next else bid
        after = nexts[last]
        nexts[first] = after
        if after != NO_BLOCK:
            prevs[after] = first
        if merge_prev:
            used[bid] = None
            self._spare.append(bid)
        else:
            used[bid] = False
        if merge_next:
            used[nxt] = None
            self._spare.append(nxt)
            next_address, next_size = addrs[nxt], sizes[nxt]
            next_leaf = next_address >> self._shift
            next_at = bisect_left(self._chunks[next_leaf].addresses, next_address)
            size += next_size
        if merge_prev:  # prev grows in place; a free next's entry goes
            if merge_next:
                self._index_drop(next_leaf, next_at, next_size)
            prev_size = sizes[prev]
            sizes[prev] = prev_size + size
            self._index_resize(addrs[prev] >> self._shift, prev_size, prev_size + size)
        else:  # bid grows over next and takes its entry (no free block lies between them)
            sizes[bid] = size
            self._index_set(next_leaf, next_at, next_size, bid, addrs[bid], size)

    def allocation_size(self, address: int) -> int | None:
        """Bytes reserved by the allocation at ``address`` (absolute), or None."""
        bid = self._allocated.get(address)
        return None if bid is None else self._size[bid]

    def is_allocated(self, address: int) -> bool:
        return address in self._allocated

    @property
    def num_allocations(self) -> int:
        return len(self._allocated)

    def allocations(self) -> list[tuple[int, int]]:
        """``(absolute address, reserved bytes)`` of every live allocation, by address."""
        return sorted((a, self._size[b]) for a, b in self._allocated.items())

    def statistics(self) -> Statistics:
        """Totals per bank; with nothing allocated the whole range counts as free (as tt-metal)."""
        self._settle()
        if not self._allocated:
            return Statistics(self.size, 0, self.size, self.size)
        return Statistics(
            total_allocatable_size_bytes=self.size,
            total_allocated_bytes=self._allocated_bytes,
            total_free_bytes=self.size - self._allocated_bytes,
            largest_free_block_bytes=max(self._leaf_max),
        )

    def block_table(self) -> list[dict[str, str]]:
        """tt-metal's memory block table: one dict of strings per live block, by block id."""
        self._settle()
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
            if self._used[bid] is not None
        ]

    def free_blocks(self) -> list[tuple[int, int]]:
        """``(absolute address, bytes)`` of every free block, by address."""
        self._settle()
        return [
            (address + self.offset, self._size[bid])
            for chunk in self._chunks
            if chunk is not None
            for address, bid in zip(chunk.addresses, chunk.bids, strict=True)
            if self._size[bid] > 0
        ]

    def clear(self) -> None:
        """Forget every allocation: one free block spans the range again."""
        self._reset()
