"""Closing a mesh while other threads use it: every thread ends (its work done, or a
DeviceClosedError), none is left waiting in ``finish``, and no dispatch thread outlives its mesh.

Before, a thread that enqueued while the mesh closed could start a new dispatch thread after the
queue had stopped its own (18 ``meshnn-cq*`` threads left after 150 closes), or leave work that no
thread would run, so that a ``finish`` waited out its timeout (4 minutes).  Every join here is
bounded."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import meshnn as ttnn

TRIALS = 40
JOIN_TIMEOUT = 30.0


@pytest.fixture(autouse=True)
def bounded_waits(monkeypatch):
    monkeypatch.setenv("MESHNN_WAIT_TIMEOUT", "20")


def dispatch_threads() -> int:
    return sum(t.name.startswith("meshnn-cq") for t in threading.enumerate())


def test_closing_under_busy_threads_strands_no_waiter_and_leaks_no_thread():
    before = dispatch_threads()
    for trial in range(TRIALS):
        mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k", num_command_queues=2)
        x = ttnn.from_torch(
            np.ones((2, 32, 32), np.float32),
            layout=ttnn.TILE_LAYOUT,
            device=mesh,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
        )
        outcomes: list[str] = []

        def worker(cq: int, mesh=mesh, x=x, outcomes=outcomes) -> None:
            try:
                for _ in range(200):
                    ttnn.add(x, x, queue_id=cq)
                    ttnn.synchronize_device(mesh, cq_id=cq)
                    mesh.mesh_command_queue(cq).finish()
                outcomes.append("done")
            except ttnn.DeviceClosedError:
                outcomes.append("closed")
            except Exception as error:  # anything else is a failure, reported below
                outcomes.append(repr(error))

        threads = [threading.Thread(target=worker, args=(i % 2,), daemon=True) for i in range(3)]
        for thread in threads:
            thread.start()
        time.sleep(0.001 * (trial % 7))
        mesh.close()
        for thread in threads:
            thread.join(timeout=JOIN_TIMEOUT)
        assert not any(t.is_alive() for t in threads), f"trial {trial}: a thread is still waiting after the close"
        assert set(outcomes) <= {"done", "closed"}, f"trial {trial}: {outcomes}"
        with pytest.raises(ttnn.DeviceClosedError):
            mesh.mesh_command_queue(0).finish()
    assert dispatch_threads() == before, "dispatch threads outlived their meshes"


def test_a_closed_queue_refuses_work_and_waits():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k", num_command_queues=2)
    cq = mesh.mesh_command_queue(1)
    event = cq.enqueue_record_event()
    mesh.close()
    with pytest.raises(ttnn.DeviceClosedError, match="closed"):
        cq.finish()
    with pytest.raises(ttnn.DeviceClosedError):
        cq.enqueue_record_event()
    assert event.is_completed(), "work taken before the close runs"


def test_allocating_on_a_submesh_while_its_parent_closes_leaves_nothing_allocated():
    """A thread allocating MeshBuffers on a submesh while the parent mesh closes: each allocation
    either lands before the close (which frees it) or is refused (DeviceClosedError) before the
    shared allocator changes; a buffer dropped while the close runs frees its own address.  The
    parent's allocator ends empty in every trial."""
    from meshnn.mesh import DeviceLocalBufferConfig, MeshBuffer, ReplicatedBufferConfig

    config, local = ReplicatedBufferConfig(2048), DeviceLocalBufferConfig(1024)
    for trial in range(TRIALS):
        mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
        sub = mesh.create_submesh(ttnn.MeshShape(1, 4))
        outcome: list[str] = []

        def allocate(sub=sub, outcome=outcome) -> None:
            held = []
            try:
                while True:
                    held.append(MeshBuffer.create(config, local, sub))
                    if len(held) > 20:
                        held.pop(0)
            except ttnn.DeviceClosedError:
                outcome.append("closed")
            except Exception as error:
                outcome.append(repr(error))

        thread = threading.Thread(target=allocate, daemon=True)
        thread.start()
        time.sleep(0.001 * (trial % 5))
        mesh.close()
        thread.join(timeout=JOIN_TIMEOUT)
        assert not thread.is_alive() and outcome == ["closed"], (trial, outcome)
        for kind in (ttnn.BufferType.DRAM, ttnn.BufferType.L1):
            assert mesh.allocator.memory_view(kind).total_bytes_allocated_per_bank == 0, f"trial {trial}: {kind} leaked"
