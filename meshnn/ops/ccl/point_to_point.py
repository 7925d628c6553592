"""``ttnn.point_to_point``: one device's shard sent to another device of the mesh, and
``p2p_compute_intermediate_tensor_spec``, the spec of the op's packet buffer.

``point_to_point(input_tensor, sender_coord, receiver_coord, *, output_tensor=None,
intermediate_tensor=None, topology=ttnn.Topology.Linear)``: the output has the input's spec; on
the receiver it holds the sender's shard, byte for byte; every other device's shard of the output
is left as it was (a new output: as allocated; ``output_tensor``: its old bytes).  ttnn's checks:
the two coordinates differ and lie in the mesh, the input is not sharded, its page is a multiple
of 16 bytes (the L1 alignment), the output tensor (when given) has the output's spec on the same
mesh.  On a 1-D fabric the two devices share a row or a column (the route runs along one axis);
the hops are the distance along it (a ring takes the shorter way round).

The intermediate tensor holds the packets: ``[packets, packet elements]`` with the input's dtype,
layout and memory config, a packet being at most 4352 bytes (the fabric's payload; a bfloat16
packet is rounded down to 4096) of whole aligned pages, a page split over packets when it is
larger.  Block-float inputs have no element size for it and are refused, as ttnn's are.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs and registry, and the collectives' arguments.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.arguments import Topology
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

FABRIC_PAYLOAD_BYTES = 4352
"""The fabric's packet payload (bytes): four bfloat8_b tiles."""

L1_ALIGNMENT = 16
"""Bytes a page must be a multiple of (Wormhole's L1 alignment)."""


def check_coord(op: str, name: str, coord: object, mesh: MeshDevice) -> MeshCoordinate:
    """``coord``: a ttnn.MeshCoordinate of ``mesh`` (as many dims, each in range)."""
    if not isinstance(coord, MeshCoordinate):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.MeshCoordinate, got {coord!r}")
    shape = tuple(mesh.shape)
    if len(coord) != len(shape) or any(not 0 <= c < d for c, d in zip(coord, shape, strict=True)):
        raise MeshnnValueError(f"ttnn.{op}: {name} {tuple(coord)} is not a device of the {list(shape)} mesh")
    return coord


def local_only(op: str, mesh: MeshDevice) -> None:
    """The exchanges run within one process: a mesh split over MPI ranks is refused by name."""
    if not mesh.all_local:
        raise MeshnnValueError(f"ttnn.{op}: meshnn runs it within one process; this mesh spans MPI ranks")


def route_hops(op: str, sender: MeshCoordinate, receiver: MeshCoordinate, mesh: MeshDevice, topology: Topology) -> int:
    """Hops from ``sender`` to ``receiver`` along their shared row or column (1-D fabric routing);
    a ring goes the shorter way round."""
    if sender == receiver:
        raise MeshnnValueError(f"ttnn.{op}: sender_coord and receiver_coord are the same device {tuple(sender)}")
    differ = [axis for axis, (s, r) in enumerate(zip(sender, receiver, strict=True)) if s != r]
    if len(differ) != 1:
        raise MeshnnValueError(
            f"ttnn.{op}: sender_coord {tuple(sender)} and receiver_coord {tuple(receiver)} share no row or column; "
            "a 1-D fabric routes along one mesh axis"
        )
    axis = differ[0]
    line = abs(receiver[axis] - sender[axis])
    if topology is Topology.Ring:
        return min(line, mesh.shape[axis] - line)
    return line


