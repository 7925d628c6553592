"""ttnn.experimental.nlp_create_qkv_heads_vit / _boltz: ViT's fixed [B, 1, S, 2304] split into 12
heads of 64, and Boltz's [1, S, S, 3 h d] pair representation into [h, S, S, d] heads (k transposed
or not): values moved exactly; tt-metal's refusals; the perf capture times them."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn


def put(mesh, values, dtype=ttnn.bfloat16):
    return ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)


def back(t):
    return ttnn.to_torch(t).float().numpy()


def test_vit_splits_three_blocks_of_twelve_heads(open_mesh, rng):
    mesh = open_mesh((1, 1))
    values = rng.integers(-8, 8, (2, 1, 64, 2304)).astype(np.float32)  # exact in bfloat16
    q, k, v = ttnn.experimental.nlp_create_qkv_heads_vit(put(mesh, values), memory_config=ttnn.L1_MEMORY_CONFIG)
    for got, block in zip((q, k, v), np.split(values, 3, axis=-1), strict=True):
        assert tuple(got.shape) == (2, 12, 64, 64) and got.memory_config().buffer_type == ttnn.BufferType.L1
        np.testing.assert_array_equal(back(got), block.reshape(2, 64, 12, 64).transpose(0, 2, 1, 3))


@pytest.mark.parametrize("transpose", [False, True])
def test_boltz_splits_the_pair_rows(open_mesh, rng, transpose):
    mesh = open_mesh((1, 1))
    side, heads, d = 32, 2, 32
    values = rng.integers(-8, 8, (1, side, side, 3 * heads * d)).astype(np.float32)
    q, k, v = ttnn.experimental.nlp_create_qkv_heads_boltz(
        put(mesh, values), num_heads=heads, num_kv_heads=heads, transpose_k_heads=transpose
    )
    blocks = [b.reshape(side, side, heads, d).transpose(2, 0, 1, 3) for b in np.split(values[0], 3, axis=-1)]
    np.testing.assert_array_equal(back(q), blocks[0])
    np.testing.assert_array_equal(back(v), blocks[2])
    want_k = blocks[1].transpose(0, 3, 1, 2) if transpose else blocks[1]
    assert tuple(k.shape) == want_k.shape
    np.testing.assert_array_equal(back(k), want_k)


def test_refusals(open_mesh, rng):
    mesh = open_mesh((1, 1))
    with pytest.raises(ValueError, match="Unsupported input shape"):
        ttnn.experimental.nlp_create_qkv_heads_vit(put(mesh, np.zeros((1, 1, 32, 768), np.float32)))
    with pytest.raises(ValueError, match="pair representation"):
        ttnn.experimental.nlp_create_qkv_heads_boltz(put(mesh, np.zeros((1, 32, 64, 192), np.float32)), num_heads=2)
    ints = ttnn.from_torch(np.zeros((1, 1, 32, 2304), np.int32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT, device=mesh)
    with pytest.raises(TypeError, match="input must be one of"):
        ttnn.experimental.nlp_create_qkv_heads_vit(ints)


def test_the_perf_capture_times_them(open_mesh):
    mesh = open_mesh((1, 1))
    x = put(mesh, np.zeros((1, 1, 32, 2304), np.float32))
    with ttnn.perf_capture() as capture:
        ttnn.experimental.nlp_create_qkv_heads_vit(x)
    (record,) = capture.recorders[0].records
    assert record.desc.op_code == "NlpCreateHeadsVitDeviceOperation" and record.prediction.kernel_ns > 0
