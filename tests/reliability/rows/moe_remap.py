"""Bad calls of ``ttnn.moe_expert_token_remap``.  ``e.remap`` holds (topk [1, 2, 2, 16] bfloat16,
metadata [1, 2, 2, 2] uint16) per device of ``e.mesh`` (2x4), ROW_MAJOR; ``e.moe[2]`` is the
[1, 1, 16, 8] uint16 expert mapping."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def remap_tensors(mesh: ttnn.MeshDevice) -> tuple[ttnn.Tensor, ttnn.Tensor]:
    """The table environment's topk scores and metadata (made before any row runs)."""
    shard, rm = ttnn.ShardTensorToMesh(mesh, dim=0), ttnn.ROW_MAJOR_LAYOUT
    topk = ttnn.from_torch(
        np.ones((8, 2, 2, 16), np.float32), dtype=ttnn.bfloat16, layout=rm, device=mesh, mesh_mapper=shard
    )
    meta = ttnn.from_torch(
        np.ones((8, 2, 2, 2), np.float32), dtype=ttnn.uint16, layout=rm, device=mesh, mesh_mapper=shard
    )
    return topk, meta


def _remap(e, topk=None, mapping=None, meta=None, **kwargs):
    return ttnn.moe_expert_token_remap(
        e.remap[0] if topk is None else topk,
        e.moe[2] if mapping is None else mapping,
        e.remap[1] if meta is None else meta,
        **kwargs,
    )


def rows() -> list[Case]:
    op = "moe_expert_token_remap"
    return [
        Case(op, "TILE topk", lambda e: _remap(e, topk=e.heads), VALUE, "topk_tensor"),
        Case(op, "bfloat16 metadata", lambda e: _remap(e, meta=e.remap[0]), VALUE, "expert_metadata_tensor"),
        Case(op, "metadata of another batch", lambda e: _remap(e, meta=e.moe[1]), VALUE, "metadata dim 1"),
        Case(op, "mapping of other experts", lambda e: _remap(e, topk=e.moe[0]), VALUE, "mapping shape dim 2"),
        Case(op, "float32 mapping", lambda e: _remap(e, mapping=e.rm), VALUE, "expert_mapping_tensor"),
        Case(op, "reduction_size 0", lambda e: _remap(e, reduction_size=0), VALUE, "reduction_size"),
        Case(op, "memory_config a string", lambda e: _remap(e, memory_config="DRAM"), TYPE, "memory_config"),
        Case(
            op,
            "one preallocated output",
            lambda e: _remap(e, optional_output_mapping_tensor=e.remap[0]),
            VALUE,
            "optional output",
        ),
        Case(op, "topk on another mesh", lambda e: _remap(e, topk=e.other), ttnn.WrongMeshError, "other|mesh"),
    ]
