"""Bad calls of the Llama-70B Galaxy decode path's fused ops (issue 30, branch galaxy41):
``ttnn.experimental.llama_rs_matmul`` and ``ttnn.experimental.all_gather_concat``.  ``e.mesh`` is
2x4 (rows of 4 devices along cluster_axis 1); ``e.a`` is float32 TILE [1, 3, 40] and ``e.w``
[40, 24], interleaved (they multiply); ``e.heads`` is bfloat16 TILE [1, 2, 32, 32], interleaved
(not the width shards the scatter takes, nor the height shards of the concat)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, WRONG_MESH, Case

SUB = ttnn.SubDeviceId(0)
RS, CONCAT = "experimental.llama_rs_matmul", "experimental.all_gather_concat"


def _rs(e, a=None, w=None, axis=1, mesh=None, **kwargs):
    a = e.a if a is None else a
    w = e.w if w is None else w
    mesh = e.mesh if mesh is None else mesh
    return ttnn.experimental.llama_rs_matmul(a, w, e.a2, 3, e.sems[0], axis, mesh, 1, SUB, **kwargs)


def _concat(e, x=None, axis=1, mesh=None, sem=None, heads=8, config=ttnn.L1_MEMORY_CONFIG, **kwargs):
    x = e.heads if x is None else x
    mesh = e.mesh if mesh is None else mesh
    sem = e.sems[0] if sem is None else sem
    return ttnn.experimental.all_gather_concat(x, e.a2, 1, axis, mesh, sem, heads, config, **kwargs)


def rows() -> list[Case]:
    return [
        Case(RS, "neither rs_tensor nor second_weight_tensor", lambda e: _rs(e), VALUE, "exactly one"),
        Case(
            RS,
            "both rs_tensor and second_weight_tensor",
            lambda e: _rs(e, rs_tensor=e.heads, second_weight_tensor=e.w),
            VALUE,
            "exactly one",
        ),
        Case(RS, "weight freed", lambda e: _rs(e, w=e.freed, rs_tensor=e.heads), DEAD, "weight_tensor"),
        Case(RS, "rs_tensor on another mesh", lambda e: _rs(e, rs_tensor=e.other), WRONG_MESH, "rs_tensor|mesh"),
        Case(RS, "rs_tensor not sharded", lambda e: _rs(e, rs_tensor=e.heads), VALUE, "shard spec"),
        Case(RS, "cluster_axis 0", lambda e: _rs(e, axis=0, rs_tensor=e.heads), VALUE, "cluster_axis must be 1"),
        Case(
            RS,
            "mesh_device of another mesh",
            lambda e: _rs(e, mesh=e.other_mesh, rs_tensor=e.heads),
            WRONG_MESH,
            "mesh_device",
        ),
        Case(
            RS,
            "second weight without a global CB",
            lambda e: _rs(e, second_weight_tensor=e.w),
            VALUE,
            "second_weight_tensor needs",
        ),
        Case(RS, "operands that do not multiply", lambda e: _rs(e, w=e.heads, rs_tensor=e.heads), VALUE, RS),
        Case(CONCAT, "input interleaved", lambda e: _concat(e), VALUE, "memory layout"),
        Case(CONCAT, "group along cluster_axis 0 of 2", lambda e: _concat(e, axis=0), VALUE, "4 devices"),
        Case(CONCAT, "num_heads a float", lambda e: _concat(e, heads=8.0), TYPE, "num_heads"),
        Case(CONCAT, "num_heads 0", lambda e: _concat(e, heads=0), VALUE, "num_heads"),
        Case(CONCAT, "memory_config None", lambda e: _concat(e, config=None), TYPE, "memory_config"),
        Case(
            CONCAT,
            "semaphore of another mesh",
            lambda e: _concat(e, sem=e.other_sem),
            VALUE,
            "multi_device_global_semaphore",
        ),
        Case(CONCAT, "mesh_device of another mesh", lambda e: _concat(e, mesh=e.other_mesh), WRONG_MESH, "mesh_device"),
        Case(CONCAT, "input freed", lambda e: _concat(e, x=e.freed), DEAD, "input"),
        Case(CONCAT, "use_noc1_only an int", lambda e: _concat(e, use_noc1_only=1), TYPE, "use_noc1_only"),
    ]
