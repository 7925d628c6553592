"""ttnn.conv2d / conv1d / conv_transpose2d / experimental.conv3d and the weight preparation ops
against float64 torch on the values the device holds (the input, and the weight rounded into the
weights dtype), within the float32 dot-product error plus one rounding into the output dtype."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, BFP8, F32, RM, TILE, assert_within, exceeds, gamma, output_bound, quantized

RNG = np.random.default_rng(35)


def _randn(shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    mesh.close()


def _nhwc(n, c, h, w, dtype=BF16):
    x = quantized(_randn((n, h, w, c)), dtype, TILE if dtype is BFP8 else RM)
    return x


def _conv_ref(x_nhwc, weight, bias, stride, pads, dilation, groups, mode="constant"):
    """float64 conv of NHWC values with (top, bottom, left, right) padding (zeros, or ``mode``'s);
    the bound's magnitude sum|x||w| too."""
    t, b, left, r = pads
    xt = torch.nn.functional.pad(torch.from_numpy(x_nhwc).permute(0, 3, 1, 2), (left, r, t, b), mode=mode)
    wt = torch.from_numpy(weight)
    ref = torch.nn.functional.conv2d(
        xt, wt, None if bias is None else torch.from_numpy(bias), stride, 0, dilation, groups
    )
    mag = torch.nn.functional.conv2d(xt.abs(), wt.abs(), None, stride, 0, dilation, groups)
    if bias is not None:
        mag = mag + torch.from_numpy(np.abs(bias)).reshape(1, -1, 1, 1)
    flat = lambda v: v.permute(0, 2, 3, 1).reshape(1, 1, -1, v.shape[1]).numpy()  # noqa: E731
    return flat(ref), flat(mag)


CASES = [  # n, ic, oc, h, w, kernel, stride, padding, dilation, groups
    (1, 8, 16, 9, 7, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (2, 6, 4, 10, 8, (3, 2), (2, 1), (1, 2, 0, 3), (1, 1), 2),
    (1, 4, 8, 12, 12, (3, 3), (1, 2), (2, 2), (2, 2), 4),
    (2, 8, 16, 5, 6, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # a pointwise conv: the matmul path
]


@pytest.mark.parametrize("case", CASES, ids=["plain", "asym_groups", "dilated_grouped", "pointwise"])
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_conv2d_matches_float64_torch(device, case, out_dtype):
    n, ic, oc, h, w, kernel, stride, padding, dilation, groups = case
    x = _nhwc(n, ic, h, w)
    weight = quantized(_randn((oc, ic // groups, *kernel)), BF16, RM)
    bias = quantized(_randn(oc), BF16, RM)
    out, dims, (w_dev, b_dev) = ttnn.conv2d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x).float(), BF16),
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight).float(), BF16),
        bias_tensor=ttnn.from_torch(torch.from_numpy(bias).float().reshape(1, 1, 1, oc), BF16),
        device=device,
        in_channels=ic,
        out_channels=oc,
        batch_size=n,
        input_height=h,
        input_width=w,
        kernel_size=kernel,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
        dtype=out_dtype,
        return_output_dim=True,
        return_weights_and_bias=True,
    )
    pads = padding if len(padding) == 4 else (padding[0], padding[0], padding[1], padding[1])
    ref, mag = _conv_ref(x, weight, bias, stride, pads, dilation, groups)
    assert n * dims[0] * dims[1] == ref.shape[2]
    assert list(out.shape) == [1, 1, ref.shape[2], oc] and out.layout is TILE
    bound = output_bound(ref, gamma(ic * kernel[0] * kernel[1] + 1) * mag, out_dtype)
    got = ttnn.to_numpy(out).astype(np.float64)
    assert_within(got, ref, bound, "conv2d")
    assert exceeds(ref + 3 * bound + 1e-3, ref, bound)
    again = ttnn.conv2d(  # the prepared weight and bias run the same conv again
        input_tensor=ttnn.from_torch(torch.from_numpy(x).float(), BF16),
        weight_tensor=w_dev,
        bias_tensor=b_dev,
        device=device,
        in_channels=ic,
        out_channels=oc,
        batch_size=n,
        input_height=h,
        input_width=w,
        kernel_size=kernel,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
        dtype=out_dtype,
    )
    np.testing.assert_array_equal(ttnn.to_numpy(again), got)


@pytest.mark.parametrize("mode", [ttnn.PaddingMode.Replicate, ttnn.PaddingMode.Zeros])
def test_conv2d_padding_mode_replicates_the_edge_pixels(device, mode):
    """tt-metal of 2026's ``Conv2dConfig(padding_mode=ttnn.PaddingMode.Replicate)``: the padded border
    repeats the nearest edge pixel (torch's ``padding_mode="replicate"``)."""
    n, ic, oc, h, w, kernel, pads = 1, 4, 8, 7, 9, (3, 3), (2, 1, 1, 2)
    x = _nhwc(n, ic, h, w)
    weight = quantized(_randn((oc, ic, *kernel)), BF16, RM)
    out = ttnn.conv2d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x).float(), BF16),
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight).float(), BF16),
        device=device, in_channels=ic, out_channels=oc, batch_size=n, input_height=h, input_width=w,
        kernel_size=kernel, padding=pads, dtype=F32, conv_config=ttnn.Conv2dConfig(padding_mode=mode),
    )  # fmt: skip
    torch_mode = "replicate" if mode is ttnn.PaddingMode.Replicate else "constant"
    ref, mag = _conv_ref(x, weight, None, (1, 1), pads, (1, 1), 1, torch_mode)
    other, _ = _conv_ref(
        x, weight, None, (1, 1), pads, (1, 1), 1, "constant" if torch_mode == "replicate" else "replicate"
    )
    bound = output_bound(ref, gamma(ic * 9 + 1) * mag, F32)
    got = ttnn.to_numpy(out).astype(np.float64)
    assert_within(got, ref, bound, "conv2d")
    assert exceeds(got, other, bound)  # the other mode's border differs beyond the bound
    with pytest.raises(ttnn.MeshnnTypeError, match="padding_mode"):
        ttnn.Conv2dConfig(padding_mode="replicate")


