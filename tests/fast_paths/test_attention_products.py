"""The attention kernels' float32 products on torch (:mod:`meshnn.ops.transformer.products`): the
same products as numpy's within float32 rounding of the sums, every operand layout the kernels
hand them (transposed views, read-only memo values, broadcast batches), and a traced attention
replaying its eager result bit for bit."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops.transformer import products
from meshnn.ops.transformer.attention import attend, causal_bias


def _bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Float32 sums of ``K`` products in any order differ by at most ``K * 2**-23`` of the sum of
    the products' magnitudes."""
    return a.shape[-1] * 2.0**-23 * np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((2, 8, 48, 64), (2, 8, 64, 40)), ((1, 3, 4, 2, 16), (1, 3, 1, 16, 9)), ((5, 7), (7, 3))],
)
def test_product_matches_numpy_within_float32_sums(a_shape, b_shape):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in (a_shape, b_shape))
    got = products.product(a, b)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == want.shape
    assert (np.abs(got - want) <= _bound(a, b) + 1e-30).all()
    assert got.flags.writeable and got.flags.c_contiguous  # the kernels write into it (out /= total)


def test_product_takes_transposed_read_only_and_reversed_operands():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 6, 32)).astype(np.float32)
    k = rng.standard_normal((3, 20, 32)).astype(np.float32)
    k.flags.writeable = False  # a memo's values
    reversed_a = a[:, ::-1]
    got = products.product(reversed_a, np.swapaxes(k, -1, -2))
    want = np.matmul(reversed_a.astype(np.float64), np.swapaxes(k, -1, -2).astype(np.float64))
    assert (np.abs(got - want) <= _bound(reversed_a, np.swapaxes(k, -1, -2)) + 1e-30).all()
    assert not k.flags.writeable  # left as it was


def test_product_without_torch_or_float32_is_numpys(monkeypatch):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((4, 8, 8)), rng.standard_normal((4, 8, 8))
    assert np.array_equal(products.product(a, b), np.matmul(a, b))  # float64: numpy's, exactly
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    monkeypatch.setitem(sys.modules, "torch", None)
    assert np.array_equal(products.product(a32, b32), np.matmul(a32, b32))


def test_attend_on_torch_agrees_with_numpy(monkeypatch):
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 1, 8, 64, 32)).astype(np.float32)
    k, v = (rng.standard_normal((1, 1, 2, 64, 32)).astype(np.float32) for _ in range(2))
    on_torch = attend(q, k, v, np.float32(32**-0.5), causal_bias(64))
    monkeypatch.setitem(sys.modules, "torch", None)
    on_numpy = attend(q, k, v, np.float32(32**-0.5), causal_bias(64))
    assert np.allclose(on_torch, on_numpy, rtol=1e-5, atol=1e-6)
    assert not np.array_equal(q, 0) and np.isfinite(on_torch).all()


def test_traced_attention_replays_its_eager_bytes():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), trace_region_size=1 << 20, system="t3k")
    try:
        gen = torch.Generator().manual_seed(4)
        q, k, v = (torch.randn(1, h, 64, 64, generator=gen) for h in (8, 2, 2))
        put = [ttnn.from_torch(t, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh) for t in (q, k, v)]
        eager = ttnn.to_torch(ttnn.get_device_tensors(ttnn.transformer.scaled_dot_product_attention(*put))[0])
        trace = ttnn.begin_trace_capture(mesh, cq_id=0)
        out = ttnn.transformer.scaled_dot_product_attention(*put, is_causal=True)
        ttnn.end_trace_capture(mesh, trace, cq_id=0)
        ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
        replayed = ttnn.to_torch(ttnn.get_device_tensors(out)[0])
        grouped = (k.repeat_interleave(4, 1), v.repeat_interleave(4, 1))  # a k / v head serves 4 q heads
        causal = torch.nn.functional.scaled_dot_product_attention(q, *grouped, is_causal=True)
        assert torch.equal(replayed, eager)
        assert torch.allclose(eager.float(), causal, atol=0.1)  # bfloat8_b inputs and output
        ttnn.release_trace(mesh, trace)
    finally:
        ttnn.close_mesh_device(mesh)
