"""``ttnn.experimental.deepseek_prefill.rotary_embedding_indexed`` against numpy on a 2x4 mesh with
the sequence-parallel axis along the columns (cluster_axis 1): each device rotates its chunk with the
rope rows of the global positions its rows carry in a block-cyclic KV cache, found here by walking
the cache layout (not by the op's offset formula).  The rotation by the one-tile matrix is a signed
swap of pairs, so the float32 reference is exact and the output must equal it rounded to bfloat16."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops.transformer.padded_chunks import update_tile

DRAM, TILE_L = ttnn.DRAM_MEMORY_CONFIG, ttnn.TILE_LAYOUT
SP, ROWS, C, D, SHARD = 4, 2, 64, 64, 256  # SP devices, mesh rows, chunk rows, head dim, shard rows


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(ROWS, SP), system="t3k")
    yield m
    ttnn.close_mesh_device(m)


def bf16(a):
    return torch.tensor(np.ascontiguousarray(a, np.float32)).bfloat16().float().numpy()


def trans_mat() -> np.ndarray:
    t = np.zeros((1, 1, 32, 32), np.float32)
    t[..., np.arange(0, 32, 2), np.arange(1, 32, 2)] = 1
    t[..., np.arange(1, 32, 2), np.arange(0, 32, 2)] = -1
    return t


def positions_of(kv_actual: int) -> np.ndarray:
    """(SP, C): the global position each device's chunk row carries: new tokens fill the cache's pad
    cells first, in global order, device by device along the block-cyclic layout."""
    chunk_global, cells = SP * C, []
    p = kv_actual
    while len(cells) < SP * C:  # walk global positions from kv_actual, one chunk's worth
        cells.append(p)
        p += 1
    owner = [(q % chunk_global) // C for q in cells]
    return np.array([[q for q, o in zip(cells, owner, strict=True) if o == d][:C] for d in range(SP)])


@pytest.mark.parametrize("kv_actual", [0, 256, 96, 352])
@pytest.mark.parametrize("per_head", [False, True])
def test_each_device_uses_the_rope_rows_of_its_positions(mesh, kv_actual, per_head):
    rng = np.random.default_rng(kv_actual)
    heads = 2  # per device; the input's heads are split over the mesh rows
    cos_heads = heads if per_head else 1
    cache_rows = SHARD * SP
    angles = rng.uniform(-3, 3, (cos_heads, cache_rows, D)).astype(np.float32)
    cos_full, sin_full = bf16(np.cos(angles)), bf16(np.sin(angles))
    local = [(p // (SP * C)) * C + p % C for p in range(cache_rows)]  # the block-cyclic local row
    owner = [(p % (SP * C)) // C for p in range(cache_rows)]
    shards = np.zeros((2, SP, cos_heads, SHARD, D), np.float32)
    for p in range(cache_rows):
        shards[0, owner[p], :, local[p]], shards[1, owner[p], :, local[p]] = cos_full[:, p], sin_full[:, p]
    mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=(ROWS, SP), dims=(None, 2))

    def cache(i):  # [1, cos_heads, SP * SHARD, D], device d of a row holding shard d
        whole = np.concatenate(list(shards[i]), axis=1)[None]
        return ttnn.from_torch(torch.tensor(whole).bfloat16(), dtype=ttnn.bfloat16, layout=TILE_L, device=mesh,
                               memory_config=DRAM, mesh_mapper=mapper)  # fmt: skip

    x = bf16(rng.standard_normal((1, heads * ROWS, SP * C, D)))
    split = ttnn.ShardTensor2dMesh(mesh, (ROWS, SP), dims=(1, 2))
    tx = ttnn.from_torch(torch.tensor(x).bfloat16(), dtype=ttnn.bfloat16, layout=TILE_L, device=mesh,
                         memory_config=DRAM, mesh_mapper=split)  # fmt: skip
    t = ttnn.from_torch(torch.tensor(trans_mat()).bfloat16(), dtype=ttnn.bfloat16, layout=TILE_L, device=mesh,
                        memory_config=DRAM, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))  # fmt: skip
    out = ttnn.experimental.deepseek_prefill.rotary_embedding_indexed(
        tx, cache(0), cache(1), t, kv_actual_global=kv_actual, cluster_axis=1
    )
    got = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMesh2dToTensor(mesh, (ROWS, SP), dims=(1, 2))).float().numpy()
    pos = positions_of(kv_actual)
    for d in range(SP):
        xs = x[:, :, d * C : (d + 1) * C]
        rot = np.empty_like(xs)
        rot[..., 1::2], rot[..., 0::2] = xs[..., 0::2], -xs[..., 1::2]
        heads_of = np.arange(heads * ROWS) % heads if per_head else np.zeros(heads * ROWS, int)
        c, s = cos_full[heads_of][:, pos[d]][None], sin_full[heads_of][:, pos[d]][None]
        np.testing.assert_array_equal(got[:, :, d * C : (d + 1) * C], bf16(xs * c + rot * s))


def test_the_offset_formula_on_a_walk_of_the_layout():
    for kv_actual in range(0, 6 * SP * C, 32):
        pos = positions_of(kv_actual)
        for d in range(SP):
            first_local = (pos[d, 0] // (SP * C)) * C + pos[d, 0] % C
            assert update_tile(kv_actual // 32, SP, C // 32, d) * 32 == first_local


def test_kv_actual_is_a_runtime_argument_and_bounds_are_checked(mesh):
    x = ttnn.from_torch(torch.zeros(1, 1, 32, 64), dtype=ttnn.bfloat16, layout=TILE_L, device=mesh)
    c = ttnn.from_torch(torch.zeros(1, 1, 128, 64), dtype=ttnn.bfloat16, layout=TILE_L, device=mesh)
    t = ttnn.from_torch(torch.tensor(trans_mat()), dtype=ttnn.bfloat16, layout=TILE_L, device=mesh)
    op = ttnn.experimental.deepseek_prefill.rotary_embedding_indexed
    mesh.enable_program_cache()
    op(x, c, c, t, kv_actual_global=0, cluster_axis=1)
    before = mesh.num_program_cache_entries()
    op(x, c, c, t, kv_actual_global=32, cluster_axis=1)
    assert mesh.num_program_cache_entries() == before
    with pytest.raises(ttnn.MeshnnValueError, match="would index past the per-device cos/sin shard"):
        op(x, c, c, t, kv_actual_global=4 * 32 * SP, cluster_axis=1)
    with pytest.raises(ttnn.MeshnnValueError, match="must be tile-aligned"):
        op(x, c, c, t, kv_actual_global=16, cluster_axis=1)
    with pytest.raises(ttnn.MeshnnValueError, match="trans_mat must be a single tile"):
        op(x, c, c, c, kv_actual_global=0, cluster_axis=1)