def test_conv2d_bfloat8_weights_activation_and_row_major_output(device):
    x = _nhwc(1, 16, 8, 8, BFP8)
    weight = _randn((32, 16, 3, 3))
    config = ttnn.Conv2dConfig(
        weights_dtype=BFP8, activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU), output_layout=RM
    )
    out = ttnn.conv2d(
        input_tensor=ttnn.from_torch(
            torch.from_numpy(x.reshape(1, 1, 64, 16)).float(), BFP8, layout=TILE, device=device
        ),
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight).float(), F32),
        device=device,
        in_channels=16,
        out_channels=32,
        batch_size=1,
        input_height=8,
        input_width=8,
        kernel_size=(3, 3),
        padding=(1, 1),
        conv_config=config,
        dtype=BF16,
    )
    # the device multiplies by the weight rounded into bfloat8_b tiles of the [KH*KW*IC, OC] matrix
    matrix = np.ascontiguousarray(weight.transpose(2, 3, 1, 0).reshape(1, 1, 144, 32))
    held = quantized(matrix, BFP8, TILE).reshape(3, 3, 16, 32).transpose(3, 2, 0, 1)
    ref, mag = _conv_ref(x, np.ascontiguousarray(held), None, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    bound = output_bound(np.maximum(ref, 0), gamma(145) * mag, BF16)
    assert out.layout is RM and out.dtype is BF16
    assert_within(ttnn.to_numpy(out).astype(np.float64), np.maximum(ref, 0), bound, "conv2d relu")


def test_prepare_conv_weights_gives_the_same_conv(device):
    x = _nhwc(2, 4, 6, 6)
    weight = quantized(_randn((8, 4, 3, 3)), BF16, RM)
    args = dict(
        in_channels=4,
        out_channels=8,
        batch_size=2,
        input_height=6,
        input_width=6,
        kernel_size=(3, 3),
        stride=(1, 1),
        padding=(1, 1),
        dilation=(1, 1),
        groups=1,
        device=device,
    )
    prepared = ttnn.prepare_conv_weights(
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight).float(), BF16),
        input_memory_config=ttnn.L1_MEMORY_CONFIG,
        input_layout=RM,
        weights_format="OIHW",
        has_bias=False,
        input_dtype=BF16,
        **args,
    )
    assert list(prepared.shape) == [1, 1, 36, 8] and prepared.storage_type() == ttnn.StorageType.DEVICE
    tt_x = ttnn.from_torch(torch.from_numpy(x).float(), BF16)
    conv_args = {k: v for k, v in args.items() if k not in ("stride", "dilation", "groups", "padding")}
    direct = ttnn.conv2d(
        input_tensor=tt_x,
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight).float(), BF16),
        padding=(1, 1),
        **conv_args,
    )
    via = ttnn.conv2d(input_tensor=tt_x, weight_tensor=prepared, padding=(1, 1), **conv_args)
    np.testing.assert_array_equal(ttnn.to_numpy(via), ttnn.to_numpy(direct))
    with pytest.raises(ttnn.MeshnnValueError, match="prepared"):
        ttnn.conv2d(input_tensor=tt_x, weight_tensor=prepared, **{**conv_args, "kernel_size": (1, 1)})


