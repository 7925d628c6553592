"""A plain binary op over tensors of specs it has run before goes by its plan (meshnn.ops.planned):
the ordinary path's addresses, bytes, program-cache entries and errors; the inputs read as they
are now (in-place writes, deallocation); observers added later see every op; a trace captures
and replays it as eager runs it; a queue found busy sends it the ordinary way.  (The program cache
as it is now, cleared, disabled, enabled, seen by repeated plain adds: tests/ops/test_binary_plain.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import DeallocatedError, DeviceClosedError
from meshnn.mesh.observers import OBSERVERS, MeshObserver
from meshnn.ops.eltwise import kernel as eltwise_kernel


def bits(mesh, tensor) -> np.ndarray:
    """Every device's bytes of ``tensor``, as its bfloat16 bits."""
    return ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).view(torch.int16).numpy()


def replica(mesh, tensor) -> torch.Tensor:
    """The first device's copy of a replicated ``tensor``."""
    return ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[:32]


def operands(mesh, seed: int = 0):
    """A tensor sharded over the mesh's devices and one replicated, both 32x32 bfloat16 tiles a device."""
    gen = torch.Generator().manual_seed(seed)
    n = mesh.get_num_devices()
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
    s = ttnn.from_torch(torch.randn(n, 32, 32, generator=gen), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                        device=mesh, mesh_mapper=mapper)  # fmt: skip
    r = ttnn.from_torch(torch.randn(32, 32, generator=gen), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    return s, r


def program(mesh):
    """Adds and multiplies over both operands, some outputs kept and some dropped, the last
    operand deallocated: each output's address and bits, the program cache's size and the
    allocator's block table at the end."""
    s, r = operands(mesh)
    seen, kept = [], []
    for step in range(6):
        for a, b in ((s, s), (r, r), (s, s)):
            out = ttnn.add(a, b) if step % 2 else ttnn.multiply(a, b)
            seen.append((out.buffer_address(), bits(mesh, out)))
            if step % 3 == 0:
                kept.append(out)
        if step == 3:
            ttnn.deallocate(kept.pop(0))
    view = mesh.get_memory_view(ttnn.BufferType.DRAM)
    return seen, mesh.num_program_cache_entries(), view.block_table


class Recorder(MeshObserver):
    def __init__(self) -> None:
        self.ops: list[str] = []

    def on_op_begin(self, event) -> None:
        self.ops.append(event.op)


@pytest.mark.parametrize("shape", [(1, 1), (8, 4)])
def test_the_plan_gives_the_ordinary_paths_addresses_bytes_and_cache(open_mesh, shape):
    planned = program(open_mesh(shape))
    recorder = Recorder()
    OBSERVERS.add(recorder)  # (any observer sends every op the ordinary way)
    try:
        ordinary = program(open_mesh(shape))
    finally:
        OBSERVERS.remove(recorder)
    assert len(recorder.ops) == len(ordinary[0]) == 18
    assert [a for a, _ in planned[0]] == [a for a, _ in ordinary[0]]
    for (_, got), (_, want) in zip(planned[0], ordinary[0], strict=True):
        assert np.array_equal(got, want)
    assert planned[1:] == ordinary[1:]


def test_a_repeated_call_goes_by_its_plan_and_computes_torchs_bits(open_mesh, monkeypatch):
    mesh = open_mesh((8, 4))
    s, r = operands(mesh)
    first = ttnn.add(s, r)  # the ordinary path, which makes the plan

    def ordinary(*args, **kwargs):
        raise AssertionError("the ordinary path")

    monkeypatch.setattr(eltwise_kernel, "launch", ordinary)
    again = ttnn.add(s, r)
    want = (ttnn.to_torch(s, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)) + replica(mesh, r)).to(torch.bfloat16)
    assert np.array_equal(bits(mesh, again), want.view(torch.int16).numpy())
    assert np.array_equal(bits(mesh, again), bits(mesh, first))
    recorder = Recorder()
    OBSERVERS.add(recorder)
    try:
        with pytest.raises(AssertionError, match="the ordinary path"):
            ttnn.add(s, r)  # an observer came: the plan is passed by
    finally:
        OBSERVERS.remove(recorder)


def test_a_plan_reads_its_inputs_as_they_are_now(open_mesh):
    mesh = open_mesh((2, 4))
    s, r = operands(mesh)
    start = replica(mesh, r).to(torch.float32)
    ttnn.add(r, r)
    ttnn.add(r, r)  # (by the plan)
    ttnn.add_(r, r)  # in place: r is twice what it was
    assert torch.equal(replica(mesh, ttnn.add(r, r)).to(torch.float32), 4 * start)
    before = mesh.buffer_counts()
    ttnn.deallocate(s)
    with pytest.raises(DeallocatedError, match="input_tensor_a"):
        ttnn.add(s, s)
    assert mesh.buffer_counts() == {**before, ttnn.BufferType.DRAM: before[ttnn.BufferType.DRAM] - 1}


def test_a_closed_mesh_refuses_a_planned_call(open_mesh):
    mesh = open_mesh((1, 1))
    _, r = operands(mesh)
    ttnn.add(r, r)
    mesh.close()
    with pytest.raises(DeviceClosedError):
        ttnn.add(r, r)


@pytest.mark.filterwarnings("ignore:Allocating device buffers is unsafe")
def test_a_trace_of_a_planned_op_replays_what_eager_gives(open_mesh):
    mesh = open_mesh((1, 2), trace_region_size=1 << 20)
    s, r = operands(mesh)
    ttnn.add(s, r)
    ttnn.add(s, r)  # (by the plan)
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = ttnn.add(s, r)  # captured: the ordinary path
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    ttnn.add_(r, r)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    assert np.array_equal(bits(mesh, out), bits(mesh, ttnn.add(s, r)))
    ttnn.release_trace(mesh, trace)


def test_a_queue_found_busy_sends_the_call_the_ordinary_way(open_mesh, monkeypatch):
    mesh = open_mesh((2, 4))
    s, r = operands(mesh)
    first = ttnn.add(s, r)
    address, counts = first.buffer_address(), mesh.buffer_counts()
    del first
    queue = mesh.mesh_command_queue(0)
    taken = []
    monkeypatch.setattr(queue, "run_if_idle", lambda work: taken.append(work) or False)  # another thread came first
    out = ttnn.add(s, r)
    queue.finish()
    assert len(taken) == 2  # the plan's try, then the ordinary path's
    assert out.buffer_address() == address and mesh.buffer_counts() == counts
    assert np.array_equal(bits(mesh, out), bits(mesh, ttnn.add(s, r)))
