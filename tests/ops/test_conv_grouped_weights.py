"""A grouped conv's prepared weight as ttnn prepares it: zero-padded to every input channel
(tt-metal prepare_conv2d_weights.cpp, convert_conv_weight_tensor_to_grouped_layout): ``[1, 1, KH*KW*IC, OC]``,
each output channel holding its group's input channels and exact zeros elsewhere; a 1-D depthwise conv
without bias keeps its ungrouped rows.  The convs with these weights match torch's grouped convs exactly
where every value is exact (small integers in bfloat16)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import MeshnnValueError
from meshnn.ops.conv.weights import group_blocks, grouped_layout

BF16 = ttnn.bfloat16
RNG = np.random.default_rng(54)


def _ints(shape) -> np.ndarray:
    """Small integers: exact in bfloat16, and their products and sums exact in float32."""
    return RNG.integers(-3, 4, shape).astype(np.float32)


@pytest.fixture(scope="module")
def device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    mesh.close()


def test_the_grouped_layout_zero_pads_each_group_to_every_input_channel():
    weight = _ints((6, 2, 3, 3))  # 6 out, 3 groups of 2 in
    dense = grouped_layout(weight, 3)
    assert dense.shape == (6, 6, 3, 3)
    for o in range(6):
        g = o // 2
        np.testing.assert_array_equal(dense[o, 2 * g : 2 * g + 2], weight[o])
        others = np.delete(dense[o], [2 * g, 2 * g + 1], axis=0)
        assert not others.any()
    np.testing.assert_array_equal(group_blocks(dense, 3), weight)
    assert grouped_layout(weight, 1) is weight


def _conv(device, x, weight, groups, *, bias=None, conv_config=None, kernel=(3, 3)):
    n, h, w, ic = x.shape
    return ttnn.conv2d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x), BF16),
        weight_tensor=weight,
        bias_tensor=bias,
        device=device,
        in_channels=ic,
        out_channels=6,
        batch_size=n,
        input_height=h,
        input_width=w,
        kernel_size=kernel,
        padding=(1, 1),
        groups=groups,
        conv_config=conv_config,
        return_weights_and_bias=True,
    )


def test_conv2d_prepares_a_grouped_weight_as_ttnn_and_computes_the_grouped_conv(device):
    """The prepared weight is [1, 1, 9 x 6, 6] (not 9 x 2 rows), zeros off its groups; the conv equals torch's."""
    x, weight = _ints((1, 5, 7, 6)), _ints((6, 2, 3, 3))
    out, (prepared, _) = _conv(device, x, ttnn.from_torch(torch.from_numpy(weight), BF16), 3)
    assert list(prepared.shape) == [1, 1, 9 * 6, 6]
    matrix = ttnn.to_numpy(prepared).reshape(3, 3, 6, 6)  # kh, kw, in channel, out channel
    np.testing.assert_array_equal(matrix.transpose(3, 2, 0, 1), grouped_layout(weight, 3))
    xt = torch.nn.functional.pad(torch.from_numpy(x).permute(0, 3, 1, 2), (1, 1, 1, 1))
    ref = torch.nn.functional.conv2d(xt, torch.from_numpy(weight), groups=3).permute(0, 2, 3, 1).reshape(1, 1, -1, 6)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ref.numpy())
    again, _ = _conv(device, x, prepared, 3)  # the prepared weight runs the same conv again
    np.testing.assert_array_equal(ttnn.to_numpy(again), ttnn.to_numpy(out))


def test_prepare_conv_weights_makes_the_same_zero_padded_weight(device):
    weight = _ints((6, 2, 3, 3))
    prepared = ttnn.prepare_conv_weights(
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight), BF16),
        input_memory_config=ttnn.DRAM_MEMORY_CONFIG,
        input_layout=ttnn.ROW_MAJOR_LAYOUT,
        weights_format="OIHW",
        in_channels=6,
        out_channels=6,
        batch_size=1,
        input_height=5,
        input_width=7,
        kernel_size=(3, 3),
        stride=(1, 1),
        padding=(1, 1),
        dilation=(1, 1),
        has_bias=False,
        groups=3,
        device=device,
        input_dtype=BF16,
    )
    assert list(prepared.shape) == [1, 1, 54, 6]
    np.testing.assert_array_equal(
        ttnn.to_numpy(prepared).reshape(3, 3, 6, 6).transpose(3, 2, 0, 1), grouped_layout(weight, 3)
    )


