"""Bad calls of the normalisations (issue 35): the softmax family and its program configs,
group_norm (its grid, groups, layouts, weights and masks) and batch_norm."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case

GRID = ttnn.CoreGrid(y=1, x=1)


def _sharded_config(**fields):
    return ttnn.SoftmaxShardedMultiCoreProgramConfig(
        **{"compute_with_storage_grid_size": (1, 1), "subblock_w": 1, "block_h": 1, "block_w": 1, **fields}
    )


def rows() -> list[Case]:
    return helper_rows() + softmax_rows()


def softmax_rows() -> list[Case]:
    """The softmax family, the norm configs, group_norm and batch_norm."""
    return [
        Case("softmax", "dim past the rank", lambda e: ttnn.softmax(e.a, 3), VALUE, "dim"),
        Case(
            "softmax", "numeric_stable is an int", lambda e: ttnn.softmax(e.a, numeric_stable=1), TYPE, "numeric_stable"
        ),
        Case("softmax", "an int input", lambda e: ttnn.softmax(e.ids), TYPE, "input_tensor"),
        Case("softmax_in_place", "a rank-3 input", lambda e: ttnn.softmax_in_place(e.a), VALUE, "4D"),
        Case(
            "softmax_in_place",
            "program_config of layer norm",
            lambda e: ttnn.softmax_in_place(e.heads, program_config=ttnn.LayerNormDefaultProgramConfig()),
            TYPE,
            "program_config",
        ),
        Case(
            "softmax_in_place",
            "a sharded config on an interleaved input",
            lambda e: ttnn.softmax_in_place(e.heads, program_config=_sharded_config()),
            VALUE,
            "sharded",
        ),
        Case("scale_mask_softmax", "scale without a mask", lambda e: ttnn.scale_mask_softmax(e.a, 0.5), VALUE, "mask"),
        Case(
            "scale_mask_softmax",
            "mask of another width",
            lambda e: ttnn.scale_mask_softmax(e.a, 1.0, e.b),
            VALUE,
            "mask",
        ),
        Case(
            "scale_mask_softmax_in_place",
            "scale is a string",
            lambda e: ttnn.scale_mask_softmax_in_place(e.heads, "2", e.heads),
            TYPE,
            "scale",
        ),
        Case(
            "scale_causal_mask_hw_dims_softmax_in_place",
            "the default program config",
            lambda e: ttnn.scale_causal_mask_hw_dims_softmax_in_place(e.heads),
            VALUE,
            "program config",
        ),
        Case(
            "SoftmaxShardedMultiCoreProgramConfig",
            "block_h zero",
            lambda e: _sharded_config(block_h=0),
            VALUE,
            "block_h",
        ),
        Case(
            "LayerNormDistributedDefaultProgramConfig",
            "legacy_rsqrt is an int",
            lambda e: ttnn.LayerNormDistributedDefaultProgramConfig(legacy_rsqrt=1),
            TYPE,
            "legacy_rsqrt",
        ),
        Case(
            "rms_norm_post_all_gather",
            "distributed_program_config of softmax",
            lambda e: ttnn.rms_norm_post_all_gather(
                e.a, e.ln_stats, distributed_program_config=ttnn.SoftmaxDefaultProgramConfig()
            ),
            TYPE,
            "distributed_program_config",
        ),
        Case(
            "group_norm",
            "core_grid is a tuple",
            lambda e: ttnn.group_norm(e.heads, num_groups=2, inplace=False, core_grid=(8, 8)),
            TYPE,
            "core_grid",
        ),
        Case(
            "group_norm",
            "TILE input in place",
            lambda e: ttnn.group_norm(e.heads, num_groups=2, core_grid=GRID),
            VALUE,
            "inplace",
        ),
        Case(
            "group_norm",
            "num_groups zero",
            lambda e: ttnn.group_norm(e.heads, num_groups=0, core_grid=GRID, inplace=False),
            VALUE,
            "num_groups",
        ),
        Case(
            "group_norm",
            "num_groups is a float",
            lambda e: ttnn.group_norm(e.heads, num_groups=2.0, core_grid=GRID, inplace=False),
            TYPE,
            "num_groups",
        ),
        Case(
            "group_norm",
            "shape[1] is not 1",
            lambda e: ttnn.group_norm(e.heads, num_groups=2, core_grid=GRID, inplace=False),
            VALUE,
            "N, 1, H",
        ),
        Case("batch_norm", "a rank-3 input", lambda e: ttnn.batch_norm(e.a), VALUE, "rank 4"),
        Case("batch_norm", "evaluation without statistics", lambda e: ttnn.batch_norm(e.heads), VALUE, "running_mean"),
        Case(
            "batch_norm",
            "running_mean of rank 3",
            lambda e: ttnn.batch_norm(e.heads, running_mean=e.a_bf16, running_var=e.heads),
            VALUE,
            "running_mean",
        ),
        Case("batch_norm", "eps is a string", lambda e: ttnn.batch_norm(e.heads, eps="1e-5"), TYPE, "eps"),
    ]


def helper_rows() -> list[Case]:
    """ttnn's group norm host helpers."""
    import torch

    block = ttnn.TensorMemoryLayout.BLOCK_SHARDED
    return [
        Case(
            "create_group_norm_input_mask",
            "groups do not divide C",
            lambda e: ttnn.create_group_norm_input_mask(320, 33, 1),
            VALUE,
            "num_groups",
        ),
        Case(
            "create_group_norm_input_negative_mask",
            "cores do not divide groups",
            lambda e: ttnn.create_group_norm_input_negative_mask(320, 32, 3),
            VALUE,
            "num_cores_across_channel",
        ),
        Case(
            "create_group_norm_weight_bias_rm",
            "cores do not divide C",
            lambda e: ttnn.create_group_norm_weight_bias_rm(torch.ones(30), 30, 4),
            VALUE,
            "num_cores_x",
        ),
        Case(
            "create_group_norm_reciprocals",
            "core_grid is a string",
            lambda e: ttnn.create_group_norm_reciprocals(1, 320, 8, 8, 32, "8x8"),
            TYPE,
            "core_grid",
        ),
        Case(
            "determine_expected_group_norm_sharded_config_and_grid_size",
            "C not whole tiles",
            lambda e: ttnn.determine_expected_group_norm_sharded_config_and_grid_size(
                device=e.mesh, num_channels=30, num_groups=3, input_nhw=64, is_height_sharded=True
            ),
            VALUE,
            "num_channels",
        ),
        Case(
            "dram_group_norm_params_from_torch",
            "neither grid nor device",
            lambda e: ttnn.dram_group_norm_params_from_torch(torch.ones(32), 32, 4, None),
            VALUE,
            "core_grid",
        ),
        Case(
            "dram_group_norm_virtual_columns",
            "core_grid is a tuple",
            lambda e: ttnn.dram_group_norm_virtual_columns((8, 8), 320, 32),
            TYPE,
            "core_grid",
        ),
        Case(
            "find_closest_largest_divisor",
            "start_divisor zero",
            lambda e: ttnn.find_closest_largest_divisor(10, 0),
            VALUE,
            "start_divisor",
        ),
        Case(
            "find_max_tile_span", "group_size zero", lambda e: ttnn.find_max_tile_span(64, 0, 32), VALUE, "group_size"
        ),
        Case(
            "get_group_norm_cores_across_channel",
            "core_grid is a string",
            lambda e: ttnn.get_group_norm_cores_across_channel(block, "g"),
            TYPE,
            "core_grid",
        ),
    ]
