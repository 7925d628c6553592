"""ttnn.experimental.nlp_create_qkv_heads_segformer: SegFormer's split of [b, 1, s, w] into w / 32
heads of one tile's width, compared exactly with numpy (values are moved, not computed)."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn

from .test_transformer import heads_on, held

BF16, BFP8 = ttnn.bfloat16, ttnn.bfloat8_b


@pytest.mark.parametrize("dtype", [BF16, ttnn.float32, BFP8])
def test_each_32_columns_are_a_head_on_every_device(open_mesh, rng, dtype):
    mesh = open_mesh((1, 2))
    b, s, width = 2, 64, 96
    values = held(rng.standard_normal((b, 1, s, 2 * width)), dtype)
    x = heads_on(mesh, values, dtype, dim=3)
    q, k, v = ttnn.experimental.nlp_create_qkv_heads_segformer(x, memory_config=ttnn.L1_MEMORY_CONFIG)
    for t in (q, k, v):
        assert tuple(t.shape) == (b, width // 32, s, 32) and t.dtype == dtype and t.layout == ttnn.TILE_LAYOUT
        assert t.memory_config() == ttnn.L1_MEMORY_CONFIG
    for i, (tq, tk) in enumerate(zip(ttnn.get_device_tensors(q), ttnn.get_device_tensors(k), strict=True)):
        block = values[:, 0, :, i * width : (i + 1) * width]
        want = block.reshape(b, s, width // 32, 32).transpose(0, 2, 1, 3)
        np.testing.assert_array_equal(ttnn.to_numpy(tq).astype(np.float64), want)
        assert not ttnn.to_numpy(tk).any()  # ttnn leaves k and v unwritten; meshnn's hold zeros


def test_a_padded_sequence_is_split_at_its_padded_length(open_mesh, rng):
    mesh = open_mesh((1, 1))
    values = held(rng.standard_normal((1, 1, 50, 64)))
    q = ttnn.experimental.nlp_create_qkv_heads_segformer(heads_on(mesh, values, dim=None))[0]
    assert tuple(q.shape) == (1, 2, 64, 32)
    got = ttnn.to_numpy(q).astype(np.float64)
    np.testing.assert_array_equal(got[:, :, :50], values[:, 0].reshape(1, 50, 2, 32).transpose(0, 2, 1, 3))
    assert not got[:, :, 50:].any()


def test_a_sharded_output_output_tensors_and_a_bad_config_are_refused(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = heads_on(mesh, held(rng.standard_normal((1, 1, 32, 64))), dim=None)
    sharded = ttnn.create_sharded_memory_config([64, 32], ttnn.CoreGrid(x=2, y=1), ttnn.ShardStrategy.HEIGHT)
    with pytest.raises(ttnn.MeshnnValueError, match="interleaved"):
        ttnn.experimental.nlp_create_qkv_heads_segformer(x, memory_config=sharded)
    with pytest.raises(ttnn.NotImplementedByMeshnn, match="output_tensors"):
        ttnn.experimental.nlp_create_qkv_heads_segformer(x, output_tensors=[x, x, x])
    with pytest.raises(ttnn.MeshnnTypeError, match="memory_config"):
        ttnn.experimental.nlp_create_qkv_heads_segformer(x, memory_config="L1")
