"""The pools, resampling and CNN data-movement ops against float64 torch / numpy on the values the
device holds: max pool, nearest upsample, fold and convert_to_chw exactly; the averaging and
interpolating ops within their float32 error plus one rounding into the output dtype."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, F32, RM, TILE, assert_within, exact_equal, gamma, output_bound, quantized

RNG = np.random.default_rng(36)


@pytest.fixture(scope="module")
def device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    mesh.close()


def _image(n, h, w, c, dtype=BF16):
    return quantized(RNG.standard_normal((n, h, w, c)).astype(np.float32), dtype, RM)


def _on(device, values, dtype=BF16, layout=RM):
    return ttnn.from_torch(torch.from_numpy(values).float(), dtype, layout=layout, device=device)


def _flat(nchw: torch.Tensor) -> np.ndarray:
    n, c, h, w = nchw.shape
    return nchw.permute(0, 2, 3, 1).reshape(1, 1, n * h * w, c).numpy()


POOL_CASES = [  # kernel, stride, padding, dilation, ceil_mode
    ((3, 3), (2, 2), (1, 1), (1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 1), True),
    ((2, 3), (1, 2), (1, 0, 1, 1), (1, 1), False),
    ((3, 2), (1, 1), (0, 0), (2, 2), False),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=["s2", "ceil", "asym_pad", "dilated"])
def test_max_pool2d_is_exact(device, case):
    kernel, stride, padding, dilation, ceil = case
    x = _image(2, 9, 8, 5)
    out, indices = ttnn.max_pool2d(
        _on(device, x), 2, 9, 8, 5, kernel, stride, padding, dilation, ceil, return_indices=True
    )
    pads = padding if len(padding) == 4 else (padding[0], padding[0], padding[1], padding[1])
    xt = torch.nn.functional.pad(
        torch.from_numpy(x).permute(0, 3, 1, 2), (pads[2], pads[3], pads[0], pads[1]), value=-np.inf
    )
    if len(padding) == 2:  # torch's own padding (and its ceil-mode rule) for the symmetric case
        xt = torch.from_numpy(x).permute(0, 3, 1, 2)
    ref, where = torch.nn.functional.max_pool2d(
        xt, kernel, stride, padding if len(padding) == 2 else 0, dilation, ceil_mode=ceil, return_indices=True
    )
    exact_equal(ttnn.to_numpy(out).astype(np.float64), _flat(ref), "max_pool2d")
    if len(padding) == 2:
        exact_equal(ttnn.to_numpy(indices).astype(np.int64), _flat(where), "max_pool2d indices")
        assert indices.dtype is ttnn.uint16


@pytest.mark.parametrize("include_pad", [True, False])
@pytest.mark.parametrize("divisor", [None, 5])
@pytest.mark.parametrize("ceil", [False, True])
def test_avg_pool2d_matches_torch(device, include_pad, divisor, ceil):
    x = _image(1, 11, 10, 7)
    out = ttnn.avg_pool2d(_on(device, x), 1, 11, 10, 7, (3, 3), (2, 2), (1, 1), ceil, include_pad, divisor, dtype=BF16)
    xt = torch.from_numpy(x).permute(0, 3, 1, 2)
    ref = _flat(torch.nn.functional.avg_pool2d(xt, 3, 2, 1, ceil, include_pad, divisor))
    mag = _flat(torch.nn.functional.avg_pool2d(xt.abs(), 3, 2, 1, ceil, include_pad, divisor))
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, gamma(11) * mag, BF16), "avg_pool2d")


@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pools_match_torch(device, kind):
    x = _image(2, 13, 11, 4)
    function = ttnn.adaptive_avg_pool2d if kind == "avg" else ttnn.adaptive_max_pool2d
    flat = _on(device, x.reshape(1, 1, -1, 4))
    out = function(flat, 2, 13, 11, 4, (4, 3))
    torch_function = getattr(torch.nn.functional, f"adaptive_{kind}_pool2d")
    xt = torch.from_numpy(x).permute(0, 3, 1, 2)
    ref = _flat(torch_function(xt, (4, 3)))
    got = ttnn.to_numpy(out).astype(np.float64)
    if kind == "max":
        exact_equal(got, ref, "adaptive_max_pool2d")
    else:
        mag = _flat(torch_function(xt.abs(), (4, 3)))
        assert_within(got, ref, output_bound(ref, gamma(21) * mag, BF16), "adaptive_avg_pool2d")


def test_global_avg_pool2d(device):
    x = _image(2, 7, 5, 40)
    out = ttnn.global_avg_pool2d(_on(device, x, layout=TILE))
    ref = x.mean(axis=(1, 2), keepdims=True)
    mag = np.abs(x).mean(axis=(1, 2), keepdims=True)
    assert list(out.shape) == [2, 1, 1, 40]
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, gamma(36) * mag, BF16), "global_avg")
    assert ttnn.get_golden_function(ttnn.global_avg_pool2d)(torch.from_numpy(x)).shape == (2, 1, 1, 40)


def test_upsample_nearest_is_exact_and_keeps_sharding(device):
    x = _image(1, 4, 6, 32)
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))})
    sharded = ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.HEIGHT_SHARDED,
        ttnn.BufferType.L1,
        ttnn.ShardSpec(grid, (12, 32), ttnn.ShardOrientation.ROW_MAJOR),
    )
    out = ttnn.upsample(ttnn.to_memory_config(_on(device, x), sharded), (2, 3))
    exact_equal(ttnn.to_numpy(out).astype(np.float64), np.repeat(np.repeat(x, 2, axis=1), 3, axis=2), "upsample")
    assert out.memory_config().is_sharded() and out.memory_config().shard_spec.shape == (72, 32)


def test_upsample_bilinear_matches_torch(device):
    x = _image(1, 5, 4, 8)
    out = ttnn.upsample(_on(device, x), 2, mode="bilinear")
    xt = torch.from_numpy(x).permute(0, 3, 1, 2)
    ref = (
        torch.nn.functional.interpolate(xt, scale_factor=2, mode="bilinear", align_corners=False)
        .permute(0, 2, 3, 1)
        .numpy()
    )
    mag = (
        torch.nn.functional.interpolate(xt.abs(), scale_factor=2, mode="bilinear", align_corners=False)
        .permute(0, 2, 3, 1)
        .numpy()
    )
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, gamma(8) * mag, BF16), "bilinear")


@pytest.mark.parametrize("precomputed", [False, True])
def test_grid_sample_matches_torch(device, precomputed):
    x = _image(2, 6, 7, 32)
    grid = (RNG.random((2, 5, 4, 2)) * 2.4 - 1.2).astype(np.float32)  # some points outside the image
    tt_grid = ttnn.from_torch(torch.from_numpy(grid), F32, layout=RM, device=device)
    if precomputed:
        tt_grid = ttnn.prepare_grid_sample_grid(tt_grid, [2, 6, 7, 32], output_dtype=F32)
        assert list(tt_grid.shape) == [2, 5, 4, 6]
    out = ttnn.grid_sample(_on(device, x), tt_grid, use_precomputed_grid=precomputed)
    xt = torch.from_numpy(x).permute(0, 3, 1, 2)
    g = torch.from_numpy(grid).double()
    ref = torch.nn.functional.grid_sample(xt, g, align_corners=False).permute(0, 2, 3, 1).numpy()
    mag = torch.nn.functional.grid_sample(xt.abs(), g, align_corners=False).permute(0, 2, 3, 1).numpy()
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, 1e-5 * mag, BF16), "grid_sample")


def test_fold_is_exact_and_convert_to_chw_wants_shards(device):
    x = _image(2, 6, 4, 3)
    dram = ttnn.fold(_on(device, x), 2, 2, padding=[1, 1, 0, 0])
    padded = np.pad(x, ((0, 0), (1, 1), (0, 0), (0, 0)))
    ref = padded.reshape(2, 4, 2, 2, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(2, 4, 2, 12)
    exact_equal(ttnn.to_numpy(dram).astype(np.float64), ref, "fold (DRAM)")
    l1 = ttnn.fold(
        ttnn.from_torch(torch.from_numpy(x).float(), BF16, device=device, memory_config=ttnn.L1_MEMORY_CONFIG),
        2,
        2,
        padding=[1, 0],
    )
    assert list(l1.shape) == [1, 1, 16, 12]
    rows = _image(1, 1, 64, 4).reshape(1, 1, 64, 4)
    with pytest.raises(ttnn.MeshnnValueError, match="must be sharded"):  # ttnn's op takes a height-sharded input
        ttnn.experimental.convert_to_chw(_on(device, rows, layout=TILE), dtype=BF16)


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_rotate_by_quarter_turns_and_fill(device, mode):
    x = _image(1, 6, 6, 4)
    # a quarter turn counter-clockwise (torchvision's sense, np.rot90 k=1) moves pixels exactly
    out = ttnn.to_numpy(ttnn.rotate(_on(device, x), 90.0, interpolation_mode=mode)).astype(np.float64)
    np.testing.assert_allclose(out, np.rot90(x, k=1, axes=(1, 2)), atol=1e-6)
    same = ttnn.to_numpy(ttnn.rotate(_on(device, x), 0.0, interpolation_mode=mode)).astype(np.float64)
    exact_equal(same, x, "rotate by 0")
    moved = ttnn.to_numpy(ttnn.rotate(_on(device, x), 45.0, center=(0.5, 0.5), fill=7.0)).astype(np.float64)
    assert moved[0, 0, 0, 0] == x[0, 0, 0, 0] and (moved[0, 5, 0] == 7.0).all()  # the far corner is outside


def test_config_tensor_in_dram_is_checked_and_changes_no_value(device):
    x = _image(1, 8, 8, 16)
    args = (1, 8, 8, 16, (2, 2), (2, 2), (0, 0))
    for pool, extra in ((ttnn.avg_pool2d, ()), (ttnn.max_pool2d, ((1, 1),))):
        plain = ttnn.to_torch(pool(_on(device, x), *args, *extra))
        in_dram = ttnn.to_torch(pool(_on(device, x), *args, *extra, config_tensor_in_dram=True))
        assert torch.equal(plain, in_dram)
        with pytest.raises(ttnn.MeshnnError, match="config_tensor_in_dram"):
            pool(_on(device, x), *args, *extra, config_tensor_in_dram="yes")
