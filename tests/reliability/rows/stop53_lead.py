"""Bad calls of what the lead changed in stop 53: ``experimental.all_gather_async``'s 2026
``use_broadcast``, ``experimental.all_reduce_async`` on a tensor populating some of the devices, and
the norms' host helpers (``create_layernorm_program_config``, the default compute configs)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    ag, ar = ttnn.experimental.all_gather_async, ttnn.experimental.all_reduce_async
    lnpc, grid = (
        ttnn.create_layernorm_program_config,
        ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1))]),
    )
    core = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))])
    over = ttnn.OverlappedTensor
    return [
        Case(
            "OverlappedTensor",
            "a dtype's name",
            lambda e: over(e.a, [32, 32], [32, 32], core, "bf16", [32, 32]),
            TYPE,
            "dtype",
        ),
        Case(
            "OverlappedTensor",
            "a host list as the fused tensor",
            lambda e: over([0], [32, 32], [32, 32], core, ttnn.bfloat16, [32, 32]),
            TYPE,
            "fused_tensor",
        ),
        Case(
            "create_layernorm_program_config", "a tuple for a shard spec", lambda e: lnpc((64, 64)), TYPE, "shard_spec"
        ),
        Case(
            "create_layernorm_program_config",
            "a zero tile height",
            lambda e: lnpc(ttnn.ShardSpec(grid, (64, 64), ttnn.ShardOrientation.ROW_MAJOR), tile_height=0),
            VALUE,
            "tile_height",
        ),
        Case(
            "layernorm_default_compute_config",
            "an arch's name",
            lambda e: ttnn.layernorm_default_compute_config("wormhole_b0"),
            TYPE,
            "arch",
        ),
        Case(
            "rmsnorm_default_compute_config",
            "an arch's name",
            lambda e: ttnn.rmsnorm_default_compute_config(None),
            TYPE,
            "arch",
        ),
        Case(
            "experimental.all_gather_async",
            "use_broadcast a string",
            lambda e: ag(e.a, None, 2, e.sems[:2], use_broadcast="yes"),
            TYPE,
            "use_broadcast",
        ),
        Case(
            "experimental.all_reduce_async",
            "num_devices not the populated devices",
            lambda e: ar(e.a, 3, e.sems[:2], e.sems[:3], e.sems[:2], ttnn.ReduceType.Sum),
            VALUE,
            "num_devices 3",
        ),
    ]
