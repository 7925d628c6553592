"""Host copies split over worker threads give exactly the bytes of one single-threaded copy.

- ``parallel_copyto`` against ``np.copyto``: contiguous, strided and tile-view arrays, on both
  sides of ``PARALLEL_MIN_BYTES``, for 1, 2 and 3 threads;
- ``run_parallel``: every part runs, errors surface after all parts finish, nested calls on a
  worker run in order;
- the worker threads start once, at the first large copy, and never again (a fresh process);
- large transfers through the queue and large tensors through the mesh, threaded and not.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import MeshnnValueError
from meshnn.formats import bfloat16, bfp_tiles
from meshnn.formats.layout import Tile, tile_view
from meshnn.host.threads import HOST_THREADS_ENV, PARALLEL_MIN_BYTES, parallel_copyto, run_parallel

SMALL = PARALLEL_MIN_BYTES // 4 // 2  # float32 values: half the threshold
LARGE = PARALLEL_MIN_BYTES // 4 * 3  # three times it


def arrays(kind: str, values: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A (destination, source) pair of one shape and the given ``kind`` of strides."""
    side = int(np.sqrt(values)) // 32 * 32
    source = rng.standard_normal((side, 2 * side)).astype(np.float32)
    if kind == "contiguous":
        return np.zeros(values, np.float32), rng.standard_normal(values).astype(np.float32)
    if kind == "strided block":
        return np.zeros((side, side), np.float32), source[:, side:]
    grid = tile_view(source[:, :side].reshape(1, side, side), Tile())  # "tile view": tilizes
    return np.zeros(grid.shape, np.float32), grid


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("values", [SMALL, LARGE])
@pytest.mark.parametrize("kind", ["contiguous", "strided block", "tile view"])
def test_parallel_copies_equal_one_copy(monkeypatch, kind, values, threads, rng):
    monkeypatch.setenv(HOST_THREADS_ENV, threads)
    dst, src = arrays(kind, values, rng)
    want = np.zeros_like(dst)
    np.copyto(want, src)
    parallel_copyto(dst, src)
    assert np.array_equal(dst.view(np.uint32), want.view(np.uint32))


def test_run_parallel_runs_every_part_and_waits_before_raising(monkeypatch):
    monkeypatch.setenv(HOST_THREADS_ENV, "2")
    done = []
    finished = threading.Event()

    def task(part: int) -> None:
        if part == 0:
            raise ValueError("part 0 failed")
        finished.wait(1.0)
        done.append(part)

    threading.Timer(0.05, finished.set).start()
    with pytest.raises(ValueError, match="part 0 failed"):
        run_parallel(task, 3)
    assert sorted(done) == [1, 2]  # the other parts had finished when the error surfaced


def test_a_nested_call_on_a_worker_runs_its_parts_in_order(monkeypatch):
    monkeypatch.setenv(HOST_THREADS_ENV, "2")
    seen: dict[int, list[int]] = {}

    def outer(part: int) -> None:
        order: list[int] = []
        run_parallel(order.append, 4)
        seen[part] = order

    run_parallel(outer, 2)
    assert seen[1] == [0, 1, 2, 3]  # on the worker: one after another, no wait for a worker


def test_a_bad_thread_count_is_refused(monkeypatch):
    monkeypatch.setenv(HOST_THREADS_ENV, "two")
    with pytest.raises(MeshnnValueError, match="MESHNN_HOST_THREADS must be a positive integer"):
        parallel_copyto(np.zeros(LARGE, np.float32), np.ones(LARGE, np.float32))


