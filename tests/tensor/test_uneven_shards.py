"""ttnn.create_sharded_memory_config_: shard shapes worked out by hand from ttnn's rules (the height
padded before it is cut under tile_layout, the pair of grids, the layouts given as
TensorMemoryLayout), and its refusals."""

from __future__ import annotations

import pytest

import meshnn as ttnn

ROW, COL = ttnn.ShardOrientation.ROW_MAJOR, ttnn.ShardOrientation.COL_MAJOR


def _rect(x0: int, y0: int, x1: int, y1: int) -> ttnn.CoreRange:
    return ttnn.CoreRange(ttnn.CoreCoord(x0, y0), ttnn.CoreCoord(x1, y1))


@pytest.mark.parametrize(
    ("shape", "grid", "strategy", "orientation", "tile_layout", "shard"),
    [
        # ResNet-50's first block: 56 * 56 rows over 8 x 7 = 56 cores, 56 rows each
        ([1, 1, 3136, 64], ttnn.CoreGrid(x=8, y=7), ttnn.ShardStrategy.HEIGHT, ROW, True, (56, 64)),
        # 100 rows over 12 cores: 9 each (the last short); tile_layout pads 100 to 108 first: still 9
        ([1, 1, 100, 64], ttnn.CoreGrid(x=4, y=3), ttnn.ShardStrategy.HEIGHT, ROW, False, (9, 64)),
        ([1, 1, 100, 64], ttnn.CoreGrid(x=4, y=3), ttnn.ShardStrategy.HEIGHT, ROW, True, (9, 64)),
        # WIDTH: 1000 columns over 8 cores
        ([2, 32, 1000], ttnn.CoreGrid(x=8, y=1), ttnn.TensorMemoryLayout.WIDTH_SHARDED, ROW, False, (64, 125)),
        # BLOCK, ROW_MAJOR: 200 rows padded to 2 rows x 32 = 256 under tile_layout, 128 a core row
        ([1, 1, 200, 256], ttnn.CoreGrid(x=4, y=2), ttnn.ShardStrategy.BLOCK, ROW, True, (128, 64)),
        ([1, 1, 200, 256], ttnn.CoreGrid(x=4, y=2), ttnn.ShardStrategy.BLOCK, ROW, False, (100, 64)),
        # BLOCK, COL_MAJOR: the grid's x counts the height's parts (200 -> 4 x 32 = 256: 64 each)
        ([1, 1, 200, 256], ttnn.CoreGrid(x=4, y=2), ttnn.ShardStrategy.BLOCK, COL, True, (64, 128)),
    ],
)
def test_shard_shapes(shape, grid, strategy, orientation, tile_layout, shard):
    config = ttnn.create_sharded_memory_config_(shape, grid, strategy, orientation, tile_layout=tile_layout)
    layout = strategy if isinstance(strategy, ttnn.TensorMemoryLayout) else None
    assert tuple(config.shard_spec.shape) == shard
    assert config.buffer_type == ttnn.BufferType.L1 and config.shard_spec.orientation == orientation
    assert layout is None or config.memory_layout == layout


def test_the_layout_of_each_strategy():
    grid = ttnn.CoreGrid(x=2, y=2)
    layouts = {
        ttnn.ShardStrategy.HEIGHT: ttnn.TensorMemoryLayout.HEIGHT_SHARDED,
        ttnn.ShardStrategy.WIDTH: ttnn.TensorMemoryLayout.WIDTH_SHARDED,
        ttnn.ShardStrategy.BLOCK: ttnn.TensorMemoryLayout.BLOCK_SHARDED,
    }
    for strategy, layout in layouts.items():
        assert ttnn.create_sharded_memory_config_([64, 64], grid, strategy, ROW).memory_layout == layout


def test_a_pair_of_grids_is_a_rectangle_and_a_partial_row_under_it():
    config = ttnn.create_sharded_memory_config_(
        [1, 1, 100, 256], (ttnn.CoreGrid(x=8, y=7), ttnn.CoreGrid(x=2, y=1)), ttnn.ShardStrategy.HEIGHT, ROW
    )
    assert config.shard_spec.grid == ttnn.CoreRangeSet([_rect(0, 0, 7, 6), _rect(0, 7, 1, 7)])
    assert tuple(config.shard_spec.shape) == (2, 256)  # 100 rows over 58 cores


def test_height_and_width_as_the_shard_shape_swap_for_col_major():
    grid = ttnn.CoreRangeSet([_rect(0, 0, 3, 0)])
    row = ttnn.create_sharded_memory_config_([1, 32, 96], grid, ttnn.ShardStrategy.WIDTH, ROW, True)
    col = ttnn.create_sharded_memory_config_([1, 32, 96], grid, ttnn.ShardStrategy.WIDTH, COL, True)
    assert tuple(row.shard_spec.shape) == (32, 96) and tuple(col.shard_spec.shape) == (96, 32)
    assert row.shard_spec.grid == grid


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: ttnn.create_sharded_memory_config_(5, ttnn.CoreGrid(x=1, y=1), ttnn.ShardStrategy.HEIGHT, ROW),
         ttnn.MeshnnTypeError, "shape"),
        (lambda: ttnn.create_sharded_memory_config_([32, 32], ttnn.CoreGrid(x=1, y=1), ttnn.ShardStrategy.HEIGHT, None),
         ttnn.MeshnnTypeError, "orientation"),
        (lambda: ttnn.create_sharded_memory_config_([32, 32], "8x8", ttnn.ShardStrategy.HEIGHT, ROW),
         ttnn.MeshnnTypeError, "core_grid"),
        (lambda: ttnn.create_sharded_memory_config_(
            [32, 32], [ttnn.CoreGrid(x=1, y=1)], ttnn.ShardStrategy.HEIGHT, ROW),
         ttnn.MeshnnTypeError, "two CoreGrids"),
        (lambda: ttnn.create_sharded_memory_config_([32, 32], ttnn.CoreGrid(x=1, y=1), "height", ROW),
         ttnn.MeshnnTypeError, "strategy"),
        (lambda: ttnn.create_sharded_memory_config_(
            [32, 32], ttnn.CoreGrid(x=1, y=1), ttnn.TensorMemoryLayout.INTERLEAVED, ROW), ttnn.MeshnnValueError,
         "INTERLEAVED"),
        (lambda: ttnn.create_sharded_memory_config_(
            [64, 64], (ttnn.CoreGrid(x=2, y=1), ttnn.CoreGrid(x=1, y=1)), ttnn.ShardStrategy.BLOCK, ROW),
         ttnn.MeshnnValueError, "rectangular grid"),
        # tile_layout: 40 rows over 4 cores -> (10, 40): no side of whole tiles
        (lambda: ttnn.create_sharded_memory_config_(
            [40, 40], ttnn.CoreGrid(x=4, y=1), ttnn.ShardStrategy.HEIGHT, ROW, tile_layout=True),
         ttnn.MeshnnValueError, "multiple of the tile's 32"),
    ],
)  # fmt: skip
def test_refusals_name_the_argument(call, error, words):
    with pytest.raises(error, match=words) as caught:
        call()
    assert isinstance(caught.value, RuntimeError)  # ttnn raises RuntimeError for each


def test_get_conv_output_dim_is_at_the_root():
    assert ttnn.get_conv_output_dim(64, 3, 2, 1) == 32
    assert ttnn.get_conv_output_dim(7, 3, 1, 0, dilation=2) == 3
