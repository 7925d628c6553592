"""Concurrency: two threads driving cq 0 and cq 1 with events between them, and many threads
creating and freeing tensors on one mesh.

- Producer / consumer: a producer thread writes round ``i`` into one of a ring of device tensors
  on cq 0 and records an event; a consumer thread makes cq 1 wait for it, reads the tensor on cq 1
  and records a "read done" event that the producer's cq 0 waits for before it overwrites that
  slot.  Every read sees exactly its round's values (no lost or torn write), through tensors
  (``copy_host_to_device_tensor`` / ``from_device``) and through raw non-blocking MeshBuffer
  writes whose host array is scribbled on at once.
- Many threads create, compute on, read back and free tensors on one mesh (DRAM and L1,
  deallocated or dropped), while a monitor thread checks under the allocator lock that live
  buffers never overlap and every memory view tiles its bank; afterwards the books are empty.
- Several threads enqueue work on both queues at once with events in a cycle-free pattern.

Every wait is bounded: events and queue drains by ``MESHNN_WAIT_TIMEOUT`` (set low here), thread
joins and hand-offs by explicit timeouts; a thread still alive after its join is a deadlock.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.mesh import DeviceLocalBufferConfig, MeshBuffer, ReplicatedBufferConfig, ShardDataTransfer
from meshnn.mesh.memory_report import memory_rows

from .accounting import blocks, check_books, footprint

JOIN_TIMEOUT = 60.0
HANDOFF_TIMEOUT = 30.0


@pytest.fixture(autouse=True)
def bounded_waits(monkeypatch):
    monkeypatch.setenv("MESHNN_WAIT_TIMEOUT", "20")


def run_threads(targets: list, timeout: float = JOIN_TIMEOUT) -> None:
    """Run each target on its own thread; re-raise the first failure; fail on a deadlock."""
    errors: list[BaseException] = []

    def guarded(target):
        def run() -> None:
            try:
                target()
            except BaseException as error:  # reported on the main thread
                errors.append(error)

        return run

    threads = [threading.Thread(target=guarded(t), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, f"threads {alive} did not finish within {timeout} s: a deadlock"
    if errors:
        raise errors[0]


def round_values(i: int, shape: tuple[int, ...]) -> np.ndarray:
    return (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 251) + 1000.0 * i


@pytest.mark.parametrize("layout", [ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT])
def test_producer_on_cq0_and_consumer_on_cq1_lose_no_write(open_mesh, layout):
    mesh = open_mesh((2, 4), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    rounds, slots, shape = 120, 3, (2, 40, 64)
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
    composer = ttnn.ConcatMeshToTensor(mesh, dim=0)
    global_shape = (shape[0] * 8, *shape[1:])
    ring = [
        ttnn.from_torch(np.zeros(global_shape, np.float32), dtype=ttnn.float32, layout=layout, device=mesh,
                        mesh_mapper=mapper)
        for _ in range(slots)
    ]  # fmt: skip
    written: queue.Queue = queue.Queue()
    consumed: queue.Queue = queue.Queue()
    seen: dict[int, np.ndarray] = {}

    def producer() -> None:
        for i in range(rounds):
            if i >= slots:
                cq0.enqueue_wait_for_event(consumed.get(timeout=HANDOFF_TIMEOUT))  # slot i was read
            host = ttnn.from_torch(round_values(i, global_shape), dtype=ttnn.float32, layout=layout, mesh_mapper=mapper)
            ttnn.copy_host_to_device_tensor(host, ring[i % slots], cq_id=0)
            written.put((i, cq0.enqueue_record_event()))

    def consumer() -> None:
        for _ in range(rounds):
            i, event = written.get(timeout=HANDOFF_TIMEOUT)
            cq1.enqueue_wait_for_event(event)
            host = ttnn.from_device(ring[i % slots], cq_id=1)
            seen[i] = ttnn.to_numpy(host, mesh_composer=composer)
            done = cq1.enqueue_record_event()
            consumed.put(done)
            if i % 17 == 0:
                ttnn.event_synchronize(done)

    run_threads([producer, consumer])
    ttnn.synchronize_device(mesh)
    assert sorted(seen) == list(range(rounds))
    for i, values in seen.items():
        assert np.array_equal(values, round_values(i, global_shape)), f"round {i} read other values"
    check_books(mesh, [t.storage.mesh_buffer for t in ring])


def test_non_blocking_writes_own_their_data_across_threads(open_mesh):
    """Raw MeshBuffer writes on cq 0, non-blocking, whose host array is overwritten at once; the
    reader on cq 1 waits for each write's event and must see the bytes as they were written."""
    mesh = open_mesh((2, 4), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    size, rounds = 8192, 300
    buffers = [MeshBuffer.create(ReplicatedBufferConfig(size), DeviceLocalBufferConfig(1024), mesh) for _ in range(4)]
    handoff: queue.Queue = queue.Queue()
    freed: queue.Queue = queue.Queue()
    bad: list[int] = []

    def writer() -> None:
        data = np.empty(size, np.uint8)
        for i in range(rounds):
            if i >= len(buffers):
                cq0.enqueue_wait_for_event(freed.get(timeout=HANDOFF_TIMEOUT))
            data[...] = i % 256
            cq0.enqueue_write_mesh_buffer(buffers[i % len(buffers)], data, blocking=False)
            data[...] = 255 - i % 256  # the queue owns what it was given
            handoff.put((i, cq0.enqueue_record_event()))

    def reader() -> None:
        for _ in range(rounds):
            i, event = handoff.get(timeout=HANDOFF_TIMEOUT)
            cq1.enqueue_wait_for_event(event)
            outs = [np.empty(size, np.uint8) for _ in range(2)]
            coords = [ttnn.MeshCoordinate(0, 0), ttnn.MeshCoordinate(1, 3)]
            cq1.enqueue_read_shards(
                [ShardDataTransfer(c, o) for c, o in zip(coords, outs, strict=True)], buffers[i % len(buffers)]
            )
            if not all((o == i % 256).all() for o in outs):
                bad.append(i)
            freed.put(cq1.enqueue_record_event())

    run_threads([writer, reader])
    cq0.finish()
    cq1.finish()
    assert not bad, f"rounds {bad[:5]} read bytes other than those written"


def books_consistent_under_lock(mesh: ttnn.MeshDevice) -> None:
    """Live buffers never overlap and sit on allocated blocks of their footprint (checked while
    holding the allocator lock, so no allocation or free is half done)."""
    with mesh.allocator.lock:
        live = [b for b in mesh.live_buffers() if b.device_local_size() > 0]
        for buffer_type in (ttnn.BufferType.DRAM, ttnn.BufferType.L1):
            view = ttnn.get_memory_view(mesh, buffer_type)
            table = blocks(view)
            assert sum(size for _, size, _ in table) == view.total_bytes_per_bank
            allocated = {address: size for address, size, used in table if used}
            base = mesh.allocator.manager(buffer_type).base
            mine = [b for b in live if b.buffer_type() is buffer_type]
            addresses = [b.address() - base for b in mine]
            assert len(set(addresses)) == len(addresses), f"two live {buffer_type} buffers share an address"
            for buffer, address in zip(mine, addresses, strict=True):
                assert allocated.get(address) == footprint(mesh, buffer), f"{buffer} is not on its own block"


@pytest.mark.parametrize("threads", [4, 8])
def test_many_threads_create_and_free_tensors_on_one_mesh(open_mesh, threads):
    mesh = open_mesh((2, 4), num_command_queues=2)
    per_thread = 40
    stop = threading.Event()
    checks: dict = {"count": 0, "errors": []}

    def worker(seed: int):
        def run() -> None:
            rng = np.random.default_rng(seed)
            kept: list[tuple[ttnn.Tensor, np.ndarray]] = []
            for i in range(per_thread):
                rows = int(rng.integers(1, 5)) * 8
                values = rng.uniform(-1, 1, (rows, int(rng.choice([32, 64, 96])))).astype(np.float32)
                values[0, 0] = seed * 1000 + i  # a tag: a value of another thread would show
                memory = ttnn.L1_MEMORY_CONFIG if rng.random() < 0.5 else ttnn.DRAM_MEMORY_CONFIG
                mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
                tensor = ttnn.from_torch(
                    values,
                    dtype=ttnn.float32,
                    layout=ttnn.TILE_LAYOUT,
                    device=mesh,
                    memory_config=memory,
                    mesh_mapper=mapper,
                )
                doubled = ttnn.add(tensor, tensor)
                back = ttnn.to_numpy(doubled, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
                assert np.array_equal(back, values + values), f"thread {seed} round {i} read another's data"
                if rng.random() < 0.5:
                    ttnn.deallocate(doubled)
                    assert not doubled.is_allocated()
                del doubled
                kept.append((tensor, values))
                if len(kept) > 3:
                    old, old_values = kept.pop(int(rng.integers(0, len(kept))))
                    got = ttnn.to_numpy(old, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
                    assert np.array_equal(got, old_values), f"thread {seed}: a kept tensor was overwritten"
                    if rng.random() < 0.5:
                        ttnn.deallocate(old)
                    del old
            kept.clear()

        return run

    def monitor() -> None:
        while not stop.is_set():
            try:
                books_consistent_under_lock(mesh)
            except BaseException as error:  # reported on the main thread
                checks["errors"].append(error)
                return
            checks["count"] += 1
            time.sleep(0.002)

    watcher = threading.Thread(target=monitor, daemon=True)
    watcher.start()
    try:
        run_threads([worker(s) for s in range(1, threads + 1)])
    finally:
        stop.set()
        watcher.join(timeout=JOIN_TIMEOUT)
    assert not watcher.is_alive()
    if checks["errors"]:
        raise checks["errors"][0]
    assert checks["count"] > 0
    ttnn.synchronize_device(mesh)
    check_books(mesh, [])  # every tensor was freed: nothing leaked, the allocator is whole
    view = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM)
    assert view.total_bytes_allocated_per_bank == 0


def test_threads_enqueue_ops_on_both_queues_with_events(open_mesh):
    """Four threads, two per queue, each computing on its own tensors; cq 1's threads wait for
    events recorded by cq 0's threads.  Results are exact; nothing deadlocks."""
    mesh = open_mesh((1, 8), num_command_queues=2)
    cq0, cq1 = mesh.mesh_command_queue(0), mesh.mesh_command_queue(1)
    events: queue.Queue = queue.Queue()
    rounds = 30

    def on_cq0(seed: int):
        def run() -> None:
            for i in range(rounds):
                values = np.full((8, 32), seed * 100 + i, np.float32)
                tensor = ttnn.from_torch(values, dtype=ttnn.float32, device=mesh,
                                         mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
                events.put((tensor, values, cq0.enqueue_record_event()))

        return run

    def on_cq1() -> None:
        for _ in range(rounds):
            tensor, values, event = events.get(timeout=HANDOFF_TIMEOUT)
            cq1.enqueue_wait_for_event(event)
            host = ttnn.from_device(tensor, cq_id=1)
            got = ttnn.to_numpy(host, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
            assert np.array_equal(got, values)
            assert ttnn.event_query(event)

    run_threads([on_cq0(1), on_cq0(2), on_cq1, on_cq1])
    ttnn.synchronize_device(mesh)
    check_books(mesh, [])


def test_memory_reports_while_threads_create_and_free_buffers(open_mesh):
    """``live_buffers`` / ``ttnn.memory_report`` take a snapshot of the mesh's buffer registry while
    other threads register buffers into it (this once raised "dictionary changed size during
    iteration").  Checked: every report is right for some moment (the held buffers, plus at most
    one in flight per maker), reports and makers overlap, and every thread finishes (bounded
    joins: a deadlock fails).  No rate is asserted: how fast the makers go is the machine's."""
    mesh = open_mesh((1, 2))
    config, local = ReplicatedBufferConfig(64), DeviceLocalBufferConfig(64)
    held = [MeshBuffer.create(config, local, mesh) for _ in range(4000)]
    makers, per_maker = 3, 2000
    made = [0] * makers
    stop = threading.Event()
    reports: list[tuple[int, int, int]] = []  # (live buffers, reported DRAM buffers, buffers made so far)
    errors: list[BaseException] = []

    def maker(index: int) -> Callable[[], None]:
        def run() -> None:
            for _ in range(per_maker):
                buffer = MeshBuffer.create(config, local, mesh)
                del buffer
                made[index] += 1

        return run

    def reporter() -> None:
        try:
            while not stop.is_set():
                live = len(mesh.live_buffers())
                dram = memory_rows(mesh)[0]["DRAM buffers"]  # what ttnn.memory_report prints
                reports.append((live, dram, sum(made)))
                time.sleep(0.001)
            ttnn.memory_report(mesh)
        except BaseException as error:  # reported on the main thread
            errors.append(error)

    watcher = threading.Thread(target=reporter, daemon=True)
    try:
        watcher.start()
        run_threads([maker(i) for i in range(makers)], timeout=4 * JOIN_TIMEOUT)
    finally:
        stop.set()
    watcher.join(timeout=JOIN_TIMEOUT)
    assert not watcher.is_alive()
    assert not errors, f"reporting while buffers were created failed: {errors[0]!r}"
    assert made == [per_maker] * makers
    assert reports, "no report was taken"
    for live, dram, _ in reports:
        assert len(held) <= live <= len(held) + makers and len(held) <= dram <= len(held) + makers, (live, dram)
    during = [r for r in reports if 0 < r[2] < makers * per_maker]
    assert during or len(reports) == 1, "the reports never overlapped the makers"
    held.clear()
    check_books(mesh, [])


def test_a_memory_report_does_not_visit_every_buffer(open_mesh, monkeypatch):
    """A report counts buffers from one snapshot of the registry (each buffer's type and address
    recorded when it registered): it calls no method of the 4000 live buffers, so its work while
    other threads allocate does not grow with them."""
    mesh = open_mesh((1, 2))
    config, local = ReplicatedBufferConfig(64), DeviceLocalBufferConfig(64)
    held = [MeshBuffer.create(config, local, mesh) for _ in range(4000)]
    calls = {"n": 0}
    for name in ("buffer_type", "address", "is_allocated"):
        original = getattr(MeshBuffer, name)

        def counted(self, *args, _original=original, **kwargs):
            calls["n"] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(MeshBuffer, name, counted)
    rows = memory_rows(mesh)
    assert rows[0]["DRAM buffers"] == len(held) and rows[1]["DRAM buffers"] == len(held)
    assert calls["n"] == 0, f"the report called {calls['n']} buffer methods"
