"""``ttnn.experimental.deepseek_prefill.moe_grouped_topk`` against torch written from the gate's
description (sigmoid, bias for choosing, groups ranked by their top-2 sum, top-4 groups, top-8
experts of those, unbiased weights normalised and scaled): the expert ids exactly (distinct scores),
the bfloat16 weights within one rounding of torch's float32 weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

TILE = ttnn.TILE_LAYOUT


def torch_gate(scores, bias, groups, summed, kept, n, scale, eps):
    s = torch.sigmoid(scores)
    b = s + bias
    if groups > 1:
        grouped = b.reshape(*b.shape[:-1], groups, -1)
        sums = grouped.topk(summed, dim=-1).values.sum(-1)
        best = sums.topk(kept, dim=-1).indices
        drop = torch.ones_like(sums, dtype=torch.bool).scatter_(-1, best, False)
        b = grouped.masked_fill(drop.unsqueeze(-1), float("-inf")).reshape(b.shape)
    ids = b.topk(n, dim=-1, sorted=True).indices
    chosen = s.gather(-1, ids)
    return chosen / (chosen.sum(-1, keepdim=True) + eps) * scale, ids


def distinct_scores(rows: int, experts: int, generator) -> torch.Tensor:
    """Logits whose sigmoids are distinct within each row (no ties to order)."""
    grid = torch.linspace(0.05, 0.95, experts * 4)
    picks = torch.stack([grid[torch.randperm(grid.numel(), generator=generator)[:experts]] for _ in range(rows)])
    return torch.log(picks / (1 - picks))


def bf16_close(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=2**-8, atol=0)


@pytest.mark.parametrize("groups,experts,n,scale", [(8, 256, 8, 2.5), (1, 384, 8, 2.827), (1, 64, 64, 1.0)])
def test_grouped_gate_on_one_device(groups, experts, n, scale):
    g = torch.Generator().manual_seed(3)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    try:
        scores = distinct_scores(40, experts, g).reshape(1, 2, 20, experts)
        bias = torch.randn(1, 2, 20, experts, generator=g) * 0.1
        kwargs = dict(n_groups=groups, summed_experts_per_group=2 if groups > 1 else 1,
                      topk_groups=4 if groups > 1 else 1, n_activated_experts=n)  # fmt: skip
        s = ttnn.from_torch(scores, dtype=ttnn.float32, layout=TILE, device=mesh)
        b = ttnn.from_torch(bias, dtype=ttnn.float32, layout=TILE, device=mesh)
        weights, ids = ttnn.experimental.deepseek_prefill.moe_grouped_topk(s, b, route_scale=scale, **kwargs)
        assert weights.dtype == ttnn.bfloat16 and ids.dtype == ttnn.uint16
        assert tuple(weights.shape) == (1, 2, 20, n) and weights.layout == TILE
        want_w, want_i = torch_gate(scores, bias, groups, kwargs["summed_experts_per_group"],
                                    kwargs["topk_groups"], n, scale, 1e-20)  # fmt: skip
        np.testing.assert_array_equal(ttnn.to_torch(ids).numpy().astype(np.int64), want_i.numpy())
        bf16_close(ttnn.to_torch(weights).float().numpy(), want_w.numpy())
    finally:
        ttnn.close_mesh_device(mesh)


def test_grouped_gate_per_device_on_a_t3000_and_ties_lower_index_first():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    try:
        g = torch.Generator().manual_seed(5)
        scores = distinct_scores(8 * 32, 256, g).reshape(8, 32, 256)
        scores[0, 0] = 0.0  # a row of equal scores: every group ties, the lowest ids win
        bias = torch.randn(8, 32, 256, generator=g) * 0.1  # (sums of the evenly spaced scores tie without it)
        bias[0, 0] = 0.0
        mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
        s = ttnn.from_torch(scores, dtype=ttnn.float32, layout=TILE, device=mesh, mesh_mapper=mapper)
        b = ttnn.from_torch(bias, dtype=ttnn.float32, layout=TILE, device=mesh, mesh_mapper=mapper)
        weights, ids = ttnn.experimental.deepseek_prefill.moe_grouped_topk(
            s, b, route_scale=1.5, memory_config=ttnn.L1_MEMORY_CONFIG
        )
        assert weights.memory_config().buffer_type == ttnn.BufferType.L1
        got_i = ttnn.to_torch(ids, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).numpy().astype(np.int64)
        got_w = ttnn.to_torch(weights, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy()
        np.testing.assert_array_equal(got_i[0, 0], np.arange(8))
        bf16_close(got_w[0, 0], np.full(8, 1.5 / 8, np.float32))
        want_w, want_i = torch_gate(scores[:, 1:], bias[:, 1:], 8, 2, 4, 8, 1.5, 1e-20)
        np.testing.assert_array_equal(got_i[:, 1:], want_i.numpy())
        bf16_close(got_w[:, 1:], want_w.numpy())
    finally:
        ttnn.close_mesh_device(mesh)
