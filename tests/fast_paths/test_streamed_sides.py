"""A column-parallel block-float weight that the decoded bound will not keep (issue 34, stop 49:
:class:`meshnn.ops.operands.StreamedSides`).

On the float32 route for products rounded to bfloat16 (a CPU without fast bfloat16 products,
forced here), such a weight is decoded from its bytes a block of columns at a time as the product
reads its tiles, never as one whole bfloat16 matrix (an 8B model's LM head: 1 GB at each use).
Every test compares its bytes with the same product whose weight is kept decoded, and would fail
if the streamed values were stale, misplaced across the shards, or summed in another order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops import matmul_kernel, operands
from meshnn.ops.decoded import DECODED, Decoded
from meshnn.ops.memo import VALUES_MEMO
from meshnn.ops.wide import WIDE

BFP8 = dict(dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
BF16 = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
KEPT = 64 << 20


@pytest.fixture
def streamed(monkeypatch):
    """The float32 route (tiles of 96 columns, so that tiles straddle two shards of 320, and 64
    rows), memos on, all emptied before and after; a list that counts the column blocks streamed."""
    monkeypatch.setitem(operands._FAST, id(torch), False)
    monkeypatch.setattr(matmul_kernel, "WIDE_TILE_COLUMNS", 96)
    monkeypatch.setattr(matmul_kernel, "WIDE_TILE_VALUES", 96 * 64)
    decode, blocks = operands.StreamedSides._decode, []

    def counted(self, first, stop):
        blocks.append((first, stop))
        return decode(self, first, stop)

    monkeypatch.setattr(operands.StreamedSides, "_decode", counted)
    limits = DECODED.limit, VALUES_MEMO.limit, WIDE.limit
    DECODED.limit, VALUES_MEMO.limit, WIDE.limit = KEPT, 256 << 20, 0
    for cache in (WIDE, DECODED, VALUES_MEMO):
        cache.clear()
    yield blocks
    for cache in (WIDE, DECODED, VALUES_MEMO):
        cache.clear()
    DECODED.limit, VALUES_MEMO.limit, WIDE.limit = limits


def raw(tensor) -> list[bytes]:
    return [np.asarray(ttnn.to_numpy(t)).tobytes() for t in ttnn.get_device_tensors(tensor)]


def setup(open_mesh, rng):
    """A 1x4 mesh (with room for a trace) and x, replicated: ``(mesh, x)``."""
    mesh = open_mesh((1, 4), trace_region_size=1 << 20)
    x = torch.from_numpy(rng.standard_normal((1, 1, 32, 256)).astype(np.float32))
    return mesh, ttnn.from_torch(x, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **BF16)


def maker(mesh, weight):
    """A function putting ``weight`` ``(256, 1280)`` on ``mesh``, sharded by columns (320 each)."""
    return lambda: ttnn.from_torch(weight, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, 1), **BFP8)


def weights(rng):
    return torch.from_numpy(rng.standard_normal((256, 1280)).astype(np.float32))


def kept_product(x, make_w) -> list[bytes]:
    """The product with its weight decoded once and kept (the bound has room)."""
    limit, DECODED.limit = DECODED.limit, KEPT
    try:
        w = make_w()
        out = raw(ttnn.linear(x, w, dtype=ttnn.bfloat16))
        assert isinstance(w.storage.mesh_buffer.memo, Decoded), "kept: the reference path"
        ttnn.deallocate(w)
        return out
    finally:
        DECODED.limit = limit


@pytest.mark.parametrize("limit", [0, 256 << 10])
def test_a_weight_the_bound_cannot_keep_is_streamed_with_the_kept_product_s_bytes(open_mesh, rng, streamed, limit):
    mesh, x = setup(open_mesh, rng)
    make_w = maker(mesh, weights(rng))
    want = kept_product(x, make_w)
    DECODED.clear()
    DECODED.limit = limit  # (0: memos off; 256 KiB: on, but smaller than the weight's 2.5 MiB)
    w = make_w()
    before = raw(w)
    assert raw(ttnn.linear(x, w, dtype=ttnn.bfloat16)) == want
    assert streamed == [(first, min(first + 96, 1280)) for first in range(0, 1280, 96)], "each column block once"
    assert w.storage.mesh_buffer.memo is None and DECODED.nbytes == 0, "nothing kept"
    assert raw(w) == before, "the weight's bytes are as they were"


def test_a_block_the_fast_decoder_leaves_to_the_reference_one(open_mesh, rng, streamed):
    weight = weights(rng)
    weight[32:64, 300:340] = 0  # (zero blocks, in the tiles of two shards: the reference decoder)
    weight[100, 700:716] = 1e-39  # (subnormal block values)
    mesh, x = setup(open_mesh, rng)
    make_w = maker(mesh, weight)
    want = kept_product(x, make_w)
    DECODED.limit = 0
    assert raw(ttnn.linear(x, make_w(), dtype=ttnn.bfloat16)) == want
    assert streamed, "streamed"


def test_a_streamed_weight_written_in_place_is_read_anew_eager_and_replayed(open_mesh, rng, streamed):
    mesh, x = setup(open_mesh, rng)
    new = weights(rng)
    make_w = maker(mesh, weights(rng))
    want_old, want_new = kept_product(x, make_w), kept_product(x, maker(mesh, new))
    DECODED.limit = 0
    w = make_w()
    out = ttnn.linear(x, w, dtype=ttnn.bfloat16)
    assert raw(out) == want_old
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    traced = ttnn.linear(x, w, dtype=ttnn.bfloat16)
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    assert raw(traced) == want_old, "a replay equals the eager product"
    host = ttnn.from_torch(new, mesh_mapper=ttnn.ShardTensorToMesh(mesh, 1), **BFP8)
    ttnn.copy_host_to_device_tensor(host, w)  # (the weight's bytes written in place)
    assert raw(ttnn.linear(x, w, dtype=ttnn.bfloat16)) == want_new, "eager reads the new bytes"
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    assert raw(traced) == want_new, "the replay reads the new bytes"
    ttnn.release_trace(mesh, trace)