def test_a_conv1d_weight_of_rank_3_prepares_for_a_1_by_k_kernel(device):
    """tt-metal of 2026 reads conv1d's ``[O, I, K]`` weight as ``[O, I, 1, K]`` over a height-1 input."""
    weight = quantized(_randn((6, 4, 5)), BF16, RM)
    args = dict(in_channels=4, out_channels=6, batch_size=1, input_height=1, input_width=20, kernel_size=(1, 5))
    common = dict(input_memory_config=ttnn.DRAM_MEMORY_CONFIG, input_layout=RM, weights_format="OIHW")
    common |= dict(stride=(1, 1), padding=(0, 2), dilation=(1, 1), has_bias=False, groups=1, device=device)
    flat, four = (
        ttnn.prepare_conv_weights(
            weight_tensor=ttnn.from_torch(torch.from_numpy(v).float(), BF16), input_dtype=BF16, **common, **args
        )
        for v in (weight, weight[:, :, None, :])
    )
    np.testing.assert_array_equal(ttnn.to_numpy(flat), ttnn.to_numpy(four))


def test_conv1d_matches_torch(device):
    x = quantized(_randn((2, 20, 6)), BF16, RM)  # N, L, C
    weight = quantized(_randn((6, 1, 4)), BF16, RM)  # depthwise
    out, length = ttnn.conv1d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x).float(), BF16),
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight).float(), BF16),
        device=device,
        in_channels=6,
        out_channels=6,
        batch_size=2,
        input_length=20,
        kernel_size=4,
        stride=2,
        padding=3,
        groups=6,
        return_output_dim=True,
    )
    xt, wt = torch.from_numpy(x).permute(0, 2, 1), torch.from_numpy(weight)
    ref = torch.nn.functional.conv1d(xt, wt, None, 2, 3, 1, 6).permute(0, 2, 1).reshape(1, 1, -1, 6).numpy()
    mag = torch.nn.functional.conv1d(xt.abs(), wt.abs(), None, 2, 3, 1, 6).permute(0, 2, 1).reshape(1, 1, -1, 6).numpy()
    assert length == 12
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, gamma(5) * mag, BF16), "conv1d")


@pytest.mark.parametrize("mirror", [True, False])
def test_conv_transpose2d_matches_torch(device, mirror):
    n, ic, oc, h, w, groups = 1, 4, 6, 5, 7, 2
    x = _nhwc(n, ic, h, w)
    weight = quantized(_randn((ic, oc // groups, 3, 3)), BF16, RM)
    given = weight if mirror else np.ascontiguousarray(weight[:, :, ::-1, ::-1])
    out, dims = ttnn.conv_transpose2d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x).float(), BF16),
        weight_tensor=ttnn.from_torch(torch.from_numpy(given).float(), BF16),
        device=device,
        in_channels=ic,
        out_channels=oc,
        batch_size=n,
        input_height=h,
        input_width=w,
        kernel_size=(3, 3),
        stride=(2, 2),
        padding=(1, 1),
        output_padding=(1, 0),
        groups=groups,
        mirror_kernel=mirror,
        return_output_dim=True,
    )
    xt, wt = torch.from_numpy(x).permute(0, 3, 1, 2), torch.from_numpy(weight)
    ref = torch.nn.functional.conv_transpose2d(xt, wt, None, 2, 1, (1, 0), groups)
    mag = torch.nn.functional.conv_transpose2d(xt.abs(), wt.abs(), None, 2, 1, (1, 0), groups)
    assert dims == [ref.shape[2], ref.shape[3]] == [10, 13]
    flat = lambda v: v.permute(0, 2, 3, 1).reshape(1, 1, -1, oc).numpy()  # noqa: E731
    assert_within(
        ttnn.to_numpy(out).astype(np.float64),
        flat(ref),
        output_bound(flat(ref), gamma(19) * flat(mag), BF16),
        "conv_transpose2d",
    )


