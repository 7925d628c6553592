"""Decoded weights (issue 34): a block-float weight decoded once into a bfloat16 memo, its bytes let
go while the memo stands for them, the bfloat16 products, the KV cache pages a decode attention
reads.  Every test compares against the same work with the fast path off, and each would fail if
a memo returned stale values."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.mesh.buffer_config import BufferRegion
from meshnn.mesh.transfers import ShardDataTransfer
from meshnn.ops import operands
from meshnn.ops.decoded import DECODED, Decoded, DecodedCache, decoded_limit_from_env
from meshnn.ops.memo import VALUES_MEMO
from meshnn.ops.transformer import cache_reads

BFP8 = dict(dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
BF16 = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


@pytest.fixture
def decoded(monkeypatch):
    """Decoded memos on (room for a few MiB), float32 memos on; both emptied before and after.
    torch's bfloat16 products are taken as fast whatever this CPU (these tests are of the memos
    those products read; test_bf16_products.py has the float32 route of a CPU without them)."""
    monkeypatch.setitem(operands._FAST, id(torch), True)
    limits = DECODED.limit, VALUES_MEMO.limit
    DECODED.limit, VALUES_MEMO.limit = 64 << 20, 256 << 20
    DECODED.clear()
    VALUES_MEMO.clear()
    yield DECODED
    DECODED.clear()
    VALUES_MEMO.clear()
    DECODED.limit, VALUES_MEMO.limit = limits


def memos_off(cache: DecodedCache) -> None:
    cache.limit = VALUES_MEMO.limit = 0
    cache.clear()
    VALUES_MEMO.clear()


FP32_DEST = ttnn.WormholeComputeKernelConfig(fp32_dest_acc_en=True)
"""A 32-bit destination register: a block-float output is then packed from the float32 product
(ttnn's default, 16 bits, packs it from the bfloat16 product: see test_matmul_dest.py)."""


def raw(tensor) -> list[bytes]:
    return [np.asarray(ttnn.to_numpy(t)).tobytes() for t in ttnn.get_device_tensors(tensor)]


def weight(mesh, rng, shape, mapper=None, **fmt):
    values = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
    return ttnn.from_torch(values, device=mesh, mesh_mapper=mapper, **(fmt or BFP8))


def storage(tensor):
    return tensor.storage.mesh_buffer._storage


@pytest.mark.parametrize("shape", [(1, 1), (1, 8)])
def test_a_weight_is_decoded_once_and_the_bytes_are_those_of_memos_off(open_mesh, rng, decoded, shape):
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    x = weight(mesh, rng, (1, 1, 32, 256), ttnn.ReplicateTensorToMesh(mesh), **BF16)
    w = weight(mesh, rng, (256, 128 * n), ttnn.ShardTensorToMesh(mesh, dim=1))
    first = raw(ttnn.linear(x, w, dtype=ttnn.bfloat16))
    memo = w.storage.mesh_buffer.memo
    assert isinstance(memo, Decoded) and memo.sides == (n > 1)
    hits = decoded.hits
    assert raw(ttnn.linear(x, w, dtype=ttnn.bfloat16)) == first and decoded.hits > hits
    assert (
        raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST)) != []
    )  # a float32 product from the same memo
    memos_off(decoded)
    assert raw(ttnn.linear(x, w, dtype=ttnn.bfloat16)) == first


def test_the_bfloat16_product_is_one_rounding_of_the_float32_sums(open_mesh, rng, decoded):
    mesh = open_mesh((1, 1))
    a = rng.standard_normal((1, 64, 512)).astype(np.float32)
    b = rng.standard_normal((512, 96)).astype(np.float32)
    x, w = (ttnn.from_torch(torch.from_numpy(t), device=mesh, **BFP8) for t in (a, b))
    xs, ws = (ttnn.to_torch(t).double().numpy() for t in (x, w))  # the values as stored
    want = xs @ ws
    for dtype in (ttnn.bfloat16, ttnn.float32):
        got = ttnn.to_torch(ttnn.matmul(x, w, dtype=dtype)).double().numpy()
        gamma = 512 * 2.0**-24 * (np.abs(xs) @ np.abs(ws))  # float32 sums, any order
        rounding = 2.0**-8 * np.abs(want) if dtype is ttnn.bfloat16 else 0
        assert (np.abs(got - want) <= gamma + rounding + 1e-30).all()
    assert operands._rounds_to_nearest_even(torch)


