"""N-D sharded buffers: shards dealt to cores, pages placed inside each shard, and what a bank
reserves; the figures are tt-metal's own buffer-distribution expectations (2026-06)."""

from __future__ import annotations

import pytest

from meshnn.device.arch import SYSTEMS
from meshnn.device.bank import DeviceAllocator
from meshnn.device.buffer import Buffer, BufferLayout, BufferType, ShardOrientation, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.device.nd_shard import (
    NdShardSpec,
    NdShardSpecBuffer,
    ShardDistributionStrategy,
    shape_in_pages,
    squeeze_shape_ranks,
)
from meshnn.errors import MeshnnTypeError, MeshnnValueError

PADDING = -1


def grid(x0: int, y0: int, x1: int, y1: int) -> CoreRangeSet:
    return CoreRangeSet([CoreRange(CoreCoord(x0, y0), CoreCoord(x1, y1))])


def distribution(tensor, shard, page, cores, orientation=ShardOrientation.ROW_MAJOR, **kw) -> NdShardSpecBuffer:
    spec = NdShardSpec(shard, cores, orientation, **kw)
    return NdShardSpecBuffer(spec, page, shape_in_pages(tensor, page))


def test_tile_shards_over_batch_and_width_deal_round_robin_with_partial_edge_shards():
    d = distribution((2, 64, 96), (1, 32, 64), (32, 32), grid(0, 0, 3, 3))
    assert d.core_pages()[:8] == [
        [0, 1],
        [2, PADDING],
        [3, 4],
        [5, PADDING],
        [6, 7],
        [8, PADDING],
        [9, 10],
        [11, PADDING],
    ]
    assert all(row == [PADDING, PADDING] for row in d.core_pages()[8:])
    assert d.num_shards == 8 and d.num_cores == 8 and d.pages_per_core == 2


def test_row_major_width_shards_pad_their_height():
    d = distribution((2, 3, 32), (2, 4, 16), (1, 16), grid(0, 0, 3, 3))
    assert d.core_pages()[:2] == [[0, 2, 4, PADDING, 6, 8, 10, PADDING], [1, 3, 5, PADDING, 7, 9, 11, PADDING]]


def test_more_shards_than_cores_stack_on_each_core_and_each_bank_reserves_the_most():
    multi = CoreRangeSet({CoreRange(CoreCoord(0, 0), CoreCoord(2, 0)), CoreRange(CoreCoord(0, 1), CoreCoord(1, 1))})
    d = distribution((5, 2, 64, 96), (2, 1, 64, 64), (32, 32), multi)
    assert d.dealt_cores() == tuple(CoreCoord(x, y) for x, y in [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1)])
    assert (d.num_shards, d.shard_volume, d.num_cores, d.pages_per_core) == (12, 8, 5, 24)
    assert d.position(0) == (0, 0)
    assert d.position(12) == (0, 4)  # batch 1 is still in shard 0 (2 batches a shard): its second half
    assert d.position(24) == (4, 0)  # batch 2 opens shard 4 (the batch pair 1 of 3, row 0, column 0)
    assert d.position(59) == (1, 2 * 8 + 2)  # the last page: shard 11, core 1's third shard


def test_col_major_deals_down_the_columns_first():
    d = distribution((2, 3, 4, 5, 6, 128), (3, 1, 5, 4, 2, 128), (1, 128), grid(0, 0, 1, 1), ShardOrientation.COL_MAJOR)
    assert d.dealt_cores() == (CoreCoord(0, 0), CoreCoord(0, 1), CoreCoord(1, 0), CoreCoord(1, 1))
    assert (d.num_shards, d.shard_volume, d.pages_per_core) == (18, 120, 600)


def test_only_cores_holding_a_shard_count_as_banks():
    d = distribution((5, 2, 64, 96), (5, 2, 32, 32), (32, 32), grid(0, 0, 3, 3))
    assert (d.num_shards, d.num_cores, d.pages_per_core) == (6, 6, 10)


def test_squeezing_merges_spanned_dims_and_folds_leading_ones():
    assert squeeze_shape_ranks((2, 3, 4, 5), (1, 3, 4, 5)) == ((120,), (60,))  # 60 contiguous pages a shard
    assert squeeze_shape_ranks((8, 8, 8, 8), (4, 4)) == ((512, 8), (4, 4))
    with pytest.raises(MeshnnValueError, match="can't be less than"):
        squeeze_shape_ranks((4,), (2, 2))


def test_every_page_lands_once_and_positions_agree_with_the_table():
    d = distribution((7, 67, 96), (3, 32, 64), (32, 32), grid(0, 0, 1, 2), ShardOrientation.COL_MAJOR)
    table = d.core_pages()
    placed = sorted(p for row in table for p in row if p != PADDING)
    assert placed == list(range(7 * 3 * 3))
    for page in (0, 5, 17, 62):
        core, where = d.position(page)
        assert table[core][where] == page


def test_grid_2d_trims_the_grid_to_the_shards_and_refuses_what_does_not_fit():
    strategy_2d = ShardDistributionStrategy.GRID_2D
    d = distribution((96, 96), (32, 64), (32, 32), grid(1, 1, 4, 4), shard_distribution_strategy=strategy_2d)
    assert d.dealt_cores() == tuple(CoreCoord(x, y) for y in (1, 2, 3) for x in (1, 2))
    with pytest.raises(MeshnnValueError, match="do not fit"):
        distribution((96, 96), (32, 32), (32, 32), grid(0, 0, 1, 1), shard_distribution_strategy=strategy_2d)
    with pytest.raises(MeshnnValueError, match="only supported for 2D"):
        distribution((2, 96, 96), (1, 32, 32), (32, 32), grid(0, 0, 3, 3), shard_distribution_strategy=strategy_2d)


def test_a_bank_reserves_the_most_shards_a_core_holds_and_pages_sit_in_their_shards():
    allocator = DeviceAllocator(SYSTEMS["n150"])
    d = distribution((5, 2, 64, 96), (2, 1, 64, 64), (32, 32), grid(0, 0, 4, 0))
    layout = BufferLayout(120 * 2048, 2048, BufferType.L1, TensorMemoryLayout.ND_SHARDED, d)
    manager = allocator.manager(BufferType.L1)
    assert manager.footprint(layout) == (5, 24 * 2048)
    address = allocator.allocate(layout)
    buffer = Buffer(layout, address, manager.facts)
    where = buffer.page_location(12)
    assert where.core == CoreCoord(0, 0) and where.address == address + 4 * 2048


def test_nd_shard_spec_checks_its_arguments():
    with pytest.raises(MeshnnValueError):
        NdShardSpec((0, 32), grid(0, 0, 0, 0))
    with pytest.raises(MeshnnTypeError):
        NdShardSpec((32, 32), CoreRange(CoreCoord(0, 0), CoreCoord(0, 0)))
    with pytest.raises(MeshnnTypeError):
        NdShardSpec((32, 32), grid(0, 0, 0, 0), shard_distribution_strategy=0)
    spec = NdShardSpec([2, 32], grid(0, 0, 1, 0))
    assert spec.shard_shape == (2, 32) and spec.num_cores() == 2
    assert spec.orientation is ShardOrientation.ROW_MAJOR
    assert spec.shard_distribution_strategy is ShardDistributionStrategy.ROUND_ROBIN_1D
