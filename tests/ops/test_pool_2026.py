"""What tt-metal of 2026's pool tests need beyond ttnn 0.81.1: ``ttnn.operations.pool``'s golden
functions (``golden_maxpool2d`` with indices, ``golden_avg_pool2d``, the adaptive pools',
``golden_upsample``, ``golden_grid_sample``, ``golden_rotate``) attached to the ops, and the
pools' ``dram_slice_config`` (``ttnn.Op2DSliceConfig``, ttnn's ``Conv2dSliceConfig`` under its
newer name) checked, recorded and changing no value.  Goldens are checked against the ops: exact
where the op is exact (max pool, nearest upsample, quarter turns), else within bfloat16's bound."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.compat import ttnn_alias

from .reference import BF16, RM, assert_within, exact_equal, gamma, output_bound, quantized

RNG = np.random.default_rng(46)


@pytest.fixture(scope="module")
def device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    mesh.close()


@pytest.fixture(scope="module")
def pool_module():
    return ttnn_alias.alias_module().operations.pool  # what `from ttnn.operations.pool import ...` reads


def _image(shape):
    return quantized(RNG.standard_normal(shape).astype(np.float32), BF16, RM)


def _on(device, values):
    return ttnn.from_torch(torch.from_numpy(values), BF16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)


def test_the_module_holds_the_goldens_the_ops_carry(pool_module):
    for op, name in (
        (ttnn.max_pool2d, "golden_maxpool2d"),
        (ttnn.avg_pool2d, "golden_avg_pool2d"),
        (ttnn.adaptive_avg_pool2d, "golden_adaptive_avg_pool2d"),
        (ttnn.adaptive_max_pool2d, "golden_adaptive_max_pool2d"),
        (ttnn.global_avg_pool2d, "golden_global_avg_pool2d"),
        (ttnn.upsample, "golden_upsample"),
        (ttnn.grid_sample, "golden_grid_sample"),
        (ttnn.rotate, "golden_rotate"),
    ):
        assert ttnn.get_golden_function(op) is getattr(pool_module, name)
    assert pool_module.prepare_grid_sample_grid is ttnn.prepare_grid_sample_grid
    with pytest.raises(ttnn.NotImplementedByMeshnn, match=r"operations\.pool\.golden_nothing"):
        pool_module.golden_nothing  # noqa: B018


@pytest.mark.parametrize("padding", [(1, 1), (1, 0, 0, 1)], ids=["sym", "asym"])
def test_golden_maxpool2d_and_its_indices_equal_the_op(device, pool_module, padding):
    x = _image((1, 1, 2 * 7 * 6, 3))
    args = (2, 7, 6, 3, (3, 2), (2, 1), padding, (1, 1))
    out, indices = ttnn.max_pool2d(_on(device, x), *args, return_indices=True)
    ref, where = pool_module.golden_maxpool2d(torch.from_numpy(x), *args, return_indices=True)
    exact_equal(ttnn.to_numpy(out).astype(np.float64), ref.numpy().astype(np.float64), "golden max")
    if len(padding) == 2:  # (torch numbers an explicitly padded image's positions with the padding)
        exact_equal(ttnn.to_numpy(indices).astype(np.int64), where.numpy(), "golden max indices")
    assert tuple(ref.shape) == tuple(out.shape) == (1, 1, 2 * 4 * 7 if len(padding) == 2 else 2 * 3 * 6, 3)


def test_golden_avg_and_adaptive_pools_match_the_ops(device, pool_module):
    x = _image((1, 1, 9 * 8, 5))
    xt = torch.from_numpy(x)
    args = (1, 9, 8, 5, (3, 3), (2, 2), (1, 1))  # (a four-value padding: tt-metal's golden counts it)
    got = ttnn.to_numpy(ttnn.avg_pool2d(_on(device, x), *args, count_include_pad=False)).astype(np.float64)
    ref = pool_module.golden_avg_pool2d(xt, *args, count_include_pad=False).numpy().astype(np.float64)
    mag = pool_module.golden_avg_pool2d(xt.abs(), *args, count_include_pad=False).numpy().astype(np.float64)
    assert_within(got, ref, output_bound(ref, 2 * gamma(10) * mag, BF16), "avg")
    for kind in ("avg", "max"):
        op = getattr(ttnn, f"adaptive_{kind}_pool2d")
        got = ttnn.to_numpy(op(_on(device, x), 1, 9, 8, 5, (4, 3))).astype(np.float64)
        golden = getattr(pool_module, f"golden_adaptive_{kind}_pool2d")
        ref = golden(xt, 1, 9, 8, 5, (4, 3)).numpy().astype(np.float64)
        if kind == "max":
            exact_equal(got, ref, "adaptive max")
        else:
            mag = golden(xt.abs(), 1, 9, 8, 5, (4, 3)).numpy().astype(np.float64)
            assert_within(got, ref, output_bound(ref, 2 * gamma(32) * mag, BF16), "adaptive avg")


def test_golden_global_avg_pool2d_keeps_the_pooled_dims(pool_module):
    golden = pool_module.golden_global_avg_pool2d
    x = torch.arange(24, dtype=torch.float32)
    assert golden(x.reshape(2, 3, 4)).shape == (1, 1, 4) and golden(x.reshape(4, 6)).shape == (1, 1)
    assert golden(x.reshape(1, 2, 3, 4)).flatten().tolist() == [10.0, 11.0, 12.0, 13.0]
    assert golden(x.reshape(1, 2, 3, 4).bfloat16()).dtype == torch.bfloat16


def test_golden_upsample_and_grid_sample_match_the_ops(device, pool_module):
    x = _image((1, 4, 5, 8))
    got = ttnn.to_numpy(ttnn.upsample(_on(device, x), (2, 3))).astype(np.float64)
    exact_equal(got, pool_module.golden_upsample(torch.from_numpy(x), [2, 3]).numpy().astype(np.float64), "up")
    assert pool_module.golden_upsample(torch.from_numpy(x), 2).shape == (1, 8, 10, 8)
    grid = (RNG.random((1, 3, 4, 2)) * 1.8 - 0.9).astype(np.float32)
    gt = ttnn.from_torch(torch.from_numpy(grid), ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    got = ttnn.to_numpy(ttnn.grid_sample(_on(device, x), gt)).astype(np.float64)
    ref = pool_module.golden_grid_sample(torch.from_numpy(x), torch.from_numpy(grid)).float().numpy()
    mag = pool_module.golden_grid_sample(torch.from_numpy(np.abs(x)), torch.from_numpy(grid)).float().numpy()
    assert_within(got, ref.astype(np.float64), output_bound(ref, gamma(64) * mag, BF16), "grid_sample")


def test_golden_grid_sample_batches_the_points_as_ttnn_lays_them(pool_module):
    x = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(1, 2, 3, 4)
    grid = torch.rand((1, 2, 3, 4)) * 2 - 1  # two points at each of 2 x 3 positions
    plain = pool_module.golden_grid_sample(x, grid)
    assert plain.shape == (1, 2, 6, 4)
    channels = pool_module.golden_grid_sample(x, grid, batch_output_channels=True)
    assert channels.shape == (1, 2, 3, 8) and torch.equal(channels.reshape(1, 2, 6, 4), plain)


def test_golden_rotate_matches_the_op(device, pool_module):
    x = _image((1, 6, 8, 4))
    xt = torch.from_numpy(x)
    quarter = pool_module.golden_rotate(xt[:, :, :6], 90.0)  # a square image turns onto its own pixels
    exact_equal(quarter.numpy().astype(np.float64), np.rot90(x[:, :, :6], k=1, axes=(1, 2)), "quarter turn")
    exact_equal(pool_module.golden_rotate(xt, 0.0).numpy().astype(np.float64), x, "no turn")
    for center in (None, (2.0, 1.5)):
        got = ttnn.rotate(_on(device, x), 30.0, center=center, fill=-1.0, interpolation_mode="nearest")
        ref = pool_module.golden_rotate(xt, 30.0, center=center, fill=-1.0, interpolation_mode="nearest")
        exact_equal(ttnn.to_numpy(got).astype(np.float64), ref.numpy().astype(np.float64), "nearest")
        got = ttnn.rotate(_on(device, x), 30.0, center=center, fill=-1.0, interpolation_mode="bilinear")
        ref = pool_module.golden_rotate(xt, 30.0, center=center, fill=-1.0, interpolation_mode="bilinear").numpy()
        # torchvision's blend multiplies an edge sample by its coverage again: compare where a
        # sample's four pixels all lie inside the image (coverage 1)
        cover = pool_module.golden_rotate(torch.ones_like(xt), 30.0, center=center, interpolation_mode="bilinear")
        inside = cover.numpy() > 1 - 1e-6
        assert inside.sum() > x.size // 3
        mag = np.abs(x).max()
        bound = output_bound(ref[inside], gamma(64) * mag, BF16)
        assert_within(ttnn.to_numpy(got).astype(np.float64)[inside], ref[inside], bound, "bilinear inside")
    with pytest.raises(ValueError, match="interpolation"):
        pool_module.golden_rotate(xt, 30.0, interpolation_mode="bicubic")


def test_dram_slice_config_is_checked_recorded_and_changes_no_value(device, recorder):
    assert ttnn.Op2DSliceConfig is ttnn.Conv2dSliceConfig and ttnn.Op2DL1Full is ttnn.Conv2dL1Full
    assert ttnn.Op2DDRAMSliceHeight is ttnn.Conv2dSliceConfig.SliceTypeEnum.DRAMSliceHeight
    assert ttnn.Op2DDRAMSliceWidth is ttnn.Conv2dDRAMSliceWidth and ttnn.Op2DL1FullSliceConfig.num_slices == 0
    x = _image((1, 1, 64, 16))
    slices = ttnn.Op2DSliceConfig(num_slices=2, slice_type=ttnn.Op2DDRAMSliceHeight)
    args = (1, 8, 8, 16, (2, 2), (2, 2), (0, 0))
    calls = [
        (ttnn.max_pool2d, (*args, (1, 1))),
        (ttnn.avg_pool2d, args),
        (ttnn.adaptive_avg_pool2d, (1, 8, 8, 16, (3, 3))),
        (ttnn.adaptive_max_pool2d, (1, 8, 8, 16, (3, 3))),
    ]
    for pool, call in calls:
        plain = ttnn.to_torch(pool(_on(device, x), *call))
        sliced = pool(_on(device, x), *call, dram_slice_config=slices)
        assert recorder.ops[-1].attrs["dram_slice_config"] is slices
        assert torch.equal(plain, ttnn.to_torch(sliced))
        with pytest.raises(ttnn.MeshnnTypeError, match="dram_slice_config"):
            pool(_on(device, x), *call, dram_slice_config="height")


def test_grid_sample_align_corners_maps_the_corner_pixels(device, pool_module):
    x = _image((1, 5, 7, 8))
    grid = (RNG.random((1, 3, 4, 2)) * 2 - 1).astype(np.float32)
    gt = ttnn.from_torch(torch.from_numpy(grid), ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    ref = (
        pool_module.golden_grid_sample(torch.from_numpy(x), torch.from_numpy(grid), align_corners=True).float().numpy()
    )
    mag = pool_module.golden_grid_sample(torch.from_numpy(np.abs(x)), torch.from_numpy(grid), align_corners=True)
    bound = output_bound(ref, gamma(64) * mag.float().numpy(), BF16)
    got = ttnn.to_numpy(ttnn.grid_sample(_on(device, x), gt, align_corners=True)).astype(np.float64)
    assert_within(got, ref.astype(np.float64), bound, "grid_sample align_corners")
    table = ttnn.prepare_grid_sample_grid(gt, [1, 5, 7, 8], align_corners=True, output_dtype=ttnn.float32)
    precomputed = ttnn.grid_sample(_on(device, x), table, use_precomputed_grid=True)
    assert_within(ttnn.to_numpy(precomputed).astype(np.float64), ref.astype(np.float64), bound, "precomputed")
    unaligned = pool_module.golden_grid_sample(torch.from_numpy(x), torch.from_numpy(grid)).float().numpy()
    assert np.abs(unaligned - ref).max() > bound.max(), "the bound must tell the two mappings apart"
    with pytest.raises(ttnn.MeshnnTypeError, match="align_corners"):
        ttnn.grid_sample(_on(device, x), gt, align_corners="yes")


def test_upsample_nearest_by_non_integer_factors(device, pool_module):
    x = _image((1, 5, 7, 8))
    for scale in ((1.5, 1.5), (0.5, 2.0), (2.5, 0.75)):
        got = ttnn.to_numpy(ttnn.upsample(_on(device, x), list(scale))).astype(np.float64)
        ref = pool_module.golden_upsample(torch.from_numpy(x), list(scale)).numpy().astype(np.float64)
        exact_equal(got, ref, f"upsample by {scale}")  # (copies: torch's floor(o / scale) pixel)
    with pytest.raises(ttnn.MeshnnValueError, match="nearest"):
        ttnn.upsample(_on(device, x), 1.5, mode="bilinear")
    with pytest.raises(ttnn.MeshnnValueError, match="positive"):
        ttnn.upsample(_on(device, x), (1.5, -2.0))
