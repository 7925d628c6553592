"""``MemoryConfig(buffer_type, nd_shard_spec)`` and N-D sharded tensors: the two config forms and
their equality, the 2-D layout a tensor's spec fills in when one deals the same pages, page shapes
and alignment, ttnn's refusals, and device round trips whose bytes sit where tt-metal puts them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.tensor.spec import TensorSpec


def grid(x1: int, y1: int) -> ttnn.CoreRangeSet:
    return ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(x1, y1))})


def nd_config(shard, cores=None, buffer_type=ttnn.BufferType.L1, **kw) -> ttnn.MemoryConfig:
    return ttnn.MemoryConfig(buffer_type, ttnn.NdShardSpec(shard, cores or grid(1, 1), **kw))


def test_the_nd_form_is_nd_sharded_and_compares_by_its_nd_spec():
    config = nd_config([2, 64, 64])
    assert config.memory_layout is TensorMemoryLayout.ND_SHARDED and config.is_sharded()
    assert config.shard_spec is None and config.nd_shard_spec.shard_shape == (2, 64, 64)
    assert config == ttnn.MemoryConfig(
        buffer_type=ttnn.BufferType.L1, nd_shard_spec=ttnn.NdShardSpec([2, 64, 64], grid(1, 1))
    )
    assert config != nd_config([2, 64, 32]) and hash(config) == hash(nd_config([2, 64, 64]))
    assert "created_with_nd_shard_spec=1" in repr(config)
    assert ttnn.MemoryConfig(ttnn.BufferType.L1).memory_layout is TensorMemoryLayout.INTERLEAVED


def test_a_2d_config_reports_its_own_nd_spec_block_dealt_as_a_grid():
    spec = ttnn.ShardSpec(grid(1, 1), [64, 64], ttnn.ShardOrientation.ROW_MAJOR)
    block = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.BLOCK_SHARDED, ttnn.BufferType.L1, spec)
    assert block.nd_shard_spec.shard_shape == (64, 64)
    assert block.nd_shard_spec.shard_distribution_strategy is ttnn.ShardDistributionStrategy.GRID_2D
    assert ttnn.DRAM_MEMORY_CONFIG.nd_shard_spec is None
    assert repr(ttnn.L1_MEMORY_CONFIG).endswith("shard_spec=std::nullopt)")


def test_bad_nd_forms_are_refused():
    with pytest.raises(MeshnnTypeError):
        ttnn.MemoryConfig(ttnn.BufferType.L1, ttnn.ShardSpec(grid(0, 0), [32, 32], ttnn.ShardOrientation.ROW_MAJOR))
    with pytest.raises(MeshnnValueError, match="as MemoryConfig"):
        ttnn.MemoryConfig(
            ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, nd_shard_spec=nd_config([32]).nd_shard_spec
        )
    with pytest.raises(MeshnnValueError, match="needs an nd_shard_spec"):
        ttnn.MemoryConfig(ttnn.TensorMemoryLayout.ND_SHARDED, ttnn.BufferType.L1)


@pytest.mark.parametrize(
    "shape, shard, layout, expect",
    [
        ([4, 128, 64], [1, 128, 64], TensorMemoryLayout.HEIGHT_SHARDED, (128, 64)),
        ([2, 64, 128], [2, 64, 32], TensorMemoryLayout.WIDTH_SHARDED, (128, 32)),
        ([4, 64, 128], [2, 64, 64], TensorMemoryLayout.BLOCK_SHARDED, (128, 64)),
        ([3, 160, 160], [2, 64, 64], TensorMemoryLayout.ND_SHARDED, None),  # clipped shards: no 2-D form
        ([8, 64, 64], [1, 64, 64], TensorMemoryLayout.ND_SHARDED, None),  # 8 shards over 4 cores
    ],
)
def test_a_tensor_spec_fills_in_the_2d_layout_that_deals_the_same_pages(shape, shard, layout, expect):
    spec = TensorSpec(shape, ttnn.bfloat16, ttnn.TILE_LAYOUT, memory_config=nd_config(shard))
    config = spec.memory_config
    assert config.memory_layout is layout
    assert (config.shard_spec.shape if config.shard_spec else None) == expect
    assert config.nd_shard_spec.shard_shape == tuple(shard) and config.created_with_nd_shard_spec


def test_row_major_nd_pages_are_shard_rows_and_the_width_pads_to_the_shard_width():
    spec = TensorSpec([3, 160, 160], ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT, memory_config=nd_config([2, 64, 64]))
    assert spec.page_shape == (1, 64) and spec.padded_shape == [3, 160, 192]
    layout = spec.buffer_layout()
    assert layout.shard.num_shards == 2 * 3 * 3 and layout.shard.pages_per_core == 5 * (2 * 64 * 1)


def test_tile_nd_shards_must_be_whole_tiles_and_fit_the_rank():
    with pytest.raises(MeshnnValueError, match="must be tile"):
        TensorSpec([64, 64, 64], ttnn.bfloat16, ttnn.TILE_LAYOUT, memory_config=nd_config([16, 16, 16]))
    with pytest.raises(MeshnnValueError, match="can't be less than"):
        TensorSpec([64], ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT, memory_config=nd_config([1, 1, 64]))


def test_tensor_spec_takes_ttnns_nd_form_and_shards_across_dims():
    nd = ttnn.NdShardSpec([1, 32, 32], grid(1, 0))
    spec = TensorSpec([2, 64, 64], ttnn.float32, ttnn.TILE_LAYOUT, nd, ttnn.BufferType.L1)
    assert spec.memory_config.buffer_type is ttnn.BufferType.L1 and spec.memory_config.nd_shard_spec == nd
    assert TensorSpec([2, 64, 64], ttnn.float32, ttnn.TILE_LAYOUT, nd_shard_spec=nd).memory_config.buffer_type is (
        ttnn.BufferType.DRAM
    )
    across = TensorSpec([2, 3, 64, 100], ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT).sharded_across_dims([0, 1], grid(1, 1))
    assert across.memory_config.nd_shard_spec.shard_shape == (1, 1, 64, 128)  # 100 bf16 -> 64-byte multiples
    kept = TensorSpec([2, 3, 64, 64], ttnn.bfloat16, ttnn.TILE_LAYOUT).sharded_across_dims_except([-1], grid(1, 1))
    assert kept.memory_config.nd_shard_spec.shard_shape == (1, 1, 32, 64)


@pytest.mark.parametrize("layout", [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT])
@pytest.mark.parametrize("orientation", [ttnn.ShardOrientation.ROW_MAJOR, ttnn.ShardOrientation.COL_MAJOR])
def test_nd_sharded_tensors_round_trip_and_fill(open_mesh, layout, orientation):
    mesh = open_mesh((1, 1))
    config = nd_config([3, 32, 64], grid(1, 2), orientation=orientation)
    values = torch.randint(-100, 100, (7, 67, 77), dtype=torch.int32)
    tensor = ttnn.from_torch(values, layout=layout, device=mesh, memory_config=config)
    assert tensor.memory_config().nd_shard_spec == config.nd_shard_spec
    assert torch.equal(ttnn.to_torch(tensor), values)
    filled = ttnn.full([7, 67, 77], 3, dtype=ttnn.int32, layout=layout, device=mesh, memory_config=config)
    assert torch.equal(ttnn.to_torch(filled), torch.full((7, 67, 77), 3, dtype=torch.int32))


def test_an_nd_sharded_buffer_holds_each_tile_where_tt_metal_puts_it(open_mesh):
    mesh = open_mesh((1, 1))
    config = nd_config([1, 32, 64], grid(1, 0))  # 2 cores; shards (batch, tile row, tile-column pair)
    values = np.arange(2 * 64 * 96, dtype=np.float32).reshape(2, 64, 96)
    tensor = ttnn.from_torch(torch.from_numpy(values), layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=config)
    buffer = tensor.mesh_buffer().get_reference_buffer()
    page = 1 * 6 + 1 * 3 + 2  # batch 1, tile row 1, tile column 2: shard (1, 1, 1) = 7, core 1's 4th
    where = buffer.page_location(page)
    assert where.core == ttnn.CoreCoord(1, 0)
    assert where.address == buffer.address() + buffer.aligned_page_size() * (3 * 2 + 0)
