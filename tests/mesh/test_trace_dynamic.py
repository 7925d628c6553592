"""A trace captured with no trace region (``trace_region_size=0``: tt-metal 2026's dynamic mode,
``mesh_trace.cpp``): its buffer is a DRAM buffer allocated top-down, and a buffer that would reach
below the highest end of a DRAM buffer allocated or freed during the capture is refused with
tt-metal's three messages, nothing kept.  The overlap cases lay DRAM out exactly on a planning mesh
(addresses, no bytes): a filler takes all but a few 4 KiB pages of every bank."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.device.buffer import BufferType
from meshnn.mesh.buffer_config import DeviceLocalBufferConfig, ReplicatedBufferConfig
from meshnn.mesh.mesh_buffer import MeshBuffer

PAGE = 4096


def dram(mesh, pages_per_bank: int, *, bottom_up: bool = True, page: int = PAGE) -> MeshBuffer:
    banks = ttnn.get_memory_view(mesh, BufferType.DRAM).num_banks
    config = DeviceLocalBufferConfig(page_size=page, buffer_type=BufferType.DRAM, bottom_up=bottom_up)
    return MeshBuffer.create(ReplicatedBufferConfig(size=pages_per_bank * page * banks), config, mesh)


def leave_free(mesh, pages_per_bank: int) -> MeshBuffer:
    """A filler (of 32 B pages, the DRAM alignment) that leaves ``pages_per_bank`` 4 KiB pages free
    at the top of every DRAM bank."""
    largest = ttnn.get_memory_view(mesh, BufferType.DRAM).largest_contiguous_bytes_free_per_bank
    return dram(mesh, (largest - pages_per_bank * PAGE) // 32, page=32)


def test_a_trace_with_no_region_lives_in_dram_top_down_and_replays(open_mesh):
    mesh = open_mesh((1, 2), trace_region_size=0)
    x = ttnn.from_torch(torch.arange(1024.0).reshape(32, 32), layout=ttnn.TILE_LAYOUT, device=mesh)
    ttnn.add(x, x)
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    y = ttnn.add(x, x)
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    buffer = mesh.traces[int(trace)].buffer
    view = ttnn.get_memory_view(mesh, BufferType.DRAM)
    assert buffer.device_local_config().buffer_type is BufferType.DRAM
    assert buffer.address() > y.storage.mesh_buffer.address()  # top-down, above the capture's output
    assert ttnn.get_memory_view(mesh, BufferType.TRACE).total_bytes_allocated_per_bank == 0
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(y)[0]), torch.arange(1024.0).reshape(32, 32) * 2)
    ttnn.release_trace(mesh, trace)
    after = ttnn.get_memory_view(mesh, BufferType.DRAM)
    assert after.total_bytes_allocated_per_bank == view.total_bytes_allocated_per_bank - PAGE


@pytest.mark.parametrize(
    "case, message",
    [
        ("freed", r"overlaps with buffers deallocated during trace capture \(deletion high water mark: \d+\)"),
        ("allocated", r"overlaps with buffers allocated during trace capture \(allocation high water mark: \d+\)"),
        ("both", r"overlaps with DRAM activity during trace capture\. Allocation high water mark: \d+, Deletion"),
    ],
)
def test_a_trace_buffer_below_the_captures_dram_high_water_marks_is_refused(open_mesh, case, message):
    mesh = open_mesh((1, 1), trace_region_size=0, execute=False)
    kept = [leave_free(mesh, 2)]
    if case == "freed":  # [filler | freed in the capture | kept]: the trace buffer takes the freed page
        freed = dram(mesh, 1)
        kept.append(dram(mesh, 1))
    before = ttnn.get_memory_view(mesh, BufferType.DRAM)
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    if case == "freed":
        freed.deallocate()
    elif case == "allocated":  # top-down: the top page, so the trace buffer goes below it
        kept.append(dram(mesh, 1, bottom_up=False))
    else:  # both: a buffer of the capture made and freed where the trace buffer then goes
        dram(mesh, 2).deallocate()
    with pytest.raises(ttnn.TraceError, match=r"^Trace buffer at address \d+ " + message):
        ttnn.end_trace_capture(mesh, trace, cq_id=0)
    assert not mesh.traces and mesh.mesh_command_queue(0).capture is None
    now = ttnn.get_memory_view(mesh, BufferType.DRAM)
    change = {"freed": -PAGE, "allocated": PAGE, "both": 0}[case]
    assert now.total_bytes_allocated_per_bank == before.total_bytes_allocated_per_bank + change


def test_the_allocator_tracks_dram_high_water_marks_only_while_asked(open_mesh):
    mesh = open_mesh((1, 1), execute=False)
    allocator = mesh.allocator
    early = dram(mesh, 1)
    allocator.begin_dram_high_water_mark_tracking()
    a = dram(mesh, 3)
    l1 = MeshBuffer.create(ReplicatedBufferConfig(size=PAGE), DeviceLocalBufferConfig(PAGE, BufferType.L1), mesh)
    l1.deallocate()  # L1 is not tracked
    early.deallocate()
    marks = allocator.end_dram_high_water_mark_tracking()
    assert marks == (a.address() + 3 * PAGE, early.address() + PAGE)
    a.deallocate()  # after the end: not tracked
    assert allocator.dram_marks is None
    assert allocator.end_dram_high_water_mark_tracking() == (0, 0)
