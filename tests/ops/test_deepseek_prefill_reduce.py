"""``ttnn.experimental.deepseek_prefill.post_combine_reduce`` against a loop over tokens and slots
written from the kernel's description: products rounded to bfloat16, accumulated slot by slot into
a bfloat16 buffer; DeepSeek's path skipping experts the dispatch table marks -1 (all of a token's
slots non-local: zeros), GPT-OSS's skipping zero weights.  The loop rounds as the kernel does, so the
bytes are compared exactly; torch's float32 sum checks it within bfloat16 accumulation."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import meshnn as ttnn

RM = ttnn.ROW_MAJOR_LAYOUT


def bf16(x) -> np.float32:
    return np.float32(np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32))


def loop_reduce(combine, weights, local=None):
    """``combine`` ``(T, K, E)``, ``weights`` ``(T, K)``; ``local`` ``(T, K)`` or None (GPT-OSS)."""
    tokens, slots, emb = combine.shape
    out = np.zeros((tokens, emb), np.float32)
    for t in range(tokens):
        acc = None
        for k in range(slots):
            w = weights[t, k]
            if local is not None:
                last_forced = k == slots - 1 and acc is None
                if not local[t, k] and not last_forced:
                    continue
                if not local[t, k]:
                    w = np.float32(0)
            elif k > 0 and w == 0 and not np.signbit(w):
                continue
            product = bf16(combine[t, k] * w)
            acc = product if acc is None else bf16(acc + product)
        out[t] = acc
    return out


def put(mesh, values, dtype, shard=True):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0) if shard else ttnn.ReplicateTensorToMesh(mesh)
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=RM, device=mesh, mesh_mapper=mapper)


@pytest.mark.parametrize("path", ["deepseek", "gpt_oss"])
def test_weighted_sum_of_the_experts_per_device(path):
    rng = np.random.default_rng(17)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300")
    try:
        tokens, slots, emb, n = 64, 4, 96, 32
        combine = rng.standard_normal((2, 1, tokens, slots, emb)).astype(ml_dtypes.bfloat16).astype(np.float32)
        weights = rng.standard_normal((2, 1, tokens, slots, 1)).astype(ml_dtypes.bfloat16).astype(np.float32)
        weights[:, :, ::3, 1] = 0.0  # zero weights: skipped on GPT-OSS's path
        ids = np.stack([rng.permutation(n)[:slots] for _ in range(2 * tokens)]).reshape(2, 1, tokens, slots)
        table = np.where(np.arange(n) < 12, np.arange(n) // 4, -1).astype(np.int32)
        ids[0, 0, 5] = [20, 21, 22, 23]  # a token with no local expert: zeros
        args = [put(mesh, combine, ttnn.bfloat16), put(mesh, weights, ttnn.bfloat16)]
        if path == "deepseek":
            args += [put(mesh, ids.astype(np.int32), ttnn.uint16), put(mesh, table, ttnn.int32, shard=False)]
        out = ttnn.experimental.deepseek_prefill.post_combine_reduce(*args, expert_dim=3)
        assert tuple(out.shape) == (1, 1, tokens, emb) and out.layout == ttnn.TILE_LAYOUT
        assert out.dtype == ttnn.bfloat16 and out.memory_config() == ttnn.L1_MEMORY_CONFIG
        for d, dev in enumerate(ttnn.get_device_tensors(out)):
            local = (table[ids[d, 0]] != -1) if path == "deepseek" else None
            want = loop_reduce(combine[d, 0], weights[d, 0, :, :, 0], local)
            got = ttnn.to_torch(dev).float().numpy().reshape(tokens, emb)
            np.testing.assert_array_equal(got, want)
            if local is not None and d == 0:
                assert not got[5].any()
            mask = local if local is not None else np.ones((tokens, slots), bool)
            exact = (combine[d, 0] * (weights[d, 0] * mask[..., None])).sum(axis=1)
            np.testing.assert_allclose(got, exact, rtol=0, atol=np.abs(exact).max() * 2**-6)
    finally:
        ttnn.close_mesh_device(mesh)


def test_three_dim_combine_and_dram_output():
    rng = np.random.default_rng(3)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        combine = rng.standard_normal((32, 8, 64)).astype(np.float32)
        weights = rng.standard_normal((32, 8, 1)).astype(np.float32)
        c, w = put(mesh, combine, ttnn.bfloat16, False), put(mesh, weights, ttnn.bfloat16, False)
        out = ttnn.experimental.deepseek_prefill.post_combine_reduce(
            c, w, expert_dim=1, output_memory_config=ttnn.DRAM_MEMORY_CONFIG
        )
        assert tuple(out.shape) == (32, 64) and out.memory_config() == ttnn.DRAM_MEMORY_CONFIG
        want = loop_reduce(bf16(combine), bf16(weights[..., 0]))
        np.testing.assert_array_equal(ttnn.to_torch(out).float().numpy(), want)
    finally:
        ttnn.close_mesh_device(mesh)