def test_workers_start_once_at_the_first_large_copy():
    script = f"""
import os, threading, numpy as np
os.environ["MESHNN_HOST_THREADS"] = "3"
from meshnn.host.threads import parallel_copyto
counts = [threading.active_count()]
parallel_copyto(np.zeros(16, np.float32), np.ones(16, np.float32))  # small: no threads
counts.append(threading.active_count())
for _ in range(3):
    parallel_copyto(np.zeros({LARGE}, np.float32), np.ones({LARGE}, np.float32))
    counts.append(threading.active_count())
print(counts)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    first, small, *large = eval(result.stdout)  # our own printed list
    assert small == first
    assert large == [first + 2] * 3  # two workers (the caller is the third thread), started once


@pytest.mark.parametrize("threads", ["1", "2"])
def test_large_queue_transfers_are_byte_exact(open_mesh, monkeypatch, threads, rng):
    monkeypatch.setenv(HOST_THREADS_ENV, threads)
    mesh = open_mesh((1, 2))
    host = rng.standard_normal((1024, 2048)).astype(np.float32)  # 4 MiB per device, strided halves
    config = ttnn.ReplicatedBufferConfig(1024 * 1024 * 4)
    buffer = ttnn.MeshBuffer.create(config, ttnn.DeviceLocalBufferConfig(4096, ttnn.BufferType.DRAM), mesh)
    cq = mesh.mesh_command_queue()
    coords = [ttnn.MeshCoordinate(0, i) for i in range(2)]
    halves = [np.s_[:, :1024], np.s_[:, 1024:]]  # strided views
    cq.enqueue_write_shards(buffer, [ttnn.ShardDataTransfer(c, host[h]) for c, h in zip(coords, halves, strict=True)])
    back = np.zeros_like(host)
    cq.enqueue_read_shards([ttnn.ShardDataTransfer(c, back[h]) for c, h in zip(coords, halves, strict=True)], buffer)
    assert np.array_equal(back.view(np.uint32), host.view(np.uint32))
    flat = np.zeros((2, 1024 * 1024), np.float32)  # whole rows: one coalesced copy
    cq.enqueue_read_shards([ttnn.ShardDataTransfer(c, flat[i]) for i, c in enumerate(coords)], buffer)
    assert np.array_equal(flat[1].reshape(1024, 1024), host[:, 1024:])


CASES = [
    (ttnn.float32, ttnn.ROW_MAJOR_LAYOUT),
    (ttnn.float32, ttnn.TILE_LAYOUT),
    (ttnn.bfloat16, ttnn.TILE_LAYOUT),
    (ttnn.bfloat8_b, ttnn.TILE_LAYOUT),
    (ttnn.bfloat4_b, ttnn.TILE_LAYOUT),
]


@pytest.mark.parametrize(("dtype", "layout"), CASES)
def test_large_tensors_through_the_mesh_equal_the_host_encoding(open_mesh, monkeypatch, dtype, layout, rng):
    """Shards of 4 MiB (float32): threaded copies, direct tile-view transfers, torch casts and
    block-float kernels and recycled results, against the host encoding and decoding on one
    thread with numpy alone."""
    mesh = open_mesh((2, 4))
    values = (rng.standard_normal((2048, 4096)) * 8).astype(np.float32)
    values[::97, ::89] = np.nan  # NaNs and infinities too
    values[::101, ::83] = -np.inf
    mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=(2, 4), dims=(0, 1))
    composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=(2, 4), dims=(0, 1))
    source = torch.from_numpy(values)
    results = {}
    for threads in ("1", "2"):
        monkeypatch.setenv(HOST_THREADS_ENV, threads)
        device = ttnn.from_torch(source, dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)
        host = ttnn.from_device(device)
        results[threads] = (
            {c: b.data.copy() for c, b in host.host_buffer().local_shards().items()},
            ttnn.to_numpy(device, mesh_composer=composer).copy(),
        )
    monkeypatch.setenv(HOST_THREADS_ENV, "1")  # the reference: one thread, numpy alone
    monkeypatch.setattr(bfp_tiles, "TORCH_BFP_MIN_VALUES", 1 << 62)
    monkeypatch.setattr(bfloat16, "TORCH_CAST_MIN_VALUES", 1 << 62)
    reference = ttnn.from_torch(source, dtype=dtype, layout=layout, mesh_mapper=mapper)
    want_shards = {c: b.data for c, b in reference.host_buffer().local_shards().items()}
    want_values = ttnn.to_numpy(reference, mesh_composer=composer)
    for shards, got in results.values():
        assert shards.keys() == want_shards.keys()
        assert all(np.array_equal(shards[c], want_shards[c]) for c in shards)
        assert np.array_equal(got.view(np.uint8), want_values.view(np.uint8))


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat4_b])
def test_block_float_chunks_over_threads_give_the_single_thread_bytes_and_values(monkeypatch, dtype, rng):
    """A block-float conversion large enough for torch's chunks, split over 1, 2 and 3 threads
    (each thread's torch on itself alone): the same bytes, and the same values back."""
    values = rng.standard_normal((1024, 1536)).astype(np.float32)  # 3 chunks of torch's size
    values[:32, :32] = 0.0  # a zero tile, and a block of inf / NaN / subnormals (redone blocks)
    values[40, :16] = [np.inf, -np.inf, np.nan, 1e-40, -1e-42, 2.0**-120, 3.0, -0.0] * 2
    got = {}
    for threads in ("1", "2", "3"):
        monkeypatch.setenv(HOST_THREADS_ENV, threads)
        host = ttnn.Tensor(values, dtype, layout=ttnn.TILE_LAYOUT)
        got[threads] = (np.asarray(host.host_buffer().get_shard(ttnn.MeshCoordinate(0, 0))).copy(), host.to_numpy())
    for threads in ("2", "3"):
        assert np.array_equal(got[threads][0], got["1"][0])
        assert np.array_equal(got[threads][1].view(np.uint32), got["1"][1].view(np.uint32))


def test_block_float_chunks_leave_torch_s_thread_counts_as_they_were(monkeypatch, rng):
    """torch's thread count is per thread but also seeds a new thread's: after a threaded
    conversion the caller's count, and the count a new thread starts with, are unchanged."""
    monkeypatch.setenv(HOST_THREADS_ENV, "2")
    before = torch.get_num_threads()
    values = rng.standard_normal((512, 2048)).astype(np.float32)
    host = ttnn.Tensor(values, ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
    host.to_numpy()
    assert torch.get_num_threads() == before
    seen = []

    def new_thread() -> None:
        torch.ones(4).add_(1)  # its first torch op sets its count from the starting one
        seen.append(torch.get_num_threads())

    thread = threading.Thread(target=new_thread)
    thread.start()
    thread.join()
    assert seen == [before]
