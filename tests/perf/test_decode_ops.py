"""Decode-sized ops under a perf capture and in the model: the cache ops timed with their caches,
flash decode's cores from the grid and its (user, kv head) pairs, argmax's cores from
``use_multicore``, the head ops' face rows."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import AttentionConfig, BufferType, MathFidelity, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.model import default_fidelity

L1 = ttnn.L1_MEMORY_CONFIG


def put(mesh, values, dtype=ttnn.bfloat16, memory_config=None, layout=ttnn.TILE_LAYOUT):
    return ttnn.from_torch(
        values.astype(np.float32), dtype=dtype, layout=layout, device=mesh, memory_config=memory_config
    )


def only(capture, family):
    (recorder,) = capture.recorders
    found = [r for r in recorder.records if r.desc.family is family]
    assert found, [r.desc.family for r in recorder.records]
    return found


def test_fill_cache_is_timed_with_its_cache(open_mesh, rng):
    """ttnn.fill_cache under a capture once raised IndexError (its event has no cache input)."""
    mesh = open_mesh((1, 1), system="n150")
    cache = put(mesh, np.zeros((2, 8, 256, 64)))
    prompt = put(mesh, rng.standard_normal((1, 8, 64, 64)))
    with ttnn.perf_capture() as capture:
        ttnn.fill_cache(cache, prompt, 1)
    assert capture.skipped == []
    (entry,) = only(capture, OpFamily.KV_FILL)
    assert entry.desc.inputs[0].shape == (2, 8, 256, 64) and entry.desc.inputs[1].shape == (1, 8, 64, 64)
    assert entry.desc.op_code == "UpdateKVCacheOperation"
    assert entry.prediction.dram_bytes == 2 * 32 * 2048  # the prompt's 32 tiles read, then written into the cache


def test_paged_update_cache_is_timed_with_its_cache(open_mesh, rng):
    """paged_update_cache was timed as a 1-core copy of its input (the cache was missing)."""
    mesh = open_mesh((1, 1), system="n150")
    cache = put(mesh, np.zeros((4, 8, 128, 128)), dtype=ttnn.bfloat8_b)
    sharded = ttnn.create_sharded_memory_config(
        (32, 128), ttnn.CoreGrid(y=1, x=4), ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
    )
    row = put(mesh, rng.standard_normal((1, 4, 8, 128)), memory_config=sharded)
    with ttnn.perf_capture() as capture:
        ttnn.experimental.paged_update_cache(cache, row, update_idxs=[3, 7, 9, 100])
    (entry,) = only(capture, OpFamily.KV_UPDATE)
    assert entry.desc.inputs[0].shape == (4, 8, 128, 128) and entry.desc.inputs[0].dtype == "BFLOAT8_B"
    assert entry.prediction.cores == 4  # one core per user
    assert entry.prediction.dram_bytes >= 2 * 4 * 8 * 4 * 1088  # each user's tile row, every head, read and written


def test_decode_attention_without_a_program_config_uses_the_grid(open_mesh, rng):
    """q of a decode step is height-sharded one user per core; at batch 1 that is one core, but the
    program spreads each (user, kv head) over up to 16 cores of the grid."""
    mesh = open_mesh((1, 1), system="n150")
    q_config = ttnn.create_sharded_memory_config(
        (32, 128), ttnn.CoreGrid(y=1, x=1), ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
    )
    q = put(mesh, rng.standard_normal((1, 1, 32, 128)), memory_config=q_config)
    cache = put(mesh, rng.standard_normal((1, 8, 2048, 128)), dtype=ttnn.bfloat8_b)
    with ttnn.perf_capture() as capture:
        ttnn.transformer.scaled_dot_product_attention_decode(q, cache, cache, cur_pos=[1500])
    (entry,) = only(capture, OpFamily.SDPA_DECODE)
    assert entry.desc.core_grid is None and entry.desc.attention.kv_len == 1501
    # 8 pairs of 64 // 8 = 8 cores each; 1501 positions are 3 chunks of 512: 3 cores of each pair work
    assert entry.prediction.cores == 8 * 3
    assert "8 (user, kv head) pairs, 3 core(s) each, 1 chunk(s) of 512 a core" in entry.prediction.notes


def _decode(users, kv_len, cap=16, cache=4096):
    q = TensorDesc((1, users, 32, 128), logical_shape=(1, users, 8, 128))
    k = TensorDesc((users, 1, cache, 128), "BFLOAT8_B")
    config = AttentionConfig(k_chunk=0, causal=False, kv_len=kv_len, max_cores_per_head_batch=cap)
    return OpDesc(OpFamily.SDPA_DECODE, (q, k, k), (q,), attention=config)


def test_decode_attention_reads_only_up_to_the_position():
    near, far = (predict(_decode(8, n), "n150").dram_bytes for n in (128, 4096))
    assert far > 20 * near


def test_flash_decode_capping_the_cores_of_one_pair_helps_at_batch_1():
    """FlashDecode.md: on the T3000 shape (1 kv head, batch 1) 16 cores beat 64 (the reducer's traffic)."""
    sixteen = predict(_decode(1, 128 * 1024, 16, 128 * 1024), "n150").kernel_ns
    sixty_four = predict(_decode(1, 128 * 1024, 64, 128 * 1024), "n150").kernel_ns
    assert sixteen < sixty_four


@pytest.mark.parametrize("multicore", [False, True])
def test_argmax_cores_follow_use_multicore(open_mesh, rng, multicore):
    """A 128k-wide row on one core was the only choice; use_multicore splits it over the grid."""
    mesh = open_mesh((1, 1), system="n150")
    logits = put(mesh, rng.standard_normal((1, 1, 32, 128 * 1024)), layout=ttnn.ROW_MAJOR_LAYOUT)
    with ttnn.perf_capture() as capture:
        ttnn.argmax(logits, dim=3, use_multicore=multicore)
    (entry,) = only(capture, OpFamily.ARGMAX)
    assert entry.prediction.cores == (64 if multicore else 1)
    assert ("use_multicore", str(multicore)) in entry.desc.attributes


def test_argmax_over_the_grid_is_much_faster():
    x = TensorDesc((1, 1, 32, 128 * 1024), layout=ttnn.ROW_MAJOR_LAYOUT)
    out = TensorDesc((1, 1, 32, 1), "UINT32", layout=ttnn.ROW_MAJOR_LAYOUT)
    one = predict(OpDesc(OpFamily.ARGMAX, (x,), (out,)), "n150").kernel_ns
    many = predict(OpDesc(OpFamily.ARGMAX, (x,), (out,), attributes=(("use_multicore", "True"),)), "n150").kernel_ns
    assert many < one / 20


def test_head_ops_are_recorded_as_their_own_families(open_mesh, rng):
    mesh = open_mesh((1, 1), system="n150")
    fused = put(mesh, rng.standard_normal((1, 1, 32, (8 + 2) * 128)), memory_config=L1)
    with ttnn.perf_capture() as capture:
        q, _, _ = ttnn.experimental.nlp_create_qkv_heads_decode(fused, num_heads=8, num_kv_heads=1)
        ttnn.experimental.nlp_concat_heads_decode(q, num_heads=8)
    (create,) = only(capture, OpFamily.HEADS_DECODE)
    (concat,) = only(capture, OpFamily.CONCAT_HEADS_DECODE)
    assert create.prediction.cores == 32 and concat.prediction.cores == 8
    assert "32 core(s), 80 face rows each" in create.prediction.notes


def test_rotary_embeddings_default_to_hifi4():
    """ttnn's rotary embedding ops pass HiFi4 when given no compute-kernel config (the model had used
    init_device_compute_kernel_config's own LoFi); a plain binary op keeps LoFi."""
    x = TensorDesc((1, 8, 32, 128), buffer=BufferType.L1, memory=MemoryLayout.HEIGHT_SHARDED)
    rotary = OpDesc(OpFamily.BINARY, (x, x, x), (x,), op_code="RotaryEmbeddingLlamaFusedQKDeviceOperation")
    assert default_fidelity(rotary) is MathFidelity.HiFi4
    assert default_fidelity(OpDesc(OpFamily.BINARY, (x, x), (x,))) is MathFidelity.LoFi
