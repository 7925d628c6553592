"""ttnn.experimental.multi_scale_deformable_attn: each query's attention-weighted sum of bilinear
samples (zero padding; both corner mappings), against torch's grid_sample within bfloat16's bound;
tt-metal's refusals before anything is allocated; the perf capture times it."""

from __future__ import annotations

import pytest

import meshnn as ttnn

torch = pytest.importorskip("torch")


def reference(value, grid, attn, align_corners):
    n, _, _, depth = value.shape
    q, p = attn.shape[1:]
    sampled = torch.nn.functional.grid_sample(
        value.permute(0, 3, 1, 2), grid, mode="bilinear", padding_mode="zeros", align_corners=align_corners
    )
    return (sampled.squeeze(-1).permute(0, 2, 1).reshape(n, q, p, depth) * attn[..., None]).sum(2)


def put(mesh, values):
    return ttnn.from_torch(values.to(torch.bfloat16), layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)


def inputs(n=2, h=5, w=7, q=6, p=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    value = torch.randn(n, h, w, 32, generator=gen).to(torch.bfloat16).float()
    grid = (torch.rand(n, q * p, 1, 2, generator=gen) * 2.4 - 1.2).to(torch.bfloat16).float()  # some outside
    attn = torch.softmax(torch.randn(n, q, p, generator=gen), -1).to(torch.bfloat16).float()
    return value, grid, attn


@pytest.mark.parametrize("align_corners", [False, True])
def test_it_is_grid_samples_weighted_sum(open_mesh, align_corners):
    mesh = open_mesh((1, 1))
    value, grid, attn = inputs()
    out = ttnn.experimental.multi_scale_deformable_attn(
        put(mesh, value), put(mesh, grid), put(mesh, attn), align_corners=align_corners
    )
    assert tuple(out.shape) == (2, 6, 32) and out.dtype == ttnn.bfloat16 and out.layout == ttnn.ROW_MAJOR_LAYOUT
    want = reference(value, grid, attn, align_corners)
    got = ttnn.to_torch(out).float()
    # inputs are exact bfloat16; the float32 sum is rounded to bfloat16 once: half an ulp (2**-8 relative)
    bound = want.abs() * 2**-8 + 1e-5
    assert torch.all((got - want).abs() <= bound)


def test_refusals_come_before_any_allocation(open_mesh):
    mesh = open_mesh((1, 1))
    value, grid, attn = inputs()
    v, g, a = put(mesh, value), put(mesh, grid), put(mesh, attn)
    short_grid, narrow = put(mesh, grid[:, :-1]), put(mesh, value[..., :16])
    tiled = ttnn.from_torch(value.to(torch.bfloat16), layout=ttnn.TILE_LAYOUT, device=mesh)
    live = len(mesh.live_buffers())
    op = ttnn.experimental.multi_scale_deformable_attn
    with pytest.raises(ValueError, match="grid dim 1"):
        op(v, short_grid, a)
    with pytest.raises(ValueError, match=r"last dim \(D\) must be 32"):
        op(narrow, g, a)
    with pytest.raises(ValueError, match="ROW_MAJOR"):
        op(tiled, g, a)
    with pytest.raises(TypeError, match="align_corners"):
        op(v, g, a, align_corners=1)
    assert len(mesh.live_buffers()) == live  # no output was allocated


def test_the_perf_capture_times_it(open_mesh):
    mesh = open_mesh((1, 1))
    value, grid, attn = inputs()
    with ttnn.perf_capture() as capture:
        ttnn.experimental.multi_scale_deformable_attn(put(mesh, value), put(mesh, grid), put(mesh, attn))
    (record,) = capture.recorders[0].records
    assert record.desc.op_code == "MSDAOperation" and record.prediction.kernel_ns > 0
