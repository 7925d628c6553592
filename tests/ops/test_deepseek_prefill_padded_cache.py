"""``ttnn.experimental.deepseek_prefill.update_padded_kv_cache`` / ``zero_padded_kv_cache`` against numpy
on a 1x4 mesh (sequence-parallel along the columns), bfloat16 and bfloat8_b caches.  The reference
keeps the cache by global token position and lays it out block-cyclically (global token ``p`` on device
``(p mod 4C) // C`` at local row ``(p // 4C) * C + p mod C``); a chunk's rows go to the positions a walk
from ``kv_actual_global`` gives each device.  Values are moved or zeroed, never computed: compared
exactly; other users, layers and rows must be unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

SP, C, D, SHARD, LAYERS, SLOTS = 4, 64, 64, 256, 2, 2
CG = SP * C  # a chunk over the SP axis (tokens)


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, SP), system="t3k")
    yield m
    ttnn.close_mesh_device(m)


def local_row(p: int) -> int:
    return (p // CG) * C + p % C


def layout(global_cache: np.ndarray) -> np.ndarray:
    """``[b, 1, SP * SHARD, D]`` by global position -> the device shards concatenated on dim 2."""
    out = np.zeros_like(global_cache)
    for p in range(SP * SHARD):
        d = (p % CG) // C
        out[:, :, d * SHARD + local_row(p)] = global_cache[:, :, p]
    return out


def to_mesh(mesh, values, dtype, dim):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=dim)
    return ttnn.from_torch(torch.tensor(values), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh,
                           memory_config=ttnn.DRAM_MEMORY_CONFIG, mesh_mapper=mapper)  # fmt: skip


def read(mesh, t) -> np.ndarray:
    return ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=2)).float().numpy()


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b])
def test_chunks_land_on_the_pad_cells_then_the_window_is_zeroed(mesh, dtype):
    rng = np.random.default_rng(5)
    start = rng.standard_normal((SLOTS * LAYERS, 1, SP * SHARD, D)).astype(np.float32)
    cache = to_mesh(mesh, layout(start), dtype, 2)
    want = read(mesh, cache)  # (the cache's own dtype), by device layout
    by_position = np.zeros_like(want)  # the reference by global position, from the device layout
    for p in range(SP * SHARD):
        by_position[:, :, p] = want[:, :, ((p % CG) // C) * SHARD + local_row(p)]
    slot, layer, batch = 1, 0, 1 * LAYERS + 0
    kv = 0
    for valid in (3 * C + 32, 2 * C, SP * C):  # tokens the chunk brings: straddles, mid-device, whole
        x = rng.standard_normal((1, 1, CG, D)).astype(np.float32)
        tx = to_mesh(mesh, x, dtype, 2)
        sent = read(mesh, tx)[0, 0]  # what the devices hold (rounded into the dtype)
        out = ttnn.experimental.deepseek_prefill.update_padded_kv_cache(
            cache, tx, slot_idx=slot, layer_idx=layer, num_layers=LAYERS, kv_actual_global=kv, cluster_axis=1
        )
        assert out is cache
        window = range(kv, kv + CG)  # each device takes its first C of these positions, in order
        for d in range(SP):
            mine = [p for p in window if (p % CG) // C == d]
            by_position[batch, 0, mine] = sent[d * C : (d + 1) * C]
        np.testing.assert_array_equal(read(mesh, cache), layout(by_position))
        kv += valid
    ttnn.experimental.deepseek_prefill.zero_padded_kv_cache(
        cache, slot, layer, LAYERS, valid_global=kv - 40, chunk_size_global=CG, cluster_axis=1, pad_align=128
    )
    end = -(-(kv - 40) // 128) * 128
    by_position[batch, 0, kv - 40 : end] = 0
    np.testing.assert_array_equal(read(mesh, cache), layout(by_position))


def test_program_keys_leave_out_the_runtime_arguments(mesh):
    cache = to_mesh(mesh, np.zeros((SLOTS * LAYERS, 1, SP * SHARD, D), np.float32), ttnn.bfloat16, 2)
    x = to_mesh(mesh, np.zeros((1, 1, CG, D), np.float32), ttnn.bfloat16, 2)
    mesh.enable_program_cache()
    mesh.clear_program_cache()
    update = ttnn.experimental.deepseek_prefill.update_padded_kv_cache
    for slot in range(SLOTS):
        for layer in range(LAYERS):
            update(cache, x, slot, layer, LAYERS, kv_actual_global=32 * slot, cluster_axis=1)
    assert mesh.num_program_cache_entries() == LAYERS  # one program per layer (slot, kv: runtime)


def test_refusals(mesh):
    cache = to_mesh(mesh, np.zeros((SLOTS * LAYERS, 1, SP * SHARD, D), np.float32), ttnn.bfloat16, 2)
    x = to_mesh(mesh, np.zeros((1, 1, CG, D), np.float32), ttnn.bfloat16, 2)
    update = ttnn.experimental.deepseek_prefill.update_padded_kv_cache
    zero = ttnn.experimental.deepseek_prefill.zero_padded_kv_cache
    with pytest.raises(ttnn.MeshnnValueError, match="would overflow global cache capacity"):
        update(cache, x, 0, 0, LAYERS, kv_actual_global=SP * SHARD - CG + 32, cluster_axis=1)
    with pytest.raises(ttnn.MeshnnValueError, match=r"slot_idx \(2\) out of range for num_slots \(2\)"):
        update(cache, x, 2, 0, LAYERS, kv_actual_global=0, cluster_axis=1)
    with pytest.raises(ttnn.MeshnnValueError, match="layer_idx 2 out of range"):
        update(cache, x, 0, 2, LAYERS, kv_actual_global=0, cluster_axis=1)
    with pytest.raises(ttnn.MeshnnValueError, match="must be a multiple of pad_align"):
        zero(cache, 0, 0, LAYERS, valid_global=10, chunk_size_global=CG, cluster_axis=1, pad_align=96)
    with pytest.raises(ttnn.MeshnnValueError, match="exceeds cache capacity"):
        zero(cache, 0, 0, LAYERS, valid_global=SP * SHARD + 1, chunk_size_global=CG, cluster_axis=1)
