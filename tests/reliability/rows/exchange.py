"""Bad calls of the exchanges: ``ttnn.point_to_point`` (and its intermediate-spec helper),
``ttnn.broadcast``, ``ttnn.all_broadcast``, ``ttnn.barrier``, ``ttnn.all_to_all_dispatch`` and
``ttnn.all_to_all_combine``.  ``e.mesh`` is 2x4; ``e.a`` is float32 TILE [1, 3, 40] per device."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn
from meshnn.ops.ccl.point_to_point import p2p_compute_intermediate_tensor_spec

from ..cases import CLOSED, DEAD, TYPE, VALUE, WRONG_MESH, Case

C = ttnn.MeshCoordinate


def _p2p(e, *args, **kwargs):
    return ttnn.point_to_point(e.a, *args, **kwargs)


def point_to_point_rows() -> list[Case]:
    p2p = "point_to_point"
    return [
        Case(p2p, "same sender and receiver", lambda e: _p2p(e, C(0, 1), C(0, 1)), VALUE, "sender_coord"),
        Case(p2p, "sender outside the mesh", lambda e: _p2p(e, C(0, 4), C(0, 1)), VALUE, "sender_coord"),
        Case(p2p, "receiver of 3 dims", lambda e: _p2p(e, C(0, 0), C(0, 1, 0)), VALUE, "receiver_coord"),
        Case(p2p, "sender is a tuple", lambda e: _p2p(e, (0, 0), C(0, 1)), TYPE, "sender_coord"),
        Case(p2p, "no shared row or column", lambda e: _p2p(e, C(0, 0), C(1, 1)), VALUE, "row or column"),
        Case(p2p, "topology is a string", lambda e: _p2p(e, C(0, 0), C(0, 1), topology="Linear"), TYPE, "topology"),
        Case(p2p, "input was deallocated", lambda e: ttnn.point_to_point(e.freed, C(0, 0), C(0, 1)), DEAD, "input"),
        Case(
            p2p,
            "output of another layout",
            lambda e: _p2p(e, C(0, 0), C(0, 1), output_tensor=e.rm),
            VALUE,
            "output_tensor",
        ),
        Case(
            p2p,
            "output on another mesh",
            lambda e: _p2p(e, C(0, 0), C(0, 1), output_tensor=e.other),
            WRONG_MESH,
            "output_tensor",
        ),
        Case(
            p2p,
            "intermediate not a tensor",
            lambda e: _p2p(e, C(0, 0), C(0, 1), intermediate_tensor=3),
            TYPE,
            "intermediate_tensor",
        ),
    ]


def intermediate_spec_rows() -> list[Case]:
    def spec(e, tensor, topology=ttnn.Topology.Linear):
        return p2p_compute_intermediate_tensor_spec(tensor, C(0, 0), C(0, 1), topology)

    name = "p2p_compute_intermediate_tensor_spec"
    return [
        Case(name, "a bfloat8_b input", lambda e: spec(e, e.bfp8), VALUE, "packet"),
        Case(name, "topology is None", lambda e: spec(e, e.a, None), TYPE, "topology"),
        Case(name, "input on the host", lambda e: spec(e, e.host), VALUE, "input_tensor"),
    ]


def broadcast_rows() -> list[Case]:
    def bc(e, *args, **kwargs):
        return ttnn.broadcast(e.a, *args, **kwargs)

    def ab(e, **kwargs):
        return ttnn.all_broadcast(e.a, **kwargs)

    return [
        Case("broadcast", "sender is a list", lambda e: bc(e, [0, 0]), TYPE, "sender_coord"),
        Case("broadcast", "sender outside the mesh", lambda e: bc(e, C(2, 0)), VALUE, "sender_coord"),
        Case("broadcast", "two rows along axis 1", lambda e: bc(e, C(0, 0), cluster_axis=1), VALUE, "group"),
        Case("broadcast", "cluster_axis 2", lambda e: bc(e, C(0, 0), cluster_axis=2), VALUE, "cluster_axis"),
        Case("broadcast", "num_links 0", lambda e: bc(e, C(0, 0), num_links=0), VALUE, "num_links"),
        Case("broadcast", "num_links above the rows", lambda e: bc(e, C(0, 0), num_links=99), VALUE, "num_links"),
        Case("broadcast", "topology is a string", lambda e: bc(e, C(0, 0), topology="Ring"), TYPE, "topology"),
        Case("broadcast", "memory_config is a dict", lambda e: bc(e, C(0, 0), memory_config={}), TYPE, "memory_config"),
        Case("broadcast", "input was deallocated", lambda e: ttnn.broadcast(e.freed, C(0, 0)), DEAD, "input_tensor"),
        Case("all_broadcast", "cluster_axis is a string", lambda e: ab(e, cluster_axis="0"), TYPE, "cluster_axis"),
        Case("all_broadcast", "num_links a string", lambda e: ab(e, num_links="1"), TYPE, "num_links"),
        Case("all_broadcast", "topology is an int", lambda e: ab(e, topology=1), TYPE, "topology"),
        Case("all_broadcast", "input on the host", lambda e: ttnn.all_broadcast(e.host), VALUE, "input_tensor"),
        Case("all_broadcast", "input's mesh closed", lambda e: ttnn.all_broadcast(e.closed), CLOSED, "input_tensor"),
    ]


def barrier_rows() -> list[Case]:
    delay = ttnn.apply_device_delay
    return [
        Case(
            "barrier",
            "a Linear topology",
            lambda e: ttnn.barrier(e.a, topology=ttnn.Topology.Linear),
            VALUE,
            "topology",
        ),
        Case(
            "barrier",
            "memory_config is a string",
            lambda e: ttnn.barrier(e.a, memory_config="L1"),
            TYPE,
            "memory_config",
        ),
        Case("barrier", "input was deallocated", lambda e: ttnn.barrier(e.freed), DEAD, "input_tensor"),
        Case("apply_device_delay", "one row for two", lambda e: delay(e.mesh, [[0] * 4]), VALUE, "delays"),
        Case(
            "apply_device_delay", "negative cycles", lambda e: delay(e.mesh, [[0] * 4, [0, 0, -1, 0]]), VALUE, "delays"
        ),
        Case("apply_device_delay", "delays is an int", lambda e: delay(e.mesh, 5), TYPE, "delays"),
        Case("apply_device_delay", "mesh is a tensor", lambda e: delay(e.a, [[0] * 4] * 2), TYPE, "mesh_device"),
    ]


def moe_tensors(mesh: ttnn.MeshDevice) -> tuple[ttnn.Tensor, ttnn.Tensor, ttnn.Tensor]:
    """Tokens [2, 1, 2, 32] bfloat16, ids [2, 1, 2, 2] uint16 (per device) and a [1, 1, 16, 8]
    mapping: the table's environment holds them as ``e.moe`` (made before any row runs)."""
    shard, rm = ttnn.ShardTensorToMesh(mesh, dim=0), ttnn.ROW_MAJOR_LAYOUT
    mapping = np.zeros((1, 1, 16, 8), np.float32)
    mapping[0, 0, np.arange(16), np.arange(16) // 2] = 1
    tokens = ttnn.from_torch(np.zeros((16, 1, 2, 32), np.float32), dtype=ttnn.bfloat16, layout=rm, device=mesh,
                             mesh_mapper=shard)  # fmt: skip
    ids = ttnn.from_torch(np.ones((16, 1, 2, 2), np.float32), dtype=ttnn.uint16, layout=rm, device=mesh,
                          mesh_mapper=shard)  # fmt: skip
    replicated = ttnn.ReplicateTensorToMesh(mesh)
    return tokens, ids, ttnn.from_torch(mapping, dtype=ttnn.uint16, layout=rm, device=mesh, mesh_mapper=replicated)


def _moe(e) -> tuple[ttnn.Tensor, ttnn.Tensor, ttnn.Tensor]:
    return e.moe


def _dispatch(e, **kwargs):
    return ttnn.all_to_all_dispatch(*_moe(e), **kwargs)


def _combine(e, **kwargs):
    tokens, ids, mapping = _moe(e)
    kwargs.setdefault("cluster_axis", 1)
    return ttnn.all_to_all_combine(tokens, ids, mapping, **kwargs)


def all_to_all_rows() -> list[Case]:
    d, c = "all_to_all_dispatch", "all_to_all_combine"
    tokens = lambda e: _moe(e)[0]  # noqa: E731
    return [
        Case(d, "TILE tokens", lambda e: ttnn.all_to_all_dispatch(e.heads, *_moe(e)[1:]), VALUE, "input_tensor"),
        Case(
            d,
            "float32 ids",
            lambda e: ttnn.all_to_all_dispatch(tokens(e), e.rm, _moe(e)[2]),
            VALUE,
            "expert_indices_tensor",
        ),
        Case(d, "concat dim 3", lambda e: _dispatch(e, output_concat_dim=3), VALUE, "output_concat_dim"),
        Case(d, "num_links 0", lambda e: _dispatch(e, num_links=0), VALUE, "num_links"),
        Case(
            d,
            "sharded memory_config",
            lambda e: _dispatch(e, memory_config=ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG),
            VALUE,
            "memory_config",
        ),
        Case(d, "one output tensor", lambda e: _dispatch(e, output_tensors=[tokens(e)]), TYPE, "output_tensors"),
        Case(
            d,
            "outputs of the input's shape",
            lambda e: _dispatch(e, output_tensors=[tokens(e), tokens(e)]),
            VALUE,
            "output_tensors",
        ),
        Case(
            d,
            "mapping on another mesh",
            lambda e: ttnn.all_to_all_dispatch(*_moe(e)[:2], e.other),
            WRONG_MESH,
            "expert_mapping_tensor",
        ),
        Case(c, "no cluster_axis", lambda e: _combine(e, cluster_axis=None), VALUE, "cluster_axis"),
        Case(c, "input dim 0 of 2 for local_reduce", lambda e: _combine(e, local_reduce=True), VALUE, "input_tensor"),
        Case(c, "local_reduce is 1", lambda e: _combine(e, local_reduce=1), TYPE, "local_reduce"),
        Case(c, "shard dim 0", lambda e: _combine(e, output_shard_dim=0), VALUE, "output_shard_dim"),
        Case(c, "subdevice_id is a string", lambda e: _combine(e, subdevice_id="0"), TYPE, "subdevice_id"),
        Case(c, "topology is a string", lambda e: _combine(e, topology="Ring"), TYPE, "topology"),
        Case(
            c,
            "input was deallocated",
            lambda e: ttnn.all_to_all_combine(e.freed, *_moe(e)[1:], cluster_axis=1),
            DEAD,
            "input_tensor",
        ),
    ]


def rows() -> list[Case]:
    return point_to_point_rows() + intermediate_spec_rows() + broadcast_rows() + barrier_rows() + all_to_all_rows()