def test_conv3d_matches_torch(device):
    n, c, d, h, w, oc = 1, 32, 4, 5, 6, 8
    x = quantized(_randn((n, d, h, w, c)), BF16, RM)
    weight = quantized(_randn((oc, c, 3, 3, 3)), BF16, RM)
    matrix = np.ascontiguousarray(weight.transpose(2, 3, 4, 1, 0).reshape(-1, oc))
    config = ttnn.Conv3dConfig(
        output_channels=oc, kernel_size=(3, 3, 3), stride=(1, 2, 1), padding=(0, 1, 1), padding_mode="replicate"
    )
    out = ttnn.experimental.conv3d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x).float(), BF16, device=device),
        weight_tensor=ttnn.from_torch(torch.from_numpy(matrix).float(), BF16, layout=TILE, device=device),
        config=config,
    )
    xt = torch.nn.functional.pad(torch.from_numpy(x).permute(0, 4, 1, 2, 3), (1, 1, 1, 1, 0, 0), mode="replicate")
    ref = torch.nn.functional.conv3d(xt, torch.from_numpy(weight), None, (1, 2, 1)).permute(0, 2, 3, 4, 1).numpy()
    mag = (
        torch.nn.functional.conv3d(xt.abs(), torch.from_numpy(np.abs(weight)), None, (1, 2, 1))
        .permute(0, 2, 3, 4, 1)
        .numpy()
    )
    assert list(out.shape) == [1, 2, 3, 6, 8]
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, gamma(865) * mag, BF16), "conv3d")


@pytest.mark.parametrize("prepare", [True, False], ids=["prepared", "host_weight"])
def test_conv3d_of_tt_metal_2026_groups_dilation_and_its_weight_preparation(device, prepare):
    """tt-metal of 2026's form: the geometry as conv3d's keywords, dilation, ``prepare_conv3d_weights``
    (groups made whole, channels aligned to 32, C_in_block blocks) or a torch-layout host weight the
    op prepares itself; against float64 torch's grouped, dilated conv."""
    n, c, d, h, w, oc, groups = 1, 12, 5, 6, 7, 8, 2
    x = np.zeros((n, d, h, w, 32), np.float32)  # channels padded to the alignment, as ttnn's input is
    x[..., :c] = quantized(_randn((n, d, h, w, c)), BF16, RM)
    weight = quantized(_randn((oc, c // groups, 2, 3, 2)), BF16, RM)
    bias = quantized(_randn(oc), BF16, RM)
    config = ttnn.Conv3dConfig(C_in_block=16, dilation=(1, 2, 2))
    host = ttnn.from_torch(torch.from_numpy(weight).float(), BF16)
    given = host
    if prepare:
        given = ttnn.experimental.prepare_conv3d_weights(
            weight_tensor=host, groups=groups, C_in_block=16, alignment=32, device=device
        )
        assert list(given.shape) == [2 * 3 * 2 * 32, oc]  # (channel block, kd, kh, kw, channel) rows
    out = ttnn.experimental.conv3d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x), BF16, device=device),
        weight_tensor=given,
        bias_tensor=ttnn.from_torch(torch.from_numpy(bias).reshape(1, -1), BF16, layout=TILE, device=device),
        device=device, config=config, dtype=F32, output_channels=oc, kernel_size=(2, 3, 2), stride=(1, 1, 2),
        padding=(1, 0, 1), dilation=(1, 2, 2), groups=groups,
    )  # fmt: skip
    xt = torch.from_numpy(x[..., :c].astype(np.float64)).permute(0, 4, 1, 2, 3)
    wt = torch.from_numpy(weight.astype(np.float64))
    args = dict(stride=(1, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 2), groups=groups)
    ref = torch.nn.functional.conv3d(xt, wt, torch.from_numpy(bias.astype(np.float64)), **args)
    mag = torch.nn.functional.conv3d(xt.abs(), wt.abs(), torch.from_numpy(np.abs(bias.astype(np.float64))), **args)
    ref, mag = (v.permute(0, 2, 3, 4, 1).numpy() for v in (ref, mag))
    assert list(out.shape) == list(ref.shape)
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, gamma(13) * mag, F32), "conv3d")
    with pytest.raises(ttnn.MeshnnValueError, match="Device must be provided"):
        ttnn.experimental.conv3d(
            input_tensor=ttnn.from_torch(torch.from_numpy(x), BF16, device=device), weight_tensor=host,
            dtype=F32, output_channels=oc, kernel_size=(2, 3, 2),
        )  # fmt: skip
    with pytest.raises(ttnn.MeshnnValueError, match="dilation must be 3 ints >= 1"):
        ttnn.Conv3dConfig(dilation=(1, 0, 1))


