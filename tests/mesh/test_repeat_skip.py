"""A program with a repeat key that follows a run of itself on unchanged bytes is skipped
(``run_programs``): its outputs already hold what it would write.  Every way the bytes can change
between the two runs makes it run again; a kernel counts its runs, and the outputs are checked."""

from __future__ import annotations

import numpy as np
import torch

import meshnn as ttnn
from meshnn.mesh import MeshWorkload, Program

from .test_mesh_workload import buffers


def copy_plus(calls: list, plus: int):
    """A kernel writing ``input + plus`` (uint32 words) to its output, counting its runs."""

    def kernel(ctx):
        calls.append(plus)
        ctx.buffers[1].view(np.uint32)[...] = ctx.buffers[0].view(np.uint32) + plus

    return kernel


def workload(mesh, kernel, a, out, key):
    program = Program.of_op(kernel, [a, out], 1, name="copy", lazy_reads=False, keeps_memos=False, repeat_key=key)
    return MeshWorkload.of_programs([(mesh.full_range, program)])


def words(buffer) -> np.ndarray:
    return buffer.rows().view(np.uint32)


def test_a_repeat_on_unchanged_bytes_runs_once(open_mesh):
    mesh = open_mesh((2, 4))
    a, out = buffers(mesh, 2)
    a.slab().view(np.uint32)[...] = 7
    calls: list = []
    cq = mesh.mesh_command_queue()
    for _ in range(5):
        cq.enqueue_mesh_workload(workload(mesh, copy_plus(calls, 1), a, out, "k"), blocking=False)
    cq.finish()
    assert len(calls) == 1 and (words(out) == 8).all()


def test_every_change_between_two_runs_makes_the_repeat_run(open_mesh):
    """A host write of the input (direct or queued), another program writing the output, another
    program of any kind, a freed and reallocated output, a different key: each runs it again, and
    its output is right after each."""
    mesh = open_mesh((2, 4))
    a, out = buffers(mesh, 2)
    cq = mesh.mesh_command_queue()
    calls: list = []

    def again(key="k", target=None) -> None:
        cq.enqueue_mesh_workload(workload(mesh, copy_plus(calls, 1), a, target or out, key), blocking=True)

    again()
    a.slab().view(np.uint32)[...] = 3  # a direct write
    again()
    assert len(calls) == 2 and (words(out) == 4).all()
    cq.enqueue_write_mesh_buffer(a, np.full(a.device_local_size() // 4, 11, np.uint32), blocking=False)
    again()  # a queued write, run before it
    assert len(calls) == 3 and (words(out) == 12).all()
    cq.enqueue_mesh_workload(workload(mesh, copy_plus(calls, 100), a, out, None), blocking=False)
    again()  # another program wrote the output
    assert len(calls) == 5 and (words(out) == 12).all()
    again(key="other")
    again()  # a different key ran between
    assert len(calls) == 7 and (words(out) == 12).all()
    address = out.address()
    out.deallocate()
    (fresh,) = buffers(mesh, 1)
    assert fresh.address() == address
    again(target=fresh)  # the same address, a new buffer
    assert len(calls) == 8 and (words(fresh) == 12).all()
    again(target=fresh)
    assert len(calls) == 8


def test_a_replayed_collective_follows_its_input(open_mesh):
    """Traces of three all_gathers and of two reduce_scatter_minimal_async into persistent
    outputs, each replayed after the input was rewritten from the host (nothing else between two
    replays, so the first program of a replay repeats the last of the one before): each replay's
    outputs are those of the input it read, never a stale result.  Expected: the concatenation of
    the bfloat8_b shards (exact), and their sum in member order in float32 rounded to bfloat8_b
    by the host conversion."""
    mesh = open_mesh((2, 4), trace_region_size=1 << 20)
    rng = np.random.default_rng(5)

    def host(values):
        mapper = ttnn.ShardTensorToMesh(mesh, dim=3)
        return ttnn.from_torch(
            torch.from_numpy(values), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, mesh_mapper=mapper
        )

    def rounded(values):
        return ttnn.to_torch(
            ttnn.from_torch(torch.from_numpy(values), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
        ).numpy()

    shape = (1, 1, 64, 8 * 128)
    x = ttnn.to_device(host(rng.standard_normal(shape).astype(np.float32)), mesh)
    gathered, summed = ttnn.all_gather(x, dim=3, cluster_axis=1), ttnn.reduce_scatter(x, dim=3, cluster_axis=1)
    middle = ttnn.clone(x)
    semaphores = [ttnn.create_global_semaphore(mesh, ttnn.CoreRangeSet([ttnn.CoreRange((0, 0), (0, 0))]), 0)] * 3
    traces = []
    for op, count in (("gather", 3), ("sum", 2)):
        traces.append(ttnn.begin_trace_capture(mesh, cq_id=0))
        for _ in range(count):
            if op == "gather":
                ttnn.all_gather(x, dim=3, cluster_axis=1, output_tensor=gathered)
            else:
                ttnn.experimental.reduce_scatter_minimal_async(
                    x, [middle, summed], 3, semaphores, num_links=1, cluster_axis=1
                )
        ttnn.end_trace_capture(mesh, traces[-1], cq_id=0)
    for trace, out in zip(traces, (gathered, summed), strict=True):
        for _ in range(3):
            values = rng.standard_normal(shape).astype(np.float32)
            ttnn.copy_host_to_device_tensor(host(values), x)
            ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
            shards = np.split(rounded(values), 8, axis=3)
            for row in range(2):
                group = shards[row * 4 : row * 4 + 4]
                total = group[0].copy()
                for shard in group[1:]:
                    total += shard
                want = np.concatenate(group, axis=3) if out is gathered else rounded(total)
                for member in range(4):
                    got = ttnn.to_torch(ttnn.get_device_tensors(out)[row * 4 + member]).float().numpy()
                    part = want if out is gathered else np.split(want, 4, axis=3)[member]
                    assert np.array_equal(got, part), (row, member)
    for trace in traces:
        ttnn.release_trace(mesh, trace)
