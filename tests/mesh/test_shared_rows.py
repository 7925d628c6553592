"""Rows of a slab that a write gives the same bytes share pages copy-on-write
(meshnn/host/shared_pages.py, meshnn/mesh/slab_copies.py): the bytes are the same as when every row
is written, a device that writes its row changes only its row, and the slab pool, a free, a fork
and a trace replay keep working."""

from __future__ import annotations

import gc
import os
import sys

import numpy as np
import pytest

from meshnn.device.buffer import BufferType
from meshnn.host import shared_pages
from meshnn.mesh import (
    BufferRegion,
    DeviceLocalBufferConfig,
    HostEncoder,
    MeshBuffer,
    MeshCoordinate,
    ReplicatedBufferConfig,
    ShardDataTransfer,
    slab,
)

pytestmark = pytest.mark.skipif(not shared_pages.ENABLED, reason="rows share pages on Linux with memfd only")

MiB = 1 << 20
SIZE = 2 * MiB  # a device's bytes: whole pages, above shared_pages.MIN_ROW_BYTES
DRAM = DeviceLocalBufferConfig(page_size=4096, buffer_type=BufferType.DRAM)


def memfd_rows(rows: np.ndarray) -> list[int]:
    """The rows of ``rows`` (a whole slab) whose first page is a mapping of a meshnn memfd."""
    base, size = rows.__array_interface__["data"][0], rows.shape[1]
    spans = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "meshnn-rows" in line:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                spans.append((lo, hi))
    return [r for r in range(rows.shape[0]) if any(lo <= base + r * size < hi for lo, hi in spans)]


def pattern(seed: int, n: int = SIZE) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


def read_all(mesh, buffer) -> list[np.ndarray]:
    cq, out = mesh.mesh_command_queue(), []
    for coord in mesh.local_coords():
        row = np.zeros(SIZE, np.uint8)
        cq.enqueue_read_shards([ShardDataTransfer(coord, row)], buffer, blocking=True)
        out.append(row)
    return out


@pytest.fixture
def fresh_pool(monkeypatch):
    slab.SLAB_POOL.clear()
    yield slab.SLAB_POOL
    slab.SLAB_POOL.clear()


def replicated(mesh) -> MeshBuffer:
    return MeshBuffer.create(ReplicatedBufferConfig(SIZE), DRAM, mesh)


def test_replicated_write_shares_rows_and_a_device_write_changes_only_its_row(open_mesh, fresh_pool):
    mesh = open_mesh((2, 4))
    buffer, src = replicated(mesh), pattern(1)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, src, blocking=True)
    assert memfd_rows(buffer.rows()) == list(range(8))  # every row maps the one copy
    assert all(np.array_equal(r, src) for r in read_all(mesh, buffer))
    patch = pattern(2, 4096 + 100)
    cq.enqueue_write_shards(buffer, [ShardDataTransfer(MeshCoordinate(1, 2), patch, BufferRegion(4000, patch.size))])
    got = read_all(mesh, buffer)
    expected = src.copy()
    expected[4000 : 4000 + patch.size] = patch
    assert np.array_equal(got[6], expected)  # device (1, 2) is row 6
    assert all(np.array_equal(got[r], src) for r in range(8) if r != 6)


def test_a_shard_replicated_along_an_axis_shares_per_group_with_encoders(open_mesh, fresh_pool):
    """One encoder per mesh column, each given to both rows (ShardTensor2dMesh dims=(None, 3))."""
    mesh = open_mesh((2, 4))
    buffer = replicated(mesh)
    sources = [pattern(10 + c) for c in range(4)]
    calls = []

    def encoder(c):
        def encode(out):
            calls.append(c)
            out[:] = sources[c]

        return HostEncoder(SIZE, encode)

    encoders = [encoder(c) for c in range(4)]
    transfers = [ShardDataTransfer(MeshCoordinate(r, c), encoders[c]) for r in range(2) for c in range(4)]
    mesh.mesh_command_queue().enqueue_write_shards(buffer, transfers, blocking=True)
    assert sorted(calls) == [0, 1, 2, 3]  # each made once
    assert memfd_rows(buffer.rows()) == list(range(8))
    got = read_all(mesh, buffer)
    assert all(np.array_equal(got[r * 4 + c], sources[c]) for r in range(2) for c in range(4))


def test_the_same_bytes_without_sharing(open_mesh, fresh_pool, monkeypatch):
    """MESHNN_SHARED_ROWS=0, or a memfd that cannot be made: the rows are written one by one, the
    same bytes."""
    mesh = open_mesh((2, 4))
    src = pattern(3)
    for how in ("off", "memfd fails"):
        with monkeypatch.context() as m:
            if how == "off":
                m.setattr(shared_pages, "ENABLED", False)
            else:

                def refuse(*_args):
                    raise OSError(24, "Too many open files")

                m.setattr(os, "memfd_create", refuse)
            buffer = replicated(mesh)
            mesh.mesh_command_queue().enqueue_write_mesh_buffer(buffer, src, blocking=True)
            assert memfd_rows(buffer.rows()) == []
            assert all(np.array_equal(r, src) for r in read_all(mesh, buffer))
            buffer.deallocate()
            slab.SLAB_POOL.clear()


