"""The dispatch fast paths of an op call cannot serve a stale result or change the queue's order.

- An op whose queue is idle runs at once on the calling thread, without a workload: the same
  bytes; a kernel's error is kept for the next blocking call as a queued one's is; a busy queue,
  a trace capture or a planning mesh takes the ordinary path.
- The program-cache key of an op is made once per (op, specs, attributes): another memory config,
  dtype or shape adds its own entry; attributes that compare equal but print apart (-0.0 and
  0.0, equal frozen configs) or that may change (a mutable config, a tensor) never share a key.
- An output's MeshBuffer configs and layout are made once per spec: every spec gets its own
  size, buffer type and address.
- A binary op's plan holds its program-cache key: the key :func:`program_keys.remember` records for
  the same op, specs and attributes, whatever the memory config and dtype.
- A kernel of torch element-wise operations over at most torch's grain leaves the thread's count of
  torch threads alone; a larger one runs on one thread (:mod:`meshnn.host.omp`).
- An element-wise op's new output is not zeroed before its kernel runs: the kernel writes every
  byte (padding included), whatever the memory held before.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.host import omp
from meshnn.ops import program_keys
from meshnn.ops.eltwise.kernel import elementwise_attrs
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output


def tile(mesh, values: np.ndarray, dtype=ttnn.bfloat16, **kwargs) -> ttnn.Tensor:
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, **kwargs)


def values_of(tensor: ttnn.Tensor, mesh) -> np.ndarray:
    return ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy()


def bf16(values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values).bfloat16().float().numpy()


# ------------------------------------------------------------------------------ running inline


def test_an_op_on_an_idle_queue_runs_inline_with_the_queued_paths_bytes(open_mesh, rng, monkeypatch):
    mesh = open_mesh((2, 4))
    values = rng.standard_normal((8, 32, 32)).astype(np.float32)
    x = tile(mesh, values, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    queued = ttnn.add(x, x, queue_id=0)
    cq = mesh.mesh_command_queue()
    cq.finish()
    expected = values_of(queued, mesh)

    def refuse(*_, **__):
        raise AssertionError("an op on an idle queue made a workload")

    monkeypatch.setattr(cq, "enqueue_mesh_workload", refuse)
    taken = cq._taken
    inline = ttnn.add(x, x)
    assert cq._taken == taken + 1 and cq._done == cq._taken, "the inline run is the queue's work, in its order"
    np.testing.assert_array_equal(values_of(inline, mesh), expected)
    np.testing.assert_array_equal(expected, bf16(2 * bf16(values)))


def test_an_op_on_a_busy_queue_is_queued_behind_its_work(open_mesh, rng):
    mesh = open_mesh((1, 2))
    cq = mesh.mesh_command_queue()
    values = rng.standard_normal((2, 32, 32)).astype(np.float32)
    x = tile(mesh, values, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    gate, started = threading.Event(), threading.Event()

    def wait(ctx) -> None:
        started.set()
        assert gate.wait(10)

    blocker = ttnn.MeshWorkload(ttnn.Program(wait, [], name="gate"), mesh.full_range)
    runner = threading.Thread(target=cq.enqueue_mesh_workload, args=(blocker,))
    runner.start()
    assert started.wait(10)
    ttnn.add_(x, x)  # in place, queued behind the gate
    doubled = ttnn.add(x, x)  # reads x after the in-place add, in the queue's order
    assert cq.has_work()
    gate.set()
    runner.join(10)
    cq.finish()
    np.testing.assert_array_equal(values_of(doubled, mesh), bf16(4 * bf16(values)))


def test_an_inline_kernels_error_is_kept_for_the_next_blocking_call(open_mesh, rng):
    mesh = open_mesh((2, 4))
    x = tile(mesh, rng.standard_normal((32, 32)).astype(np.float32))

    def broken(in_rows, out_rows, coords) -> None:
        raise ZeroDivisionError("the kernel failed")

    cq = mesh.mesh_command_queue()
    (out,) = launch("broken", mesh, [x], [Output(x.spec)], broken)  # no error at the call, as when queued
    assert out.is_allocated()
    with pytest.raises(ttnn.QueueError, match="the kernel failed"):
        cq.finish()
    cq.finish()  # the error surfaced once; the queue is usable
    np.testing.assert_array_equal(values_of(ttnn.add(x, x), mesh)[:32], bf16(2 * values_of(x, mesh)[:32]))


def test_a_captured_op_is_recorded_not_run_inline_and_its_replay_equals_eager(open_mesh, rng):
    mesh = open_mesh((2, 4), trace_region_size=1 << 20)
    x = tile(mesh, rng.standard_normal((8, 32, 32)).astype(np.float32), mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    eager = values_of(ttnn.multiply(ttnn.add(x, x), x), mesh)
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = ttnn.multiply(ttnn.add(x, x), x)
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    assert len(mesh.traces[int(trace)].entries) == 2, "both ops were recorded"
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    np.testing.assert_array_equal(values_of(out, mesh), eager)
    ttnn.release_trace(mesh, trace)


def test_an_op_on_a_planning_mesh_is_checked_and_not_run(open_mesh):
    mesh = open_mesh((2, 4), execute=False)
    x = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    for _ in range(2):
        out = ttnn.add(x, x)
        assert out.is_allocated() and tuple(out.shape) == (32, 32)
    with pytest.raises(ttnn.MeshnnError):
        ttnn.to_torch(out)  # a planning mesh has no bytes to read


# ------------------------------------------------------------------------------ program-cache keys


def test_program_cache_entries_per_memory_config_dtype_and_shape(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = tile(mesh, rng.standard_normal((32, 32)).astype(np.float32))
    y = tile(mesh, rng.standard_normal((64, 32)).astype(np.float32))
    before = mesh.num_program_cache_entries()
    for _ in range(3):
        ttnn.add(x, x)
    assert mesh.num_program_cache_entries() == before + 1
    ttnn.add(x, x, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert mesh.num_program_cache_entries() == before + 2
    ttnn.add(x, x, dtype=ttnn.float32)
    assert mesh.num_program_cache_entries() == before + 3
    ttnn.add(y, y)
    assert mesh.num_program_cache_entries() == before + 4
    mesh.clear_program_cache()
    ttnn.add(x, x)  # a cleared cache gets the entry again
    assert mesh.num_program_cache_entries() == 1


class _Recorder:
    program_cache_enabled = True

    def __init__(self) -> None:
        self.keys: list[tuple] = []

    def record_program(self, key: tuple) -> None:
        self.keys.append(key)


@dataclasses.dataclass(frozen=True)
class _Frozen:
    scale: float


@dataclasses.dataclass
class _Mutable:
    scale: float


@dataclasses.dataclass(frozen=True)
class _FrozenHoldingAList:
    scales: list


def _keys(attrs_list: list[dict], inputs) -> list[tuple]:
    recorder = _Recorder()
    for attrs in attrs_list:
        program_keys.remember(recorder, "op", inputs, [Output(inputs[0].spec)], attrs)
    return [key[3] for key in recorder.keys]


def test_program_keys_of_attributes_equal_but_printed_apart_are_apart(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = tile(mesh, rng.standard_normal((32, 32)).astype(np.float32))
    zero, minus, again = _keys([{"alpha": 0.0}, {"alpha": -0.0}, {"alpha": 0.0}], [x])
    assert zero == again == (("alpha", "0.0"),) and minus == (("alpha", "-0.0"),)
    one, true = _keys([{"alpha": 1}, {"alpha": True}], [x])
    assert one == (("alpha", "1"),) and true == (("alpha", "True"),)
    a, b = _keys([{"config": _Frozen(0.0)}, {"config": _Frozen(-0.0)}], [x])
    assert a == (("config", "_Frozen(scale=0.0)"),) and b == (("config", "_Frozen(scale=-0.0)"),)


def test_program_keys_of_changing_attributes_are_made_afresh(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = tile(mesh, rng.standard_normal((32, 32)).astype(np.float32))
    y = tile(mesh, rng.standard_normal((64, 32)).astype(np.float32))
    config = _Mutable(1.0)
    recorder = _Recorder()
    program_keys.remember(recorder, "op", [x], [Output(x.spec)], {"config": config})
    config.scale = 2.0
    program_keys.remember(recorder, "op", [x], [Output(x.spec)], {"config": config})
    assert [k[3] for k in recorder.keys] == [(("config", "_Mutable(scale=1.0)"),), (("config", "_Mutable(scale=2.0)"),)]
    held = _FrozenHoldingAList([1.0])
    recorder = _Recorder()
    for scale in (2.0, 3.0):
        program_keys.remember(recorder, "op", [x], [Output(x.spec)], {"config": held})
        held.scales.append(scale)
    assert [k[3] for k in recorder.keys] == [
        (("config", "_FrozenHoldingAList(scales=[1.0])"),),
        (("config", "_FrozenHoldingAList(scales=[1.0, 2.0])"),),
    ]
    by_tensor = _keys([{"weight": x}, {"weight": y}], [x])
    assert by_tensor[0] == (("weight", repr(x.spec)),) and by_tensor[1] == (("weight", repr(y.spec)),)


def test_program_keys_stay_right_when_the_memo_is_emptied(open_mesh, rng, monkeypatch):
    mesh = open_mesh((1, 1))
    x = tile(mesh, rng.standard_normal((32, 32)).astype(np.float32))
    monkeypatch.setattr(program_keys, "PROGRAM_KEYS_KEPT", 2)
    monkeypatch.setattr(program_keys, "_PROGRAM_KEYS", {})
    attrs = [{"alpha": float(i)} for i in range(5)] * 2
    assert _keys(attrs, [x]) == [(("alpha", repr(float(i))),) for i in range(5)] * 2
    assert len(program_keys._PROGRAM_KEYS) <= 2


@pytest.mark.parametrize(
    "options",
    [{}, {"memory_config": ttnn.L1_MEMORY_CONFIG}, {"dtype": ttnn.float32}, {"dtype": ttnn.bfloat8_b}],
    ids=["plain", "l1", "float32", "bfloat8_b"],
)
def test_a_plans_program_key_is_the_one_remember_records(open_mesh, rng, options):
    mesh = open_mesh((2, 4))
    x = tile(mesh, rng.standard_normal((32, 64)).astype(np.float32))
    y = tile(mesh, rng.standard_normal((32, 64)).astype(np.float32))
    mesh.clear_program_cache()
    for _ in range(3):  # the first makes the plan, the others take its key
        out = ttnn.subtract(x, y, **options)
    planned = set(mesh._programs)
    recorder = _Recorder()
    program_keys.remember(recorder, "subtract", [x, y], [Output(out.spec)], elementwise_attrs(out.spec))
    assert len(planned) == 1 and planned == set(recorder.keys)


def _kernel_thread_settings(monkeypatch) -> list[int]:
    calls: list[int] = []
    setting = omp.one_thread

    def counted():
        calls.append(1)
        return setting()

    monkeypatch.setattr(omp, "one_thread", counted)
    return calls


@pytest.mark.parametrize(("shape", "rows", "sets"), [((1, 1), 32, False), ((2, 4), 128, False), ((2, 4), 160, True)])
def test_only_a_kernel_past_torchs_grain_sets_its_thread_count(open_mesh, rng, monkeypatch, shape, rows, sets):
    mesh = open_mesh(shape)
    n = shape[0] * shape[1]
    a, b = rng.standard_normal((2, n, rows, 32)).astype(np.float32)
    x, y = (tile(mesh, v, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)) for v in (a, b))
    calls = _kernel_thread_settings(monkeypatch)
    out = ttnn.add(x, y)
    assert bool(calls) is sets  # 128 x 32 on 8 devices is 32768 elements: torch's grain, not past it
    np.testing.assert_array_equal(values_of(out, mesh), bf16(bf16(a) + bf16(b)))


FILL_CASES = {
    "bfloat16 sharded": ((2, 4), ttnn.bfloat16, (8, 64, 64), True, None),
    "bfloat16 replicated": ((2, 4), ttnn.bfloat16, (64, 64), False, None),
    "bfloat16 padded": ((1, 1), ttnn.bfloat16, (30, 50), False, None),
    "float32": ((1, 1), ttnn.float32, (30, 50), False, None),
    "bfloat8_b": ((1, 1), ttnn.bfloat8_b, (64, 64), False, None),
    "broadcast": ((1, 1), ttnn.bfloat16, (30, 50), False, (1, 50)),
}


@pytest.mark.parametrize("case", list(FILL_CASES))
def test_a_new_outputs_every_byte_is_written_over_what_memory_held(open_mesh, rng, monkeypatch, case):
    shape, dtype, dims, sharded, other = FILL_CASES[case]
    mesh = open_mesh(shape)
    mapper = {"mesh_mapper": ttnn.ShardTensorToMesh(mesh, dim=0)} if sharded else {}
    a = rng.standard_normal(dims).astype(np.float32)
    b = rng.standard_normal(other or dims).astype(np.float32)
    x, y = tile(mesh, a, dtype, **mapper), tile(mesh, b, dtype, **mapper if other is None else {})
    queued = ttnn.add(x, y)  # made the first time: the plan, and its output's slab in zeroed memory
    mesh.mesh_command_queue().finish()
    expected = queued.storage.mesh_buffer.rows().copy()
    garbage = np.empty  # memory that held other bytes: what np.empty may give

    def dirty(shape, dtype=float, order="C"):
        made = garbage(shape, dtype, order)
        made.view(np.uint8).reshape(-1)[:] = 0xA5
        return made

    monkeypatch.setattr(np, "empty", dirty)
    for _ in range(2):
        out = ttnn.add(x, y)
        np.testing.assert_array_equal(out.storage.mesh_buffer.rows(), expected)


# ------------------------------------------------------------------------------ output buffers


def test_each_spec_gets_its_own_buffer_size_type_and_address(open_mesh, rng):
    mesh = open_mesh((2, 4))
    x = tile(mesh, rng.standard_normal((32, 32)).astype(np.float32))
    wide = tile(mesh, rng.standard_normal((64, 64)).astype(np.float32))
    for _ in range(2):  # the second time from the specs' made configs
        dram = ttnn.add(x, x)
        l1 = ttnn.add(x, x, memory_config=ttnn.L1_MEMORY_CONFIG)
        big = ttnn.add(wide, wide)
        wide_l1 = ttnn.add(wide, wide, memory_config=ttnn.L1_MEMORY_CONFIG)
        for out in (dram, l1, big, wide_l1):
            buffer = out.storage.mesh_buffer
            assert buffer.device_local_size() == out.spec.compute_packed_buffer_size_bytes()
            assert buffer.buffer_type() is out.memory_config().buffer_type
        assert dram.memory_config().buffer_type is ttnn.BufferType.DRAM
        assert l1.memory_config().buffer_type is ttnn.BufferType.L1
        assert len({t.buffer_address() for t in (dram, big)}) == 2
        assert len({t.buffer_address() for t in (l1, wide_l1)}) == 2
        ttnn.synchronize_device(mesh)
        del dram, l1, big, wide_l1


def test_a_deallocated_input_is_refused_after_its_specs_plan_was_made(open_mesh, rng):
    mesh = open_mesh((2, 4))
    x = tile(mesh, rng.standard_normal((32, 32)).astype(np.float32))
    y = tile(mesh, rng.standard_normal((32, 32)).astype(np.float32))
    ttnn.add(x, y)
    ttnn.deallocate(y)
    before = [(b.buffer_type(), b.address()) for b in mesh.live_buffers()]
    with pytest.raises(ttnn.DeallocatedError, match="input_tensor_b"):
        ttnn.add(x, y)
    assert [(b.buffer_type(), b.address()) for b in mesh.live_buffers()] == before
