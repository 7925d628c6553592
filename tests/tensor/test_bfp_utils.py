"""``ttnn._ttnn.bfp_utils`` (tt-metal 2026's host block-float helpers, DeepSeek-V3's compressed
tensors): packing then unpacking gives the tensor path's bfloat8_b / bfloat4_b values exactly, the
row-major and face orders are each other's inverse, and the shard page mapping deals shards round
robin with padding left out."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.compat import ttnn_alias

ttnn_alias.install()
import ttnn as tt  # noqa: E402  (the alias: ttnn._ttnn.bfp_utils as tt-metal's code reaches it)

BFP = tt._ttnn.bfp_utils


@pytest.mark.parametrize("name, dtype, tile_bytes", [("bfp8", ttnn.bfloat8_b, 1088), ("bfp4", ttnn.bfloat4_b, 576)])
def test_pack_is_the_tensor_paths_tiles(name, dtype, tile_bytes):
    x = np.random.default_rng(4).standard_normal((64, 96)).astype(np.float32)
    t = ttnn.from_torch(torch.tensor(x), dtype=dtype, layout=ttnn.TILE_LAYOUT)
    held = ttnn.to_torch(t).float().numpy()
    tiles = x.reshape(2, 32, 3, 32).transpose(0, 2, 1, 3).reshape(-1)  # tile by tile, each row-major
    words = getattr(BFP, f"pack_{name}")(tiles, row_major_input=True)
    assert words.dtype == np.uint32 and words.size * 4 == 6 * tile_bytes  # 64 exponent bytes, then the codes
    back = getattr(BFP, f"unpack_{name}")(words, row_major_output=True)
    np.testing.assert_array_equal(back.reshape(2, 3, 32, 32).transpose(0, 2, 1, 3).reshape(64, 96), held)


def test_face_order_and_bfp2():
    x = np.random.default_rng(5).standard_normal(1024).astype(np.float32)
    faces = x.reshape(2, 16, 2, 16).transpose(0, 2, 1, 3).reshape(-1)  # the same tile in face order
    np.testing.assert_array_equal(BFP.pack_bfp8(x, row_major_input=True), BFP.pack_bfp8(faces))
    words = BFP.pack_bfp2(x, row_major_input=True)
    assert words.size == (64 + 256) // 4  # 64 exponent bytes, 1024 two-bit codes
    back = BFP.unpack_bfp2(words, row_major_output=True)
    shared = 2.0 ** np.floor(np.log2(np.abs(x).reshape(-1, 16).max(axis=1)))  # each face row's exponent
    blocks = np.abs(back - x).reshape(-1, 16)
    assert (blocks <= shared[:, None] * 1.0001).all()  # one magnitude bit: within the block's scale


def test_compute_shard_page_mapping_deals_shards_round_robin():
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))})
    got = BFP.compute_shard_page_mapping([64, 96], [32, 64], 32, 32, grid, ttnn.ShardOrientation.ROW_MAJOR)
    assert got == [(ttnn.CoreCoord(0, 0), [0, 1, 3, 4]), (ttnn.CoreCoord(1, 0), [2, 5])]
    assert BFP.get_l1_alignment() == 16 and BFP.get_dram_alignment() == ttnn.get_dram_alignment()


def test_refusals():
    with pytest.raises(ttnn.MeshnnValueError, match="whole 32x32 tiles"):
        BFP.pack_bfp8(np.zeros(100, np.float32))
    with pytest.raises(ttnn.MeshnnTypeError, match="float32"):
        BFP.pack_bfp4(np.zeros(1024, np.float64))
    with pytest.raises(ttnn.MeshnnTypeError, match="uint32"):
        BFP.unpack_bfp8(np.zeros(10, np.int32))
