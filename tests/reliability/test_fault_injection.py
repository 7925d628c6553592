"""Fault injection: the k-th allocation of an op chain runs out of memory, or the k-th kernel raises.

For each chain (writes, matmul, element-wise ops, the three collectives, layout / dtype / memory
config changes, reallocate, reads) on each mesh, a clean run first counts the chain's allocations
``N`` and kernel launches ``W`` and records its result.  Then, for EVERY k in 1..N (and 1..W), the
chain runs again with the k-th allocation failing (``OutOfMemoryError`` built from the real
allocator statistics, raised from the mesh allocator) or the k-th MeshWorkload's kernel raising.
Each time:

- the error surfaces, with its message (the OOM at the failing allocation; a kernel's error at
  the next blocking call, as a QueueError naming the exception, or as itself);
- the only live buffers are those of the tensors the user still holds, and once those are
  dropped every memory view (block tables included) is exactly as before the chain;
- both command queues still work: a clean rerun gives the clean result bit for bit, and a write
  and read on cq 1 round-trip;
- the mesh closes cleanly (its allocator ends empty).

A random-k round (seeded) injects both fault kinds into one run as well.  ``FAULTS`` counts every
fault injected (printed with ``-s``): 14 allocations x 3 meshes, 11 kernels x 3 meshes, one numpy
kernel and 12 x 2 random ones.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import OutOfMemoryError
from meshnn.mesh.workload import MeshWorkload
from meshnn.ops.eltwise import unary_tables as eltwise
from meshnn.ops.launch import _Run

from .accounting import all_free, check_books, snapshot

FAULTS = {"oom": 0, "kernel": 0, "numpy kernel": 0, "random": 0}
MESHES = [(1, 1), (2, 4), (8, 4)]


class Injector:
    """Counts allocations and workload runs (an op's run at once included) on one mesh; fails the
    chosen ones."""

    def __init__(self, mesh: ttnn.MeshDevice, monkeypatch: pytest.MonkeyPatch) -> None:
        self.mesh = mesh
        self.allocations = 0
        self.workloads = 0
        self.fail_allocation: int | None = None
        self.fail_workload: int | None = None
        allocator = mesh.allocator
        real_allocate = allocator.allocate

        def allocate(layout, *, bottom_up=None):
            self.allocations += 1
            if self.allocations == self.fail_allocation:
                stats = allocator.manager(layout.buffer_type).statistics()
                raise OutOfMemoryError(
                    buffer_type=layout.buffer_type.name,
                    size=layout.size,
                    num_banks=allocator.manager(layout.buffer_type).num_banks,
                    size_per_bank=layout.size,
                    bank_size=stats.total_allocatable_size_bytes,
                    allocated=stats.total_allocated_bytes,
                    free=stats.total_free_bytes,
                    largest_free=stats.largest_free_block_bytes,
                    where=f" (injected at allocation {self.allocations})",
                )
            return real_allocate(layout, bottom_up=bottom_up)

        monkeypatch.setattr(allocator, "allocate", allocate)
        real_run = MeshWorkload.run
        injector = self

        def run(workload, mesh_device, bound=None):
            if mesh_device is injector.mesh:
                injector.workloads += 1
                if injector.workloads == injector.fail_workload:
                    raise RuntimeError(f"injected kernel fault in workload {injector.workloads}")
            return real_run(workload, mesh_device, bound)

        monkeypatch.setattr(MeshWorkload, "run", run)
        real_whole = _Run.run_whole

        def run_whole(op_run, mesh_device, slabs):  # an op run at once on an idle queue: no workload made
            if mesh_device is injector.mesh:
                injector.workloads += 1
                if injector.workloads == injector.fail_workload:
                    raise RuntimeError(f"injected kernel fault in workload {injector.workloads}")
            return real_whole(op_run, mesh_device, slabs)

        monkeypatch.setattr(_Run, "run_whole", run_whole)

    def arm(self, *, allocation: int | None = None, workload: int | None = None) -> None:
        self.allocations = self.workloads = 0
        self.fail_allocation, self.fail_workload = allocation, workload


def chain(mesh: ttnn.MeshDevice, held: dict, seed: int = 7) -> np.ndarray:
    """An op chain; the tensors in ``held`` are the ones the user keeps."""
    rng = np.random.default_rng(seed)
    rows, cols = tuple(mesh.shape)
    n = rows * cols
    x = rng.uniform(-2, 2, (n * 2, 64, 64)).astype(np.float32)
    w = rng.uniform(-1, 1, (64, 32 * cols)).astype(np.float32)
    held["x"] = ttnn.from_torch(
        torch.from_numpy(x), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )  # fmt: skip
    held["w"] = ttnn.from_torch(
        w, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG
    )
    h = ttnn.matmul(held["x"], held["w"])
    h = ttnn.relu(h)
    s = ttnn.add(h, ttnn.multiply(h, 0.5))
    g = ttnn.all_gather(s, dim=0, cluster_axis=1)
    r = ttnn.reduce_scatter(g, dim=2, cluster_axis=1)
    a = ttnn.all_reduce(r, cluster_axis=0)
    t = ttnn.to_layout(a, ttnn.ROW_MAJOR_LAYOUT)
    c = ttnn.typecast(t, ttnn.float32)
    m = ttnn.to_memory_config(c, ttnn.L1_MEMORY_CONFIG)
    m = ttnn.reallocate(m)
    host = ttnn.from_device(m, cq_id=1)
    return ttnn.to_numpy(host, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).copy()


def queues_work(mesh: ttnn.MeshDevice) -> None:
    values = np.arange(2 * 64, dtype=np.float32).reshape(2, 64)
    tensor = ttnn.from_torch(values, dtype=ttnn.float32, device=mesh)
    for cq in (0, 1):
        back = ttnn.from_device(tensor, cq_id=cq)
        got = ttnn.to_numpy(back, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
        assert np.array_equal(got, np.tile(values, (mesh.get_num_devices(), 1))), f"cq {cq} lost a write"
    ttnn.synchronize_device(mesh)


def run_faulted(mesh, injector, before, reference, **fault) -> list[str]:
    """Run the chain with faults armed; return the errors that surfaced (at the failing call, then
    at the next blocking call), after every check."""
    injector.arm(**fault)
    held: dict = {}
    messages = []
    try:
        chain(mesh, held)
    except ttnn.MeshnnError as error:
        messages.append(f"{type(error).__name__}: {error}")
    try:  # a kernel's error waits for the next blocking call
        ttnn.synchronize_device(mesh)
    except ttnn.MeshnnError as error:
        messages.append(f"{type(error).__name__}: {error}")
    injector.arm()
    check_books(mesh, [t.storage.mesh_buffer for t in held.values() if t.is_allocated()])
    held.clear()
    assert snapshot(mesh) == before, f"a fault {fault} left memory behind"
    queues_work(mesh)
    assert np.array_equal(chain(mesh, {}), reference), "a clean rerun after a fault gives another result"
    assert snapshot(mesh) == before
    return messages


@pytest.mark.parametrize("shape", MESHES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_kth_allocation_of_a_chain_fails_cleanly(shape, monkeypatch):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), num_command_queues=2, system="galaxy")
    mesh.disable_and_clear_program_cache()  # (no collective's semaphores held with a cached program)
    allocator = mesh.allocator
    injector = Injector(mesh, monkeypatch)
    before = snapshot(mesh)
    injector.arm()
    reference = chain(mesh, {})
    total = injector.allocations
    assert total >= 12 and snapshot(mesh) == before
    for k in range(1, total + 1):
        (message,) = run_faulted(mesh, injector, before, reference, allocation=k)
        assert message.startswith("OutOfMemoryError: Out of Memory: Not enough space"), message
        assert f"injected at allocation {k})" in message
        FAULTS["oom"] += 1
    print(f"\n{shape}: {total} allocations failed in turn; faults so far {FAULTS}")
    ttnn.close_mesh_device(mesh)
    assert all_free(allocator)


@pytest.mark.parametrize("shape", MESHES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_kth_kernel_of_a_chain_raises_and_the_queue_survives(shape, monkeypatch):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), num_command_queues=2, system="galaxy")
    mesh.disable_and_clear_program_cache()  # (no collective's semaphores held with a cached program)
    allocator = mesh.allocator
    injector = Injector(mesh, monkeypatch)
    before = snapshot(mesh)
    injector.arm()
    reference = chain(mesh, {})
    total = injector.workloads
    assert total >= 9
    for k in range(1, total + 1):
        (message,) = run_faulted(mesh, injector, before, reference, workload=k)
        assert f"QueueError: work enqueued on cq 0 failed: RuntimeError: injected kernel fault in workload {k}" in (
            message
        ), message
        FAULTS["kernel"] += 1
    print(f"\n{shape}: {total} kernels failed in turn; faults so far {FAULTS}")
    ttnn.close_mesh_device(mesh)
    assert all_free(allocator)


def test_a_numpy_kernel_that_raises_names_its_exception(open_mesh, monkeypatch):
    mesh = open_mesh((2, 4), num_command_queues=2)
    mesh.disable_and_clear_program_cache()  # (no collective's semaphores held with a cached program)
    before = snapshot(mesh)
    injector = Injector(mesh, monkeypatch)
    injector.arm()
    reference = chain(mesh, {})

    def broken(x):
        raise FloatingPointError("relu kernel overflowed")

    monkeypatch.setitem(eltwise.UNARY, "relu", broken)
    held: dict = {}
    with pytest.raises(ttnn.QueueError, match="FloatingPointError: relu kernel overflowed") as caught:
        chain(mesh, held)
    assert isinstance(caught.value, RuntimeError)
    del caught
    FAULTS["numpy kernel"] += 1
    monkeypatch.setitem(eltwise.UNARY, "relu", lambda x: np.maximum(x, 0))
    check_books(mesh, [t.storage.mesh_buffer for t in held.values()])
    held.clear()
    assert snapshot(mesh) == before
    queues_work(mesh)
    assert np.array_equal(chain(mesh, {}), reference)


def test_random_faults_of_both_kinds_in_one_run(open_mesh, monkeypatch):
    """Seeded random k: an allocation and a kernel failing in the same run, many times."""
    mesh = open_mesh((2, 4), num_command_queues=2)
    mesh.disable_and_clear_program_cache()  # (no collective's semaphores held with a cached program)
    injector = Injector(mesh, monkeypatch)
    before = snapshot(mesh)
    injector.arm()
    reference = chain(mesh, {})
    allocations, workloads = injector.allocations, injector.workloads
    rng = np.random.default_rng(20261209)
    for _ in range(12):
        k_alloc = int(rng.integers(1, allocations + 1))
        k_work = int(rng.integers(1, workloads + 1))
        messages = run_faulted(mesh, injector, before, reference, allocation=k_alloc, workload=k_work)
        assert 1 <= len(messages) <= 2, messages
        assert all("Out of Memory" in m or f"injected kernel fault in workload {k_work}" in m for m in messages)
        FAULTS["random"] += 2
