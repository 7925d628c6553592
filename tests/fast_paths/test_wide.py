"""Kept float32 blocks of decoded weights (issue 34, stop 47: :mod:`meshnn.ops.wide`).

On the float32 route for products rounded to bfloat16 (a CPU without fast bfloat16 products,
forced here), a weight with a Decoded memo keeps the float32 tiles its products read, within
``MESHNN_WIDE_BYTES``.  Every test compares against the same work with memos off, and each would
fail if kept blocks were read after the weight changed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops import matmul_kernel, operands
from meshnn.ops.decoded import DECODED, STALE_FACTOR, Decoded
from meshnn.ops.memo import VALUES_MEMO
from meshnn.ops.wide import WIDE, wide_limit_from_env

BFP8 = dict(dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
BF16 = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


@pytest.fixture
def wide(monkeypatch):
    """The float32 route (tiles of 96 columns, 64 rows: several a column), memos on, all emptied
    before and after."""
    monkeypatch.setitem(operands._FAST, id(torch), False)
    monkeypatch.setattr(matmul_kernel, "WIDE_TILE_COLUMNS", 96)
    monkeypatch.setattr(matmul_kernel, "WIDE_TILE_VALUES", 96 * 64)
    monkeypatch.setattr(matmul_kernel, "WIDE_CHUNK_VALUES", 64 * 96)
    limits = DECODED.limit, VALUES_MEMO.limit, WIDE.limit
    DECODED.limit, VALUES_MEMO.limit, WIDE.limit = 64 << 20, 256 << 20, 16 << 20
    for cache in (WIDE, DECODED, VALUES_MEMO):
        cache.clear()
    yield WIDE
    for cache in (WIDE, DECODED, VALUES_MEMO):
        cache.clear()
    DECODED.limit, VALUES_MEMO.limit, WIDE.limit = limits


def memos_off() -> None:
    WIDE.limit = DECODED.limit = VALUES_MEMO.limit = 0
    for cache in (WIDE, DECODED, VALUES_MEMO):
        cache.clear()


def raw(tensor) -> list[bytes]:
    return [np.asarray(ttnn.to_numpy(t)).tobytes() for t in ttnn.get_device_tensors(tensor)]


def values(rng, shape) -> torch.Tensor:
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


def product(x, w) -> list[bytes]:
    return raw(ttnn.linear(x, w, dtype=ttnn.bfloat16))


def memo_of(w) -> Decoded:
    memo = w.storage.mesh_buffer.memo
    assert isinstance(memo, Decoded)
    return memo


@pytest.mark.parametrize("shape", [(1, 1), (1, 4)])
def test_a_weight_keeps_its_float32_tiles_and_they_are_what_its_products_read(open_mesh, rng, wide, shape):
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    x = ttnn.from_torch(values(rng, (1, 1, 32, 256)), device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **BF16)
    w = ttnn.from_torch(values(rng, (256, 320 * n)), device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, 1), **BFP8)
    first = product(x, w)
    memo = memo_of(w)
    assert memo.wide is not None and wide.nbytes == 256 * 320 * n * 4, "every tile kept, counted"
    hits = wide.hits
    assert product(x, w) == first and wide.hits == hits + 1
    memo.wide[1].zero_()  # (a kept tile is what the next product reads)
    assert product(x, w) != first
    wide.clear()
    assert memo.wide is None and wide.nbytes == 0
    assert product(x, w) == first
    memos_off()
    assert product(x, w) == first, "the bytes of memos off"


def test_a_write_into_the_weight_drops_its_tiles(open_mesh, rng, wide):
    mesh = open_mesh((1, 4))
    shard = ttnn.ShardTensorToMesh(mesh, 1)
    x = ttnn.from_torch(values(rng, (1, 1, 32, 256)), device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **BF16)
    w = ttnn.from_torch(values(rng, (256, 1280)), device=mesh, mesh_mapper=shard, **BFP8)
    before = product(x, w)
    assert memo_of(w).wide is not None
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(values(rng, (256, 1280)), mesh_mapper=shard, **BFP8), w)
    assert wide.nbytes == 0, "the memo went with the write, its tiles with it"
    after = product(x, w)
    assert after != before and memo_of(w).wide is not None
    assert product(x, w) == after
    memos_off()
    assert product(x, w) == after


def test_a_weight_freed_and_another_made_at_its_address_reads_its_own_values(open_mesh, rng, wide):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(values(rng, (1, 1, 32, 256)), device=mesh, **BF16)
    w = ttnn.from_torch(values(rng, (256, 320)), device=mesh, **BFP8)
    old = product(x, w)
    address = w.buffer_address()
    ttnn.deallocate(w)
    assert wide.nbytes == 0
    again = ttnn.from_torch(values(rng, (256, 320)), device=mesh, **BFP8)
    assert again.buffer_address() == address
    new = product(x, again)
    assert new != old
    memos_off()
    assert product(x, again) == new


def test_the_bound_keeps_the_first_weights_and_stale_ones_make_room(open_mesh, rng, wide):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(values(rng, (1, 1, 32, 256)), device=mesh, **BF16)
    a, b = (ttnn.from_torch(values(rng, (256, 320)), device=mesh, **BFP8) for _ in range(2))
    size = 256 * 320 * 4
    wide.limit = size + size // 2  # room for one weight's tiles
    first_a = product(x, a)
    refused = wide.refused
    first_b = product(x, b)
    assert memo_of(a).wide is not None and memo_of(b).wide is None and wide.refused == refused + 1
    assert wide.nbytes == size <= wide.limit
    for _ in range(STALE_FACTOR + 2):  # a unused while b was asked for more than the stale span
        assert product(x, b) == first_b
        assert wide.nbytes <= wide.limit
    assert memo_of(a).wide is None and memo_of(b).wide is not None and wide.nbytes == size
    assert product(x, a) == first_a
    memos_off()
    assert (product(x, a), product(x, b)) == (first_a, first_b)


def test_a_patch_of_the_values_drops_the_tiles(wide):
    from meshnn.tensor.spec import TensorSpec

    spec = TensorSpec((256, 256), ttnn.bfloat16, ttnn.TILE_LAYOUT)
    memo = Decoded(spec, torch.zeros(1, 256, 256, dtype=torch.bfloat16))
    assert wide.put(memo, ("key",), torch.zeros(256 * 256))
    assert wide.get(memo, ("key",)) is not None and wide.get(memo, ("other",)) is None
    assert wide.nbytes == 256 * 256 * 4
    memo.patch((np.array([0]), np.array([2]), np.array([5])), np.array([1.5], np.float32))
    assert memo.wide is None and wide.nbytes == 0 and wide.get(memo, ("key",)) is None
    assert wide.put(memo, ("key",), torch.zeros(256 * 256))
    del memo
    assert wide.nbytes == 0, "the tiles go with their memo"


def test_a_replay_reads_the_kept_tiles_and_a_new_weight(open_mesh, rng, wide):
    mesh = open_mesh((1, 8), trace_region_size=1 << 20)
    rep, shard = ttnn.ReplicateTensorToMesh(mesh), ttnn.ShardTensorToMesh(mesh, dim=1)
    x = ttnn.from_torch(values(rng, (1, 1, 32, 256)), device=mesh, mesh_mapper=rep, **BF16)
    w = ttnn.from_torch(values(rng, (256, 512)), device=mesh, mesh_mapper=shard, **BFP8)
    eager = product(ttnn.rms_norm(x, epsilon=1e-5), w)
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = ttnn.linear(ttnn.rms_norm(x, epsilon=1e-5), w, dtype=ttnn.bfloat16)
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    hits = wide.hits
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    assert raw(out) == eager and wide.hits > hits
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(values(rng, (256, 512)), mesh_mapper=shard, **BFP8), w)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    replayed = raw(out)
    ttnn.release_trace(mesh, trace)
    memos_off()
    assert replayed == product(ttnn.rms_norm(x, epsilon=1e-5), w) and replayed != eager


def test_a_row_parallel_weight_keeps_its_column_blocks(open_mesh, rng, wide):
    mesh = open_mesh((1, 4))
    x = ttnn.from_torch(
        values(rng, (1, 1, 32, 1024)), device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, -1), **BF16
    )
    w = ttnn.from_torch(values(rng, (1024, 320)), device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, -2), **BFP8)
    first = product(x, w)
    kept = memo_of(w).wide
    assert kept is not None and kept[0][0] == "columns" and wide.nbytes == 1024 * 320 * 4
    assert product(x, w) == first
    memos_off()
    assert product(x, w) == first


def test_the_bound_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("MESHNN_WIDE_BYTES", "12345")
    assert wide_limit_from_env() == 12345
    monkeypatch.delenv("MESHNN_WIDE_BYTES")
    assert wide_limit_from_env() == 256 << 20
    monkeypatch.setenv("MESHNN_WIDE_BYTES", "lots")
    with pytest.raises(ValueError, match="MESHNN_WIDE_BYTES"):
        wide_limit_from_env()
