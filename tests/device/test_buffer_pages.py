"""Page placement: interleaved round-robin over banks, HEIGHT/WIDTH/BLOCK shards over cores."""

from __future__ import annotations

import pytest

from meshnn.device.arch import SYSTEMS, system_spec
from meshnn.device.bank import DeviceAllocator
from meshnn.device.buffer import (
    Buffer,
    BufferLayout,
    BufferType,
    ShardOrientation,
    ShardSpec,
    ShardSpecBuffer,
    TensorMemoryLayout,
    shard_page_grid,
)
from meshnn.device.core import CoreCoord, CoreGrid, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnError, MeshnnValueError

GiB = 1 << 30


def test_interleaved_dram_pages_go_round_robin_with_channel_view_offsets():
    allocator = DeviceAllocator(SYSTEMS["n150"])
    layout = BufferLayout(size=30 * 2048, page_size=2048)
    address = allocator.allocate(layout)
    buffer = Buffer(layout, address, allocator.manager(BufferType.DRAM).facts)
    for page in range(30):
        where = buffer.page_location(page)
        bank = page % 12
        assert where.bank_id == bank
        assert where.address == address + (bank % 2) * GiB + 2048 * (page // 12)


def test_interleaved_l1_uses_the_l1_alignment_for_pages():
    allocator = DeviceAllocator(SYSTEMS["n150"])
    layout = BufferLayout(size=70 * 14, page_size=14, buffer_type=BufferType.L1)
    address = allocator.allocate(layout)
    buffer = Buffer(layout, address, allocator.manager(BufferType.L1).facts)
    assert buffer.aligned_page_size() == 16
    assert buffer.page_location(69).bank_id == 5 and buffer.page_location(69).address == address + 16


def sharded(memory_layout, grid, shard_shape, pages_2d, orientation=ShardOrientation.ROW_MAJOR):
    spec = ShardSpec(grid, shard_shape, orientation)
    shard = ShardSpecBuffer(spec, (32, 32), pages_2d)
    pages = pages_2d[0] * pages_2d[1]
    return BufferLayout(pages * 2048, 2048, BufferType.L1, memory_layout, shard)


def test_height_shards_are_contiguous_runs_and_the_last_is_partial():
    layout = sharded(TensorMemoryLayout.HEIGHT_SHARDED, CoreGrid(4, 1).to_core_range_set(), (64, 64), (7, 2))
    grid = shard_page_grid(layout)
    assert grid == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, -1, -1]]


def test_block_shards_walk_shard_columns_first_and_clip_edges():
    cores = CoreGrid(2, 2).to_core_range_set()
    layout = sharded(TensorMemoryLayout.BLOCK_SHARDED, cores, (64, 64), (3, 3))
    assert shard_page_grid(layout) == [[0, 1, 3, 4], [2, -1, 5, -1], [6, 7, -1, -1], [8, -1, -1, -1]]


def test_width_shards_and_their_cores_and_addresses():
    cores = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(1, 1))])
    layout = sharded(TensorMemoryLayout.WIDTH_SHARDED, cores, (64, 32), (2, 4), ShardOrientation.COL_MAJOR)
    allocator = DeviceAllocator(SYSTEMS["n150"])
    address = allocator.allocate(layout)
    buffer = Buffer(layout, address, allocator.manager(BufferType.L1).facts)
    # COL_MAJOR deals shards down the columns of the core grid: (0,0), (0,1), (1,0), (1,1)
    assert buffer.page_location(1).core == CoreCoord(0, 1)
    assert buffer.page_location(6).core == CoreCoord(1, 0) and buffer.page_location(6).address == address + 2048
    assert allocator.memory_view(BufferType.L1).total_bytes_allocated_per_bank == 2 * 2048


def test_more_shards_than_l1_banks_is_refused():
    layout = sharded(TensorMemoryLayout.HEIGHT_SHARDED, CoreGrid(8, 9).to_core_range_set(), (32, 32), (72, 1))
    with pytest.raises(MeshnnValueError, match="number of shards 72"):
        DeviceAllocator(SYSTEMS["n150"]).allocate(layout)
    assert DeviceAllocator(SYSTEMS["galaxy"]).allocate(layout) > 0  # galaxy has 8x9 = 72 L1 banks