def test_conv3d_keywords_beside_an_old_form_config_are_applied_not_dropped(device):
    x = ttnn.from_torch(torch.from_numpy(quantized(_randn((1, 5, 5, 5, 32)), BF16, RM)), BF16, device=device)
    w = ttnn.from_torch(torch.from_numpy(quantized(_randn((8 * 32, 8)), BF16, RM)), BF16, device=device)
    old = ttnn.Conv3dConfig(output_channels=8, kernel_size=(2, 2, 2), stride=(1, 1, 1), padding=(0, 0, 0))
    plain = ttnn.experimental.conv3d(input_tensor=x, weight_tensor=w, config=old)
    dilated = ttnn.experimental.conv3d(input_tensor=x, weight_tensor=w, config=old, dilation=(2, 2, 2))
    assert list(plain.shape) == [1, 4, 4, 4, 8] and list(dilated.shape) == [1, 3, 3, 3, 8]
    with pytest.raises(ttnn.MeshnnValueError, match="dtype must be given"):
        ttnn.experimental.conv3d(input_tensor=x, weight_tensor=w, output_channels=8, kernel_size=(2, 2, 2))


def test_conv_configs_check_their_fields():
    config = ttnn.Conv2dConfig()
    config.act_block_h_override = 64
    assert config.act_block_h_override == 64 and config.output_layout is TILE
    with pytest.raises(ttnn.MeshnnValueError, match="act_block_h_override"):
        config.act_block_h_override = 48
    assert ttnn.Conv2dL1FullSliceConfig.slice_type is ttnn.Conv2dL1Full
    assert ttnn.Conv2dSliceConfig(slice_type=ttnn.Conv2dDRAMSliceWidth, num_slices=4).in_dram


def test_golden_function_is_ttnns_reference():
    golden = ttnn.get_golden_function(ttnn.conv2d)
    x = torch.randn(1, 1, 16, 3)
    weight = torch.randn(2, 3, 3, 3)
    out = golden(x, weight, 3, 2, 1, 4, 4, (3, 3), (1, 1), (1, 1), bias_tensor=torch.zeros(2))
    ref = torch.nn.functional.conv2d(x.reshape(1, 4, 4, 3).permute(0, 3, 1, 2), weight, None, 1, 1)
    torch.testing.assert_close(out, ref.permute(0, 2, 3, 1).reshape(1, 1, 16, 2))


def test_deallocate_activation_frees_a_device_input(device):
    args = dict(in_channels=4, out_channels=8, batch_size=1, input_height=5, input_width=5, kernel_size=(3, 3))
    weight = ttnn.from_torch(torch.ones(8, 4, 3, 3), BF16)
    kept = ttnn.from_torch(torch.ones(1, 5, 5, 4), BF16, device=device)
    ttnn.conv2d(input_tensor=kept, weight_tensor=weight, device=device, **args)
    assert kept.is_allocated()
    freed = ttnn.from_torch(torch.ones(1, 5, 5, 4), BF16, device=device)
    config = ttnn.Conv2dConfig(deallocate_activation=True)
    out = ttnn.conv2d(input_tensor=freed, weight_tensor=weight, device=device, conv_config=config, **args)
    assert not freed.is_allocated()
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.full((1, 1, 9, 8), 36.0, np.float32))
