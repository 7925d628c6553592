"""Trace capture and replay (issue 23): a replay equals the eager run bit for bit, step after step,
with new inputs written into the captured input tensors (the values memos and in-place cache
updates included: a replayed kernel reads the bytes written since the capture); a capture runs
nothing; intermediates freed during the capture are freed at once; the trace is a TRACE
allocation on every device, sized by its programs, refused when the region is too small; capture
refuses host writes, reads and events with tt-metal's messages, before anything changes; misuse of
trace ids is refused; sub-device managers are checked."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.mesh.trace import TRACE_BYTES_PER_PROGRAM, TRACE_PAGE_SIZE

U, H, S, D, DIM = 4, 2, 256, 64, 256  # (the caches and weights are large enough for values memos)


def dev(mesh, t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, mc=None, mapper=None):
    return ttnn.from_torch(t, dtype=dtype, layout=layout, device=mesh, memory_config=mc, mesh_mapper=mapper)


def users_sharded(users: int, rows: int = 32, width: int = D):
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(users - 1, 0))])
    return ttnn.create_sharded_memory_config(
        (rows, width), cores, ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
    )


def raw(t) -> np.ndarray:
    return np.array(t.storage.mesh_buffer.rows())


class Step:
    """A small decode step: a projection, the new key / value rows written into the caches at
    each user's position, decode attention, an output projection, the positions advanced."""

    def __init__(self, mesh, seed: int = 0) -> None:
        gen = torch.Generator().manual_seed(seed)
        shard = ttnn.ShardTensorToMesh(mesh, dim=0)
        self.mesh = mesh
        self.w = dev(mesh, torch.randn(2, DIM, 3 * H * D, generator=gen) / 16, ttnn.bfloat8_b, mapper=shard)
        self.wo = dev(mesh, torch.randn(2, H * D, DIM, generator=gen) / 16, ttnn.bfloat8_b, mapper=shard)
        caches = [torch.randn(2 * U, H, S, D, generator=gen) for _ in range(2)]
        self.k, self.v = (dev(mesh, c, ttnn.bfloat8_b, mapper=shard) for c in caches)
        self.x = dev(mesh, torch.zeros(1, 1, U, DIM))
        self.pos = dev(mesh, torch.zeros(U, dtype=torch.int32), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)

    def write(self, x: torch.Tensor, pos: torch.Tensor) -> None:
        ttnn.copy_host_to_device_tensor(ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), self.x)
        ttnn.copy_host_to_device_tensor(ttnn.from_torch(pos, dtype=ttnn.int32), self.pos)

    def __call__(self) -> ttnn.Tensor:
        qkv = ttnn.linear(self.x, self.w, dtype=ttnn.bfloat16)
        q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(qkv, num_heads=H, num_kv_heads=H)
        ttnn.deallocate(qkv)
        ttnn.experimental.paged_update_cache(self.k, k, update_idxs_tensor=self.pos)
        ttnn.experimental.paged_update_cache(self.v, v, update_idxs_tensor=self.pos)
        attn = ttnn.transformer.scaled_dot_product_attention_decode(q, self.k, self.v, cur_pos_tensor=self.pos)
        cat = ttnn.experimental.nlp_concat_heads_decode(ttnn.to_memory_config(attn, users_sharded(U)), num_heads=H)
        out = ttnn.linear(cat, self.wo, dtype=ttnn.bfloat16)
        ttnn.plus_one(self.pos)
        return out


@pytest.fixture
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), trace_region_size=1 << 20, system="t3k")
    yield m
    m.close()


@pytest.mark.filterwarnings("ignore:Allocating device buffers is unsafe")  # (the eager twin allocates)
def test_a_replay_equals_the_eager_run_bit_for_bit(mesh):
    eager, traced = Step(mesh), Step(mesh)
    gen = torch.Generator().manual_seed(1)
    inputs = [(torch.randn(1, 1, U, DIM, generator=gen), torch.randint(0, S - 8, (U,), generator=gen).int())]
    traced.write(*inputs[0])
    traced()  # the warm-up a generator runs before it captures
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = traced()
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    eager.write(*inputs[0])
    eager()  # (the same warm-up, so both have written the same rows)
    for step in range(4):
        x = torch.randn(1, 1, U, DIM, generator=gen)
        pos = inputs[0][1] + 1 + step
        eager.write(x, pos)
        want = eager()
        traced.write(x, pos)
        ttnn.execute_trace(mesh, trace, cq_id=0, blocking=False)
        assert np.array_equal(raw(out), raw(want)), f"step {step}"
        for a, b in ((traced.k, eager.k), (traced.v, eager.v), (traced.pos, eager.pos)):
            assert np.array_equal(raw(a), raw(b)), f"step {step}"
    ttnn.release_trace(mesh, trace)