def _packet_shape(spec: TensorSpec, op: str) -> tuple[int, int]:
    """(packets, elements per packet) of the intermediate buffer of an input of ``spec``."""
    if spec.dtype.is_block_float:
        raise MeshnnValueError(f"ttnn.{op}: a {spec.dtype} input has no element size for the packet buffer")
    element = spec.dtype.row_major_element_size
    limit = FABRIC_PAYLOAD_BYTES
    if spec.dtype.name == "BFLOAT16":
        limit = 1 << (limit.bit_length() - 1)  # rounded down to a power of two
    page = -(-spec.page_size // L1_ALIGNMENT) * L1_ALIGNMENT
    pages = spec.num_pages
    if page <= limit:
        per_packet = min(limit // page, pages)
        return -(-pages // per_packet), page * per_packet // element
    segments = -(-page // limit)
    return segments * pages, limit // element


def intermediate_spec(op: str, spec: TensorSpec) -> TensorSpec:
    """The spec of the packet buffer for an input of ``spec``."""
    packets, width = _packet_shape(spec, op)
    return TensorSpec((packets, width), spec.dtype, spec.layout, tile=spec.tile, memory_config=spec.memory_config)


def p2p_compute_intermediate_tensor_spec(
    input_tensor: Tensor, sender_coord: MeshCoordinate, receiver_coord: MeshCoordinate, topology: Topology
) -> TensorSpec:
    """``ttnn._ttnn.operations.point_to_point.p2p_compute_intermediate_tensor_spec``: the spec of the
    packet buffer ``point_to_point`` would allocate for ``input_tensor`` (see the module's text)."""
    op = "p2p_compute_intermediate_tensor_spec"
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    check_coord(op, "sender_coord", sender_coord, mesh)
    check_coord(op, "receiver_coord", receiver_coord, mesh)
    _check_topology(op, topology)
    return intermediate_spec(op, tensor.spec)


def _check_topology(op: str, topology: object) -> Topology:
    if not isinstance(topology, Topology):
        raise MeshnnTypeError(f"ttnn.{op}: topology must be a ttnn.Topology, got {topology!r}")
    return topology


def _check_input(op: str, tensor: Tensor) -> None:
    if tensor.spec.memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: input_tensor is sharded; point to point takes interleaved tensors only")
    page = tensor.spec.page_size
    if page % L1_ALIGNMENT:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor's page is {page} bytes; a page must be a multiple of {L1_ALIGNMENT} bytes"
        )


def _checked_buffer(op: str, name: str, value: object, mesh: MeshDevice, spec: TensorSpec | None) -> Tensor:
    tensor = device_input(op, name, value)
    if tensor.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: {name} is on another mesh device than input_tensor")
    if spec is not None and tensor.layout is not spec.layout:
        raise MeshnnValueError(f"ttnn.{op}: {name} must have the input's layout {spec.layout}, has {tensor.layout}")
    if spec is not None and tensor.spec != spec:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} is {list(tensor.shape)} {tensor.dtype} {tensor.memory_config().buffer_type}; "
            f"the output is {list(spec.shape)} {spec.dtype} {spec.memory_config.buffer_type}"
        )
    return tensor


@register(kind=OpKind.COLLECTIVE, family=OpFamily.POINT_TO_POINT)
def point_to_point(
    input_tensor: Tensor,
    sender_coord: MeshCoordinate,
    receiver_coord: MeshCoordinate,
    *,
    output_tensor: Tensor | None = None,
    intermediate_tensor: Tensor | None = None,
    topology: Topology = Topology.Linear,
) -> Tensor:
    """The sender's shard written to the receiver's shard of the output (see the module's text)."""
    op = "point_to_point"
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    local_only(op, mesh)
    sender = check_coord(op, "sender_coord", sender_coord, mesh)
    receiver = check_coord(op, "receiver_coord", receiver_coord, mesh)
    hops = route_hops(op, sender, receiver, mesh, _check_topology(op, topology))
    _check_input(op, tensor)
    coords = tensor.storage.coords  # type: ignore[union-attr]
    for name, coord in (("sender_coord", sender), ("receiver_coord", receiver)):
        if coord not in coords:
            raise MeshnnValueError(f"ttnn.{op}: input_tensor has no shard on {name} {tuple(coord)}")
    spec = tensor.spec
    into = None if output_tensor is None else _checked_buffer(op, "output_tensor", output_tensor, mesh, spec)
    if intermediate_tensor is not None:
        _checked_buffer(op, "intermediate_tensor", intermediate_tensor, mesh, None)
    send, receive = sender.to_linear_index(mesh.shape), receiver.to_linear_index(mesh.shape)
    size = spec.compute_packed_buffer_size_bytes()

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        out_rows[0][receive, :size] = in_rows[0][send, :size]

    attrs = {"topology": topology, "hops": hops, "sender_coord": sender, "receiver_coord": receiver}
    attrs["intermediate_tensor"] = intermediate_tensor
    every = tuple(mesh.shape.coords())  # one kernel call over the whole mesh: rows by device index
    into_list = None if into is None else [into]
    outs = [Output(spec, coords=coords)]
    return launch(op, mesh, [tensor], outs, kernel, coords=every, attrs=attrs, into=into_list)[0]
