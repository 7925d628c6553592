"""The global semaphores a collective makes for itself when its program is not cached (ttnn's
all_gather, reduce_scatter, all_broadcast...): held with the program's cache entry, in L1 or, with
``use_l1_small_for_semaphores=True``, in L1_SMALL; freed when the cache is cleared."""

import numpy as np
import pytest

import meshnn as ttnn

L1, L1_SMALL = ttnn.BufferType.L1, ttnn.BufferType.L1_SMALL

COLLECTIVES = {  # op -> (call, the semaphores ttnn's program makes)
    "all_gather": (lambda t, **kw: ttnn.all_gather(t, dim=3, **kw), 3),
    "reduce_scatter": (lambda t, **kw: ttnn.reduce_scatter(t, dim=3, **kw), 4),
    "all_broadcast": (lambda t, **kw: ttnn.all_broadcast(t, **kw), 2),
}


def _tensor(mesh, cols=256):
    data = np.arange(32 * cols, dtype=np.float32).reshape(1, 1, 32, cols)
    return ttnn.from_torch(
        data, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )


def _semaphores(mesh, buffer_type):
    """The live buffers of ``buffer_type`` that are one 4-byte word a core of the whole grid."""
    grid = mesh.compute_with_storage_grid_size()
    return [b for b in mesh.live_buffers() if b.buffer_type() is buffer_type and b.size() == 4 * grid.x * grid.y]


def _free(outputs):
    for t in outputs if isinstance(outputs, list) else [outputs]:
        ttnn.deallocate(t)


@pytest.mark.parametrize("op", list(COLLECTIVES))
@pytest.mark.parametrize("small", [False, True], ids=["l1", "l1_small"])
def test_a_cache_miss_makes_the_semaphores_and_a_hit_reuses_them(open_mesh, op, small):
    mesh = open_mesh((1, 8), l1_small_size=4096)
    call, count = COLLECTIVES[op]
    x = _tensor(mesh)
    kind, other = (L1_SMALL, L1) if small else (L1, L1_SMALL)
    _free(call(x, use_l1_small_for_semaphores=small))
    held = _semaphores(mesh, kind)
    assert len(held) == count and not _semaphores(mesh, other)
    assert mesh.num_program_cache_entries() == 1
    _free(call(x, use_l1_small_for_semaphores=small))  # a hit: the same semaphores, no new entry
    assert [id(b) for b in _semaphores(mesh, kind)] == [id(b) for b in held]
    assert mesh.num_program_cache_entries() == 1
    _free(call(x, use_l1_small_for_semaphores=not small))  # the flag is part of the key, as in ttnn
    assert len(_semaphores(mesh, other)) == count and mesh.num_program_cache_entries() == 2
    mesh.clear_program_cache()
    assert not _semaphores(mesh, L1) and not _semaphores(mesh, L1_SMALL)
    assert all(not b.is_allocated() for b in held)


def test_with_the_cache_off_nothing_is_held(open_mesh):
    mesh = open_mesh((1, 8))
    mesh.disable_and_clear_program_cache()
    _free(ttnn.all_gather(_tensor(mesh), dim=3))
    assert not _semaphores(mesh, L1) and mesh.num_program_cache_entries() == 0


def test_semaphores_given_to_an_async_collective_are_not_made_again(open_mesh):
    mesh = open_mesh((1, 8))
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))])
    given = [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(2)]
    before = len(_semaphores(mesh, L1))
    _free(ttnn.experimental.all_gather_async(_tensor(mesh), dim=3, multi_device_global_semaphore=given))
    assert len(_semaphores(mesh, L1)) == before == 2


def test_l1_semaphores_split_the_free_l1_until_the_cache_is_cleared(open_mesh):
    """tt-metal's test_ccl_l1_small_semaphores: after an L1 tensor, a collective and the tensor's
    release, the semaphores sit where the tensor's end was, so a tensor of more than either free
    part no longer fits; in L1_SMALL (or once the cache is cleared) it does."""
    for small in (False, True):
        mesh = open_mesh((1, 8), l1_small_size=512)
        view = mesh.get_memory_view(L1)
        per_bank = view.largest_contiguous_bytes_free_per_bank
        a = ttnn.allocate_tensor_on_device(
            ttnn.Shape([per_bank // 4096 * view.num_banks * 16, 32]),
            ttnn.float32,
            ttnn.TILE_LAYOUT,
            mesh,
            ttnn.L1_MEMORY_CONFIG,
        )  # about half of every bank
        _free(ttnn.all_gather(_tensor(mesh), dim=3, use_l1_small_for_semaphores=small))
        ttnn.deallocate(a)
        largest = mesh.get_memory_view(L1).largest_contiguous_bytes_free_per_bank
        assert (largest < per_bank - 64) if not small else largest == per_bank
        if not small:
            mesh.clear_program_cache()
            assert mesh.get_memory_view(L1).largest_contiguous_bytes_free_per_bank == per_bank


def test_semaphores_that_do_not_fit_leave_no_entry_and_no_output(open_mesh):
    mesh = open_mesh((1, 8))  # no L1_SMALL region
    x = _tensor(mesh)
    live = len(mesh.live_buffers())
    with pytest.raises(ttnn.MeshnnError, match="L1_SMALL") as caught:
        ttnn.all_gather(x, dim=3, use_l1_small_for_semaphores=True)
    assert any("global semaphores could not be allocated" in note for note in caught.value.__notes__)
    assert mesh.num_program_cache_entries() == 0 and len(mesh.live_buffers()) == live


@pytest.mark.parametrize(
    "kw, error",
    [
        ({"use_l1_small_for_semaphores": "yes"}, TypeError),
        ({"subdevice_id": ttnn.SubDeviceId(3)}, ValueError),
    ],
)
def test_bad_semaphore_options_are_refused_before_anything_runs(open_mesh, kw, error):
    mesh = open_mesh((1, 8))
    x = _tensor(mesh)
    live = len(mesh.live_buffers())
    with pytest.raises(error):
        ttnn.all_gather(x, dim=3, **kw)
    assert mesh.num_program_cache_entries() == 0 and len(mesh.live_buffers()) == live
