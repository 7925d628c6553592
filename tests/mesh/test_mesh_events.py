"""Two command queues and events: tt-metal's test_mesh_events.cpp cases, and error surfacing."""

from __future__ import annotations

import threading
import weakref

import numpy as np
import pytest

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnError, QueueError
from meshnn.mesh import (
    DeviceLocalBufferConfig,
    MeshBuffer,
    MeshCoordinate,
    MeshCoordinateRange,
    MeshWorkload,
    Program,
    ReplicatedBufferConfig,
    ShardDataTransfer,
    ShardedBufferConfig,
    event_synchronize,
)
from meshnn.mesh.events import MeshEvent


def test_replicated_async_io(open_mesh):
    """ReplicatedAsyncIO: write on cq0, record, cq1 waits, cq1 reads every coord."""
    mesh = open_mesh((2, 4), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    buffer = MeshBuffer.create(ReplicatedBufferConfig(1000 * 4096), DeviceLocalBufferConfig(4096, BufferType.L1), mesh)
    for iteration in range(20):
        src = np.full(1000 * 1024, iteration, dtype=np.uint32)
        cq0.enqueue_write_mesh_buffer(buffer, src, blocking=False)
        event = cq0.enqueue_record_event()
        cq1.enqueue_wait_for_event(event)
        for coord in mesh.local_coords():
            out = np.zeros_like(src)
            cq1.enqueue_read_shards([ShardDataTransfer(coord, out)], buffer, blocking=True)
            assert np.array_equal(out, src)


def test_sharded_async_io(open_mesh):
    """ShardedAsyncIO: alternate host and device synchronisation; reads on cq1 equal the source."""
    mesh = open_mesh((2, 4), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    config = ShardedBufferConfig(2048 * 2048 * 4, (2048, 2048), (512, 1024))
    buffer = MeshBuffer.create(config, DeviceLocalBufferConfig(4096), mesh)
    for iteration in range(6):
        src = np.arange(2048 * 2048, dtype=np.uint32) + iteration
        cq0.enqueue_write_mesh_buffer(buffer, src, blocking=False)
        event = cq0.enqueue_record_event_to_host()
        if iteration % 2:
            event_synchronize(event)
        else:
            cq1.enqueue_wait_for_event(event)
        dst = np.zeros_like(src)
        cq1.enqueue_read_mesh_buffer(dst, buffer, blocking=True)
        assert np.array_equal(dst, src)


def add_mul_workload(mesh, a, b, out):
    """programs[0] adds on the first half of the mesh rows, programs[1] multiplies on the rest."""

    def add(ctx):
        ctx.buffers[2].view(np.uint32)[...] = ctx.buffers[0].view(np.uint32) + ctx.buffers[1].view(np.uint32)

    def mul(ctx):
        ctx.buffers[2].view(np.uint32)[...] = ctx.buffers[0].view(np.uint32) * ctx.buffers[1].view(np.uint32)

    rows, cols = mesh.num_rows, mesh.num_cols
    half = max(rows // 2, 1)
    workload = MeshWorkload()
    workload.add_program(
        MeshCoordinateRange(MeshCoordinate(0, 0), MeshCoordinate(half - 1, cols - 1)),
        Program(add, [a, b, out]),
    )
    if half < rows:
        workload.add_program(
            MeshCoordinateRange(MeshCoordinate(half, 0), MeshCoordinate(rows - 1, cols - 1)),
            Program(mul, [a, b, out]),
        )
    return workload, half


@pytest.mark.parametrize("shape", [(2, 4), (8, 4)])
def test_async_workload_and_io(open_mesh, shape):
    """AsyncWorkloadAndIO: writes on cq1, the workload on cq0, events both ways; add on the first
    half of the rows gives 2i+5, multiply on the second gives (i+2)(i+3)."""
    mesh = open_mesh(shape, num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    local = DeviceLocalBufferConfig(4096, BufferType.DRAM)
    a, b, out = (MeshBuffer.create(ReplicatedBufferConfig(16 * 4096), local, mesh) for _ in range(3))
    workload, half = add_mul_workload(mesh, a, b, out)
    for i in range(10):
        cq1.enqueue_write_mesh_buffer(a, np.full(16 * 1024, i + 2, np.uint32), blocking=False)
        cq1.enqueue_write_mesh_buffer(b, np.full(16 * 1024, i + 3, np.uint32), blocking=False)
        written = cq1.enqueue_record_event()
        cq0.enqueue_wait_for_event(written)
        cq0.enqueue_mesh_workload(workload, blocking=False)
        done = cq0.enqueue_record_event()
        cq1.enqueue_wait_for_event(done)
        for coord in mesh.local_coords():
            result = np.zeros(16 * 1024, np.uint32)
            cq1.enqueue_read_shards([ShardDataTransfer(coord, result)], out, blocking=True)
            expected = 2 * i + 5 if coord[0] < half else (i + 2) * (i + 3)
            assert (result == expected).all(), (i, coord)


def test_custom_device_ranges(open_mesh):
    """CustomDeviceRanges: sub-grid writes to row 0 then row 1, each synchronised its own way."""
    mesh = open_mesh((2, 4), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    buffer = MeshBuffer.create(ReplicatedBufferConfig(64 * 4096), DeviceLocalBufferConfig(4096), mesh)
    for row in (0, 1):
        src = np.full(64 * 1024, 10 + row, np.uint32)
        sub_grid = MeshCoordinateRange(MeshCoordinate(row, 0), MeshCoordinate(row, 3))
        cq1.enqueue_write_shard_to_sub_grid(buffer, src, sub_grid, blocking=False)
        event = cq1.enqueue_record_event(sub_grid)
        if row == 0:
            cq0.enqueue_wait_for_event(event)
        else:
            event_synchronize(event)
        for coord in sub_grid:
            out = np.zeros_like(src)
            cq0.enqueue_read_shards([ShardDataTransfer(coord, out)], buffer, blocking=True)
            assert np.array_equal(out, src)
    assert (buffer.slab()[:4].view(np.uint32) == 10).all() and (buffer.slab()[4:].view(np.uint32) == 11).all()


def test_multi_cq_non_blocking_reads(open_mesh):
    """MultiCQNonBlockingReads: 500 rounds of write on cq0 / non-blocking read on cq1; after finish
    every per-round output equals that round's input."""
    mesh = open_mesh((2, 4), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DeviceLocalBufferConfig(4096), mesh)
    coord = MeshCoordinate(1, 2)
    outputs, previous_read = [], None
    for i in range(500):
        if previous_read is not None:
            cq0.enqueue_wait_for_event(previous_read)
        cq0.enqueue_write_mesh_buffer(buffer, np.full(1024, i, np.uint32), blocking=True)
        written = cq0.enqueue_record_event_to_host()
        cq1.enqueue_wait_for_event(written)
        out = np.zeros(1024, np.uint32)
        cq1.enqueue_read_shards([ShardDataTransfer(coord, out)], buffer, blocking=False)
        previous_read = cq1.enqueue_record_event()
        outputs.append(out)
    cq0.finish()
    cq1.finish()
    assert all((out == i).all() for i, out in enumerate(outputs))


def test_two_queues_always_see_the_written_data(open_mesh, rng):
    """Acceptance: a write on cq1 and a workload on cq0 that waits for its event, 200 random sizes."""
    mesh = open_mesh((2, 4), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    for _ in range(200):
        pages = int(rng.integers(1, 64))
        src_buffer = MeshBuffer.create(ReplicatedBufferConfig(pages * 4096), DeviceLocalBufferConfig(4096), mesh)
        dst_buffer = MeshBuffer.create(ReplicatedBufferConfig(pages * 4096), DeviceLocalBufferConfig(4096), mesh)
        src = rng.integers(0, 255, pages * 4096, dtype=np.uint8)
        cq1.enqueue_write_mesh_buffer(src_buffer, src, blocking=False)
        src = src + 1  # the queue owns what it was given: changing our array must not matter
        written = cq1.enqueue_record_event()
        cq0.enqueue_wait_for_event(written)

        def copy(ctx):
            ctx.buffers[1][...] = ctx.buffers[0]

        cq0.enqueue_mesh_workload(
            MeshWorkload(Program(copy, [src_buffer, dst_buffer]), MeshCoordinateRange(mesh.shape))
        )
        cq0.finish()
        assert np.array_equal(dst_buffer.slab(), np.broadcast_to(src - 1, dst_buffer.slab().shape))


def test_kernel_errors_surface_at_the_next_blocking_call_and_the_queue_survives(open_mesh):
    mesh = open_mesh((1, 2), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DeviceLocalBufferConfig(4096), mesh)

    def broken(ctx):
        raise ZeroDivisionError("the kernel divided by zero")

    gate = cq1.enqueue_record_event()  # force the failing work onto the dispatch thread
    cq0.enqueue_wait_for_event(gate)
    cq0.enqueue_mesh_workload(MeshWorkload(Program(broken, [buffer]), MeshCoordinateRange(mesh.shape)))
    with pytest.raises(QueueError, match="ZeroDivisionError: the kernel divided by zero") as failure:
        cq0.finish()
    assert isinstance(failure.value.__cause__, ZeroDivisionError)
    cq0.enqueue_write_mesh_buffer(buffer, np.ones(4096, np.uint8), blocking=True)  # still usable
    assert buffer.slab().all()
    cq0.finish()  # the error was reported once


def test_a_wait_that_never_completes_is_bounded(open_mesh, monkeypatch):
    monkeypatch.setenv("MESHNN_WAIT_TIMEOUT", "0.2")
    mesh = open_mesh((1, 1), num_command_queues=2)
    never = MeshEvent(1, 10**9, MeshCoordinateRange(mesh.shape), mesh.mesh_id)
    cq0 = mesh.mesh_command_queue(0)
    cq0.enqueue_wait_for_event(never)
    with pytest.raises(QueueError, match="timed out"):
        cq0.finish()
    with pytest.raises(QueueError, match="did not complete"):
        event_synchronize(never)


def test_bad_queue_arguments_are_refused_before_anything_runs(open_mesh):
    mesh = open_mesh((2, 4))
    other = open_mesh((2, 4))
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DeviceLocalBufferConfig(4096), mesh)
    cq = mesh.mesh_command_queue()
    with pytest.raises(MeshnnError, match="cq_id 1"):
        mesh.mesh_command_queue(1)
    with pytest.raises(MeshnnError, match="another mesh"):
        other.mesh_command_queue().enqueue_write_mesh_buffer(buffer, np.zeros(4096, np.uint8))
    with pytest.raises(MeshnnError, match="out of bounds"):
        cq.enqueue_write_shards(buffer, [ShardDataTransfer(MeshCoordinate(2, 0), np.zeros(4096, np.uint8))])
    read_only = np.zeros(4096, np.uint8)
    read_only.setflags(write=False)
    with pytest.raises(MeshnnError, match="read-only"):
        cq.enqueue_read_shards([ShardDataTransfer((0, 0), read_only)], buffer)
    with pytest.raises(TypeError):
        cq.enqueue_write_shards(buffer, [ShardDataTransfer((0, 0), object())])
    assert not buffer.slab().any()


def test_the_dispatch_thread_does_not_keep_the_last_work_s_buffer_alive(open_mesh):
    """A buffer whose last use was a write run by the dispatch thread is freed when its owner drops
    it: the idle thread holds nothing of the work it ran (CI once found such a buffer live)."""
    mesh = open_mesh((1, 2), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    buffer = MeshBuffer.create(ReplicatedBufferConfig(4096), DeviceLocalBufferConfig(4096), mesh)
    scratch = MeshBuffer.create(ReplicatedBufferConfig(4096), DeviceLocalBufferConfig(4096), mesh)
    running, release = threading.Event(), threading.Event()

    def held(ctx) -> None:
        running.set()
        release.wait(timeout=10)

    busy = threading.Thread(
        target=cq1.enqueue_mesh_workload,
        args=(MeshWorkload(Program(held, [scratch]), MeshCoordinateRange(mesh.shape)),),
    )
    busy.start()
    assert running.wait(timeout=10)
    gate = cq1.enqueue_record_event()  # behind the held kernel: not complete yet
    cq0.enqueue_wait_for_event(gate)  # so cq0's dispatch thread runs this and the write after it
    cq0.enqueue_write_mesh_buffer(buffer, np.ones(4096, np.uint8), blocking=False)
    release.set()
    busy.join(timeout=10)
    cq0.finish()
    cq1.finish()
    del scratch
    gone = weakref.ref(buffer)
    del buffer
    assert gone() is None
    assert mesh.live_buffers() == []