def test_a_write_to_the_weight_drops_its_memo(open_mesh, rng, decoded):
    mesh = open_mesh((1, 2))
    x = weight(mesh, rng, (1, 1, 32, 256), ttnn.ReplicateTensorToMesh(mesh), **BF16)
    shard = ttnn.ShardTensorToMesh(mesh, dim=1)
    w = weight(mesh, rng, (256, 256), shard)
    before = raw(ttnn.linear(x, w))
    assert isinstance(w.storage.mesh_buffer.memo, Decoded)
    new = torch.from_numpy(rng.standard_normal((256, 256)).astype(np.float32))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(new, mesh_mapper=shard, **BFP8), w)
    after = raw(ttnn.linear(x, w))
    memos_off(decoded)
    assert after == raw(ttnn.linear(x, w)) and after != before


def test_a_program_writing_the_weight_drops_its_memo(open_mesh, rng, decoded):
    mesh = open_mesh((1, 1))
    x = weight(mesh, rng, (1, 1, 32, 256), **BF16)
    w = weight(mesh, rng, (256, 256))
    before = raw(ttnn.linear(x, w))
    ttnn.multiply(w, 2.0, output_tensor=w)  # an op writing the weight in place
    after = raw(ttnn.linear(x, w))
    memos_off(decoded)
    assert after == raw(ttnn.linear(x, w)) and after != before


def test_the_bytes_go_while_the_memo_stands_for_them_and_come_back_exactly(open_mesh, rng, decoded):
    mesh = open_mesh((1, 2))
    x = weight(mesh, rng, (1, 1, 32, 256), ttnn.ReplicateTensorToMesh(mesh), **BF16)  # (too small for a memo)
    w = weight(mesh, rng, (256, 1024), ttnn.ShardTensorToMesh(mesh, dim=1))
    buffer = w.storage.mesh_buffer
    original = buffer.rows().copy()
    counted = decoded.nbytes
    ttnn.linear(x, w)
    assert storage(w).data is None and storage(w).dropped, "the weight's bytes were let go"
    assert decoded.nbytes - counted == 256 * 1024 * 2 - original.nbytes, "counted: bfloat16 values less the bytes"
    assert np.array_equal(buffer.rows(), original), "made again, bit for bit (and the memo kept)"
    assert isinstance(buffer.memo, Decoded)


def test_a_partial_write_lands_on_the_bytes_made_again(open_mesh, decoded):
    mesh = open_mesh((1, 2))

    def run() -> list[bytes]:
        rng = np.random.default_rng(7)
        x = weight(mesh, rng, (1, 1, 32, 512), ttnn.ReplicateTensorToMesh(mesh), **BF16)
        w = weight(mesh, rng, (512, 512), ttnn.ShardTensorToMesh(mesh, dim=1))
        ttnn.linear(x, w)
        patch = w.storage.mesh_buffer.rows()[1, 64:128][::-1].copy()  # four blocks of device 1's codes, reversed
        transfer = ShardDataTransfer(ttnn.MeshCoordinate(0, 1), patch, BufferRegion(64, 64))
        mesh.mesh_command_queue(0).enqueue_write_shards(w.storage.mesh_buffer, [transfer], blocking=True)
        return raw(ttnn.linear(x, w))

    with_memos = run()
    memos_off(decoded)
    assert with_memos == run()