def test_the_pool_reuses_a_shared_slab_and_a_free_lets_the_pages_go(open_mesh, fresh_pool):
    mesh = open_mesh((2, 4))
    cq = mesh.mesh_command_queue()
    buffer = replicated(mesh)
    cq.enqueue_write_mesh_buffer(buffer, pattern(4), blocking=True)
    buffer.deallocate()
    assert fresh_pool.nbytes == 8 * SIZE  # pooled, shared rows and all
    again = replicated(mesh)
    again.rows()  # (a slab is taken at its first use)
    assert fresh_pool.nbytes == 0  # taken back
    distinct = [pattern(20 + r) for r in range(8)]
    pairs = zip(mesh.local_coords(), distinct, strict=True)
    cq.enqueue_write_shards(again, [ShardDataTransfer(c, d) for c, d in pairs])
    assert all(np.array_equal(g, d) for g, d in zip(read_all(mesh, again), distinct, strict=True))
    cq.enqueue_write_mesh_buffer(again, pattern(5), blocking=True)  # shared again, over the private pages
    assert all(np.array_equal(g, pattern(5)) for g in read_all(mesh, again))
    again.deallocate()
    fresh_pool.clear()
    gc.collect()
    with open("/proc/self/maps") as maps:
        assert "meshnn-rows" not in maps.read()  # every mapping of the shared pages is gone


@pytest.mark.skipif(sys.platform != "linux", reason="fork")
def test_a_forked_child_reads_and_writes_its_own_copy(open_mesh, fresh_pool):
    mesh = open_mesh((2, 4))
    buffer, src = replicated(mesh), pattern(6)
    mesh.mesh_command_queue().enqueue_write_mesh_buffer(buffer, src, blocking=True)
    rows = buffer.rows()
    pid = os.fork()
    if pid == 0:  # the child: sees the bytes, writes row 3, exits 0 only if all is as expected
        ok = all(np.array_equal(r, src) for r in rows)
        rows[3, :10] = 7
        ok = ok and int(rows[3, 0]) == 7 and np.array_equal(rows[2], src)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert all(np.array_equal(r, src) for r in read_all(mesh, buffer))  # the child's write stayed its own


def test_resident_memory_counts_the_shared_bytes_once(open_mesh, fresh_pool):
    """Proportional set size grows by about one row, not eight, for a replicated 16 MiB a device."""
    mesh = open_mesh((2, 4))
    size = 16 * MiB

    def pss() -> int:
        with open("/proc/self/smaps_rollup") as rollup:
            return next(int(line.split()[1]) * 1024 for line in rollup if line.startswith("Pss:"))

    src = pattern(7, size)
    buffer = MeshBuffer.create(ReplicatedBufferConfig(size), DRAM, mesh)
    before = pss()
    mesh.mesh_command_queue().enqueue_write_mesh_buffer(buffer, src, blocking=True)
    grew = pss() - before
    assert grew < 3 * size  # (8 * size without sharing)
    assert np.array_equal(buffer.rows()[5], src)


def test_ops_and_a_trace_replay_on_shared_rows_equal_the_unshared_run(monkeypatch, fresh_pool):
    """A replicated weight and input (1 MiB a device, shared rows) through an op, eager and
    traced with a new input copied in: the same bytes as with sharing off."""
    import torch

    import meshnn as ttnn

    def run() -> list[np.ndarray]:
        mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), trace_region_size=1 << 20, system="t3k")
        try:
            gen = torch.Generator().manual_seed(3)
            xs = [torch.randn(1, 1, 1024, 512, generator=gen) for _ in range(2)]
            kw = {"dtype": ttnn.bfloat16, "layout": ttnn.TILE_LAYOUT}
            w = ttnn.from_torch(torch.randn(1, 1, 1024, 512, generator=gen), device=mesh, **kw)
            x = ttnn.from_torch(xs[0], device=mesh, **kw)
            assert len(memfd_rows(w.storage.mesh_buffer.rows())) == (8 if shared_pages.ENABLED else 0)
            out = [np.array(ttnn.add(x, w).storage.mesh_buffer.rows())]
            tid = ttnn.begin_trace_capture(mesh, cq_id=0)
            y = ttnn.multiply(ttnn.add(x, w), w)
            ttnn.end_trace_capture(mesh, tid, cq_id=0)
            ttnn.copy_host_to_device_tensor(ttnn.from_torch(xs[1], **kw), x)
            ttnn.execute_trace(mesh, tid, cq_id=0, blocking=True)
            out.append(np.array(y.storage.mesh_buffer.rows()))
            out.append(np.array(x.storage.mesh_buffer.rows()))
            ttnn.release_trace(mesh, tid)
            return out
        finally:
            ttnn.close_mesh_device(mesh)

    shared = run()
    monkeypatch.setattr(shared_pages, "ENABLED", False)
    slab.SLAB_POOL.clear()
    plain = run()
    assert all(np.array_equal(a, b) for a, b in zip(shared, plain, strict=True))
    assert all(np.array_equal(shared[1][r], shared[1][0]) for r in range(8))


