"""The search index of a free list: where its free blocks are, found by size in a few steps.

The index cuts the address range into at most 4096 chunks of ``2**shift`` bytes.  Each chunk
keeps the free blocks that start in it, in address order, a count of them per size, and the size
of its largest one.  Per power-of-two size class a bitmask (a Python int) marks the chunks holding
a block of at least that class, so the first chunk in search order that surely fits is one
``bit_length()`` away, and a block's change of size touches a bit only when the class of its
chunk's largest block changes.  No step depends on how many blocks are live, only on how many free
blocks share a chunk, and finding a chunk's new largest size after its largest block shrank costs
one ``max`` over its distinct sizes (at most about ``sqrt(2 * chunk bytes / alignment)`` of them).

:class:`FreeBlockIndex` is the base of :class:`~meshnn.device.allocator.FreeList`, which keeps the
blocks themselves; addresses here are relative to the free list's ``offset``.

Layers: imports nothing of meshnn.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import NamedTuple

NO_BLOCK = -1
_MAX_LEAVES = 1 << 12  # chunks of the search index


class Chunk(NamedTuple):
    """The free blocks that start in one chunk of the search index; never empty.

    ``addresses`` (relative) ascend and ``bids`` names the same blocks in the same order, so an
    index entry is one position in both.  ``counts`` maps each size in bytes to how many of the
    blocks have it (only sizes with a block).
    """

    addresses: list[int]
    bids: list[int]
    counts: dict[int, int]


class FreeBlockIndex:
    """The free blocks of ``size`` bytes of address range, indexed by chunk and size class."""

    def __init__(self, size: int) -> None:
        chunk_shift = 0
        while (size >> chunk_shift) >= _MAX_LEAVES:
            chunk_shift += 1
        self._shift = chunk_shift  # relative address a lies in chunk a >> shift
        self._nleaves = ((max(size, 1) - 1) >> chunk_shift) + 1
        self._chunks: list[Chunk | None] = [None] * self._nleaves  # None: no free block starts there
        self._leaf_max = [0] * self._nleaves  # bytes of the largest free block starting in each chunk
        # Per search direction (0: top-down, 1: bottom-up), size class c -> bitmask of the chunks
        # whose largest free block has at least 2**c bytes.  Bits count from the far end of the
        # search (chunk j is bit j top-down, bit nleaves - 1 - j bottom-up), so the first chunk
        # in search order is the highest bit.  The classes run to size.bit_length(), one more
        # than any block has, so both classes a need <= size looks at exist.
        classes = max(size, 1).bit_length() + 1
        self._masks = ([0] * classes, [0] * classes)

    def _clear_index(self) -> None:
        """Index no block."""
        self._chunks[:] = [None] * self._nleaves
        self._leaf_max[:] = [0] * self._nleaves
        for masks in self._masks:
            masks[:] = [0] * len(masks)

    # ---------------------------------------------------------------------------- search index
    # An entry is a position in a chunk: callers that found it by scanning pass it on, others
    # bisect the chunk's addresses.  Each method leaves the chunks it touched, their counts,
    # their largest sizes and the class bits up to date.

    def _index_add(self, bid: int, address: int, size: int) -> None:
        """Index free block ``bid``: ``size`` bytes at relative ``address``."""
        leaf = address >> self._shift
        chunk = self._chunks[leaf]
        if chunk is None:
            self._chunks[leaf] = Chunk([address], [bid], {size: 1})
        else:
            addresses, bids, counts = chunk
            at = bisect_left(addresses, address)
            addresses.insert(at, address)
            bids.insert(at, bid)
            counts[size] = counts.get(size, 0) + 1
        if size > self._leaf_max[leaf]:
            self._set_largest(leaf, size)

    def _index_drop(self, leaf: int, at: int, size: int) -> None:
        """Unindex entry ``at`` of chunk ``leaf``, a free block of ``size`` bytes."""
        addresses, bids, counts = self._chunks[leaf]
        del addresses[at], bids[at]
        left = counts.pop(size) - 1
        if left:
            counts[size] = left
        elif not counts:
            self._chunks[leaf] = None
            self._set_largest(leaf, 0)
        elif size == self._leaf_max[leaf]:
            self._set_largest(leaf, max(counts))

    def _index_set(self, leaf: int, at: int, old_size: int, bid: int, address: int, size: int) -> None:
        """Entry ``at`` of chunk ``leaf``, a free block of ``old_size`` bytes, now indexes free block
        ``bid``: ``size`` bytes at relative ``address``.

        The caller guarantees that no other free block starts between the old address and the
        new, so the entry keeps its place in address order; into another chunk it is a drop and
        an add.  In place it is ``_index_resize``, written out: this runs on most allocations and
        frees, and a call is a tenth of its cost."""
        if address >> self._shift != leaf:
            self._index_drop(leaf, at, old_size)
            self._index_add(bid, address, size)
            return
        addresses, bids, counts = self._chunks[leaf]
        addresses[at] = address
        bids[at] = bid
        left = counts.pop(old_size) - 1
        if left:
            counts[old_size] = left
        counts[size] = counts.get(size, 0) + 1
        largest = self._leaf_max[leaf]
        if size > largest:
            self._set_largest(leaf, size)
        elif old_size == largest and not left:  # the chunk's only largest block shrank
            self._set_largest(leaf, max(counts) if len(counts) > 1 else size)

    def _index_resize(self, leaf: int, old_size: int, size: int) -> None:
        """The free block of chunk ``leaf`` that had ``old_size`` bytes has ``size`` bytes now, at
        the same address."""
        counts = self._chunks[leaf].counts
        left = counts.pop(old_size) - 1
        if left:
            counts[old_size] = left
        counts[size] = counts.get(size, 0) + 1
        largest = self._leaf_max[leaf]
        if size > largest:
            self._set_largest(leaf, size)
        elif old_size == largest and not left:  # the chunk's only largest block shrank
            self._set_largest(leaf, max(counts) if len(counts) > 1 else size)

    def _set_largest(self, leaf: int, largest: int) -> None:
        """Record ``largest`` bytes as the size of chunk ``leaf``'s largest free block; where its
        size class changes, flip the chunk's bit in every class it joins or leaves."""
        old = self._leaf_max[leaf]
        self._leaf_max[leaf] = largest
        low, high = old.bit_length(), largest.bit_length()
        if low != high:
            if low > high:
                low, high = high, low
            top_down, bottom_up = self._masks
            bit, mirrored = 1 << leaf, 1 << (self._nleaves - 1 - leaf)
            for size_class in range(low, high):
                top_down[size_class] ^= bit
                bottom_up[size_class] ^= mirrored

    def _find_leaf(self, need: int, bottom_up: bool) -> int:
        """The lowest (bottom_up) or highest chunk holding a free block of at least ``need`` bytes
        (0 < need <= size), or NO_BLOCK.

        Chunks in class ``need.bit_length()`` surely fit.  When ``need`` is not a power of two,
        chunks only in the class below might, and are checked one by one, but only those that
        come before the first sure fit in search order (the higher bits).
        """
        masks = self._masks[bottom_up]
        below = need.bit_length() - 1
        last = self._nleaves - 1
        if need & (need - 1):
            maybe = masks[below]
            best = masks[below + 1].bit_length() - 1  # -1 when nothing surely fits
            while maybe:
                bit = maybe.bit_length() - 1
                if bit <= best:
                    break
                leaf = last - bit if bottom_up else bit
                if self._leaf_max[leaf] >= need:
                    return leaf
                maybe ^= 1 << bit
        else:
            best = masks[below].bit_length() - 1
        if best < 0:
            return NO_BLOCK
        return last - best if bottom_up else best