def test_bytes_that_do_not_pack_back_are_kept(open_mesh, rng, decoded):
    mesh = open_mesh((1, 1))
    x = weight(mesh, rng, (1, 1, 32, 256), **BF16)
    w = weight(mesh, rng, (256, 256))
    buffer = w.storage.mesh_buffer
    slab = buffer.slab()
    slab[0, 64:80] &= 0x3F  # one block's magnitudes halved: no code has its top bit (packing normalises)
    result = raw(ttnn.linear(x, w))
    assert storage(w).data is not None, "non-canonical bytes stay"
    assert np.array_equal(buffer.rows(), slab)
    memos_off(decoded)
    assert raw(ttnn.linear(x, w)) == result


def test_the_bound_holds_refuses_when_full_and_drops_stale_memos(open_mesh, rng, decoded):
    mesh = open_mesh((1, 1))
    x = weight(mesh, rng, (1, 1, 32, 256), **BF16)
    ws = [weight(mesh, rng, (256, 256)) for _ in range(4)]
    one = 256 * 256 * 2
    decoded.limit = 2 * one  # room for two memos' values (bytes let go do not count)
    results = [raw(ttnn.linear(x, w)) for w in ws]
    assert decoded.nbytes <= decoded.limit
    kept = [isinstance(w.storage.mesh_buffer.memo, Decoded) for w in ws]
    assert sum(kept) >= 2 and kept[0] and kept[1], "the first ones are kept; later ones refused when full"
    assert [raw(ttnn.linear(x, w)) for w in ws] == results
    for _ in range(10 * len(ws)):  # only the last two used: the first two go stale and make room
        ttnn.linear(x, ws[2])
        ttnn.linear(x, ws[3])
    assert isinstance(ws[2].storage.mesh_buffer.memo, Decoded) and isinstance(ws[3].storage.mesh_buffer.memo, Decoded)
    assert [raw(ttnn.linear(x, w)) for w in ws] == results
    for w in ws:
        ttnn.deallocate(w)
    assert decoded.nbytes == 0, "freed buffers give their memos' bytes back"
    memos_off(decoded)


def test_the_bound_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("MESHNN_DECODED_BYTES", "12345")
    assert decoded_limit_from_env() == 12345
    monkeypatch.delenv("MESHNN_DECODED_BYTES")
    assert 0 < decoded_limit_from_env() <= 8 << 30
    monkeypatch.setenv("MESHNN_DECODED_BYTES", "lots")
    with pytest.raises(ValueError, match="MESHNN_DECODED_BYTES"):
        decoded_limit_from_env()


def test_the_default_bound_is_a_quarter_of_a_24_gb_machine(monkeypatch):
    """A 24 GiB machine keeps 6 GiB decoded (an 8B on a T3000: its 8 GB of bytes, this and about
    3 GB more), a 64 GiB one the 8 GiB cap, an 8 GiB one 2 GiB."""
    import meshnn.ops.decoded as module

    monkeypatch.delenv("MESHNN_DECODED_BYTES", raising=False)
    for gib, want in ((24, 6 << 30), (64, 8 << 30), (8, 2 << 30)):
        pages = {"SC_PHYS_PAGES": (gib << 30) // 4096, "SC_PAGE_SIZE": 4096}
        monkeypatch.setattr(module.os, "sysconf", pages.__getitem__)
        assert decoded_limit_from_env() == want


def test_a_replay_equals_the_eager_step_and_reads_a_new_weight(open_mesh, rng, decoded):
    mesh = open_mesh((1, 8), trace_region_size=1 << 20)
    rep, shard = ttnn.ReplicateTensorToMesh(mesh), ttnn.ShardTensorToMesh(mesh, dim=1)
    x = weight(mesh, rng, (1, 1, 32, 256), rep, **BF16)
    w = weight(mesh, rng, (256, 512), shard)
    eager = raw(ttnn.linear(ttnn.rms_norm(x, epsilon=1e-5), w))
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = ttnn.linear(ttnn.rms_norm(x, epsilon=1e-5), w)
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    assert raw(out) == eager
    new = torch.from_numpy(rng.standard_normal((256, 512)).astype(np.float32))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(new, mesh_mapper=shard, **BFP8), w)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    replayed = raw(out)
    ttnn.release_trace(mesh, trace)
    memos_off(decoded)
    assert replayed == raw(ttnn.linear(ttnn.rms_norm(x, epsilon=1e-5), w)) and replayed != eager


