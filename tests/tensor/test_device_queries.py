"""Where a device puts things: the allocator's base addresses (as ttnn maps buffer types to memory
types) and the optimal worker cores of a sharded tensor (tt-metal's cores with data: ROUND_ROBIN_1D
for height / width / ND sharding, the trimmed grid for block sharding, a DRAM bank's optimal worker)."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn

C, R = ttnn.CoreCoord, ttnn.CoreRange


def grid(*boxes):
    return ttnn.CoreRangeSet({R(C(*a), C(*b)) for a, b in boxes})


def put(mesh, shape, layout, buffer_type, spec):
    config = ttnn.MemoryConfig(layout, buffer_type, spec)
    values = np.ones(shape, np.float32)
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=config)


def test_the_allocator_base_addresses(open_mesh):
    mesh = open_mesh((1, 1))
    l1 = ttnn.get_allocator_base_address(mesh, ttnn.BufferType.L1)
    assert l1 == mesh.allocator.arch.l1_unreserved_base
    assert ttnn.get_allocator_base_address(mesh, ttnn.BufferType.DRAM) == mesh.allocator.arch.dram_unreserved_base
    assert ttnn.get_allocator_base_address(mesh, ttnn.BufferType.L1_SMALL) == l1  # ttnn maps it to L1
    assert ttnn.get_allocator_base_address(mesh, ttnn.BufferType.TRACE) == l1  # and TRACE too


@pytest.mark.parametrize("orientation", [ttnn.ShardOrientation.ROW_MAJOR, ttnn.ShardOrientation.COL_MAJOR])
def test_height_sharding_deals_round_robin_and_keeps_the_cores_with_data(open_mesh, orientation):
    mesh = open_mesh((1, 1))
    spec = ttnn.ShardSpec(grid(((0, 0), (3, 1))), (32, 64), orientation)  # 8 cores, 3 shards
    x = put(mesh, (1, 1, 96, 64), ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)
    row_major = orientation is ttnn.ShardOrientation.ROW_MAJOR
    want = [C(0, 0), C(1, 0), C(2, 0)] if row_major else [C(0, 0), C(0, 1), C(1, 0)]
    assert ttnn.get_optimal_worker_cores_for_sharded_tensor(x) == want


def test_block_sharding_trims_the_grid_to_the_shards(open_mesh):
    mesh = open_mesh((1, 1))
    spec = ttnn.ShardSpec(grid(((0, 0), (3, 3))), (32, 32), ttnn.ShardOrientation.COL_MAJOR)
    x = put(mesh, (1, 1, 64, 96), ttnn.TensorMemoryLayout.BLOCK_SHARDED, ttnn.BufferType.L1, spec)
    # 2 shard rows x 3 shard columns; COL_MAJOR swaps them: a 2-wide, 3-high grid, walked by columns
    want = [C(0, 0), C(0, 1), C(0, 2), C(1, 0), C(1, 1), C(1, 2)]
    assert ttnn.get_optimal_worker_cores_for_sharded_tensor(x) == want


def test_nd_sharding_keeps_the_first_cores_of_its_dealing(open_mesh):
    mesh = open_mesh((1, 1))
    nd = ttnn.NdShardSpec([1, 1, 32, 32], grid(((0, 0), (7, 0))), ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.MemoryConfig(ttnn.BufferType.L1, nd)
    values = np.ones((1, 2, 32, 64), np.float32)
    x = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=config)
    assert ttnn.get_optimal_worker_cores_for_sharded_tensor(x) == [C(i, 0) for i in range(4)]


def test_dram_sharding_gives_each_bank_its_optimal_worker(open_mesh):
    mesh = open_mesh((1, 1))
    spec = ttnn.ShardSpec(grid(((0, 0), (1, 0)), ((4, 0), (5, 0))), (32, 64), ttnn.ShardOrientation.ROW_MAJOR)
    x = put(mesh, (1, 1, 96, 64), ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.DRAM, spec)
    for noc in (ttnn.NOC.NOC_0, ttnn.NOC.NOC_1):
        workers = mesh.get_optimal_dram_bank_to_logical_worker_assignment(noc)
        got = ttnn.get_optimal_worker_cores_for_sharded_tensor(x, noc)
        assert got == [workers[0], workers[1], workers[4]]
