"""``ttnn.TensorSpec``'s three constructors and its sharding methods, as tt-metal's TensorSpec makes
them (expected shard shapes worked out by hand from its rules: one shard a core for height / width,
a block a core for block sharding, the last dims rounded up to the tile, or for row-major to 64 bytes
when ttnn recommends)."""

from __future__ import annotations

import pytest

import meshnn as ttnn

F32, TILE, RM, L1 = ttnn.float32, ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT, ttnn.BufferType.L1
GRID = ttnn.num_cores_to_corerangeset(56, [8, 7], True)  # 8 columns by 7 rows
SHAPE = (2, 3, 40, 50)  # physical (2 * 3 * 64, 64) = (384, 64) in float32 tiles


def test_the_three_constructors():
    box = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1))])
    plain = ttnn.TensorSpec((2, 3, 10, 20), F32, TILE, buffer_type=L1)
    assert plain.memory_config == ttnn.MemoryConfig(ttnn.TensorMemoryLayout.INTERLEAVED, L1)
    legacy = ttnn.TensorSpec(
        (2, 3, 10, 20), F32, TILE, ttnn.TensorMemoryLayout.BLOCK_SHARDED,
        ttnn.ShardSpec(GRID, [32, 32], ttnn.ShardOrientation.ROW_MAJOR), buffer_type=L1,
    )  # fmt: skip
    assert legacy.memory_config.memory_layout is ttnn.TensorMemoryLayout.BLOCK_SHARDED
    assert (legacy.memory_config.shard_spec.shape, legacy.memory_config.buffer_type) == ((32, 32), L1)
    nd = ttnn.TensorSpec((2, 3, 40, 50), F32, TILE, ttnn.NdShardSpec([1, 1, 32, 32], box), buffer_type=L1)
    assert tuple(nd.memory_config.nd_shard_spec.shard_shape) == (1, 1, 32, 32)
    named = ttnn.ShardSpec(box, shard_shape=[32, 64], shard_orientation=ttnn.ShardOrientation.ROW_MAJOR)
    by_name = ttnn.TensorSpec(
        (128, 64), F32, TILE, memory_layout=ttnn.TensorMemoryLayout.HEIGHT_SHARDED, shard_spec=named, buffer_type=L1
    )
    assert by_name.memory_config.memory_layout is ttnn.TensorMemoryLayout.HEIGHT_SHARDED


def test_constructor_mistakes_are_named():
    with pytest.raises(ttnn.MeshnnTypeError, match="multiple values for argument 'buffer_type'"):
        ttnn.TensorSpec((32, 32), F32, TILE, L1, buffer_type=L1)
    with pytest.raises(ttnn.MeshnnTypeError, match="unexpected keyword"):
        ttnn.TensorSpec((32, 32), F32, TILE, ttnn.NdShardSpec([32, 32], GRID), memory_config=ttnn.L1_MEMORY_CONFIG)
    with pytest.raises(ttnn.MeshnnTypeError, match="shard_shape or shape"):
        ttnn.ShardSpec(GRID, [32, 32], shape=[32, 32])


@pytest.mark.parametrize(
    "method, layout, shard, strategy",
    [
        ("height_sharded", ttnn.TensorMemoryLayout.HEIGHT_SHARDED, (32, 64), "ROUND_ROBIN_1D"),  # 384/56 -> 7 -> 32
        ("width_sharded", ttnn.TensorMemoryLayout.WIDTH_SHARDED, (384, 32), "ROUND_ROBIN_1D"),  # 64/56 -> 2 -> 32
        ("block_sharded", ttnn.TensorMemoryLayout.BLOCK_SHARDED, (64, 32), "GRID_2D"),  # 384/7 -> 55 -> 64; 64/8
    ],
)
def test_two_d_sharding_methods(method, layout, shard, strategy):
    spec = getattr(ttnn.TensorSpec(SHAPE, F32, TILE, buffer_type=L1), method)(GRID)
    config = spec.memory_config
    assert tuple(config.nd_shard_spec.shard_shape) == shard
    assert config.nd_shard_spec.shard_distribution_strategy is getattr(ttnn.ShardDistributionStrategy, strategy)
    assert (config.memory_layout, config.shard_spec.shape, config.buffer_type) == (layout, shard, L1)


def test_sharded_rounds_the_shard_as_its_alignment_says():
    tiled = ttnn.TensorSpec(SHAPE, F32, TILE, buffer_type=L1)
    assert tuple(tiled.sharded((1, 37, 37), GRID).memory_config.nd_shard_spec.shard_shape) == (1, 64, 64)
    rows = ttnn.TensorSpec(SHAPE, ttnn.bfloat16, RM).sharded((1, 37, 37), GRID)  # 64 B = 32 bfloat16 columns
    assert tuple(rows.memory_config.nd_shard_spec.shard_shape) == (1, 37, 64)
    assert rows.memory_config.buffer_type is ttnn.BufferType.DRAM  # the spec's own buffer type
    required = ttnn.TensorSpec(SHAPE, ttnn.bfloat16, RM).sharded((1, 37, 37), GRID, ttnn.ShardShapeAlignment.REQUIRED)
    assert tuple(required.memory_config.nd_shard_spec.shard_shape) == (1, 37, 37)
    with pytest.raises(ttnn.MeshnnValueError, match="tile"):
        tiled.sharded((1, 37, 37), GRID, ttnn.ShardShapeAlignment.NONE)
    given = tiled.sharded(ttnn.NdShardSpec([1, 32, 32], GRID), ttnn.ShardShapeAlignment.NONE)
    assert tuple(given.memory_config.nd_shard_spec.shard_shape) == (1, 32, 32)