def _attend_steps(mesh, paged: bool, blocks: int = 64):
    """Three decode steps (a cache update at 8 users' positions, then the decode attention) over a
    bfloat8_b cache (paged: ``blocks`` blocks of 32, 8 users' tables; else 8 users x 256 rows):
    each step's output bytes, and the cache's memo after them."""
    table = torch.randperm(blocks, generator=torch.Generator().manual_seed(3)).reshape(8, blocks // 8).int()
    positions = torch.tensor([3, 40, 17, 60, 0, 9, 33, 12], dtype=torch.int32)
    gen = torch.Generator().manual_seed(5)
    shape = (blocks, 1, 32, 64) if paged else (8, 1, 256, 64)
    cache = ttnn.from_torch(torch.randn(*shape, generator=gen), device=mesh, **BFP8)
    q = ttnn.from_torch(torch.randn(1, 8, 8, 64, generator=gen), device=mesh, **BF16)
    t = ttnn.from_torch(table, dtype=ttnn.int32, device=mesh) if paged else None
    pos = ttnn.from_torch(positions, dtype=ttnn.int32, device=mesh)
    out = []
    for _ in range(3):
        new = ttnn.from_torch(torch.randn(1, 8, 1, 64, generator=gen), **BF16)
        k = ttnn.to_device(new, mesh, memory_config=_users_sharded())
        ttnn.experimental.paged_update_cache(cache, k, update_idxs_tensor=pos, page_table=t)
        if paged:
            attended = ttnn.transformer.paged_scaled_dot_product_attention_decode(
                q, cache, cache, t, cur_pos_tensor=pos
            )
        else:
            attended = ttnn.transformer.scaled_dot_product_attention_decode(q, cache, cache, cur_pos_tensor=pos)
        out.append(raw(attended))
        ttnn.plus_one(pos)
    return out, cache.storage.mesh_buffer.memo


@pytest.mark.parametrize("paged", [True, False], ids=["paged", "contiguous"])
@pytest.mark.parametrize("memo", ["decoded", "bfloat16 only", "pages only"])
def test_decode_attention_reads_the_pages_and_the_updates_patch_the_memo(open_mesh, decoded, memo, paged):
    """The attention reads a decoded cache's float32 values, kept beside its bfloat16 ones while
    the bound has room (widened at each read without it; only the pages read with no memo): the
    updates patch both, and every way gives the bytes of memos off."""
    mesh = open_mesh((1, 1))
    if memo == "pages only":
        decoded.limit = VALUES_MEMO.limit = 0  # no memo: only the pages read are decoded
    if memo == "bfloat16 only":
        decoded.limit = 64 * 32 * 64 * 3  # room for the bfloat16 values (2 bytes each), not for float32 ones too
    got, kept = _attend_steps(mesh, paged)
    if memo != "pages only":
        assert isinstance(kept, Decoded), "the cache decoded whole once, then patched by each update"
        kept_floats = kept.other is not None and kept.other.dtype == torch.float32
        assert kept_floats == (memo == "decoded"), "the float32 values the reads take, kept while there is room"
    memos_off(decoded)
    want, _ = _attend_steps(mesh, paged)
    assert got == want


def test_a_large_cache_read_sparsely_is_not_decoded_whole_and_reads_each_update(open_mesh, decoded):
    """A paged cache whose bfloat16 values take more than 1 / CACHE_SHARE of the bound, its users'
    positions reaching a few of its 256 blocks: no memo of the whole cache (only the pages read
    are decoded, each step), and each step reads the keys the updates wrote: the bytes of memos
    off, and of a bound with room for a memo."""
    mesh = open_mesh((1, 1))
    size = 256 * 32 * 64 * 2  # the cache's bfloat16 values
    decoded.limit = size * cache_reads.CACHE_SHARE - 1  # room for them, but more than the share
    got, kept = _attend_steps(mesh, True, blocks=256)
    assert not isinstance(kept, Decoded), "a large cache read sparsely is not held whole"
    decoded.clear()
    decoded.limit = size * cache_reads.CACHE_SHARE * 4  # within the share: held whole, patched
    held, kept = _attend_steps(mesh, True, blocks=256)
    assert isinstance(kept, Decoded)
    memos_off(decoded)
    want, _ = _attend_steps(mesh, True, blocks=256)
    assert got == want and held == want


@pytest.mark.parametrize("source", ["numpy", "torch float32", "torch bfloat16", "numpy without torch"])
def test_pages_are_gathered_heads_first_from_every_kind_of_held_cache(source, monkeypatch):
    """:func:`cache_reads._by_head` (a page's rows copied whole, per device and kv head) gives
    ``cache[i, table[i, u, c], h]`` from a float32 array, a memo's torch tensor (float32 or
    bfloat16: widened exactly) and, with no torch, by numpy's gather."""
    rng = np.random.default_rng(5)
    values = torch.randn(2, 10, 3, 32, 16, generator=torch.Generator().manual_seed(5)).bfloat16().float()
    table = np.stack([rng.permutation(10)[:6].reshape(2, 3), rng.integers(0, 10, (2, 3))])  # repeats on device 1
    cache = {"torch float32": values, "torch bfloat16": values.bfloat16()}.get(source, values.numpy())
    if source == "numpy without torch":
        monkeypatch.setitem(sys.modules, "torch", None)
    got = cache_reads._by_head(cache, table)
    assert got.dtype == np.float32 and got.shape == (2, 3, 2, 3, 32, 16)
    for i in range(2):
        for h in range(3):
            want = values.numpy()[i][table[i].reshape(-1), h]
            assert np.array_equal(got[i, h].reshape(6, 32, 16), want), (i, h)


def _users_sharded():
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(7, 0))])
    return ttnn.create_sharded_memory_config(
        (32, 64), grid, ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
    )


