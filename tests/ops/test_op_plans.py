"""The per-op fast paths cannot serve stale results or skip a check.

- Binary ops keep a plan per (op, input specs, dtype, memory_config, native kernel): a plan holds
  only what follows from its key, so another spec, memory config or mesh gets its own result, an
  input written in between is read afresh, and every check on the tensors themselves (allocated,
  one open mesh, queue_id, output_tensor) still runs, before anything is allocated.
- A MeshBuffer records its views itself (a weak reference, a WeakSet from the second view):
  ``deallocate(force=False)`` still sees every live view, and a view never keeps a tensor alive.
- A MeshBuffer frees its address when dropped or deallocated, exactly once.
- The command queue's inline path wakes a ``finish`` waiting on another thread, and queued work.
"""

from __future__ import annotations

import gc
import threading
import time
import weakref

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import OutOfMemoryError
from meshnn.mesh import dispatch
from meshnn.ops.eltwise import binary


def tile(mesh, values: np.ndarray, dtype=ttnn.bfloat16, **kwargs) -> ttnn.Tensor:
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, **kwargs)


def sharded(mesh, values: np.ndarray, dtype=ttnn.bfloat16) -> ttnn.Tensor:
    return tile(mesh, values, dtype, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))


def values_of(tensor: ttnn.Tensor, mesh) -> np.ndarray:
    return ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy()


def bf16(values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values).bfloat16().float().numpy()


def live(mesh) -> list[tuple]:
    return [(b.buffer_type(), b.address()) for b in mesh.live_buffers()]


@pytest.fixture
def fresh_plans():
    binary._PLANS.clear()
    yield binary._PLANS
    binary._PLANS.clear()


def test_a_plan_is_made_once_and_reused(open_mesh, rng, fresh_plans):
    mesh = open_mesh((2, 4))
    x = sharded(mesh, rng.standard_normal((8, 32, 32)).astype(np.float32))
    ttnn.add(x, x)
    assert len(fresh_plans) == 1
    out = ttnn.add(x, x)
    assert len(fresh_plans) == 1
    np.testing.assert_array_equal(values_of(out, mesh), bf16(2 * values_of(x, mesh)))


def test_another_spec_gets_its_own_plan_and_result(open_mesh, rng, fresh_plans):
    mesh = open_mesh((2, 4))
    a = rng.standard_normal((8, 32, 32)).astype(np.float32)
    b = rng.standard_normal((8, 32, 64)).astype(np.float32)
    ta, tb = sharded(mesh, a), sharded(mesh, b)
    assert ttnn.add(ta, ta).shape == ttnn.Shape([1, 32, 32])
    wide = ttnn.add(tb, tb)
    assert wide.shape == ttnn.Shape([1, 32, 64]) and len(fresh_plans) == 2
    np.testing.assert_array_equal(values_of(wide, mesh), bf16(2 * bf16(b)))
    as_float = ttnn.add(ta, ta, dtype=ttnn.float32)  # same inputs, another dtype: another output
    assert as_float.dtype == ttnn.float32
    np.testing.assert_array_equal(values_of(as_float, mesh), 2 * bf16(a))
    f32 = sharded(mesh, a, ttnn.float32)
    assert ttnn.add(f32, f32).dtype == ttnn.float32  # another input dtype: no bfloat16 plan


