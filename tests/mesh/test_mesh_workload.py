"""MeshWorkload: tt-metal's test_mesh_workload.cpp cases, uniform and per-device programs."""

from __future__ import annotations

import numpy as np
import pytest

from meshnn.errors import MeshnnError
from meshnn.mesh import (
    DeviceLocalBufferConfig,
    MeshBuffer,
    MeshCoordinate,
    MeshCoordinateRange,
    MeshWorkload,
    Program,
    ReplicatedBufferConfig,
)

from .test_mesh_events import add_mul_workload


def buffers(mesh, count, pages=4):
    return [
        MeshBuffer.create(ReplicatedBufferConfig(pages * 4096), DeviceLocalBufferConfig(4096), mesh)
        for _ in range(count)
    ]


@pytest.mark.parametrize("shape", [(1, 2), (2, 4), (8, 4)])
def test_eltwise_binary_mesh_workload(open_mesh, shape):
    """EltwiseBinaryMeshWorkload: add on the first half of the rows, multiply on the second;
    inputs 2 and 3 give 5 and 6 on every device after 1000 runs."""
    mesh = open_mesh(shape)
    a, b, out = buffers(mesh, 3)
    a.slab().view(np.uint32)[...] = 2
    b.slab().view(np.uint32)[...] = 3
    workload, half = add_mul_workload(mesh, a, b, out)
    cq = mesh.mesh_command_queue()
    for _ in range(1000):
        cq.enqueue_mesh_workload(workload, blocking=False)
    cq.finish()
    for coord in mesh.local_coords():
        row = out.slab()[mesh.local_row(coord)].view(np.uint32)
        expected = 5 if coord[0] < half or shape[0] == 1 else 6
        assert (row == expected).all(), coord


def test_randomized_mesh_workload(open_mesh, rng):
    """RandomizedMeshWorkload: 60 programs on random sub-grids {0,0}..{r-1,c-1}, replayed; each
    device ends with the count of programs that covered it."""
    mesh = open_mesh((8, 4))
    (counter,) = buffers(mesh, 1, pages=1)
    workloads, expected = [], np.zeros(mesh.shape.as_tuple(), np.int64)

    def increment(ctx):
        ctx.buffers[0].view(np.uint32)[:, 0] += 1

    for _ in range(60):
        r, c = int(rng.integers(1, 9)), int(rng.integers(1, 5))
        workloads.append(
            MeshWorkload(
                Program(increment, [counter]),
                MeshCoordinateRange(MeshCoordinate(0, 0), MeshCoordinate(r - 1, c - 1)),
            )
        )
        expected[:r, :c] += 1
    cq = mesh.mesh_command_queue()
    for _ in range(25):
        for workload in workloads:
            cq.enqueue_mesh_workload(workload)
    cq.finish()
    assert np.array_equal(counter.slab().view(np.uint32)[:, 0].reshape(8, 4), 25 * expected)


def test_simultaneous_heterogeneous_workloads(open_mesh):
    """SimultaneousMeshWorkloads (4x8 on TG, here 8x4): row halves, column halves, single rows and
    single columns, each tagging its devices; 100 iterations complete with every tag counted."""
    mesh = open_mesh((8, 4))
    (tags,) = buffers(mesh, 1, pages=1)

    def tag(ctx):
        ctx.buffers[0].view(np.uint32)[:, ctx.args] += 1

    ranges = {
        0: [
            MeshCoordinateRange(MeshCoordinate(0, 0), MeshCoordinate(3, 3)),
            MeshCoordinateRange(MeshCoordinate(4, 0), MeshCoordinate(7, 3)),
        ],
        1: [
            MeshCoordinateRange(MeshCoordinate(0, 0), MeshCoordinate(7, 1)),
            MeshCoordinateRange(MeshCoordinate(0, 2), MeshCoordinate(7, 3)),
        ],
        2: [MeshCoordinateRange(MeshCoordinate(r, 0), MeshCoordinate(r, 3)) for r in range(8)],
        3: [MeshCoordinateRange(MeshCoordinate(0, c), MeshCoordinate(7, c)) for c in range(4)],
    }
    workloads = []
    for column, spans in ranges.items():
        workload = MeshWorkload()
        for span in spans:
            workload.add_program(span, Program(tag, [tags], args=column))
        workloads.append(workload)
    cq = mesh.mesh_command_queue()
    for _ in range(100):
        for workload in workloads:
            cq.enqueue_mesh_workload(workload)
    cq.finish()
    assert (tags.slab().view(np.uint32)[:, :4] == 100).all()


def test_per_device_runtime_args_run_per_device(open_mesh):
    """MeshWorkloadSanity: per-device runtime arguments reach exactly their device."""
    mesh = open_mesh((2, 4))
    (out,) = buffers(mesh, 1, pages=1)
    seen = []

    def write_id(ctx):
        seen.append(len(ctx.coords))
        ctx.buffers[0].view(np.uint32)[:, 0] = ctx.args

    args = {coord: 100 + mesh.get_device_id(coord) for coord in mesh.shape.coords()}
    program = Program(write_id, [out], runtime_args=args)
    mesh.mesh_command_queue().enqueue_mesh_workload(
        MeshWorkload(program, MeshCoordinateRange(mesh.shape)), blocking=True
    )
    assert seen == [1] * 8
    assert list(out.slab().view(np.uint32)[:, 0]) == [100 + i for i in range(8)]


def test_a_uniform_program_over_the_mesh_is_one_vectorised_call(open_mesh):
    mesh = open_mesh((8, 4))
    (out,) = buffers(mesh, 1, pages=1)
    calls = []
    program = Program(lambda ctx: calls.append(ctx.buffers[0].shape), [out])
    mesh.mesh_command_queue().enqueue_mesh_workload(
        MeshWorkload(program, MeshCoordinateRange(mesh.shape)), blocking=True
    )
    assert calls == [(32, 4096)]
    calls.clear()
    column = MeshCoordinateRange(MeshCoordinate(0, 1), MeshCoordinate(7, 2))
    mesh.mesh_command_queue().enqueue_mesh_workload(MeshWorkload(program, column), blocking=True)
    assert calls == [(2, 4096)] * 8  # one call per mesh row of the box


def test_bad_workloads(open_mesh):
    """ProgramPreparationRejectsEmptyWorkload, overlapping ranges, ranges outside the mesh."""
    mesh = open_mesh((2, 4))
    (out,) = buffers(mesh, 1, pages=1)
    cq = mesh.mesh_command_queue()
    with pytest.raises(MeshnnError, match="at least one program"):
        cq.enqueue_mesh_workload(MeshWorkload())
    workload = MeshWorkload(
        Program(lambda ctx: None, [out]), MeshCoordinateRange(MeshCoordinate(0, 0), MeshCoordinate(1, 1))
    )
    with pytest.raises(MeshnnError, match="overlaps"):
        workload.add_program(MeshCoordinateRange(MeshCoordinate(1, 1), MeshCoordinate(1, 3)), Program(lambda ctx: None))
    outside = MeshWorkload(
        Program(lambda ctx: None, [out]), MeshCoordinateRange(MeshCoordinate(0, 0), MeshCoordinate(2, 0))
    )
    with pytest.raises(MeshnnError, match="outside"):
        cq.enqueue_mesh_workload(outside)
    out.deallocate()
    with pytest.raises(MeshnnError, match="deallocated"):
        cq.enqueue_mesh_workload(workload)
