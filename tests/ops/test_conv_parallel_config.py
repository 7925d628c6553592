"""``ttnn.SlidingWindowParallelConfig`` and ``create_sharded_memory_config_from_parallel_config``
(reached as ``ttnn._ttnn.operations.conv``'s, as tt-metal's tests call it): the shard of an
``[1, 1, N*H*W, C]`` tensor under HEIGHT, WIDTH and BLOCK configs, by tt-metal's conv2d rules."""

from __future__ import annotations

import pytest

import meshnn as ttnn
from meshnn.compat import ttnn_alias

HEIGHT, WIDTH, BLOCK = (ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.TensorMemoryLayout.WIDTH_SHARDED,
                        ttnn.TensorMemoryLayout.BLOCK_SHARDED)  # fmt: skip
ROW, COL = ttnn.ShardOrientation.ROW_MAJOR, ttnn.ShardOrientation.COL_MAJOR


def grid(x: int, y: int) -> ttnn.CoreRangeSet:
    return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(x - 1, y - 1))])


def make(shape, scheme, orientation, cores, tile=32):
    ttnn_module = ttnn_alias.alias_module()  # what `import ttnn` gives, without installing it
    config = ttnn.SlidingWindowParallelConfig(grid=cores, shard_scheme=scheme, shard_orientation=orientation)
    return ttnn_module._ttnn.operations.conv.create_sharded_memory_config_from_parallel_config(shape, config, tile)


@pytest.mark.parametrize(
    ("shape", "scheme", "orientation", "cores", "tile", "shard"),
    [
        ((1, 1, 2 * 128 * 300, 64), HEIGHT, ROW, grid(8, 2), 32, (4800, 64)),  # 76,800 rows: 16 x 32 whole
        ((1, 1, 1000, 64), HEIGHT, ROW, grid(7, 1), 32, (160, 64)),  # 1000 -> 1120 = 7 x 160
        ((1, 1, 1000, 64), HEIGHT, ROW, grid(7, 1), 1, (143, 64)),  # row-major: padded to 7 x 1 only
        ((1, 1, 100, 256), WIDTH, ROW, grid(8, 1), 32, (100, 32)),  # no row padding for WIDTH
        ((1, 1, 1024, 256), BLOCK, ROW, grid(4, 2), 32, (512, 64)),  # rows on y, channels on x
        ((1, 1, 1024, 256), BLOCK, COL, grid(4, 2), 32, (256, 128)),  # rows on x, channels on y
    ],
)
def test_the_shard_of_a_parallel_config(shape, scheme, orientation, cores, tile, shard):
    got = make(shape, scheme, orientation, cores, tile)
    assert got.memory_layout is scheme and got.buffer_type is ttnn.BufferType.L1
    assert tuple(got.shard_spec.shape) == shard and got.shard_spec.orientation is orientation


def test_bad_configs_are_refused_by_name():
    with pytest.raises(ttnn.MeshnnTypeError, match="grid"):
        ttnn.SlidingWindowParallelConfig(grid=ttnn.CoreGrid(x=2, y=2), shard_scheme=HEIGHT, shard_orientation=ROW)
    with pytest.raises(ttnn.MeshnnValueError, match="shard_scheme"):
        ttnn.SlidingWindowParallelConfig(
            grid=grid(2, 2), shard_scheme=ttnn.TensorMemoryLayout.INTERLEAVED, shard_orientation=ROW
        )
    with pytest.raises(ttnn.MeshnnValueError, match="Channels: 100, num core channels: 8"):
        make((1, 1, 64, 100), WIDTH, ROW, grid(8, 1))
    with pytest.raises(ttnn.MeshnnValueError, match=r"\[1, 1, N\*H\*W, C\]"):
        make((2, 1, 64, 64), HEIGHT, ROW, grid(8, 1))
