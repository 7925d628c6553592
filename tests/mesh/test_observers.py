"""Observers of meshes: every allocation, free and op launch reaches them, with its numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.mesh.observers import OBSERVERS, MeshObserver


class Log(MeshObserver):
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def on_allocate(self, event):
        self.events.append(("alloc", event.mesh, event.buffer_type.name, event.address, event.size, event.key))

    def on_deallocate(self, event):
        self.events.append(("free", event.mesh, event.buffer_type.name, event.address, event.size, event.key))

    def on_op_begin(self, event):
        self.events.append(("begin", event.op, len(event.inputs), event.op_id))

    def on_op_end(self, event, outputs):
        self.events.append(("end", event.op, [tuple(t.shape) for t in outputs], event.op_id))


@pytest.fixture
def log():
    observer = Log()
    OBSERVERS.add(observer)
    yield observer
    OBSERVERS.remove(observer)


def test_allocations_and_frees_arrive_with_their_addresses(log):
    with ttnn.open_mesh_device(ttnn.MeshShape(2, 4)) as mesh:
        a = ttnn.from_torch(torch.ones(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        address = a.buffer_address()
        ttnn.deallocate(a)
        allocs = [e for e in log.events if e[0] == "alloc"]
        frees = [e for e in log.events if e[0] == "free"]
        assert [e[2:4] for e in allocs] == [("DRAM", address)]
        assert allocs[0][1] is mesh and allocs[0][4] == 4 * 2048  # bytes per device: 4 bfloat16 tiles
        assert [e[2:] for e in frees] == [e[2:] for e in allocs]


def test_an_op_begins_before_its_outputs_are_allocated_and_ends_after(log):
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 2)) as mesh:
        a = ttnn.from_torch(torch.ones(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        b = ttnn.from_torch(torch.ones(64, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        log.events.clear()
        c = ttnn.matmul(a, b)
        kinds = [e[0] for e in log.events]
        assert kinds == ["begin", "alloc", "end"]
        assert log.events[0][1:3] == ("matmul", 2) and log.events[2][1:3] == ("matmul", [(32, 32)])
        assert log.events[0][3] == log.events[2][3]
        assert log.events[1][3] == c.buffer_address()


def test_a_removed_observer_hears_nothing_and_an_observer_error_reaches_the_caller(log):
    class Refuse(MeshObserver):
        def on_allocate(self, event):
            raise RuntimeError("no allocations now")

    refuse = Refuse()
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 1)) as mesh:
        OBSERVERS.add(refuse)
        try:
            with pytest.raises(RuntimeError, match="no allocations now"):
                ttnn.from_torch(np.ones((32, 32), np.float32), layout=ttnn.TILE_LAYOUT, device=mesh)
        finally:
            OBSERVERS.remove(refuse)
        OBSERVERS.remove(log)
        before = list(log.events)
        ttnn.from_torch(np.ones((32, 32), np.float32), layout=ttnn.TILE_LAYOUT, device=mesh)
        assert log.events == before
        assert not OBSERVERS and refuse not in OBSERVERS
