"""The norms' host helpers of tt-metal 2026: the default compute configs ``layer_norm`` and
``rms_norm`` run with (tt-metal's ``layernorm.cpp`` / ``rmsnorm.cpp``), the program config a norm
derives from a shard spec (``layernorm_common.cpp``) and the two enums, with tt-metal's numbers."""

from __future__ import annotations

import meshnn as ttnn


def test_default_compute_configs_are_tt_metals():
    ln = ttnn.layernorm_default_compute_config(ttnn.Arch.WORMHOLE_B0)
    assert isinstance(ln, ttnn.WormholeComputeKernelConfig)
    assert (ln.math_fidelity, ln.math_approx_mode, ln.fp32_dest_acc_en) == (ttnn.MathFidelity.HiFi4, False, True)
    rms = ttnn.rmsnorm_default_compute_config(ttnn.Arch.BLACKHOLE)
    assert isinstance(rms, ttnn.BlackholeComputeKernelConfig)
    assert (rms.math_fidelity, rms.math_approx_mode, rms.fp32_dest_acc_en) == (ttnn.MathFidelity.HiFi4, True, False)


def test_program_config_from_a_shard_spec_spans_its_bounding_box():
    grid = ttnn.CoreRangeSet(
        [
            ttnn.CoreRange(ttnn.CoreCoord(1, 0), ttnn.CoreCoord(4, 0)),
            ttnn.CoreRange(ttnn.CoreCoord(2, 1), ttnn.CoreCoord(3, 2)),
        ]
    )
    spec = ttnn.ShardSpec(grid, (64, 128), ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.create_layernorm_program_config(spec)
    assert isinstance(config, ttnn.LayerNormShardedMultiCoreProgramConfig)
    assert (config.compute_with_storage_grid_size.x, config.compute_with_storage_grid_size.y) == (4, 3)
    assert (config.subblock_w, config.block_h, config.block_w, config.inplace) == (1, 2, 4, False)
    tiny = ttnn.create_layernorm_program_config(spec, tile_height=16, tile_width=32)
    assert (tiny.block_h, tiny.block_w) == (4, 4)
    assert ttnn.create_layernorm_program_config() == ttnn.LayerNormDefaultProgramConfig()


def test_the_enums_carry_tt_metals_members_in_order():
    assert [m.name for m in ttnn.LayerNormType] == ["LAYERNORM", "RMSNORM"]
    assert [m.name for m in ttnn.DistributedLayerNormStage] == ["NOT_DISTRIBUTED", "PRE_ALL_GATHER", "POST_ALL_GATHER"]
