"""The ops about the skew between devices: ``ttnn.barrier`` (every device of the input waits for
the others) and ``ttnn.apply_device_delay`` (each device spins a given number of cycles; tt-metal's
tests use it to provoke races in the collectives).

``barrier(input_tensor, *, memory_config=None, topology=ttnn.Topology.Ring)``: the output is the
input's values in ``memory_config`` (default: the input's), on the input's devices (more than one);
the barrier runs only as a ring (``topology`` Ring; another member is refused).  On the simulated
mesh the devices are in step already; the perf model times its semaphore round (hops, no payload).

``apply_device_delay(mesh_device, delays, *, subdevice_id=None)``: ``delays[row][col]`` cycles (non-
negative ints) for the device at (row, col) of a 2-D mesh, the list of lists shaped as the mesh.
Recorded; the simulated devices have no clock to spin.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs and registry, and the collectives' arguments and broadcast.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.ccl.arguments import FABRIC_KEYWORDS, Topology
from meshnn.ops.ccl.broadcast import copy_shards, whole_mesh
from meshnn.ops.ccl.point_to_point import local_only
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

TRACE_BYTES = 512
"""Dispatch-command bytes a delay program (one small kernel a device, a few runtime args) adds to a
trace on each device: a model figure, with the dispatch's, under the bound tt-metal's own skew test
sets (:data:`meshnn.ops.ccl.all_to_all.TRACE_BYTES`)."""


@register(kind=OpKind.COLLECTIVE, family=OpFamily.BARRIER)
def barrier(
    input_tensor: Tensor, *, memory_config: MemoryConfig | None = None, topology: Topology = Topology.Ring
) -> Tensor:
    """The input's values, once every device of the input has reached the barrier."""
    op = "barrier"
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    local_only(op, mesh)
    if not isinstance(topology, Topology):
        raise MeshnnTypeError(f"ttnn.{op}: topology must be a ttnn.Topology, got {topology!r}")
    if topology is not Topology.Ring:
        raise MeshnnValueError(
            f"ttnn.{op}: topology must be ttnn.Topology.Ring (the barrier runs as a ring), got {topology}"
        )
    n = len(tensor.storage.coords)  # type: ignore[union-attr]
    if n < 2:
        raise MeshnnValueError(f"ttnn.{op} needs an input on more than one device; it is on {n}")
    spec = out_spec_like(tensor, memory_config=memory_config, op=op)

    coords = tensor.storage.coords  # type: ignore[union-attr]
    rows = [coord.to_linear_index(mesh.shape) for coord in coords]

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        copy_shards(in_rows[0], out_rows[0], [(row, row) for row in rows], (tensor_spec, spec))

    attrs = {"topology": topology, "memory_config": spec.memory_config}
    out = Output(spec, coords=coords)
    return launch(op, mesh, [tensor], [out], kernel, coords=whole_mesh(mesh), attrs=attrs)[0]


def _delays(op: str, delays: object, mesh: MeshDevice) -> tuple[tuple[int, ...], ...]:
    shape = tuple(mesh.shape)
    if len(shape) != 2:
        raise MeshnnValueError(f"ttnn.{op}: delays need a 2-D mesh, the mesh is {list(shape)}")
    if not isinstance(delays, list | tuple) or not all(isinstance(row, list | tuple) for row in delays):
        raise MeshnnTypeError(f"ttnn.{op}: delays must be a list of lists of cycles, got {delays!r}")
    if len(delays) != shape[0] or any(len(row) != shape[1] for row in delays):
        got = [len(row) for row in delays]
        raise MeshnnValueError(f"ttnn.{op}: delays must be {shape[0]} rows of {shape[1]} cycles, got rows of {got}")
    for row in delays:
        for cycles in row:
            if isinstance(cycles, bool) or not isinstance(cycles, int | np.integer) or cycles < 0:
                raise MeshnnValueError(f"ttnn.{op}: delays must be non-negative ints (cycles), got {cycles!r}")
    return tuple(tuple(int(c) for c in row) for row in delays)


@register(kind=OpKind.COLLECTIVE, family=OpFamily.BARRIER, modelled=False)
@ttnn_keywords(subdevice_id=FABRIC_KEYWORDS["subdevice_id"])
def apply_device_delay(mesh_device: MeshDevice, delays: list[list[int]]) -> None:
    """Each device of ``mesh_device`` spins ``delays[row][col]`` cycles (recorded, see the module's text)."""
    op = "apply_device_delay"
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    cycles = _delays(op, delays, mesh_device)

    def kernel(_in: list[np.ndarray], _out: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        return None

    coords = tuple(mesh_device.shape.coords())
    launch(op, mesh_device, [], [], kernel, coords=coords, attrs={"delays": cycles}, trace_bytes=TRACE_BYTES)
