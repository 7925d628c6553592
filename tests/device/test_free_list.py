"""The free-list allocator: first-fit semantics, coalescing, errors, and a model-based property test."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meshnn.device.allocator import FreeList
from meshnn.errors import InvalidFreeError, MeshnnError


def make(size: int = 4096, offset: int = 1000, alignment: int = 32) -> FreeList:
    return FreeList(size=size, offset=offset, min_allocation_size=alignment, alignment=alignment)


def test_bottom_up_takes_the_lowest_hole_and_top_down_the_highest():
    fl = make()
    a, b, c = (fl.allocate(64, bottom_up=True) for _ in range(3))
    assert (a, b, c) == (1000, 1064, 1128)
    top = fl.allocate(100, bottom_up=False)  # 100 -> 128 bytes, at the high end
    assert top == 1000 + 4096 - 128
    fl.free(b)
    assert fl.allocate(32, bottom_up=True) == 1064  # the freed hole is the lowest that fits
    assert fl.allocate(64, bottom_up=True) == 1192  # the rest of the hole is too small now


def test_top_down_uses_the_highest_hole_that_fits():
    fl = make()
    low, mid, high = (fl.allocate(256, bottom_up=False) for _ in range(3))
    assert high < mid < low
    fl.free(mid)
    assert fl.allocate(64, bottom_up=False) == mid + 256 - 64  # high end of that hole


def test_sizes_round_up_to_the_minimum_and_the_alignment():
    fl = make()
    assert fl.aligned_size(1) == 32 and fl.aligned_size(33) == 64 and fl.aligned_size(64) == 64
    fl.allocate(1, bottom_up=True)
    assert fl.statistics().total_allocated_bytes == 32


def test_neighbours_coalesce_and_everything_frees_back_to_one_block():
    fl = make()
    addresses = [fl.allocate(512, bottom_up=True) for _ in range(8)]
    assert fl.allocate(32, bottom_up=True) is None  # full
    for address in addresses[1::2] + addresses[0::2]:
        fl.free(address)
    assert fl.allocate(4096, bottom_up=True) == 1000
    fl.free(1000)
    table = fl.block_table()
    assert len(table) == 1 and table[0]["size"] == "4096" and table[0]["allocated"] == "no"


def test_block_ids_follow_tt_metal():
    fl = make()
    fl.allocate(64, bottom_up=True)  # block 0 allocated, block 1 is the free rest
    fl.allocate(64, bottom_up=False)  # block 1 keeps the allocation, block 2 is the free left part
    table = {row["blockID"]: row for row in fl.block_table()}
    assert table["0"]["allocated"] == "yes" and table["0"]["address"] == "0"
    assert table["1"]["allocated"] == "yes" and table["1"]["address"] == str(4096 - 64)
    assert table["2"]["allocated"] == "no" and table["2"]["prevID"] == "0" and table["2"]["nextID"] == "1"


def test_freeing_twice_or_a_foreign_address_raises():
    fl = make()
    address = fl.allocate(64, bottom_up=True)
    fl.free(address)
    with pytest.raises(InvalidFreeError, match="not allocated"):
        fl.free(address)
    with pytest.raises(InvalidFreeError):
        fl.free(123456)
    assert isinstance(InvalidFreeError("x"), ValueError)


def test_no_fit_returns_none_and_changes_nothing():
    fl = make()
    fl.allocate(1024, bottom_up=True)
    before = (fl.block_table(), fl.statistics())
    assert fl.allocate(4096, bottom_up=True) is None
    assert (fl.block_table(), fl.statistics()) == before


def test_bad_sizes_are_refused():
    fl = make()
    with pytest.raises(MeshnnError):
        fl.allocate(0, bottom_up=True)
    with pytest.raises(ValueError):
        fl.allocate(-5, bottom_up=True)


def test_allocate_at_takes_exactly_that_range_or_nothing():
    fl = make()
    assert fl.allocate_at(1000 + 320, 64) == 1320
    assert fl.allocate_at(1000 + 352, 64) is None  # overlaps the first
    assert fl.allocate(320, bottom_up=True) == 1000  # the hole below still fits exactly
    assert fl.allocate_at(1000 + 4096 - 32, 64) is None  # runs past the end


class NaiveFreeList:
    """The specification: a sorted list of free (address, size) holes, scanned linearly."""

    def __init__(self, size: int, alignment: int) -> None:
        self.alignment = alignment
        self.holes = [(0, size)]
        self.used: dict[int, int] = {}

    def allocate(self, size: int, bottom_up: bool) -> int | None:
        need = -(-max(size, self.alignment) // self.alignment) * self.alignment
        fits = [h for h in self.holes if h[1] >= need]
        if not fits:
            return None
        address, hole = min(fits) if bottom_up else max(fits)
        self.holes.remove((address, hole))
        at = address if bottom_up else address + hole - need
        if at > address:
            self.holes.append((address, at - address))
        if at + need < address + hole:
            self.holes.append((at + need, address + hole - at - need))
        self.holes.sort()
        self.used[at] = need
        return at

    def free(self, address: int) -> None:
        size = self.used.pop(address)
        self.holes.append((address, size))
        self.holes.sort()
        merged: list[tuple[int, int]] = []
        for a, s in self.holes:
            if merged and merged[-1][0] + merged[-1][1] == a:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((a, s))
        self.holes = merged


operations = st.lists(
    st.tuples(st.booleans(), st.integers(1, 3000), st.booleans(), st.integers(0, 10**6)), max_size=150
)


@settings(max_examples=150, deadline=None)
@given(size=st.sampled_from([4096, 100_000, 1 << 20, 1_393_312]), ops=operations)
def test_random_sequences_match_the_specification(size, ops):
    fl, model = make(size=size, offset=0), NaiveFreeList(size, 32)
    live: list[int] = []
    for do_alloc, nbytes, bottom_up, pick in ops:
        if do_alloc or not live:
            address = fl.allocate(nbytes, bottom_up=bottom_up)
            assert address == model.allocate(nbytes, bottom_up)
            if address is not None:
                live.append(address)
        else:
            address = live.pop(pick % len(live))
            fl.free(address)
            model.free(address)
        spans = sorted(fl.allocations())
        assert all(a + s <= b for (a, s), (b, _) in itertools.pairwise(spans)), "overlap"
        assert all(a >= 0 and a + s <= size for a, s in spans), "out of bounds"
        stats = fl.statistics()
        used = sum(s for _, s in spans)
        assert stats.total_allocated_bytes == used
        assert stats.total_free_bytes == size - used
        holes = fl.free_blocks()
        assert holes == [h for h in model.holes if h[1] > 0]
        assert stats.largest_free_block_bytes == (max((s for _, s in holes), default=0) if spans else size)
        table = fl.block_table()
        assert sum(int(row["size"]) for row in table) == size
    for address in live:
        fl.free(address)
    assert fl.free_blocks() == [(0, size)]
    assert len(fl.block_table()) == 1


UNSIGNED_NONE = str((1 << 64) - 1)


class BlockModel:
    """tt-metal's block bookkeeping, literally: ``[id, address, size, allocated]`` blocks in
    address order, scanned linearly; a split keeps the allocation in the old id and makes the
    left part before the right one, and merged-away ids are reused last-freed-first."""

    def __init__(self, size: int, alignment: int) -> None:
        self.alignment = alignment
        self.size = size
        self.blocks = [[0, 0, size, False]]
        self.spare: list[int] = []
        self.ids = 1

    def _new_id(self) -> int:
        if self.spare:
            return self.spare.pop()
        self.ids += 1
        return self.ids - 1

    def _need(self, size: int) -> int:
        return -(-max(size, self.alignment) // self.alignment) * self.alignment

    def _take(self, i: int, need: int, offset: int) -> int:
        bid, address, size, _ = self.blocks[i]
        parts = [[self._new_id(), address, offset, False]] if offset else []
        parts.append([bid, address + offset, need, True])
        if size - offset - need:
            parts.append([self._new_id(), address + offset + need, size - offset - need, False])
        self.blocks[i : i + 1] = parts
        return address + offset

    def allocate(self, size: int, bottom_up: bool) -> int | None:
        need = self._need(size)
        fits = [i for i, (_, _, s, used) in enumerate(self.blocks) if not used and s >= need]
        if not fits:
            return None
        i = fits[0] if bottom_up else fits[-1]
        return self._take(i, need, 0 if bottom_up else self.blocks[i][2] - need)

    def allocate_at(self, start: int, size: int) -> int | None:
        need = self._need(size)
        if start < 0 or start % self.alignment or start + need > self.size:
            return None
        for i, (_, address, s, used) in enumerate(self.blocks):
            if not used and address <= start and start + need <= address + s:
                return self._take(i, need, start - address)
        return None

    def free(self, address: int) -> None:
        i = next(i for i, b in enumerate(self.blocks) if b[1] == address and b[3])
        block = self.blocks[i]
        block[3] = False
        merge_next = i + 1 < len(self.blocks) and not self.blocks[i + 1][3]
        if merge_next:
            after = self.blocks.pop(i + 1)
            block[2] += after[2]
        if i > 0 and not self.blocks[i - 1][3]:
            self.blocks[i - 1][2] += block[2]
            del self.blocks[i]
            self.spare.append(block[0])
        if merge_next:
            self.spare.append(after[0])

    def block_table(self) -> list[dict[str, str]]:
        rows = {}
        for k, (bid, address, size, used) in enumerate(self.blocks):
            rows[bid] = {
                "allocated": "yes" if used else "no",
                "nextID": str(self.blocks[k + 1][0]) if k + 1 < len(self.blocks) else UNSIGNED_NONE,
                "prevID": str(self.blocks[k - 1][0]) if k else UNSIGNED_NONE,
                "size": str(size),
                "address": str(address),
                "blockID": str(bid),
            }
        return [rows[bid] for bid in sorted(rows)]


block_operations = st.lists(
    st.tuples(
        st.sampled_from(["alloc", "alloc", "alloc_at", "free", "free", "bad_free"]),
        st.integers(1, 3000),
        st.booleans(),
        st.integers(0, 10**6),
    ),
    max_size=120,
)


@settings(max_examples=150, deadline=None)
@given(size=st.sampled_from([4096, 100_000, 1 << 20, 1_393_312]), ops=block_operations)
def test_random_sequences_keep_tt_metal_block_ids(size, ops):
    """Every address, and the whole block table (ids, links, sizes) after every step, as the
    literal model has them; a refused request or a bad free changes nothing."""
    offset = 1000
    fl, model = make(size=size, offset=offset), BlockModel(size, 32)
    live: list[int] = []
    for op, nbytes, bottom_up, pick in ops:
        before = fl.block_table()
        if op == "alloc" or (op == "free" and not live):
            address = fl.allocate(nbytes, bottom_up=bottom_up)
            expected = model.allocate(nbytes, bottom_up)
        elif op == "alloc_at":
            start = pick % size // 32 * 32 if pick % 3 else pick % size
            address = fl.allocate_at(offset + start, nbytes)
            expected = model.allocate_at(start, nbytes)
        elif op == "free":
            address = live.pop(pick % len(live))
            fl.free(address)
            model.free(address - offset)
            assert fl.block_table() == model.block_table()
            continue
        else:
            with pytest.raises(InvalidFreeError):
                fl.free(offset + pick % size // 32 * 32 + 16)  # never aligned, never allocated
            assert fl.block_table() == before
            continue
        assert address == (None if expected is None else expected + offset)
        if address is None:
            assert fl.block_table() == before
        else:
            live.append(address)
        assert fl.block_table() == model.block_table()
    for address in live:
        fl.free(address)
        model.free(address - offset)
    assert fl.block_table() == model.block_table()
    assert fl.free_blocks() == [(offset, size)]


def test_a_free_undone_by_the_same_allocation_is_parked_and_taken_back():
    """Freeing the last allocation parks it (its merge waits); the same request takes it back
    and every block (ids, links, sizes) is as the literal model has it after the free and the
    allocation done in full; another request, a read or a double free does the merge first."""
    offset = 1000
    fl, model = make(offset=offset), BlockModel(4096, 32)
    for nbytes, bottom_up in [(64, True), (100, False), (96, True)]:
        assert fl.allocate(nbytes, bottom_up=bottom_up) == model.allocate(nbytes, bottom_up) + offset
    last = fl.allocate(200, bottom_up=True)
    assert last == model.allocate(200, True) + offset
    for _ in range(3):
        fl.free(last)
        model.free(last - offset)
        assert fl._parked is not None and not fl.is_allocated(last) and fl.allocation_size(last) is None
        assert fl.statistics().total_allocated_bytes == 64 + 128 + 96
        assert fl.allocate(200, bottom_up=True) == model.allocate(200, True) + offset == last
        assert fl._parked is None and fl.block_table() == model.block_table()
    fl.free(last)
    model.free(last - offset)
    with pytest.raises(InvalidFreeError):
        fl.free(last)  # a parked free is a free: twice is refused, nothing changed
    assert fl.allocate(32, bottom_up=True) == model.allocate(32, True) + offset == last  # settled first
    assert fl.block_table() == model.block_table()
    assert fl.free_blocks() == [(a + offset, s) for _, a, s, used in model.blocks if not used]


def test_a_top_down_allocation_is_parked_only_when_it_filled_its_block():
    fl = make()
    high = fl.allocate(64, bottom_up=False)
    fl.free(high)
    assert fl._parked is None  # it split its block: a new allocation would make other ids
    exact = fl.allocate(4096, bottom_up=False)
    fl.free(exact)
    assert fl._parked is not None
    assert fl.allocate(4096, bottom_up=False) == exact


cycle_operations = st.lists(
    st.tuples(
        st.sampled_from(["alloc", "cycle", "cycle", "free", "free_last", "alloc_at", "look"]),
        st.integers(1, 3000),
        st.booleans(),
        st.integers(0, 10**6),
    ),
    max_size=120,
)


@settings(max_examples=150, deadline=None)
@given(size=st.sampled_from([4096, 100_000, 1_393_312]), ops=cycle_operations)
def test_random_scripts_with_parked_frees_keep_tt_metal_addresses_and_blocks(size, ops):
    """Scripts rich in frees of the last allocation followed by the same request ("cycle"), the
    block table looked at only now and then ("look"): every address as the literal model gives
    it, and the block table the model's whenever it is read."""
    offset = 1000
    fl, model = make(size=size, offset=offset), BlockModel(size, 32)
    live: list[tuple[int, int, bool]] = []  # (address, bytes asked, bottom_up), last allocated last
    for op, nbytes, bottom_up, pick in ops:
        if op == "look":
            assert fl.block_table() == model.block_table()
        elif op == "alloc_at":
            start = pick % size // 32 * 32
            address = fl.allocate_at(offset + start, nbytes)
            expected = model.allocate_at(start, nbytes)
            assert address == (None if expected is None else expected + offset)
            if address is not None:
                live.append((address, nbytes, True))
        elif op in ("free", "free_last", "cycle") and live:
            address, nbytes, bottom_up = live.pop(pick % len(live) if op == "free" else -1)
            fl.free(address)
            model.free(address - offset)
            if op == "cycle":
                again = fl.allocate(nbytes, bottom_up=bottom_up)
                assert again == model.allocate(nbytes, bottom_up) + offset
                live.append((again, nbytes, bottom_up))
        else:
            address = fl.allocate(nbytes, bottom_up=bottom_up)
            expected = model.allocate(nbytes, bottom_up)
            assert address == (None if expected is None else expected + offset)
            if address is not None:
                live.append((address, nbytes, bottom_up))
    assert fl.block_table() == model.block_table()
    assert fl.statistics().total_allocated_bytes == sum(fl.allocation_size(a) for a, _, _ in live)
    for address, _, _ in live:
        fl.free(address)
    assert fl.free_blocks() == [(offset, size)] and len(fl.block_table()) == 1


def test_random_scripts_park_frees():
    """The scripts above do take the parked path (a script of cycles parks every free)."""
    fl, model = make(size=100_000, offset=0), BlockModel(100_000, 32)
    for nbytes in (64, 3000, 32):
        fl.allocate(nbytes, bottom_up=True)
        model.allocate(nbytes, True)
    address = fl.allocate(512, bottom_up=True)
    model.allocate(512, True)
    for _ in range(5):
        fl.free(address)
        model.free(address)
        assert fl._parked is not None
        assert fl.allocate(512, bottom_up=True) == model.allocate(512, True) == address
    assert fl.block_table() == model.block_table()
