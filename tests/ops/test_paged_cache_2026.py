"""tt-metal of 2026's bounded paged caches: ``cache_position_modulo`` on
``experimental.paged_update_cache``, ``experimental.paged_fill_cache`` and
``transformer.paged_scaled_dot_product_attention_decode`` (a cache that is a circular buffer of
``M`` tokens: position ``p`` lands where ``p % M`` would), and ``block_size`` / ``num_kv_heads``
taken when they name the cache's own geometry.  Writes are checked byte for byte against numpy;
the wrapped decode equals, exactly, the same decode over an unwrapped cache holding the same
history (the positions a sliding window masks add exact zeros)."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

from .test_kv_cache import dev, host, rounded, users_sharded

H, D, BLOCK = 1, 64, 32


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield m
    m.close()


def _int(mesh, values):
    return dev(mesh, torch.tensor(values, dtype=torch.int32), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)


def _table(rows):
    return torch.tensor(rows, dtype=torch.int32)


def test_update_wraps_positions_at_the_modulo(mesh):
    table = _table([[3, 1, 0, 0], [2, 5, 0, 0]])  # two valid blocks a user, the rest padding (vLLM's)
    cache = dev(mesh, torch.zeros(6, H, BLOCK, D))
    x = torch.randn(1, 2, 32, D)
    ttnn.experimental.paged_update_cache(
        cache,
        dev(mesh, x, mc=users_sharded(2)),
        update_idxs_tensor=_int(mesh, [70, 37]),
        page_table=dev(mesh, table, ttnn.int32, ttnn.ROW_MAJOR_LAYOUT),
        cache_position_modulo=2 * BLOCK,
    )
    want = torch.zeros(6, H, BLOCK, D)
    want[3, :, 6] = x[0, 0, :H].bfloat16().float()  # 70 % 64 = 6: block 0 of user 0, row 6
    want[5, :, 5] = x[0, 1, :H].bfloat16().float()  # 37 % 64 = 37: block 1 of user 1, row 5
    assert torch.equal(host(cache), want)


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b])
def test_fill_keeps_the_last_modulo_positions(mesh, dtype):
    modulo, length = 4 * BLOCK, 5 * BLOCK + 32  # the prefill wraps past the capacity by two tile rows
    table = _table([[4, 0, 7, 2, 0, 0, 0, 0]])
    cache = dev(mesh, torch.zeros(8, H, BLOCK, D), dtype)
    fill = torch.randn(1, H, length, D)
    ttnn.experimental.paged_fill_cache(
        cache,
        dev(mesh, fill),
        dev(mesh, table, ttnn.int32, ttnn.ROW_MAJOR_LAYOUT),
        batch_idx=0,
        cache_position_modulo=modulo,
    )
    slots = torch.zeros(1, H, modulo, D)
    for p in range(length):
        slots[:, :, p % modulo] = fill[:, :, p]
    want = torch.zeros(8, H, BLOCK, D)
    values = rounded(slots.bfloat16().float(), dtype)
    for j in range(4):
        want[table[0, j]] = values[0, :, j * BLOCK : (j + 1) * BLOCK]
    assert torch.equal(host(cache), want)


def _decode(mesh, k, v, table, q, pos, window, modulo=None):
    return ttnn.to_torch(
        ttnn.transformer.paged_scaled_dot_product_attention_decode(
            dev(mesh, q),
            dev(mesh, k),
            dev(mesh, v),
            dev(mesh, table, ttnn.int32, ttnn.ROW_MAJOR_LAYOUT),
            cur_pos_tensor=_int(mesh, [pos]),
            sliding_window_size=window,
            cache_position_modulo=modulo,
            block_size=BLOCK,
            num_kv_heads=H,
        )
    )


def test_a_wrapped_decode_equals_the_unwrapped_one(mesh):
    pos, window, modulo = 150, 64, 2 * BLOCK + BLOCK  # 151 positions written into a 96-token buffer
    history_k, history_v = torch.randn(pos + 1, D), torch.randn(pos + 1, D)
    wrapped_k, wrapped_v = torch.zeros(6, H, BLOCK, D), torch.zeros(6, H, BLOCK, D)  # (3 in use)
    for p in range(pos + 1):  # (what paged_update_cache with the modulo leaves)
        slot = p % modulo
        wrapped_k[slot // BLOCK, 0, slot % BLOCK], wrapped_v[slot // BLOCK, 0, slot % BLOCK] = (
            history_k[p],
            history_v[p],
        )
    columns = -(-(pos + 1) // BLOCK)
    flat_k = torch.zeros(columns, H, BLOCK, D)
    flat_v = torch.zeros(columns, H, BLOCK, D)
    flat_k.view(-1, D)[: pos + 1], flat_v.view(-1, D)[: pos + 1] = history_k, history_v
    q = torch.randn(1, 1, 32, D)
    wrapped = _decode(mesh, wrapped_k, wrapped_v, _table([[0, 1, 2, 0, 0, 0]]), q, pos, window, modulo)
    plain = _decode(mesh, flat_k, flat_v, _table([list(range(columns))]), q, pos, window)
    assert torch.equal(wrapped, plain)


def test_what_tt_metal_refuses(mesh):
    cache = dev(mesh, torch.zeros(4, H, BLOCK, D))
    x = dev(mesh, torch.randn(1, 1, 32, D), mc=users_sharded(1))
    table = dev(mesh, _table([[0, 1, 2, 3]]), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
    update = ttnn.experimental.paged_update_cache
    with pytest.raises(ttnn.MeshnnValueError, match="only supported in paged mode"):
        update(dev(mesh, torch.zeros(1, H, 128, D)), x, update_idxs_tensor=_int(mesh, [0]), cache_position_modulo=BLOCK)
    with pytest.raises(ttnn.MeshnnValueError, match="positive multiple of effective block_size"):
        update(cache, x, update_idxs_tensor=_int(mesh, [0]), page_table=table, cache_position_modulo=BLOCK + 1)
    with pytest.raises(ttnn.MeshnnTypeError, match="cache_position_modulo"):
        update(cache, x, update_idxs_tensor=_int(mesh, [0]), page_table=table, cache_position_modulo=32.0)
    with pytest.raises(ttnn.MeshnnValueError, match="geometry mismatch"):  # 64 rows of the same heads: 2x the bytes
        update(cache, x, update_idxs_tensor=_int(mesh, [0]), page_table=table, block_size=64)
    two_heads = dev(mesh, torch.zeros(4, 2, BLOCK, D))
    with pytest.raises(ttnn.MeshnnValueError, match="another geometry"):  # the same bytes, another view
        update(two_heads, x, update_idxs_tensor=_int(mesh, [0]), page_table=table, block_size=64, num_kv_heads=1)
    with pytest.raises(ttnn.MeshnnValueError, match="must fit in max_num_blocks_per_seq"):
        ttnn.experimental.paged_fill_cache(cache, x, table, cache_position_modulo=8 * BLOCK)
    with pytest.raises(ttnn.MeshnnValueError, match="must be >= sliding_window_size"):
        _decode(mesh, torch.zeros(4, H, BLOCK, D), torch.zeros(4, H, BLOCK, D), _table([[0, 1, 2, 3]]),
                torch.zeros(1, 1, 32, D), 3, 2 * BLOCK, BLOCK)  # fmt: skip
    assert torch.equal(host(cache), torch.zeros(4, H, BLOCK, D))  # nothing written by a refused call


def test_a_page_table_entry_past_the_caches_blocks_is_refused_not_written(mesh):
    """The page table is device data, read by the kernel: an entry naming a block the cache lacks
    (DeepSeek's MLA update test maps 4 users to 8 blocks of a 4-block cache) would write past the
    cache on a device; meshnn's kernel refuses it by name, the cache unchanged (a skipped position's
    entry is not read)."""
    cache = dev(mesh, torch.zeros(4, H, BLOCK, D))
    update = dev(mesh, torch.randn(1, 2, 32, D), mc=users_sharded(2))
    table = dev(mesh, _table([[0, 1], [6, 7]]), ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
    with pytest.raises((ttnn.QueueError, ttnn.MeshnnValueError), match="page table entry 6 names a block past the"):
        ttnn.experimental.paged_update_cache(cache, update, update_idxs_tensor=_int(mesh, [3, 5]), page_table=table)
        ttnn.synchronize_device(mesh)
    assert torch.equal(host(cache), torch.zeros(4, H, BLOCK, D))
    ttnn.experimental.paged_update_cache(cache, update, update_idxs_tensor=_int(mesh, [3, -1]), page_table=table)
    assert host(cache)[0, :, 3].abs().sum() > 0 and host(cache)[1:].abs().sum() == 0
