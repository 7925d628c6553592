"""``ttnn.generic_op(io_tensors, program_descriptor)``: a program described as plain data, run on
the io tensors' mesh; returns ``io_tensors[-1]`` (the preallocated output) after it ran.

A ``ttnn.ProgramDescriptor`` runs on every device of the mesh (SPMD); a
``ttnn.MeshProgramDescriptor`` gives each box of mesh coordinates its own program (a repeated box
is refused, as in ttnn).  meshnn runs a program only when every kernel is one of its library's
(:mod:`~meshnn.ops.generic.library`, keyed by tt-metal's source path); any other kernel is refused
by name (``NotImplementedByMeshnn``) before anything is written, as is every other bad program
(:mod:`~meshnn.ops.generic.binding`).  Kernels address buffers by address: meshnn finds them
among ``io_tensors``.

The model of execution is feed-forward: on each core, readers fill circular-buffer page queues,
compute kernels turn them, writers drain them (:mod:`~meshnn.ops.generic.machine`).  Kernels that
synchronise through semaphores (across cores or devices, e.g. fabric sends) are outside this
model; the program's semaphores are checked as data and otherwise unused.

Layer: ops.  Imports errors, mesh, tensor and the ops' registry, checks and launch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.generic.binding import OP, bind_program, run_plan
from meshnn.ops.generic.machine import Memory
from meshnn.ops.generic.program_desc import MeshProgramDescriptor, ProgramDescriptor, compute_program_descriptor_hash
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor


def _io(io_tensors: object) -> list[Tensor]:
    if isinstance(io_tensors, Tensor) or not isinstance(io_tensors, list | tuple):
        raise MeshnnTypeError(f"{OP}: io_tensors must be a list of ttnn.Tensor, got {type(io_tensors).__name__}")
    if len(io_tensors) < 2:
        raise MeshnnValueError(
            f"{OP}: io_tensors must contain at least one input tensor and one output tensor, got {len(io_tensors)}"
        )
    return [device_input("generic_op", f"io_tensors[{i}]", t) for i, t in enumerate(io_tensors)]


def _programs(descriptor: object, mesh: MeshDevice) -> list[tuple[MeshCoordinateRange, ProgramDescriptor]]:
    """The ``(box, program)`` pairs of either descriptor form, checked against the mesh."""
    if isinstance(descriptor, ProgramDescriptor):
        return [(MeshCoordinateRange(mesh.shape), descriptor)]
    if not isinstance(descriptor, MeshProgramDescriptor):
        raise MeshnnTypeError(
            f"{OP}: program_descriptor must be a ttnn.ProgramDescriptor or ttnn.MeshProgramDescriptor, "
            f"got {type(descriptor).__name__}"
        )
    pairs = list(descriptor)
    if not pairs:
        raise MeshnnValueError(f"{OP}: the MeshProgramDescriptor's mesh_programs must not be empty")
    whole = MeshCoordinateRange(mesh.shape)
    seen: list[MeshCoordinateRange] = []
    for box, _ in pairs:
        if box in seen:
            raise MeshnnValueError(f"{OP}: duplicate MeshCoordinateRange {box} in the MeshProgramDescriptor")
        if len(tuple(box.start_coord())) != len(tuple(mesh.shape)) or not whole.contains(box):
            raise MeshnnValueError(f"{OP}: MeshCoordinateRange {box} is not inside the {mesh.shape} mesh")
        seen.append(box)
    return pairs


def _rows(box: MeshCoordinateRange, coords: Sequence[MeshCoordinate]) -> np.ndarray | slice | None:
    """Which of the run's devices a box holds: every one (a slice), some (indices), or none."""
    picked = [i for i, c in enumerate(coords) if box.contains(c)]
    if not picked:
        return None
    return slice(None) if len(picked) == len(coords) else np.asarray(picked)


@register(kind=OpKind.UNARY, family=OpFamily.UNARY, device_operation="GenericOpDeviceOperation")
def generic_op(io_tensors: list[Tensor], program_descriptor: ProgramDescriptor | MeshProgramDescriptor) -> Tensor:
    """``ttnn.generic_op``: run ``program_descriptor`` (its kernels from meshnn's library) over
    ``io_tensors``' buffers on their mesh; returns ``io_tensors[-1]``."""
    tensors = _io(io_tensors)
    mesh = same_mesh("generic_op", {f"io_tensors[{i}]": t for i, t in enumerate(tensors)})
    unique = list({id(t.storage.mesh_buffer): t for t in tensors}.values())  # type: ignore[union-attr]
    memory = Memory([t.storage.mesh_buffer for t in unique])  # type: ignore[union-attr]
    pairs = _programs(program_descriptor, mesh)
    plans = [(box, bind_program(program, mesh, memory)) for box, program in pairs]

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        memory.rows = out_rows
        for box, plan in plans:
            select = _rows(box, coords)
            if select is not None:
                memory.select = select
                run_plan(plan, memory)

    hashes = [
        (tuple(box.start_coord()), tuple(box.end_coord()), compute_program_descriptor_hash(p)) for box, p in pairs
    ]
    attrs = {"program_descriptor": type(program_descriptor).__name__, "program_hash": hash(tuple(hashes))}
    launch("generic_op", mesh, unique, [Output(t.spec) for t in unique], kernel, into=unique, attrs=attrs)
    return tensors[-1]