def test_pages_alone_decode_to_the_values_of_the_whole_cache(open_mesh, rng, decoded):
    mesh = open_mesh((1, 2))
    cache = ttnn.from_torch(torch.randn(32, 2, 32, 64), device=mesh, **BFP8)
    spec, rows = cache.spec, cache.storage.mesh_buffer.rows()
    table = np.stack([np.random.default_rng(i).permutation(32)[:12].reshape(4, 3) for i in range(2)])
    wholes = [ttnn.to_torch(t).float().numpy() for t in ttnn.get_device_tensors(cache)]
    decoded.limit = 0
    got = cache_reads.page_values(rows, spec, table)  # unbound rows (no memo): only the pages read
    assert got.shape == (2, 2, 4, 3 * 32, 64)  # (devices, kv heads, users, positions, d): heads first
    for device in range(2):
        want = wholes[device][table[device]].transpose(2, 0, 1, 3, 4).reshape(2, 4, 3 * 32, 64)
        assert np.array_equal(got[device], want)
    contiguous = ttnn.from_torch(torch.randn(4, 2, 256, 64), device=mesh, **BFP8)
    lead = cache_reads.leading_values(contiguous.storage.mesh_buffer.rows(), contiguous.spec, 20)
    for device, t in enumerate(ttnn.get_device_tensors(contiguous)):
        assert lead.shape == (2, 4, 2, 32, 64) and np.array_equal(lead[device], ttnn.to_torch(t).numpy()[:, :, :32])


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat4_b])
def test_block_floats_decode_straight_to_bfloat16_as_the_reference_decodes_them(rng, dtype):
    """Random bytes (any codes, -0.0 and all), exponents in and out of the fast path's range."""
    from meshnn.formats.bfp_bf16 import unpack_bf16_rows
    from meshnn.formats.block_float import BlockFloatFormat
    from meshnn.formats.codec import decode
    from meshnn.formats.layout import Layout

    fmt = BlockFloatFormat.of(dtype)
    size = fmt.tile_size(1024)
    for low in (fmt.magnitude_bits, 0):  # the second: blocks the fast path leaves to the reference
        tiles = rng.integers(0, 256, (2 * 3, size), dtype=np.uint8)
        tiles[:, :64] = rng.integers(low, 255, (6, 64), dtype=np.uint8)
        tiles[:, 64:80] = 0  # a whole zero block ...
        tiles[:, 64] = 0x80 if fmt.codes_per_byte == 1 else 0x08  # ... with a -0.0 in it
        out = np.zeros((64, 96), np.uint16)
        done = unpack_bf16_rows(tiles, fmt, out)
        want = decode(tiles.reshape(-1), dtype, Layout.TILE, (64, 96)).view(np.uint32)
        assert done == (low > 0)
        if done:
            assert np.array_equal(out.astype(np.uint32) << 16, want)


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat4_b])
@pytest.mark.parametrize("rows, columns", [(5, 50), (2, 300), (1, 128), (3, 129)])
def test_block_floats_decode_in_parts_as_the_reference_decodes_them(rng, dtype, rows, columns):
    """Matrices that take several parts (whole tile rows, or a tile row's columns, the last part
    short), into a strided view of a wider matrix (nothing written outside it)."""
    from meshnn.formats.bfp_bf16 import PART_VALUES, unpack_bf16_rows
    from meshnn.formats.block_float import BlockFloatFormat
    from meshnn.formats.codec import decode
    from meshnn.formats.layout import Layout

    fmt = BlockFloatFormat.of(dtype)
    tiles = rng.integers(0, 256, (rows * columns, fmt.tile_size(1024)), dtype=np.uint8)
    tiles[:, :64] = rng.integers(fmt.magnitude_bits, 255, (rows * columns, 64), dtype=np.uint8)
    wide = np.full((rows * 32, columns * 32 + 7), 0xABCD, np.uint16)
    assert unpack_bf16_rows(tiles, fmt, wide[:, 3 : 3 + columns * 32])
    want = decode(tiles.reshape(-1), dtype, Layout.TILE, (rows * 32, columns * 32)).view(np.uint32)
    assert np.array_equal(wide[:, 3 : 3 + columns * 32].astype(np.uint32) << 16, want)
    assert (wide[:, :3] == 0xABCD).all() and (wide[:, 3 + columns * 32 :] == 0xABCD).all()
    assert rows * columns * 1024 > PART_VALUES or columns == 128


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat4_b])
def test_canonical_tiles_finds_one_defect_in_any_part(rng, dtype):
    """Packed tiles are canonical; one defect (a sign without a magnitude, a block whose largest
    magnitude lacks its top bit, a zero block with an exponent) in the last of several parts of
    tiles is found."""
    from meshnn.formats.block_float import CANONICAL_TILES, BlockFloatFormat, canonical_tiles
    from meshnn.formats.codec import encode
    from meshnn.formats.layout import Layout

    fmt = BlockFloatFormat.of(dtype)
    count = 2 * CANONICAL_TILES + 3
    values = rng.standard_normal((32 * count, 32)).astype(np.float32)
    values[:32, :16] = 0  # a zero block: canonical as the packer writes it
    tiles = encode(values, dtype, Layout.TILE).reshape(count, fmt.tile_size(1024))
    assert canonical_tiles(tiles, fmt, 1024)
    last = count - 2  # a tile of the last part
    sign_alone = tiles.copy()
    sign_alone[last, 64] = 0x40 if fmt.codes_per_byte == 1 else 0x04  # the first block's largest: top bit set
    sign_alone[last, 69 if fmt.codes_per_byte == 1 else 66] = 0x80 if fmt.codes_per_byte == 1 else 0x08  # -0
    assert not canonical_tiles(sign_alone, fmt, 1024)
    small = tiles.copy()
    small[last, 64 : 64 + 16 // fmt.codes_per_byte] = 0x11 if fmt.codes_per_byte == 2 else 0x01
    assert not canonical_tiles(small, fmt, 1024)  # largest magnitude 1: no top bit
    zero_with_exponent = encode(values * 0, dtype, Layout.TILE).reshape(count, -1)
    assert canonical_tiles(zero_with_exponent, fmt, 1024)
    zero_with_exponent[last, 0] = 9
    assert not canonical_tiles(zero_with_exponent, fmt, 1024)


@pytest.mark.parametrize("shape", [(1, 1), (1, 4)])
def test_a_weight_read_both_ways_keeps_its_second_dtype_within_the_bound(open_mesh, rng, decoded, shape):
    """A weight first read by a float32 product (a bfloat8_b output) then by bfloat16 ones keeps
    its bfloat16 values beside the float32 ones (counted), the bytes those of memos off; a write
    drops both; with no room the second dtype is made at each use, the bytes the same."""
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    x = weight(mesh, rng, (1, 1, 32, 256), ttnn.ReplicateTensorToMesh(mesh), **BF16)
    shard = ttnn.ShardTensorToMesh(mesh, dim=1)
    w = weight(mesh, rng, (256, 256 * n), shard)
    wide = raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST))
    memo = w.storage.mesh_buffer.memo
    assert isinstance(memo, Decoded) and memo.values.dtype == torch.float32 and memo.other is None
    counted = decoded.nbytes
    narrow = raw(ttnn.linear(x, w, dtype=ttnn.bfloat16))
    assert memo.other is not None and memo.other.dtype == torch.bfloat16
    assert decoded.nbytes - counted == 256 * 256 * n * 2, "the second dtype counts against the bound"
    assert raw(ttnn.linear(x, w, dtype=ttnn.bfloat16)) == narrow and w.storage.mesh_buffer.memo is memo
    assert raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST)) == wide
    new = torch.from_numpy(rng.standard_normal((256, 256 * n)).astype(np.float32))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(new, mesh_mapper=shard, **BFP8), w)
    assert w.storage.mesh_buffer.memo is not memo, "a write drops the memo, both dtypes with it"
    del memo
    assert decoded.nbytes < counted, "and its bytes are given back"
    after_wide = raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST))
    decoded.limit = decoded.nbytes  # no room for a second dtype: made at each use
    after = (after_wide, raw(ttnn.linear(x, w, dtype=ttnn.bfloat16)))
    assert after[1] != narrow and w.storage.mesh_buffer.memo.other is None
    assert raw(ttnn.linear(x, w, dtype=ttnn.bfloat16)) == after[1]
    memos_off(decoded)
    assert (
        raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST)),
        raw(ttnn.linear(x, w, dtype=ttnn.bfloat16)),
    ) == after