def test_the_host_room_checks_count_shared_rows_once(open_mesh, fresh_pool, monkeypatch):
    """With 64 MiB of host memory available, a 16 MiB-a-device tensor replicated over 8 devices
    (16 MiB held) is put, by from_torch and by to_device; sharded over the 8 (128 MiB) it is
    refused by name, before anything is allocated."""
    import torch

    import meshnn as ttnn
    from meshnn.errors import HostMemoryError
    from meshnn.host import memory

    mesh = open_mesh((2, 4))
    monkeypatch.setattr(memory, "available_bytes", lambda: 64 * MiB)
    monkeypatch.setattr(slab, "available_bytes", lambda: 64 * MiB)
    kw = {"dtype": ttnn.bfloat16, "layout": ttnn.TILE_LAYOUT}
    t = torch.ones(1, 1, 2048, 4096)  # 16 MiB in bfloat16
    replicated_tensor = ttnn.from_torch(t, device=mesh, **kw)
    assert memfd_rows(replicated_tensor.storage.mesh_buffer.rows()) == list(range(8))
    moved = ttnn.to_device(ttnn.from_torch(t, **kw), mesh)
    assert memfd_rows(moved.storage.mesh_buffer.rows()) == list(range(8))
    taken = mesh.get_memory_view(BufferType.DRAM).total_bytes_allocated_per_bank
    with pytest.raises(HostMemoryError, match="from_torch"):
        distinct = torch.ones(8, 1, 2048, 4096, dtype=torch.bfloat16)  # (an expanded view would be one shard)
        ttnn.from_torch(distinct, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0), **kw)
    assert mesh.get_memory_view(BufferType.DRAM).total_bytes_allocated_per_bank == taken
    with monkeypatch.context() as m:  # without sharing, the replicated tensor counts every row
        m.setattr(shared_pages, "ENABLED", False)
        with pytest.raises(HostMemoryError):
            ttnn.from_torch(t, device=mesh, **kw)
    assert mesh.get_memory_view(BufferType.DRAM).total_bytes_allocated_per_bank == taken


def test_a_non_blocking_replicated_write_keeps_one_host_copy_and_shares(open_mesh, fresh_pool):
    """A write that cannot run at once owns a copy of its host data: one copy for all the devices
    given the same array, and the rows still share it."""
    mesh = open_mesh((2, 4))
    buffer, src = replicated(mesh), pattern(8)
    cq = mesh.mesh_command_queue()
    cq.enqueue_write_mesh_buffer(buffer, src, blocking=False)
    src[:] = 0  # the caller reuses its memory: the write has its own copy
    cq.finish()
    assert memfd_rows(buffer.rows()) == list(range(8))
    assert all(np.array_equal(r, pattern(8)) for r in read_all(mesh, buffer))


def test_to_device_of_a_host_tensor_replicated_along_an_axis_counts_its_shards_once(open_mesh, fresh_pool, monkeypatch):
    """``as_tensor`` / ``from_torch`` to the host with ShardTensor2dMesh(dims=(None, 3)), then
    ``to_device`` (as the 70B's embedding is put): 4 distinct shards of 8 MiB on a 2x4 mesh are
    checked as 32 MiB, not 64, and their rows share."""
    import torch

    import meshnn as ttnn
    from meshnn.host import memory

    mesh = open_mesh((2, 4))
    monkeypatch.setattr(memory, "available_bytes", lambda: 48 * MiB)
    monkeypatch.setattr(slab, "available_bytes", lambda: 48 * MiB)
    mapper = ttnn.ShardTensor2dMesh(mesh, dims=(None, 3), mesh_shape=(2, 4))
    source = torch.randn(1, 1, 1024, 16384).to(torch.bfloat16)  # 8 MiB a column shard
    host = ttnn.from_torch(source, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, mesh_mapper=mapper)
    put = ttnn.to_device(host, mesh)
    assert memfd_rows(put.storage.mesh_buffer.rows()) == list(range(8))
    back = ttnn.to_torch(put, mesh_composer=ttnn.ConcatMesh2dToTensor(mesh, dims=(0, 3), mesh_shape=(2, 4)))
    assert torch.equal(back, source.expand(2, 1, 1024, 16384))
