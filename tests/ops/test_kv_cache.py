"""KV caches written in place (issue 23): fill_cache, update_cache, experimental.paged_update_cache
(positions as a list or a tensor, page tables shuffled), paged_fused_update_cache, paged_fill_cache,
plus_one.  Each against numpy: the rows written hold exactly what the host conversion gives those
values in the cache's dtype (bytes equal), every other byte is unchanged, and the cache keeps its
address, its MeshBuffer and the memory view (nothing allocated, nothing freed)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops.decoded import DECODED
from meshnn.ops.memo import VALUES_MEMO
from meshnn.ops.values import _decoded

B, H, S, D = 4, 2, 64, 64


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield m
    m.close()


def dev(mesh, t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, mc=None):
    return ttnn.from_torch(t, dtype=dtype, layout=layout, device=mesh, memory_config=mc)


def host(t) -> torch.Tensor:
    return ttnn.to_torch(ttnn.get_device_tensors(t)[0]).float()


def rounded(values: torch.Tensor, dtype) -> torch.Tensor:
    """``values`` as a cache of ``dtype`` holds them (the host conversion of the same tiles)."""
    return ttnn.to_torch(ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT)).float()


def raw(t) -> np.ndarray:
    return np.array(t.storage.mesh_buffer.rows())


def state(mesh, t):
    """What an in-place write must leave as it was: the buffer, its address, the memory views."""
    views = [ttnn.get_memory_view(mesh, bt) for bt in (ttnn.BufferType.DRAM, ttnn.BufferType.L1)]
    return t.storage.mesh_buffer, t.storage.mesh_buffer.address(), views


def users_sharded(users: int, heads: int = 32, d: int = D):
    """[1, users, heads, d] height-sharded one user per core, as nlp_create_qkv_heads_decode makes it."""
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(users - 1, 0))])
    return ttnn.create_sharded_memory_config(
        (heads, d), cores, ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
    )


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b])
def test_fill_cache_writes_one_users_rows_in_place(mesh, dtype):
    base = torch.randn(B, H, S, D)
    cache = dev(mesh, base, dtype)
    before, want = state(mesh, cache), host(cache)
    fill = torch.randn(1, H, 32, D)
    assert ttnn.fill_cache(cache, dev(mesh, fill, dtype), 2, update_idx=32) is cache
    want[2, :, 32:64] = rounded(fill, dtype)[0]
    assert torch.equal(host(cache), want)
    assert state(mesh, cache) == before


def test_update_cache_writes_each_users_row(mesh):
    cache = dev(mesh, torch.randn(B, H, S, D))
    want = host(cache)
    x = torch.randn(1, H, 32, D)  # the batch padded to 32: rows batch_offset .. + B are taken
    ttnn.update_cache(cache, dev(mesh, x), 17, batch_offset=3)
    want[:, :, 17] = x[0, :, 3 : 3 + B].transpose(0, 1).bfloat16().float()
    assert torch.equal(host(cache), want)


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b, ttnn.bfloat4_b])
def test_paged_update_cache_with_a_shuffled_page_table(mesh, dtype):
    block, blocks_per_user = 32, 2
    blocks = B * blocks_per_user
    logical = torch.randn(B, H, block * blocks_per_user, D)
    table = torch.randperm(blocks).reshape(B, blocks_per_user).int()
    paged = torch.empty(blocks, H, block, D)
    for u in range(B):
        for j in range(blocks_per_user):
            paged[table[u, j]] = logical[u, :, j * block : (j + 1) * block]
    cache = dev(mesh, paged, dtype)
    before, start = state(mesh, cache), raw(cache)
    x = torch.randn(1, B, H, D)
    pos = torch.tensor([5, -1, 40, 63], dtype=torch.int32)  # user 1 skipped
    ttnn.experimental.paged_update_cache(
        cache,
        dev(mesh, x, mc=users_sharded(B)),
        update_idxs_tensor=dev(mesh, pos, ttnn.int32, ttnn.ROW_MAJOR_LAYOUT),
        page_table=dev(mesh, table, ttnn.int32, ttnn.ROW_MAJOR_LAYOUT),
    )
    want = paged.clone()
    for u in range(B):
        if pos[u] >= 0:
            want[table[u, pos[u] // block], :, pos[u] % block] = x[0, u].bfloat16().float()  # the input's bf16
    expected = _bytes_of(want, dtype)
    assert np.array_equal(raw(cache), np.repeat(expected[None], 2, 0))
    assert state(mesh, cache) == before
    changed = np.nonzero((raw(cache) != start).any(axis=0))[0]
    assert changed.size <= 3 * 2 * H * (D // 32) * ttnn.Tile().get_tile_size(dtype)  # rows only, no whole tiles


def _bytes_of(values: torch.Tensor, dtype) -> np.ndarray:
    """The bytes a device tensor of ``values`` in ``dtype`` (TILE) holds on one device."""
    from meshnn.formats.codec import encode

    return encode(values.numpy(), dtype, ttnn.TILE_LAYOUT)


def test_paged_update_cache_unpaged_with_a_list_and_a_shared_cache(mesh):
    cache = dev(mesh, torch.randn(B, H, S, D))
    want = host(cache)
    x = torch.randn(1, B, H, D)
    ttnn.experimental.paged_update_cache(cache, dev(mesh, x, mc=users_sharded(B)), update_idxs=[0, 9, 33, 63])
    for u, p in enumerate([0, 9, 33, 63]):
        want[u, :, p] = x[0, u].bfloat16().float()
    assert torch.equal(host(cache), want)
    shared = dev(mesh, torch.zeros(1, H, S, D))
    ttnn.experimental.paged_update_cache(
        shared, dev(mesh, x, mc=users_sharded(B)), update_idxs=[1, 2, 3, 4], share_cache=True
    )
    got = host(shared)
    for u in range(B):
        assert torch.equal(got[0, :, u + 1], x[0, u].bfloat16().float())


def test_paged_fused_update_cache_writes_keys_and_values(mesh):
    keys, values = dev(mesh, torch.zeros(B, H, S, D)), dev(mesh, torch.zeros(B, H, S, D))
    k, v = torch.randn(1, B, H, D), torch.randn(1, B, H, D)
    pos = dev(mesh, torch.tensor([3, 4, 5, 6], dtype=torch.int32), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.experimental.paged_fused_update_cache(
        keys, dev(mesh, k, mc=users_sharded(B)), values, dev(mesh, v, mc=users_sharded(B)), update_idxs_tensor=pos
    )
    assert out[0] is keys and out[1] is values
    for cache, src in ((keys, k), (values, v)):
        want = torch.zeros(B, H, S, D)
        for u in range(B):
            want[u, :, u + 3] = src[0, u].bfloat16().float()
        assert torch.equal(host(cache), want)


def test_paged_fill_cache_through_a_shuffled_page_table_and_into_another_dtype(mesh):
    block, blocks = 32, 8
    table = torch.randperm(blocks).reshape(2, 4).int()
    cache = dev(mesh, torch.zeros(blocks, H, block, D), ttnn.bfloat8_b)
    before = state(mesh, cache)
    fill = torch.randn(1, H, 96, D)  # three blocks of user 1
    ttnn.experimental.paged_fill_cache(
        cache, dev(mesh, fill), dev(mesh, table, ttnn.int32, ttnn.ROW_MAJOR_LAYOUT), batch_idx=1
    )
    got = host(cache)
    want = rounded(fill.bfloat16().float(), ttnn.bfloat8_b)
    for j in range(3):
        assert torch.equal(got[table[1, j]], want[0, :, j * block : (j + 1) * block])
    assert got[table[1, 3]].abs().sum() == 0 and got[table[0]].abs().sum() == 0
    assert state(mesh, cache) == before


def test_cache_writes_for_other_users_and_positions_reuse_one_program(mesh):
    """The user and position indices are runtime arguments in ttnn (UpdateCache and the paged ops
    hash only their op type and tensors): writing every user of a paged cache is one program."""
    block, blocks = 32, 8
    table = dev(mesh, torch.randperm(blocks).reshape(2, 4).int(), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
    cache = dev(mesh, torch.zeros(blocks, H, block, D))
    unpaged = dev(mesh, torch.zeros(2, H, 64, D))
    x = dev(mesh, torch.randn(1, H, 32, D))
    mesh.clear_program_cache()
    for user in range(2):
        ttnn.experimental.paged_fill_cache(cache, x, table, batch_idx=user)
        ttnn.fill_cache(unpaged, x, user)
    assert mesh.num_program_cache_entries() == 2  # one paged_fill_cache program, one fill_cache program
    ttnn.fill_cache(unpaged, dev(mesh, torch.randn(1, H, 64, D)), 0)
    assert mesh.num_program_cache_entries() == 3  # another input shape: another program


def test_an_update_patches_the_caches_memo_to_what_its_bytes_decode_to(mesh):
    cache = ttnn.from_torch(  # large enough for memos; each device its own (a replicated one is read once)
        torch.randn(2 * B, 8, 256, D),
        dtype=ttnn.bfloat8_b,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )
    q = dev(mesh, torch.randn(1, B, 8, D), mc=users_sharded(B))
    # positions reaching a quarter of the cache or more: the attention decodes it whole and leaves a memo
    pos = dev(mesh, torch.tensor([61, 62, 63, 64], dtype=torch.int32), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
    ttnn.transformer.scaled_dot_product_attention_decode(q, cache, cache, cur_pos_tensor=pos)  # leaves a memo
    buffer = cache.storage.mesh_buffer

    def memo_values():  # float32 values (Known) or bfloat16 ones (Decoded, with torch present)
        known = VALUES_MEMO.get(buffer, cache.spec)
        if known is not None:
            return known.values
        decoded = DECODED.get(buffer, cache.spec)
        return None if decoded is None else decoded.floats(decoded.values.shape[0])

    assert memo_values() is not None
    x = dev(mesh, torch.randn(1, B, 8, D) * 5, mc=users_sharded(B))
    ttnn.experimental.paged_update_cache(cache, x, update_idxs_tensor=pos)
    ttnn.synchronize_device(mesh)
    values = memo_values()
    assert values is not None  # kept, not dropped
    assert np.array_equal(values, _decoded(buffer.rows(), cache.spec, as_float=True))


def test_plus_one_steps_positions_in_place(mesh):
    pos = dev(mesh, torch.tensor([0, -1, 7, 255], dtype=torch.int32), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
    address = pos.storage.mesh_buffer.address()
    assert ttnn.plus_one(pos, skip_negative_entries=True) is pos
    assert host(pos).tolist() == [1, -1, 8, 256]
    ttnn.plus_one(pos)
    assert host(pos).tolist() == [2, 0, 9, 257]
    assert pos.storage.mesh_buffer.address() == address


def test_cache_writes_refuse_what_tt_metal_refuses(mesh):
    cache = dev(mesh, torch.zeros(B, H, S, D))
    x = dev(mesh, torch.randn(1, B, H, D), mc=users_sharded(B))
    interleaved = dev(mesh, torch.randn(1, B, H, D))
    with pytest.raises(ttnn.MeshnnValueError, match="sharded"):
        ttnn.experimental.paged_update_cache(cache, interleaved, update_idxs=[0, 1, 2, 3])
    with pytest.raises(ttnn.MeshnnValueError, match="Not both or neither"):
        ttnn.experimental.paged_update_cache(cache, x)
    with pytest.raises(ttnn.MeshnnValueError, match="should match batch size"):
        ttnn.experimental.paged_update_cache(cache, x, update_idxs=[0, 1])
    with pytest.raises(ttnn.MeshnnTypeError, match="same dtype"):
        ttnn.fill_cache(cache, dev(mesh, torch.randn(1, H, 32, D), ttnn.bfloat8_b), 0)
    with pytest.raises(ttnn.MeshnnValueError, match="batch_idx"):
        ttnn.fill_cache(cache, dev(mesh, torch.randn(1, H, 32, D)), B)
    assert host(cache).abs().sum() == 0