def test_a_trace_id_is_true_even_when_0_as_ttnns_binding_is(mesh):
    """ttnn.MeshTraceId binds ``__int__`` and no ``__bool__``: every id is true.  A generator that
    captures when ``not self.trace_id`` (the 70B Galaxy's) captures once, whatever its first id
    (a process's first trace is 0; a false id 0 made it capture again at every step, with new
    output tensors each time)."""
    assert bool(ttnn.MeshTraceId(0)) and int(ttnn.MeshTraceId(0)) == 0 and repr(ttnn.MeshTraceId(0)) == "MeshTraceId(0)"
    trace_id, captures = None, 0
    for _ in range(3):
        if not trace_id:
            trace_id = ttnn.begin_trace_capture(mesh, cq_id=0)
            ttnn.end_trace_capture(mesh, trace_id, cq_id=0)
            captures += 1
        ttnn.execute_trace(mesh, trace_id, cq_id=0, blocking=True)
    assert captures == 1
    ttnn.release_trace(mesh, trace_id)


def test_a_capture_runs_nothing_and_frees_its_intermediates_at_once(mesh):
    step = Step(mesh)
    step.write(torch.randn(1, 1, U, DIM), torch.arange(U).int())
    step()
    keys = raw(step.k)
    dram = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM)
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = step()
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    assert np.array_equal(raw(step.k), keys)  # nothing ran: the cache is as it was
    after = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM)
    kept = out.storage.mesh_buffer.device_local_size()
    assert after.total_bytes_allocated_per_bank - dram.total_bytes_allocated_per_bank <= kept  # only the output
    trace_view = ttnn.get_memory_view(mesh, ttnn.BufferType.TRACE)
    programs = len(mesh.traces[int(trace)].entries)
    size = -(-programs * TRACE_BYTES_PER_PROGRAM // TRACE_PAGE_SIZE) * TRACE_PAGE_SIZE
    assert programs == 9 and trace_view.total_bytes_allocated_per_bank * trace_view.num_banks >= size > 0
    ttnn.release_trace(mesh, trace)
    assert ttnn.get_memory_view(mesh, ttnn.BufferType.TRACE).total_bytes_allocated_per_bank == 0


def test_a_trace_larger_than_its_region_fails_as_on_device(mesh):
    small = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), trace_region_size=4096, system="t3k")
    try:
        step = Step(small)
        step()
        trace = ttnn.begin_trace_capture(small, cq_id=0)
        step()
        before = ttnn.get_memory_view(small, ttnn.BufferType.TRACE)
        with pytest.raises(ttnn.TraceError, match=r"Creating trace buffers of size \d+B on MeshDevice \d+, but only"):
            ttnn.end_trace_capture(small, trace, cq_id=0)
        assert ttnn.get_memory_view(small, ttnn.BufferType.TRACE) == before
        assert not small.traces and small.mesh_command_queue(0).capture is None
        with pytest.raises(ttnn.TraceError, match="must exist"):
            ttnn.execute_trace(small, trace)
    finally:
        small.close()