def test_a_changed_memory_config_is_honoured(open_mesh, rng, fresh_plans):
    mesh = open_mesh((1, 2))
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    dram = ttnn.add(x, x)
    l1 = ttnn.add(x, x, memory_config=ttnn.L1_MEMORY_CONFIG)
    again = ttnn.add(x, x, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    assert dram.memory_config().buffer_type == ttnn.BufferType.DRAM
    assert l1.memory_config().buffer_type == ttnn.BufferType.L1
    assert again.memory_config().buffer_type == ttnn.BufferType.DRAM
    for out in (dram, l1, again):
        np.testing.assert_array_equal(values_of(out, mesh), values_of(dram, mesh))


def test_an_input_written_in_between_is_read_afresh(open_mesh, rng, fresh_plans):
    mesh = open_mesh((2, 4))
    first = rng.standard_normal((8, 32, 32)).astype(np.float32)
    second = rng.standard_normal((8, 32, 32)).astype(np.float32)
    x = sharded(mesh, first)
    np.testing.assert_array_equal(values_of(ttnn.add(x, x), mesh), bf16(2 * bf16(first)))
    ttnn.copy_host_to_device_tensor(
        ttnn.from_torch(
            torch.from_numpy(second),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
        ),
        x,
    )
    np.testing.assert_array_equal(values_of(ttnn.add(x, x), mesh), bf16(2 * bf16(second)))


def test_a_deallocated_input_is_refused_by_name_before_any_allocation(open_mesh, rng, fresh_plans):
    mesh = open_mesh((2, 4))
    x = sharded(mesh, rng.standard_normal((8, 32, 32)).astype(np.float32))
    y = sharded(mesh, rng.standard_normal((8, 32, 32)).astype(np.float32))
    ttnn.add(x, y)  # the plan exists
    ttnn.deallocate(y)
    before = live(mesh)
    with pytest.raises(ttnn.DeallocatedError, match="input_tensor_b"):
        ttnn.add(x, y)
    with pytest.raises(ttnn.DeallocatedError, match="input_tensor_a"):
        ttnn.add(y, x)
    assert live(mesh) == before


def test_tensors_of_another_mesh_are_refused_and_a_plan_serves_every_mesh(open_mesh, rng, fresh_plans):
    one, two = open_mesh((1, 2)), open_mesh((1, 2))
    a = rng.standard_normal((2, 32, 32)).astype(np.float32)
    b = rng.standard_normal((2, 32, 32)).astype(np.float32)
    x, y = sharded(one, a), sharded(two, b)
    ttnn.add(x, x)  # a plan for these specs, made on mesh one
    before = live(one), live(two)
    with pytest.raises(ttnn.WrongMeshError, match="input_tensor_b"):
        ttnn.add(x, y)
    assert (live(one), live(two)) == before
    out = ttnn.add(y, y)  # the same plan on mesh two: its own buffer, its own bytes
    assert out.device() is two and len(fresh_plans) == 1
    np.testing.assert_array_equal(values_of(out, two), bf16(2 * bf16(b)))


def test_a_closed_mesh_is_refused(open_mesh, rng, fresh_plans):
    mesh = open_mesh((1, 2))
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    ttnn.add(x, x)
    mesh.close()
    with pytest.raises(ttnn.DeviceClosedError, match="input_tensor_a"):
        ttnn.add(x, x)


def test_queue_id_and_output_tensor_are_checked_on_every_call(open_mesh, rng, fresh_plans):
    mesh = open_mesh((1, 2), num_command_queues=2)
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    ttnn.add(x, x)
    wrong = sharded(mesh, rng.standard_normal((2, 32, 64)).astype(np.float32))
    before = live(mesh)
    with pytest.raises(ttnn.MeshnnValueError, match="queue_id 2"):
        ttnn.add(x, x, queue_id=2)
    with pytest.raises(ttnn.MeshnnTypeError, match="queue_id"):
        ttnn.add(x, x, queue_id=True)
    with pytest.raises(ttnn.MeshnnValueError, match="output_tensor"):
        ttnn.add(x, x, output_tensor=wrong)
    assert live(mesh) == before
    on_one = ttnn.add(x, x, queue_id=1)
    ttnn.synchronize_device(mesh, cq_id=1)
    into = ttnn.allocate_tensor_on_device(x.spec, mesh)
    assert ttnn.add(x, x, output_tensor=into) is into
    np.testing.assert_array_equal(values_of(into, mesh), values_of(on_one, mesh))


def test_out_of_memory_with_a_plan_leaves_nothing_allocated(open_mesh, rng, fresh_plans, monkeypatch):
    mesh = open_mesh((1, 2))
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    ttnn.add(x, x)
    before = live(mesh)
    real = mesh.allocator.allocate

    def full(layout, *, bottom_up=None):
        raise OutOfMemoryError(
            buffer_type=layout.buffer_type.name,
            size=layout.size,
            num_banks=1,
            size_per_bank=layout.size,
            bank_size=0,
            allocated=0,
            free=0,
            largest_free=0,
        )

    monkeypatch.setattr(mesh.allocator, "allocate", full)
    with pytest.raises(OutOfMemoryError):
        ttnn.add(x, x)
    assert live(mesh) == before
    monkeypatch.setattr(mesh.allocator, "allocate", real)
    assert ttnn.add(x, x).is_allocated()


def test_a_bad_call_is_not_kept_as_a_plan(open_mesh, rng, fresh_plans):
    mesh = open_mesh((1, 2))
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    y = sharded(mesh, rng.standard_normal((2, 32, 48)).astype(np.float32))
    for _ in range(2):
        with pytest.raises(ttnn.MeshnnValueError, match="broadcast"):
            ttnn.add(x, y)
    with pytest.raises(ttnn.MeshnnTypeError, match="memory_config"):
        ttnn.add(x, x, memory_config="L1")
    assert not fresh_plans


# --------------------------------------------------------------------------- views and frees


def test_deallocate_without_force_sees_every_live_view(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    out = ttnn.add(x, x)  # one view: recorded as a weak reference
    ttnn.deallocate(out, force=False)
    assert not out.is_allocated(), "a tensor that is its buffer's only view is freed"
    out = ttnn.add(x, x)
    view = ttnn.reshape(out, (1, 1, 32, 32))  # a second view of the same buffer
    ttnn.deallocate(out, force=False)
    assert out.is_allocated() and view.is_allocated(), "another view is alive: nothing is freed"
    del view
    gc.collect()
    ttnn.deallocate(out, force=False)
    assert not out.is_allocated(), "the other view has gone"


def test_a_view_record_never_keeps_a_tensor_alive(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    out = ttnn.add(x, x)
    view = ttnn.reshape(out, (1, 1, 32, 32))
    buffer, gone = out.storage.mesh_buffer, weakref.ref(view)
    del view
    gc.collect()
    assert gone() is None and buffer.is_allocated()


def test_a_dropped_output_frees_its_address_once(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    before = live(mesh)
    out = ttnn.add(x, x)
    assert len(live(mesh)) == len(before) + 1
    del out
    assert live(mesh) == before
    out = ttnn.add(x, x)
    buffer = out.storage.mesh_buffer
    ttnn.deallocate(out)
    ttnn.deallocate(out)  # safe to repeat
    buffer.deallocate()
    del out, buffer  # the drop of a freed buffer frees nothing again
    assert live(mesh) == before


def test_threads_deallocating_one_buffer_release_it_once(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    before = live(mesh)
    for _ in range(20):
        buffer = ttnn.add(x, x).storage.mesh_buffer
        errors: list[BaseException] = []
        start = threading.Barrier(4)

        def free(buffer=buffer, errors=errors, start=start) -> None:
            try:
                start.wait(10)
                buffer.deallocate()
            except BaseException as e:  # an InvalidFreeError would mean a double free
                errors.append(e)

        threads = [threading.Thread(target=free) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert not errors
    assert live(mesh) == before


# ------------------------------------------------------------------------------------ queue


def _gate(mesh, gate: threading.Event, started: threading.Event) -> ttnn.MeshWorkload:
    def wait(ctx) -> None:
        started.set()
        assert gate.wait(10)

    return ttnn.MeshWorkload(ttnn.Program(wait, [], name="gate"), mesh.full_range)


@pytest.fixture
def slow_poll(monkeypatch):
    """An idle dispatch thread that looks for work once a minute unless woken: a test whose wait
    ends well within that was woken, whatever the host's load."""
    monkeypatch.setattr(dispatch, "IDLE_POLL", 60.0)


def test_inline_work_wakes_a_finish_waiting_on_another_thread(open_mesh, slow_poll):
    mesh = open_mesh((1, 2))
    cq = mesh.mesh_command_queue()
    gate, started = threading.Event(), threading.Event()
    runner = threading.Thread(target=cq.enqueue_mesh_workload, args=(_gate(mesh, gate, started),))
    runner.start()  # the queue is idle: the gate runs inline, on the runner's thread
    assert started.wait(10)
    finished = threading.Event()
    waiter = threading.Thread(target=lambda: (cq.finish(), finished.set()))
    waiter.start()
    time.sleep(0.05)
    assert not finished.is_set(), "finish returned while work was running"
    gate.set()
    assert finished.wait(30), "the end of inline work did not wake finish"
    runner.join(10)
    waiter.join(10)


def test_work_queued_behind_inline_work_runs_after_it_in_order(open_mesh, rng, slow_poll):
    mesh = open_mesh((1, 2))
    cq = mesh.mesh_command_queue()
    x = sharded(mesh, rng.standard_normal((2, 32, 32)).astype(np.float32))
    gate, started = threading.Event(), threading.Event()
    order: list[str] = []
    blocker = _gate(mesh, gate, started)
    runner = threading.Thread(target=lambda: (cq.enqueue_mesh_workload(blocker), order.append("gate")))
    runner.start()
    assert started.wait(10)
    out = ttnn.add(x, x)  # queued: the queue is busy
    marker = ttnn.MeshWorkload(ttnn.Program(lambda ctx: order.append("after"), [], name="marker"), mesh.full_range)
    cq.enqueue_mesh_workload(marker)
    assert order == []
    gate.set()
    runner.join(10)
    t0 = time.perf_counter()
    cq.finish()
    assert time.perf_counter() - t0 < 30, "queued work waited for the dispatch thread's poll"
    assert order == ["gate", "after"]
    np.testing.assert_array_equal(values_of(out, mesh), bf16(2 * values_of(x, mesh)))
