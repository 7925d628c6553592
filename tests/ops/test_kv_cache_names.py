"""``ttnn.kv_cache.fill_cache_for_user_`` / ``update_cache_for_token_`` (ttnn's older names of the
same device operations): the cache they write holds the same bytes as ``ttnn.fill_cache`` /
``ttnn.update_cache`` given the same inputs, at its own address, and is what they return."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield m
    m.close()


def _t(mesh, x, dtype=ttnn.bfloat8_b):
    return ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)


def _bytes(t):
    return ttnn.to_torch(t)


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b], ids=["bf16", "bfp8"])
def test_same_bytes_as_the_new_names(mesh, dtype):
    prompt, token = torch.randn(1, 2, 64, 64), torch.randn(1, 2, 32, 64)
    old, new = (_t(mesh, torch.zeros(4, 2, 128, 64), dtype) for _ in range(2))
    address = old.buffer_address()
    assert ttnn.kv_cache.fill_cache_for_user_(old, _t(mesh, prompt, dtype), 3, update_idx=32) is old
    ttnn.fill_cache(new, _t(mesh, prompt, dtype), 3, update_idx=32)
    assert ttnn.kv_cache.update_cache_for_token_(old, _t(mesh, token, dtype), 100) is old
    ttnn.update_cache(new, _t(mesh, token, dtype), 100)
    assert old.buffer_address() == address
    assert torch.equal(_bytes(old), _bytes(new))
    assert _bytes(old)[3, :, 32:96].abs().sum() > 0  # the prompt is there


def test_refusal_names_the_op(mesh):
    cache = _t(mesh, torch.zeros(4, 2, 128, 64))
    with pytest.raises(ttnn.MeshnnValueError, match="update_idx"):
        ttnn.kv_cache.update_cache_for_token_(cache, _t(mesh, torch.randn(1, 2, 32, 64)), 128)
