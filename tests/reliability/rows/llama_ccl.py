"""Bad calls of the Llama-70B Galaxy fused collectives: ``ttnn.experimental.llama_reduce_scatter``,
``ttnn.experimental.llama_rs_create_heads``, ``ttnn.fused_rms_1_1_32_8192`` and
``ttnn.experimental.all_reduce_create_qkv_heads``.  ``e.mesh`` is
2x4 (rows of 4 devices along cluster_axis 1); ``e.heads`` is bfloat16 TILE [1, 2, 32, 32] per
device, interleaved (not the width-sharded input the reduce-scatters take); ``e.a`` is float32
TILE [1, 3, 40] (not the (1, 1, 32, N) rows of the fused norm)."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, WRONG_MESH, Case

SUB = ttnn.SubDeviceId(0)


def _rs(e, tensor=None, dim=3, sem=None, sub=SUB, axis=1, mesh=None, **kwargs):
    tensor = e.heads if tensor is None else tensor
    sem = e.sems[0] if sem is None else sem
    mesh = e.mesh if mesh is None else mesh
    return ttnn.experimental.llama_reduce_scatter(tensor, e.a2, dim, sem, sub, axis, mesh, **kwargs)


def _heads(e, **kwargs):
    return ttnn.experimental.llama_rs_create_heads(
        e.heads, e.a2, 3, e.sems[0], SUB, 1, e.mesh, ttnn.Topology.Linear, num_heads=8, num_kv_heads=1, **kwargs
    )


def _rms(e, axis=1, mesh=None, sem=None, **kwargs):
    mesh = e.mesh if mesh is None else mesh
    sem = e.sems[0] if sem is None else sem
    return ttnn.fused_rms_1_1_32_8192(e.a, None, axis, mesh, sem, **kwargs)


def _qkv(e, sem=None, heads=8, **kwargs):
    sem = e.sems[0] if sem is None else sem
    return ttnn.experimental.all_reduce_create_qkv_heads(e.heads, e.a2, e.i32, 1, e.mesh, sem, heads, **kwargs)


def rows() -> list[Case]:
    rs, heads, rms = "experimental.llama_reduce_scatter", "experimental.llama_rs_create_heads", "fused_rms_1_1_32_8192"
    qkv = "experimental.all_reduce_create_qkv_heads"
    return [
        Case(rs, "dim out of range", lambda e: _rs(e, dim=4), VALUE, "dim"),
        Case(rs, "dim not the last", lambda e: _rs(e, dim=1), VALUE, "dim must be 3"),
        Case(rs, "mesh_device of another mesh", lambda e: _rs(e, mesh=e.other_mesh), WRONG_MESH, "mesh_device"),
        Case(rs, "cluster_axis 0", lambda e: _rs(e, axis=0), VALUE, "cluster_axis must be 1"),
        Case(rs, "cluster_axis a string", lambda e: _rs(e, axis="1"), TYPE, "cluster_axis"),
        Case(rs, "semaphore an int", lambda e: _rs(e, sem=3), TYPE, "cross_device_semaphore"),
        Case(rs, "semaphore of another mesh", lambda e: _rs(e, sem=e.other_sem), VALUE, "cross_device_semaphore"),
        Case(rs, "subdevice_id an int", lambda e: _rs(e, sub=0), TYPE, "subdevice_id"),
        Case(rs, "num_links 0", lambda e: _rs(e, num_links=0), VALUE, "num_links"),
        Case(rs, "topology a string", lambda e: _rs(e, topology="Ring"), VALUE, "topology"),
        Case(rs, "use_noc1_only an int", lambda e: _rs(e, use_noc1_only=1), TYPE, "use_noc1_only"),
        Case(rs, "input not sharded", lambda e: _rs(e), VALUE, "input_tensor must have a shard spec"),
        Case(rs, "input deallocated", lambda e: _rs(e, tensor=e.freed), DEAD, "input"),
        Case(rs, "no mesh_device", lambda e: ttnn.experimental.llama_reduce_scatter(e.a, e.a2, 3), TYPE, rs),
        Case(heads, "topology missing", lambda e: ttnn.experimental.llama_rs_create_heads(e.a, e.a2, 3), TYPE, heads),
        Case(heads, "input not sharded", lambda e: _heads(e), VALUE, "input_tensor must have a shard spec"),
        Case(heads, "num_links a list", lambda e: _heads(e, num_links=[1]), TYPE, "num_links"),
        Case(rms, "mesh_device of another mesh", lambda e: _rms(e, mesh=e.other_mesh), WRONG_MESH, "mesh_device"),
        Case(rms, "cluster_axis 2 on a 2-D mesh", lambda e: _rms(e, axis=2), VALUE, "cluster_axis"),
        Case(rms, "semaphore of another mesh", lambda e: _rms(e, sem=e.other_sem), VALUE, "global_semaphore"),
        Case(rms, "num_links 0", lambda e: _rms(e, num_links=0), VALUE, "num_links"),
        Case(rms, "not (1, 1, 32, N) rows", lambda e: _rms(e), VALUE, "input_tensor"),
        Case(
            "fused_rms_minimal",
            "mesh_device of another mesh (2026's name)",
            lambda e: ttnn.fused_rms_minimal(e.a, None, 1, e.other_mesh, e.sems[0]),
            WRONG_MESH,
            "mesh_device",
        ),
        Case(qkv, "semaphore an int", lambda e: _qkv(e, sem=1), TYPE, "multi_device_global_semaphore"),
        Case(qkv, "num_heads 0", lambda e: _qkv(e, heads=0), VALUE, "num_heads"),
        Case(qkv, "offsets not integers", lambda e: _qkv(e, batch_offset=None), TYPE, qkv),
        Case(qkv, "width not whole heads", lambda e: _qkv(e, heads=3, num_kv_heads=1), VALUE, "divisible"),
        Case(qkv, "users not (1, 1, users, width)", lambda e: _qkv(e, heads=2, num_kv_heads=1), VALUE, "input shape"),
    ]
