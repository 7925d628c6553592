"""Host memory: a long loop that creates and frees large device tensors keeps the process's resident
memory flat, because a freed MeshBuffer's slab goes back to the system (or to the bounded slab pool).

Each loop churns over 2 GiB through tensors of 24 to 72 MiB (sizes vary, so the
slab pool cannot simply hand the same slab back every time), by explicit ``ttnn.deallocate``, by
dropping the last reference, and through an op chain whose intermediates are freed.  The resident
set size is read from ``/proc/self/statm`` after a warm-up, and again at the end; the growth bound
is generous (the pool's limit, lowered for the test, plus 192 MiB for allocator noise), and still
about a tenth of what leaking the churned slabs would cost.
"""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.mesh import slab

from .accounting import all_free

MIB = 1 << 20
POOL_LIMIT = 64 * MIB
SLACK = 192 * MIB
ROUNDS = 48
SIZES_MIB = (24, 40, 56, 72)

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")


def resident_bytes() -> int:
    """The process's resident set size, in bytes."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture
def small_pool(monkeypatch):
    """The slab pool bounded at POOL_LIMIT for the test; emptied before and after."""
    slab.SLAB_POOL.clear()
    monkeypatch.setattr(slab.SLAB_POOL, "limit", POOL_LIMIT)
    yield slab.SLAB_POOL
    slab.SLAB_POOL.clear()


def rows_for(mib: int, mesh: ttnn.MeshDevice) -> int:
    """Rows of a 1024-wide float32 tensor of about ``mib`` MiB that shards evenly over the mesh."""
    devices = mesh.get_num_devices()
    return mib * MIB // (1024 * 4) // devices * devices


def churn(mesh: ttnn.MeshDevice, rounds: int, way: str) -> int:
    """Create, fill, read and free ``rounds`` large tensors; return the device bytes churned."""
    churned = 0
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
    for i in range(rounds):
        rows = rows_for(SIZES_MIB[i % len(SIZES_MIB)], mesh)
        host = np.full((rows, 1024), float(i), dtype=np.float32)
        tensor = ttnn.from_torch(
            host, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=mapper
        )
        churned += host.nbytes
        if way == "deallocate":
            ttnn.deallocate(tensor)
        elif way == "drop":
            del tensor
        else:  # an op chain: the intermediate and the output are freed, the input too
            doubled = ttnn.multiply(tensor, 2.0)
            ttnn.deallocate(tensor)
            corner = ttnn.to_numpy(doubled, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[:: rows // 4, :4]
            assert np.all(corner == 2.0 * i)
            churned += host.nbytes
            ttnn.deallocate(doubled)
        del host
    return churned


@pytest.mark.parametrize("way", ["deallocate", "drop", "op_chain"])
def test_creating_and_freeing_large_tensors_keeps_resident_memory_flat(small_pool, way):
    with ttnn.open_mesh_device(ttnn.MeshShape(2, 4)) as mesh:
        churn(mesh, 8, way)  # warm up: the pool fills, numpy and the allocator settle
        gc.collect()
        before = resident_bytes()
        churned = churn(mesh, ROUNDS, way)
        gc.collect()
        after = resident_bytes()
        assert mesh.live_buffers() == []
        assert all_free(mesh.allocator)
        assert small_pool.nbytes <= POOL_LIMIT
    growth = after - before
    assert churned >= 2 * 1024 * MIB
    assert growth <= POOL_LIMIT + SLACK, (
        f"{way}: resident memory grew by {growth / MIB:.0f} MiB while {churned / MIB:.0f} MiB were churned"
    )


def test_closing_a_mesh_with_live_tensors_releases_their_slabs(small_pool):
    """Tensors left alive when their mesh closes free their slabs at the close, not at the last reference."""
    gc.collect()
    before = resident_bytes()
    kept = []
    for _ in range(6):
        with ttnn.open_mesh_device(ttnn.MeshShape(2, 4)) as mesh:
            mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
            host = np.ones((rows_for(48, mesh), 1024), dtype=np.float32)
            kept.append(ttnn.from_torch(host, dtype=ttnn.float32, device=mesh, mesh_mapper=mapper))
            del host
        assert not kept[-1].is_allocated()
    gc.collect()
    growth = resident_bytes() - before
    assert growth <= POOL_LIMIT + SLACK, f"resident memory grew by {growth / MIB:.0f} MiB with 6 closed meshes"