def test_l1_small_takes_only_sharded_buffers():
    allocator = DeviceAllocator(SYSTEMS["n150"], l1_small_size=24576)
    with pytest.raises(MeshnnError, match="L1_SMALL only supports sharded allocations"):
        allocator.allocate(BufferLayout(2048, 2048, BufferType.L1_SMALL))
    layout = sharded(TensorMemoryLayout.HEIGHT_SHARDED, CoreGrid(2, 1).to_core_range_set(), (32, 32), (2, 1))
    layout = BufferLayout(layout.size, layout.page_size, BufferType.L1_SMALL, layout.memory_layout, layout.shard)
    assert allocator.allocate(layout) == 105_824 + 1_368_736 + 24576 - 2048


def test_bad_layouts_are_refused_before_any_allocation():
    with pytest.raises(MeshnnValueError, match="multiple of its page size"):
        BufferLayout(size=100, page_size=64)
    with pytest.raises(MeshnnValueError, match="needs a shard spec"):
        BufferLayout(2048, 2048, BufferType.L1, TensorMemoryLayout.HEIGHT_SHARDED)
    with pytest.raises(MeshnnValueError):
        CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(2, 2)), CoreRange(CoreCoord(2, 2), CoreCoord(3, 3))])


@pytest.mark.parametrize(
    ("name", "banks", "bank_size", "dram_base", "l1_banks", "l1_size"),
    [
        ("n150", 12, 1_072_693_184, 1_048_640, 64, 1_393_312),
        ("t3k", 12, 1_072_693_184, 1_048_640, 64, 1_393_312),
        ("galaxy", 12, 1_072_693_184, 1_048_640, 72, 1_393_312),
        ("p150", 8, 4_277_141_376, 1_048_704, 110, 1_461_120),
        ("p300", 8, 4_277_141_376, 1_048_704, 110, 1_461_120),
    ],
)
def test_system_figures(name, banks, bank_size, dram_base, l1_banks, l1_size):
    allocator = DeviceAllocator(SYSTEMS[name])
    dram, l1 = allocator.memory_view(BufferType.DRAM), allocator.memory_view(BufferType.L1)
    assert (dram.num_banks, dram.total_bytes_per_bank) == (banks, bank_size)
    assert allocator.base_address(BufferType.DRAM) == dram_base
    assert (l1.num_banks, l1.total_bytes_per_bank) == (l1_banks, l1_size)


def test_blackhole_l1_buffers_take_64_bytes_per_bank_at_least():
    allocator = DeviceAllocator(SYSTEMS["p150"])
    allocator.allocate(BufferLayout(110 * 16, 16, BufferType.L1))
    assert allocator.memory_view(BufferType.L1).total_bytes_allocated_per_bank == 64


def test_system_is_chosen_by_name_or_environment(monkeypatch):
    monkeypatch.delenv("MESHNN_SYSTEM", raising=False)
    assert system_spec().name == "t3k"
    monkeypatch.setenv("MESHNN_SYSTEM", "galaxy")
    assert system_spec().mesh_shape == (8, 4)
    assert system_spec("p150").arch_spec.num_dram_banks == 8
    with pytest.raises(MeshnnValueError, match="known systems: n150"):
        system_spec("dgx")


@pytest.mark.parametrize(
    ("memory_layout", "grid", "shard", "pages_2d"),
    [
        (TensorMemoryLayout.HEIGHT_SHARDED, (4, 1), (64, 64), (7, 2)),
        (TensorMemoryLayout.BLOCK_SHARDED, (2, 2), (64, 64), (3, 3)),
        (TensorMemoryLayout.WIDTH_SHARDED, (3, 1), (64, 64), (2, 5)),
    ],
)
def test_direct_page_positions_agree_with_the_shard_map(memory_layout, grid, shard, pages_2d):
    layout = sharded(memory_layout, CoreGrid(*grid).to_core_range_set(), shard, pages_2d)
    from meshnn.device.buffer import shard_position

    for core, pages in enumerate(shard_page_grid(layout)):
        for position, page in enumerate(pages):
            if page >= 0:
                assert shard_position(layout, page) == (core, position)
