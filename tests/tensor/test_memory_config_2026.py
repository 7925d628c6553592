"""tt-metal 2026's memory-config helpers DeepSeek-V3 uses: ``ttnn.create_sharded_memory_config_``
(shards that need not divide the tensor) and ``MemoryConfig.to_json`` / ``from_json`` (tt-metal's
reflection form: enums as integers, keys sorted, compact), with the core and shard objects' own."""

from __future__ import annotations

import json

import pytest

import meshnn as ttnn

ROW, COL = ttnn.ShardOrientation.ROW_MAJOR, ttnn.ShardOrientation.COL_MAJOR


def grid(x0, y0, x1, y1):
    return ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(x0, y0), ttnn.CoreCoord(x1, y1))})


@pytest.mark.parametrize(
    "shape, core_grid, strategy, orientation, tile, layout, shard",
    [
        # DeepSeek's MLP: 7168 over 56 cores (7x8) WIDTH: 128 columns a core
        ((1, 1, 32, 7168), grid(0, 0, 6, 7), ttnn.ShardStrategy.WIDTH, ROW, True, "WIDTH_SHARDED", (32, 128)),
        # 100 rows over 8 cores: ceil, no padding without tile_layout
        ((1, 1, 100, 64), ttnn.CoreGrid(y=2, x=4), ttnn.ShardStrategy.HEIGHT, ROW, False, "HEIGHT_SHARDED", (13, 64)),
        # with tile_layout the height is first rounded to a multiple of the cores (104 / 8)
        ((1, 1, 100, 64), ttnn.CoreGrid(y=2, x=4), ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ROW, True,
         "HEIGHT_SHARDED", (13, 64)),
        # BLOCK: 100 rows padded to 4 x 32 = 128, 32 a grid row; 7168 / 8 columns
        ((1, 1, 100, 7168), ttnn.CoreGrid(y=4, x=8), ttnn.ShardStrategy.BLOCK, ROW, True, "BLOCK_SHARDED", (32, 896)),
        # COL_MAJOR block: rows over x, columns over y
        ((2, 48, 100), ttnn.CoreGrid(y=2, x=3), ttnn.ShardStrategy.BLOCK, COL, False, "BLOCK_SHARDED", (32, 50)),
        # the shard shape given as the last two dims (swapped for COL_MAJOR)
        ((5, 64, 96), grid(0, 0, 1, 1), ttnn.ShardStrategy.HEIGHT, COL, False, "HEIGHT_SHARDED", (96, 64)),
    ],
)  # fmt: skip
def test_create_sharded_memory_config_underscore(shape, core_grid, strategy, orientation, tile, layout, shard):
    use_hw = shape == (5, 64, 96)
    config = ttnn.create_sharded_memory_config_(
        shape, core_grid, strategy, orientation, use_height_and_width_as_shard_shape=use_hw, tile_layout=tile
    )
    assert config.memory_layout == getattr(ttnn.TensorMemoryLayout, layout)
    assert config.buffer_type == ttnn.BufferType.L1
    assert tuple(config.shard_spec.shape) == shard and config.shard_spec.orientation == orientation


def test_create_sharded_memory_config_underscore_two_grids_and_refusals():
    config = ttnn.create_sharded_memory_config_(
        (1, 1, 100, 64), [ttnn.CoreGrid(y=2, x=8), ttnn.CoreGrid(y=1, x=3)], ttnn.ShardStrategy.HEIGHT, ROW
    )
    assert config.shard_spec.grid.num_cores() == 19 and tuple(config.shard_spec.shape) == (6, 64)
    make = ttnn.create_sharded_memory_config_
    with pytest.raises(ttnn.MeshnnTypeError, match="orientation"):
        make((32, 64), ttnn.CoreGrid(y=1, x=2), ttnn.ShardStrategy.WIDTH, None)  # required, as ttnn's
    with pytest.raises(ttnn.MeshnnTypeError, match="strategy"):
        make((32, 64), ttnn.CoreGrid(y=1, x=2), "WIDTH", ROW)
    with pytest.raises(ttnn.MeshnnValueError, match="HEIGHT, WIDTH or BLOCK"):
        make((32, 64), ttnn.CoreGrid(y=1, x=2), ttnn.TensorMemoryLayout.INTERLEAVED, ROW)
    l_shape = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0)),
                                 ttnn.CoreRange(ttnn.CoreCoord(0, 1), ttnn.CoreCoord(0, 1))})  # fmt: skip
    with pytest.raises(ttnn.MeshnnValueError, match="rectangular"):
        make((64, 64), l_shape, ttnn.ShardStrategy.BLOCK, ROW)
    with pytest.raises(ttnn.MeshnnValueError, match="multiple of the tile"):
        make((1, 40), ttnn.CoreGrid(y=1, x=2), ttnn.ShardStrategy.WIDTH, ROW, tile_layout=True)  # (1, 20)