def test_a_grouped_weight_prepared_the_old_way_is_refused(device):
    """A device weight of [1, 1, 9 x IC/groups, OC] is not a prepared weight of a grouped conv any more."""
    x = _ints((1, 5, 7, 6))
    old = ttnn.from_torch(torch.from_numpy(_ints((1, 1, 18, 6))), BF16, layout=ttnn.TILE_LAYOUT, device=device)
    with pytest.raises(MeshnnValueError, match=r"\[1, 1, 54, 6\]"):
        _conv(device, x, old, 3)


def test_a_1d_depthwise_conv_without_bias_keeps_its_rows(device):
    """tt-metal gives a 1-D depthwise conv without bias its own depthwise layout, not the zero-padded one:
    meshnn keeps its [K, C] rows there."""
    x, weight = _ints((1, 12, 6)), _ints((6, 1, 3))
    out, (prepared, _) = ttnn.conv1d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x), BF16),
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight), BF16),
        device=device,
        in_channels=6,
        out_channels=6,
        batch_size=1,
        input_length=12,
        kernel_size=3,
        padding=1,
        groups=6,
        return_weights_and_bias=True,
    )
    assert list(prepared.shape) == [1, 1, 3, 6]
    ref = torch.nn.functional.conv1d(torch.from_numpy(x).permute(0, 2, 1), torch.from_numpy(weight), None, 1, 1, 1, 6)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ref.permute(0, 2, 1).reshape(1, 1, -1, 6).numpy())


def test_conv_transpose2d_prepares_its_grouped_weight_zero_padded(device):
    """A grouped transposed conv's weight is the equivalent conv's, zero-padded as a conv's."""
    x, weight = _ints((1, 4, 5, 6)), _ints((6, 2, 3, 3))  # IOHW: 6 in, 3 groups, 2 out each
    out, (prepared, _) = ttnn.conv_transpose2d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x), BF16),
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight), BF16),
        device=device,
        in_channels=6,
        out_channels=6,
        batch_size=1,
        input_height=4,
        input_width=5,
        kernel_size=(3, 3),
        stride=(2, 2),
        padding=(1, 1),
        groups=3,
        return_weights_and_bias=True,
    )
    assert list(prepared.shape) == [1, 1, 54, 6]
    ref = torch.nn.functional.conv_transpose2d(
        torch.from_numpy(x).permute(0, 3, 1, 2), torch.from_numpy(weight), None, 2, 1, groups=3
    )
    np.testing.assert_array_equal(ttnn.to_numpy(out), ref.permute(0, 2, 3, 1).reshape(1, 1, -1, 6).numpy())


def test_prepare_conv_weights_of_a_1d_depthwise_conv_keeps_its_rows(device):
    """tt-metal's is_1d_conv (a 1-high kernel over a 1-high input) with groups = channels and no bias: not
    zero-padded; the same conv with a bias is."""
    weight = ttnn.from_torch(torch.from_numpy(_ints((6, 1, 1, 3))), BF16)
    args = dict(
        weight_tensor=weight, input_memory_config=ttnn.DRAM_MEMORY_CONFIG, input_layout=ttnn.ROW_MAJOR_LAYOUT,
        weights_format="OIHW", in_channels=6, out_channels=6, batch_size=1, input_height=1, input_width=16,
        kernel_size=(1, 3), stride=(1, 1), padding=(0, 1), dilation=(1, 1), groups=6, device=device,
        input_dtype=BF16,
    )  # fmt: skip
    assert list(ttnn.prepare_conv_weights(**args, has_bias=False).shape) == [1, 1, 3, 6]
    assert list(ttnn.prepare_conv_weights(**args, has_bias=True).shape) == [1, 1, 18, 6]
