"""Bad calls of the tt-metal 2026 names DeepSeek-V3's tests use (stop 49): the post-combine tilize,
the fused MoE reduce, ``create_sharded_memory_config_`` and ``MemoryConfig.from_json``."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import L1_MC, TYPE, VALUE, Case


def rows() -> list[Case]:
    ex = ttnn.experimental
    tilize = ex.deepseek_moe_post_combine_tilize
    fused = ex.deepseek_moe_fast_reduce_nc_fused
    nd = ttnn.MemoryConfig(ttnn.BufferType.L1, ttnn.NdShardSpec([32, 32], ttnn.CoreRangeSet(
        [ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))])))  # fmt: skip
    make = ttnn.create_sharded_memory_config_
    grid = ttnn.CoreGrid(y=1, x=2)
    return [
        Case("experimental.deepseek_moe_post_combine_tilize", "a float32 input",
             lambda e: tilize(e.rm, output_memory_config=nd), VALUE, "bfloat16"),
        Case("experimental.deepseek_moe_post_combine_tilize", "a TILE input",
             lambda e: tilize(e.a_bf16, output_memory_config=nd), VALUE, "ROW_MAJOR"),
        Case("experimental.deepseek_moe_post_combine_tilize", "an interleaved output",
             lambda e: tilize(e.nhwc, output_memory_config=L1_MC), VALUE, "sharded"),
        Case("experimental.deepseek_moe_post_combine_tilize", "a str output config",
             lambda e: tilize(e.rm, output_memory_config="L1"), TYPE, "output_memory_config"),
        Case("experimental.deepseek_moe_fast_reduce_nc_fused", "cluster_axis 2",
             lambda e: fused(e.a, e.ids, e.ids, 0, split_size=40, cluster_axis=2, scores_tensor=e.rm), VALUE,
             "cluster_axis"),
        Case("experimental.deepseek_moe_fast_reduce_nc_fused", "a float32 input",
             lambda e: fused(e.a, e.ids, e.ids, 0, split_size=40, cluster_axis=0, scores_tensor=e.rm), VALUE,
             "bfloat16 or bfloat8_b"),
        Case("experimental.deepseek_moe_fast_reduce_nc_fused", "a str split",
             lambda e: fused(e.a, e.ids, e.ids, 0, split_size="40", cluster_axis=0, scores_tensor=e.rm), TYPE,
             "split_size"),
        Case("experimental.deepseek_moe_fast_reduce_nc_fused", "scores on the host",
             lambda e: fused(e.a, e.ids, e.ids, 0, split_size=40, cluster_axis=0, scores_tensor=e.host), VALUE,
             "scores_tensor"),
        Case("create_sharded_memory_config_", "no orientation",
             lambda e: make((32, 64), grid, ttnn.ShardStrategy.WIDTH, None), TYPE, "orientation"),
        Case("create_sharded_memory_config_", "an interleaved strategy",
             lambda e: make((32, 64), grid, ttnn.TensorMemoryLayout.INTERLEAVED, ttnn.ShardOrientation.ROW_MAJOR),
             VALUE, "strategy"),
        Case("create_sharded_memory_config_", "a grid list of one",
             lambda e: make((32, 64), [grid], ttnn.ShardStrategy.WIDTH, ttnn.ShardOrientation.ROW_MAJOR), TYPE,
             "core_grid"),
        Case("MemoryConfig.from_json", "not JSON", lambda e: ttnn.MemoryConfig.from_json("{"), VALUE, "JSON"),
        Case("MemoryConfig.from_json", "an unknown layout",
             lambda e: ttnn.MemoryConfig.from_json(
                 '{"buffer_type":0,"created_with_nd_shard_spec":false,"memory_layout":1}'), VALUE, "memory_layout"),
    ]  # fmt: skip