def test_memory_config_json_is_tt_metals_form():
    assert ttnn.DRAM_MEMORY_CONFIG.to_json() == '{"buffer_type":0,"created_with_nd_shard_spec":false,"memory_layout":0}'
    assert json.loads(ttnn.L1_MEMORY_CONFIG.to_json()) == {
        "buffer_type": 1, "created_with_nd_shard_spec": False, "memory_layout": 0}  # fmt: skip
    sharded = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1,
                                ttnn.ShardSpec(grid(0, 0, 7, 3), (32, 224), COL))  # fmt: skip
    assert sharded.to_json() == (
        '{"buffer_type":1,"created_with_nd_shard_spec":false,"memory_layout":3,"shard_spec":'
        '{"grid":[{"end":{"x":7,"y":3},"start":{"x":0,"y":0}}],"orientation":1,"shape":[32,224]}}'
    )
    nd = ttnn.MemoryConfig(ttnn.BufferType.L1, ttnn.NdShardSpec(ttnn.Shape([1, 32, 128]), grid(2, 0, 2, 5), ROW,
                                                                ttnn.ShardDistributionStrategy.GRID_2D))  # fmt: skip
    assert json.loads(nd.to_json()) == {
        "buffer_type": 1, "created_with_nd_shard_spec": True, "memory_layout": 5,
        "nd_shard_spec": {"grid": [{"start": {"x": 2, "y": 0}, "end": {"x": 2, "y": 5}}], "orientation": 0,
                          "shard_distribution_strategy": 1, "shard_shape": [1, 32, 128]},
    }  # fmt: skip
    for config in (ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG, sharded, nd):
        back = ttnn.MemoryConfig.from_json(config.to_json())
        assert back == config and back.created_with_nd_shard_spec == config.created_with_nd_shard_spec


def test_core_and_shard_objects_json_round_trip():
    spec = ttnn.ShardSpec(grid(0, 0, 1, 2), (64, 32), ROW)
    ranges = [{"start": {"x": 0, "y": 0}, "end": {"x": 1, "y": 2}}]
    assert json.loads(spec.to_json()) == {"grid": ranges, "shape": [64, 32], "orientation": 0}
    assert ttnn.ShardSpec.from_json(spec.to_json()) == spec
    assert ttnn.CoreCoord.from_json(ttnn.CoreCoord(3, 4).to_json()) == ttnn.CoreCoord(3, 4)
    assert ttnn.CoreRangeSet.from_json(grid(0, 0, 2, 2).to_json()) == grid(0, 0, 2, 2)
    nd = ttnn.NdShardSpec([2, 32, 64], grid(0, 0, 3, 0))
    assert ttnn.NdShardSpec.from_json(nd.to_json()) == nd


@pytest.mark.parametrize(
    "text, error, message",
    [
        ("not json", ttnn.MeshnnValueError, "not JSON"),
        ('{"buffer_type":0,"memory_layout":0}', ttnn.MeshnnValueError, "created_with_nd_shard_spec"),
        ('{"buffer_type":9,"created_with_nd_shard_spec":false,"memory_layout":0}', ttnn.MeshnnValueError, "BufferType"),
        ('{"buffer_type":1,"created_with_nd_shard_spec":true,"memory_layout":5}', ttnn.MeshnnValueError,
         "nd_shard_spec"),
        ('{"buffer_type":1,"created_with_nd_shard_spec":false,"memory_layout":2,"shard_spec":{"grid":[],'
         '"orientation":0,"shape":[32]}}', ttnn.MeshnnValueError, "height, width"),
        (7, ttnn.MeshnnTypeError, "JSON string"),
    ],
)  # fmt: skip
def test_memory_config_from_json_refuses_malformed_text(text, error, message):
    with pytest.raises(error, match=message):
        ttnn.MemoryConfig.from_json(text)
