"""Bad calls of the exchanges: ``ttnn.point_to_point`` (and its intermediate-spec helper),
``ttnn.broadcast``, ``ttnn.all_broadcast``, ``ttnn.barrier``, ``ttnn.all_to_all_dispatch`` and
``ttnn.all_to_all_combine``.  ``e.mesh`` is 2x4; ``e.a`` is float32 TILE [1, 3, 40] per device."""

from __future__ import annotations

import meshnn as ttnn
from meshnn.ops.ccl.point_to_point import p2p_compute_intermediate_tensor_spec

from ..cases import DEAD, TYPE, VALUE, WRONG_MESH, Case

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


def rows() -> list[Case]:
    return point_to_point_rows() + intermediate_spec_rows()
