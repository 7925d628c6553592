"""What gpt-oss's own module tests (tt-metal 2026-06, ``models/demos/gpt_oss``) needed of meshnn's
existing ops, each checked against numpy / torch:

- a rank-0 int32 position (``torch.tensor(p)``, one user) has tt-metal's row-major padded shape
  ``[1]``, so ``paged_update_cache`` and decode SDPA count it as one user's position;
- ``scatter`` of a bfloat8_b TILE input with a bfloat16 source: ttnn makes both ROW_MAJOR first (a
  block float becomes bfloat16), so their dtypes agree and the result is bfloat16;
- (the decode attention sink's scale is held in ``test_decode_ops.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield m
    m.close()


def test_a_scalar_position_pads_to_one_row(mesh):
    t = ttnn.from_torch(torch.tensor(5, dtype=torch.int32), dtype=ttnn.int32, device=mesh)
    assert tuple(t.shape) == () and tuple(t.padded_shape) == (1,)
    assert int(ttnn.to_torch(ttnn.get_device_tensors(t)[0])) == 5


def test_one_user_decode_at_a_scalar_position(mesh):
    heads, d, seq, pos = 8, 64, 64, 5
    g = torch.Generator().manual_seed(7)
    k = torch.randn(1, 1, seq, d, generator=g).bfloat16().float()
    v = torch.randn(1, 1, seq, d, generator=g).bfloat16().float()
    new_k = torch.randn(1, 1, 1, d, generator=g).bfloat16().float()  # [1, users, heads, d]
    q = torch.randn(1, 1, heads, d, generator=g).bfloat16().float()
    tk, tv = (ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh) for x in (k, v))
    where = ttnn.from_torch(torch.tensor(pos, dtype=torch.int32), dtype=ttnn.int32, device=mesh)
    shard = ttnn.create_sharded_memory_config(
        (32, d),
        ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))]),
        ttnn.ShardStrategy.HEIGHT,
        use_height_and_width_as_shard_shape=True,
    )
    x = ttnn.from_torch(new_k, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=shard)
    ttnn.experimental.paged_update_cache(tk, x, update_idxs_tensor=where)
    cache = ttnn.to_torch(ttnn.get_device_tensors(tk)[0]).float()
    assert torch.equal(cache[0, 0, pos], new_k[0, 0, 0]) and torch.equal(cache[0, 0, :pos], k[0, 0, :pos])
    tq = ttnn.from_torch(q, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    out = ttnn.transformer.scaled_dot_product_attention_decode(tq, tk, tv, cur_pos_tensor=where)
    got = ttnn.to_torch(ttnn.get_device_tensors(out)[0]).float().numpy()[0, 0]
    keys = cache[0, 0, : pos + 1].double().numpy()
    scores = q[0, 0].double().numpy() @ keys.T / np.sqrt(d)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    want = (weights / weights.sum(-1, keepdims=True)) @ v[0, 0, : pos + 1].double().numpy()
    np.testing.assert_allclose(got, want, rtol=2.0**-7, atol=2.0**-7 * np.abs(want).max())


def test_scatter_of_a_block_float_input_with_a_bfloat16_source(mesh):
    g = torch.Generator().manual_seed(3)
    base = torch.randn(32, 64, generator=g)
    src = torch.randn(32, 4, generator=g).bfloat16()
    index = torch.stack([torch.randperm(64, generator=g)[:4] for _ in range(32)]).to(torch.int32)
    x = ttnn.from_torch(base, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh)
    i = ttnn.from_torch(index, dtype=ttnn.uint16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    s = ttnn.from_torch(src, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    out = ttnn.scatter(x, dim=1, index=i, src=s)
    assert out.dtype == ttnn.bfloat16 and out.layout == ttnn.TILE_LAYOUT
    stored = ttnn.to_torch(ttnn.get_device_tensors(x)[0]).float()  # bfloat8_b values: exact in bfloat16
    want = torch.scatter(stored, 1, index.long(), src.float())
    assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(out)[0]).float(), want)
    f32 = ttnn.from_torch(base, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    with pytest.raises(TypeError, match="src_dtype"):
        ttnn.scatter(f32, dim=1, index=i, src=s)
