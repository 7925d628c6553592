"""A BLOCK_SHARDED tensor whose shard grid has more cores than it has shards: tt-metal's tensor layout
deals its buffer GRID_2D (BufferDistributionSpec::compute_core_list), so the shards sit on the grid
cut to the shards' own columns x rows from the grid's start -- ROW_MAJOR: shard (r, c) on core
(start.x + c, start.y + r); COL_MAJOR: shard rows along x, shard (r, c) on core (start.x + r,
start.y + c) -- not dealt over the whole grid in its walking order.  Checked exactly: the core and
address of every page, the bytes of every page, the cores ``get_optimal_worker_cores_for_sharded_tensor``
names, and which shard a partial copy to one core writes."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.device.buffer import (
    BufferLayout,
    BufferType,
    ShardSpec,
    ShardSpecBuffer,
    TensorMemoryLayout,
    shard_page_grid,
)
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet

ROW, COL = ttnn.ShardOrientation.ROW_MAJOR, ttnn.ShardOrientation.COL_MAJOR
GRID = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(1, 1), ttnn.CoreCoord(4, 4))])  # 4x4 from (1, 1)


@pytest.fixture
def mesh():
    device = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield device
    ttnn.close_mesh_device(device)


def block_config(orientation: ttnn.ShardOrientation, grid=GRID) -> ttnn.MemoryConfig:
    spec = ttnn.ShardSpec(grid, (32, 32), orientation)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.BLOCK_SHARDED, ttnn.BufferType.L1, spec)


def expected_core(orientation: ttnn.ShardOrientation, r: int, c: int) -> CoreCoord:
    """Where tt-metal's GRID_2D puts shard (r, c) of a grid starting at (1, 1)."""
    return CoreCoord(1 + c, 1 + r) if orientation is ROW else CoreCoord(1 + r, 1 + c)


# shards of 32x32: 2 x 3 (ROW_MAJOR: 2 core rows x 3 core columns), 3 x 2 (COL_MAJOR: 3 core columns x 2 rows)
@pytest.mark.parametrize("orientation, shards", [(ROW, (2, 3)), (COL, (3, 2)), (ROW, (3, 1)), (COL, (1, 4))])
def test_every_page_lives_on_its_grid_2d_core_with_its_bytes(mesh, orientation, shards):
    rows, cols = shards
    values = np.arange(rows * cols * 1024, dtype=np.uint32).reshape(rows * 32, cols * 32)
    config = block_config(orientation)
    t = ttnn.from_torch(values, dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, memory_config=config)
    device_buffer = t.mesh_buffer().get_device_buffer(ttnn.MeshCoordinate(0, 0))
    data, page_bytes = device_buffer.data(), 32 * 4  # a page: one shard-wide row of 32 uint32
    assert device_buffer.page_size() == page_bytes and device_buffer.aligned_page_size() == page_bytes
    for page in range(rows * 32 * cols):
        row, c = divmod(page, cols)
        where = device_buffer.page_location(page)
        assert where.core == expected_core(orientation, row // 32, c)
        assert where.address == device_buffer.address() + page_bytes * (row % 32)  # its row inside the shard
        got = data[page * page_bytes : (page + 1) * page_bytes].view(np.uint32)
        assert np.array_equal(got, values[row, c * 32 : c * 32 + 32])
    dealt = [expected_core(orientation, r, c) for r in range(rows) for c in range(cols)]
    assert ttnn.get_optimal_worker_cores_for_sharded_tensor(t) == dealt
    assert np.array_equal(ttnn.to_torch(t).numpy().view(np.uint32), values)


@pytest.mark.parametrize("orientation", [ROW, COL])
def test_a_partial_copy_to_one_core_writes_the_shard_grid_2d_puts_there(mesh, orientation):
    shape = (64, 96) if orientation is ROW else (96, 64)
    config = block_config(orientation)
    values = np.arange(shape[0] * shape[1], dtype=np.uint32).reshape(shape) + 5
    dev = ttnn.allocate_tensor_on_device(ttnn.Shape(shape), ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT, mesh, config)
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(np.zeros(shape, np.uint32), dtype=ttnn.uint32), dev)
    core = ttnn.CoreCoord(1, 2)  # ROW_MAJOR: shard (1, 0); COL_MAJOR: shard (0, 1)
    only = ttnn.CoreRangeSet([ttnn.CoreRange(core, core)])
    ttnn.copy_host_to_device_tensor_partial(ttnn.from_torch(values, dtype=ttnn.uint32), dev, only)
    got = ttnn.to_torch(ttnn.from_device(dev)).numpy().view(np.uint32)
    r, c = (1, 0) if orientation is ROW else (0, 1)
    block = (slice(r * 32, r * 32 + 32), slice(c * 32, c * 32 + 32))
    assert np.array_equal(got[block], values[block])
    got[block] = 0
    assert not got.any()  # every other shard untouched


def test_shard_page_grid_deals_block_shards_over_the_trimmed_grid():
    grid = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(3, 3))])
    shard = ShardSpecBuffer(ShardSpec(grid, (32, 32), ttnn.ShardOrientation.ROW_MAJOR), (32, 32), (2, 3))
    layout = BufferLayout(6 * 2048, 2048, BufferType.L1, TensorMemoryLayout.BLOCK_SHARDED, shard)
    assert layout.shard.grid_2d and layout.num_shards == 6  # one core per shard, as tt-metal's num_cores
    assert layout.shard.dealt_cores() == tuple(CoreCoord(x, y) for y in range(2) for x in range(3))
    assert shard_page_grid(layout) == [[0], [1], [2], [3], [4], [5]]
    # a WIDTH_SHARDED buffer still deals ROUND_ROBIN_1D over the whole grid
    wide = BufferLayout(6 * 2048, 2048, BufferType.L1, TensorMemoryLayout.WIDTH_SHARDED, shard)
    assert not wide.shard.grid_2d and wide.shard.dealt_cores()[:2] == (CoreCoord(0, 0), CoreCoord(1, 0))


@pytest.mark.parametrize("orientation, shape", [(ROW, (32, 160)), (COL, (160, 32))])
def test_block_shards_grid_2d_cannot_place_keep_the_whole_grid_dealing(mesh, orientation, shape):
    """Five shards along one side of a 4x4 grid: tt-metal 2026 refuses them (compute_core_list), meshnn
    deals them over the whole grid in its walking order, as tt-metal's older legacy mapping did."""
    values = np.arange(shape[0] * shape[1], dtype=np.uint32).reshape(shape)
    config = block_config(orientation)
    t = ttnn.from_torch(values, dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=config)
    device_buffer = t.mesh_buffer().get_device_buffer(ttnn.MeshCoordinate(0, 0))
    walk = GRID.cores(row_wise=orientation is ROW)
    assert [device_buffer.page_location(p).core for p in range(5)] == walk[:5]
    assert np.array_equal(ttnn.to_torch(t).numpy().view(np.uint32), values)
