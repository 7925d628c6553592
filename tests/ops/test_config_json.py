"""ttnn's JSON form of the matmul program configs: ``to_json`` / ``from_json`` (tt-metal's
``models/common/tensor_utils.program_config_to_dict`` reads it)."""

from __future__ import annotations

import json

import pytest

import meshnn as ttnn
from meshnn.errors import MeshnnTypeError, MeshnnValueError


def _one_d() -> ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig:
    cores = ttnn.CoreRangeSet(
        [ttnn.CoreRange(ttnn.CoreCoord(2, 0), ttnn.CoreCoord(3, 1)), ttnn.CoreRange((0, 0), (1, 1))]
    )
    return ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=ttnn.CoreCoord(8, 4),
        in0_block_w=2,
        out_subblock_h=1,
        out_subblock_w=2,
        per_core_M=1,
        per_core_N=4,
        fuse_batch=True,
        fused_activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.GELU, 1.0),
        mcast_in0=True,
        hop_cores=cores,
    )


def test_the_dram_sharded_config_is_its_members_sorted_compact():
    cfg = ttnn.MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig(in0_block_w=4, per_core_M=1, per_core_N=2)
    assert cfg.to_json() == '{"fused_activation":null,"in0_block_w":4,"per_core_M":1,"per_core_N":2}'


def test_coords_ranges_and_the_activation_take_ttnns_forms():
    members = json.loads(_one_d().to_json())
    assert members["compute_with_storage_grid_size"] == {"x": 8, "y": 4}
    assert members["hop_cores"] == [
        {"start": {"x": 2, "y": 0}, "end": {"x": 3, "y": 1}},
        {"start": {"x": 0, "y": 0}, "end": {"x": 1, "y": 1}},
    ]
    assert members["fused_activation"] == {"op_type": 2, "params": [1.0]}  # GELU: ttnn's third UnaryOpType
    assert members["allowed_worker_cores"] is None and members["out_block_w"] == 4 and members["fuse_batch"] is True


@pytest.mark.parametrize(
    "cfg",
    [
        _one_d(),
        ttnn.MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig(
            in0_block_w=2, per_core_M=1, per_core_N=3, fused_activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU)
        ),
        ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(
            compute_with_storage_grid_size=(8, 8),
            in0_block_w=1,
            out_subblock_h=1,
            out_subblock_w=1,
            per_core_M=2,
            per_core_N=2,
            transpose_mcast=True,
        ),
        ttnn.MatmulMultiCoreReuseProgramConfig(
            compute_with_storage_grid_size=(4, 4),
            in0_block_w=1,
            out_subblock_h=1,
            out_subblock_w=1,
            per_core_M=1,
            per_core_N=1,
        ),
    ],
    ids=["1d", "dram_sharded", "2d", "reuse"],
)
def test_from_json_gives_the_same_config_back(cfg):
    assert type(cfg).from_json(cfg.to_json()) == cfg


@pytest.mark.parametrize(
    ("text", "error", "match"),
    [
        (b"{}", MeshnnTypeError, "takes a JSON string"),
        ("{", MeshnnValueError, "not JSON"),
        ('{"in0_block_w":4,"per_core_M":1,"per_core_N":2,"tile":1}', MeshnnValueError, "an object of the members"),
        (
            '{"in0_block_w":4,"per_core_M":1,"per_core_N":2,"fused_activation":7}',
            MeshnnValueError,
            "fused_activation is",
        ),
    ],
)
def test_from_json_refuses_what_is_not_the_form(text, error, match):
    with pytest.raises(error, match=match):
        ttnn.MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig.from_json(text)
