"""The sharded group norm program's model (meshnn.perf.group_norm): its per-core blocks as tt-metal's
sharded program factory sizes them, what each part of the program adds, and a captured
``ttnn.group_norm`` timed by it with a positive time."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.group_norm import is_sharded_group_norm, max_tile_span, sharded_geometry

BS = dict(buffer=BufferType.L1, memory=MemoryLayout.BLOCK_SHARDED)


def desc(rows: int, channels: int, *, negative: bool = False, layout: Layout = Layout.ROW_MAJOR) -> OpDesc:
    x = TensorDesc((1, 1, rows, channels), layout=layout, **BS)
    mask = TensorDesc((1, 32, 32, 32 * max_tile_span(channels // 8, channels // 32)), "BFLOAT8_B")
    inputs = (x, mask, mask) if negative else (x, mask)
    return OpDesc(OpFamily.NORM, inputs, (x,), op_code="GroupNormDeviceOperation", core_grid=(8, 8))


def kernel_us(d: OpDesc) -> float:
    return predict(d, "n300", mesh_shape=(1, 1), traced=True).kernel_ns / 1e3


@pytest.mark.parametrize(
    ("channels", "group", "span"),
    [(240, 60, 3), (80, 20, 2), (64, 32, 1), (40, 10, 2), (96, 48, 2), (320, 10, 2)],
)
def test_max_tile_span_counts_the_tiles_a_group_touches(channels, group, span):
    assert max_tile_span(channels, group) == span


def test_sdxl_shapes_take_the_factory_blocks():
    geo = sharded_geometry(desc(1024, 1920))
    assert (geo.shard_rows, geo.shard_channels, geo.groups_per_core) == (128, 240, 4)
    assert (geo.block_ht, geo.block_wt, geo.gather_cores) == (4, 3, 8)
    assert geo.repack and geo.tilize_in and geo.untilize_out and not geo.negative_mask
    geo = sharded_geometry(desc(16384, 640, negative=True))
    assert (geo.block_ht, geo.block_wt, geo.negative_mask) == (64, 2, True)


def test_each_part_of_the_program_adds_time():
    plain = kernel_us(desc(1024, 1920))
    assert kernel_us(desc(1024, 1920, negative=True)) > plain  # two more passes a group
    assert kernel_us(desc(2048, 1920)) > plain  # taller blocks
    tiled = kernel_us(desc(1024, 1920, layout=Layout.TILE))  # no tilize, untilize or repack
    assert 0 < tiled < plain
    one_row = OpDesc(OpFamily.NORM, (TensorDesc((1, 1, 1024, 1920), **BS),), (TensorDesc((1, 1, 1024, 1920), **BS),),
                     op_code="GroupNormDeviceOperation", core_grid=(8, 1))  # fmt: skip
    assert sharded_geometry(one_row).gather_cores == 1  # the rows on one core: no gathers


def test_interleaved_group_norm_is_not_the_sharded_program():
    x = TensorDesc((1, 1, 1024, 256))
    assert not is_sharded_group_norm(OpDesc(OpFamily.NORM, (x,), (x,), op_code="GroupNormDeviceOperation"))


def test_a_captured_sharded_group_norm_is_timed_by_the_program_model():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    try:
        grid = ttnn.CoreGrid(y=8, x=8)
        values = np.random.default_rng(0).random((1, 1, 1024, 640)).astype(np.float32)
        memory = ttnn.create_sharded_memory_config(shape=values.shape, core_grid=grid,
                                                   strategy=ttnn.ShardStrategy.BLOCK,
                                                   orientation=ttnn.ShardOrientation.ROW_MAJOR)  # fmt: skip
        x = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, memory_config=memory,
                            device=mesh)  # fmt: skip
        mask = ttnn.to_device(ttnn.create_group_norm_input_mask(640, 32, 8, ttnn.bfloat8_b), mesh)
        with ttnn.perf_capture() as capture:
            ttnn.group_norm(x, num_groups=32, input_mask=mask, memory_config=memory, core_grid=grid)
        (record,) = capture.recorder(mesh).records
        assert is_sharded_group_norm(record.desc)
        assert any("sharded group_norm" in n for n in record.prediction.notes)
        assert record.prediction.kernel_ns > 0
    finally:
        ttnn.close_mesh_device(mesh)


def test_a_core_holding_several_images_normalises_each_images_groups():
    x = TensorDesc((8, 1, 1024, 320), **BS)
    several = OpDesc(OpFamily.NORM, (x,), (x,), op_code="GroupNormDeviceOperation", core_grid=(4, 4))
    geo = sharded_geometry(several)
    assert (geo.batches_per_core, geo.groups_per_core, geo.block_ht, geo.gather_cores) == (2, 8, 32, 1)
    note = predict(several, "n150", traced=True).notes[0]
    assert "16 groups a core" in note and "0 cross-core gathers" in note


def _dram(rows: int, channels: int, *, welford: bool = True, gamma: bool = True) -> OpDesc:
    x = TensorDesc((1, 1, rows, channels))
    weights = (TensorDesc((1, 1, channels // 32, 32), layout=Layout.ROW_MAJOR),) * (2 if gamma else 0)
    attributes = (("num_groups", "32"), ("use_welford", str(welford)))
    return OpDesc(OpFamily.NORM, (x, *weights), (x,), op_code="GroupNorm", core_grid=(8, 8), attributes=attributes)


def test_the_dram_welford_program_splits_channels_then_rows():
    from meshnn.perf.group_norm_dram import dram_geometry, is_dram_welford_group_norm

    geo = dram_geometry(_dram(65536, 256))
    assert (geo.cores, geo.width_tiles, geo.row_cores, geo.groups, geo.channels_per_group) == (64, 1, 8, 4, 8)
    assert geo.tiles == 256 and geo.gamma and geo.beta
    wide = dram_geometry(_dram(4096, 640))  # 640 over 8, 7, 6 or 5 columns is not whole tiles dividing 32 groups
    assert (wide.width_tiles, wide.row_cores, wide.groups, wide.cores) == (5, 16, 8, 64)
    assert is_dram_welford_group_norm(_dram(4096, 256)) and not is_dram_welford_group_norm(
        _dram(4096, 256, welford=False)
    )


def test_the_dram_welford_program_reads_twice_and_normalises_each_tile():
    plain = kernel_us(_dram(65536, 256, gamma=False))
    assert kernel_us(_dram(65536, 256)) > plain > kernel_us(_dram(32768, 256, gamma=False)) > 0
    note = predict(_dram(65536, 256), "n300", mesh_shape=(1, 1), traced=True).notes[0]
    assert "read twice" in note
