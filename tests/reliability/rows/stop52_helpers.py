"""Bad calls of stop 52's host-side names: the batch-sharded DRAM matmul program config and the
DRAM group norm's grid helper (``e.mesh``: the environment's mesh, whose compute grid the helper reads)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case

BATCHED = "MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig"
GRID = "determine_expected_group_norm_dram_grid_size"


def _grid(e, channels=64, groups=2, nhw=64, batches=1):
    return ttnn.determine_expected_group_norm_dram_grid_size(
        device=e.mesh, num_channels=channels, num_groups=groups, input_nhw=nhw, num_batches=batches
    )


def rows() -> list[Case]:
    config = ttnn.MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig
    return [
        Case(
            BATCHED, "in0_block_w 0", lambda e: config(in0_block_w=0, per_core_M=1, per_core_N=1), VALUE, "in0_block_w"
        ),
        Case(
            BATCHED,
            "per_core_N a float",
            lambda e: config(in0_block_w=1, per_core_M=1, per_core_N=2.0),
            TYPE,
            "per_core_N",
        ),
        Case(
            GRID,
            "groups that do not divide the channels",
            lambda e: _grid(e, channels=96, groups=5),
            VALUE,
            "num_groups",
        ),
        Case(GRID, "channels not whole tiles", lambda e: _grid(e, channels=48, groups=2), VALUE, "num_channels"),
        Case(GRID, "no batches", lambda e: _grid(e, batches=0), VALUE, "num_batches"),
        Case(GRID, "input_nhw a string", lambda e: _grid(e, nhw="64"), TYPE, "input_nhw"),
    ]