def test_capture_refuses_host_writes_reads_and_events_before_anything_changes(mesh):
    step = Step(mesh)
    step()
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = step()
    views = [ttnn.get_memory_view(mesh, bt) for bt in (ttnn.BufferType.DRAM, ttnn.BufferType.L1)]
    with pytest.raises(ttnn.TraceError, match=r"^Writes are not supported during trace capture\.$"):
        ttnn.from_torch(torch.ones(32, 32), layout=ttnn.TILE_LAYOUT, device=mesh)
    with pytest.raises(ttnn.TraceError, match=r"^Writes are not supported during trace capture\.$"):
        step.write(torch.randn(1, 1, U, DIM), torch.arange(U).int())
    with pytest.raises(ttnn.TraceError, match=r"^Reads are not supported during trace capture\.$"):
        ttnn.to_torch(ttnn.get_device_tensors(out)[0])
    with pytest.raises(ttnn.TraceError, match=r"^Event Synchronization is not supported during trace capture\.$"):
        mesh.mesh_command_queue(0).enqueue_record_event()
    assert [ttnn.get_memory_view(mesh, bt) for bt in (ttnn.BufferType.DRAM, ttnn.BufferType.L1)] == views
    with pytest.raises(ttnn.TraceError, match="already being used for tracing"):
        ttnn.begin_trace_capture(mesh, cq_id=0)
    with pytest.raises(ttnn.TraceError, match="is not being captured"):
        ttnn.end_trace_capture(mesh, trace + 1, cq_id=0)
    ttnn.end_trace_capture(mesh, trace, cq_id=0)  # the capture is still whole: it ends and replays
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    with pytest.warns(RuntimeWarning, match="unsafe due to the existence of an active trace"):
        dev(mesh, torch.ones(32, 32))
    ttnn.release_trace(mesh, trace)
    with pytest.raises(ttnn.TraceError, match="must exist"):
        ttnn.release_trace(mesh, trace)


def test_a_replay_refuses_inputs_freed_after_the_capture(mesh):
    step = Step(mesh)
    step()
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    step()
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    ttnn.deallocate(step.x)
    with pytest.raises(ttnn.TraceError, match="deallocated after the capture"):
        ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)


def test_sub_device_managers_are_checked(mesh):
    grid = mesh.compute_with_storage_grid_size()

    def cores(x0, x1):
        return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(x0, 0), ttnn.CoreCoord(x1, grid.y - 1))])

    left, right = ttnn.SubDevice([cores(0, 3)]), ttnn.SubDevice([cores(4, grid.x - 1)])
    manager = mesh.create_sub_device_manager([left, right], 3200)
    with pytest.raises(ttnn.MeshnnValueError, match="intersect"):
        mesh.create_sub_device_manager([left, ttnn.SubDevice([cores(2, 5)])], 0)
    with pytest.raises(ttnn.MeshnnValueError, match="within device grid"):
        mesh.create_sub_device_manager([ttnn.SubDevice([cores(0, grid.x)])], 0)
    mesh.load_sub_device_manager(manager)
    assert mesh.get_sub_device_ids() == [ttnn.SubDeviceId(0), ttnn.SubDeviceId(1)]
    mesh.set_sub_device_stall_group([ttnn.SubDeviceId(1)])
    assert mesh.get_sub_device_stall_group() == [1]
    with pytest.raises(ttnn.MeshnnValueError, match="out of bounds"):
        mesh.set_sub_device_stall_group([ttnn.SubDeviceId(2)])
    mesh.reset_sub_device_stall_group()
    assert mesh.get_sub_device_stall_group() == [0, 1]
    with pytest.raises(ttnn.MeshnnValueError, match="Cannot remove active"):
        mesh.remove_sub_device_manager(manager)
    mesh.clear_loaded_sub_device_manager()
    mesh.remove_sub_device_manager(manager)
    with pytest.raises(ttnn.MeshnnValueError, match="does not exist"):
        mesh.load_sub_device_manager(manager)


@pytest.mark.filterwarnings("ignore:Allocating device buffers is unsafe")  # (the eager check allocates)
def test_a_replay_reads_new_inputs_not_the_values_memo_of_the_old_ones(mesh):
    """An input large enough for a values memo: an eager op leaves the memo; the new bytes written
    into it (copy_host_to_device_tensor) drop it, so the replay computes from the new values."""
    old, new = torch.randn(256, 256), torch.randn(256, 256)
    x = dev(mesh, old)
    ttnn.exp(ttnn.mul(x, x))  # decodes x (a memo is kept) and leaves memos on its outputs
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    y = ttnn.mul(x, x)
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(new, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), x)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    want = ttnn.to_torch(ttnn.get_device_tensors(ttnn.mul(x, x))[0])
    got = ttnn.to_torch(ttnn.get_device_tensors(y)[0])
    assert torch.equal(got, want) and not torch.equal(got, (old.bfloat16().float() ** 2).bfloat16())
    ttnn.release_trace(mesh, trace)