@pytest.mark.parametrize("shape", [(1, 1), (1, 4)])
def test_the_wide_product_in_blocks_is_the_float32_product(open_mesh, rng, decoded, monkeypatch, shape):
    """A float32 product (here a bfloat8_b output) of a weight too large to widen whole (the
    limits made small here) keeps the weight in bfloat16 and widens it a tile at a time (many
    tiles, the last column block narrower, each column's tiles summed in turn): the result is
    the float32 product of the same values, rounded once into the output, the same with memos
    on and off, and follows a write."""
    from meshnn.ops import matmul_kernel

    monkeypatch.setattr(matmul_kernel, "WIDE_WHOLE_BYTES", 0)  # every weight widened in blocks
    monkeypatch.setattr(matmul_kernel, "WIDE_CHUNK_VALUES", 256 * 96)  # 96 columns a block
    monkeypatch.setattr(matmul_kernel, "WIDE_TILE_COLUMNS", 96)  # a matrix's tiles: 96 columns,
    monkeypatch.setattr(matmul_kernel, "WIDE_TILE_VALUES", 96 * 64)  # 64 rows (4 tiles summed a column)
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    x = weight(mesh, rng, (1, 1, 32, 256), ttnn.ReplicateTensorToMesh(mesh), **BF16)
    shard = ttnn.ShardTensorToMesh(mesh, dim=1)
    w = weight(mesh, rng, (256, 320 * n), shard)
    got = ttnn.linear(x, w, dtype=ttnn.float32)
    xs = ttnn.to_torch(ttnn.get_device_tensors(x)[0]).float().reshape(32, 256)
    ws = ttnn.to_torch(w, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=1)).float()
    want = (xs.double() @ ws.double()).float()
    for i, t in enumerate(ttnn.get_device_tensors(got)):
        diff = (ttnn.to_torch(t).reshape(32, 320).double() - want[:, i * 320 : (i + 1) * 320].double()).abs()
        assert float(diff.max()) <= 256 * 2.0**-23 * float(want.abs().max()), "float32 sums of exact products"
    wide = raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST))
    memo = w.storage.mesh_buffer.memo
    assert isinstance(memo, Decoded) and memo.values.dtype == torch.bfloat16 and memo.other is None
    new = torch.from_numpy(rng.standard_normal((256, 320 * n)).astype(np.float32))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(new, mesh_mapper=shard, **BFP8), w)
    after = raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST))
    assert after != wide
    memos_off(decoded)
    assert raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST)) == after


def test_the_wide_product_in_blocks_of_a_row_parallel_weight(open_mesh, rng, decoded, monkeypatch):
    """The blocks of a batched product (x and the weight sharded along K, each device its own
    product): each device's float32 partial product, the same with memos on and off."""
    from meshnn.ops import matmul_kernel

    monkeypatch.setattr(matmul_kernel, "WIDE_WHOLE_BYTES", 0)
    monkeypatch.setattr(matmul_kernel, "WIDE_CHUNK_VALUES", 64 * 96)  # 96 columns a block
    mesh = open_mesh((1, 4))
    x = weight(mesh, rng, (1, 1, 32, 256), ttnn.ShardTensorToMesh(mesh, dim=-1), **BF16)
    w = weight(mesh, rng, (256, 320), ttnn.ShardTensorToMesh(mesh, dim=-2))
    got = ttnn.linear(x, w, dtype=ttnn.float32)
    for i, (xt, wt, t) in enumerate(zip(*(ttnn.get_device_tensors(v) for v in (x, w, got)), strict=True)):
        want = ttnn.to_torch(xt).double().reshape(32, 64) @ ttnn.to_torch(wt).double()
        diff = (ttnn.to_torch(t).double().reshape(32, 320) - want).abs().max()
        assert float(diff) <= 64 * 2.0**-23 * float(want.abs().max()), f"device {i}"
    wide = raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST))
    memos_off(decoded)
    assert raw(ttnn.linear(x, w, dtype=ttnn.bfloat8_b, compute_kernel_config=FP32_DEST)) == wide


def test_a_patch_keeps_both_dtypes_of_a_memo_true(decoded):
    """The in-place cache updates patch a memo's values and its second dtype alike."""
    from meshnn.tensor.spec import TensorSpec

    spec = TensorSpec((4, 32), ttnn.bfloat16, ttnn.TILE_LAYOUT)
    memo = Decoded(spec, torch.zeros(1, 4, 32, dtype=torch.bfloat16))
    memo.other = memo.values.float()
    memo.patch((np.array([0]), np.array([2]), np.array([5])), np.array([1.5], np.float32))
    assert memo.values[0, 2, 5].item() == 1.5 and memo.other[0, 2, 5].item() == 1.5
    assert memo.other.dtype == torch.float32 and float(memo.other.sum()) == 1.5
