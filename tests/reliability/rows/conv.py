"""Bad calls of the convolutions, their weight preparation, configs and CNN data movement
(``ttnn.conv2d`` / ``conv1d`` / ``conv_transpose2d`` / ``experimental.conv3d``,
``prepare_conv_*``, ``Conv2dConfig`` / ``Conv2dSliceConfig`` / ``Conv3dConfig``, ``fold``,
``experimental.convert_to_chw``): each is refused, naming the argument, before anything is
allocated."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case

_W = ttnn.from_torch(np.ones((4, 2, 3, 3), np.float32), ttnn.float32)  # OIHW: 4 out, 2 in, 3x3


def _conv2d(e, **changes):
    args = dict(
        input_tensor=e.a,
        weight_tensor=_W,
        device=e.mesh,
        in_channels=2,
        out_channels=4,
        batch_size=1,
        input_height=4,
        input_width=4,
        kernel_size=(3, 3),
    )
    return ttnn.conv2d(**{**args, **changes})


def _prepare(function, e, **changes):
    args = dict(
        input_memory_config=ttnn.DRAM_MEMORY_CONFIG,
        input_layout=ttnn.ROW_MAJOR_LAYOUT,
        in_channels=2,
        out_channels=4,
        batch_size=1,
        input_height=4,
        input_width=4,
        kernel_size=(3, 3),
        stride=(1, 1),
        padding=(0, 0),
        dilation=(1, 1),
        groups=1,
        device=e.mesh,
        input_dtype=ttnn.bfloat16,
    )
    return function(**{**args, **changes})


def _conv3d_config(**changes):
    args = dict(output_channels=4, kernel_size=(1, 1, 1), stride=(1, 1, 1), padding=(0, 0, 0))
    return ttnn.Conv3dConfig(**{**args, **changes})


def rows() -> list[Case]:
    return [
        Case("conv2d", "kernel_size of three", lambda e: _conv2d(e, kernel_size=(3, 3, 3)), TYPE, "kernel_size"),
        Case("conv2d", "groups do not divide", lambda e: _conv2d(e, groups=3), VALUE, "groups"),
        Case("conv2d", "input rows do not fit", lambda e: _conv2d(e), VALUE, "input_tensor"),
        Case("conv2d", "conv_config a dict", lambda e: _conv2d(e, conv_config={}), TYPE, "conv_config"),
        Case("conv2d", "padding of three", lambda e: _conv2d(e, padding=(1, 1, 1)), TYPE, "padding"),
        Case("conv2d", "kernel past the input", lambda e: _conv2d(e, kernel_size=(9, 9)), VALUE, "kernel"),
        Case(
            "conv1d",
            "stride 0",
            lambda e: ttnn.conv1d(
                input_tensor=e.a,
                weight_tensor=_W,
                device=e.mesh,
                in_channels=2,
                out_channels=4,
                batch_size=1,
                input_length=4,
                kernel_size=3,
                stride=0,
            ),
            VALUE,
            "stride",
        ),
        Case(
            "conv_transpose2d",
            "output_padding not below the stride",
            lambda e: ttnn.conv_transpose2d(
                input_tensor=e.a,
                weight_tensor=_W,
                device=e.mesh,
                in_channels=4,
                out_channels=2,
                batch_size=1,
                input_height=4,
                input_width=4,
                kernel_size=(3, 3),
                output_padding=(1, 1),
            ),
            VALUE,
            "output_padding",
        ),
        Case(
            "prepare_conv_weights",
            "weights_format HWIO",
            lambda e: _prepare(ttnn.prepare_conv_weights, e, weight_tensor=_W, weights_format="HWIO", has_bias=False),
            VALUE,
            "weights_format",
        ),
        Case(
            "prepare_conv_bias",
            "bias of the wrong count",
            lambda e: _prepare(ttnn.prepare_conv_bias, e, bias_tensor=_W),
            VALUE,
            "bias_tensor",
        ),
        Case(
            "prepare_conv_transpose2d_weights",
            "weights_format OIHW",
            lambda e: _prepare(
                ttnn.prepare_conv_transpose2d_weights, e, weight_tensor=_W, weights_format="OIHW", has_bias=False
            ),
            VALUE,
            "weights_format",
        ),
        Case(
            "prepare_conv_transpose2d_bias",
            "input_layout a string",
            lambda e: _prepare(ttnn.prepare_conv_transpose2d_bias, e, bias_tensor=_W, input_layout="RM"),
            TYPE,
            "input_layout",
        ),
        Case(
            "Conv2dConfig",
            "act_block_h_override not a multiple of 32",
            lambda e: ttnn.Conv2dConfig(act_block_h_override=33),
            VALUE,
            "act_block_h_override",
        ),
        Case("Conv2dConfig", "an unknown field", lambda e: ttnn.Conv2dConfig(act_block=32), TYPE, "act_block"),
        Case(
            "Conv1dConfig",
            "weights_dtype uint32",
            lambda e: ttnn.Conv1dConfig(weights_dtype=ttnn.uint32),
            VALUE,
            "weights_dtype",
        ),
        Case(
            "Conv2dSliceConfig",
            "slice_type a string",
            lambda e: ttnn.Conv2dSliceConfig(slice_type="L1"),
            TYPE,
            "slice_type",
        ),
        Case(
            "Conv3dConfig",
            "padding_mode circular",
            lambda e: _conv3d_config(padding_mode="circular"),
            VALUE,
            "padding_mode",
        ),
        Case(
            "experimental.prepare_conv3d_weights",
            "a rank-4 weight",
            lambda e: ttnn.experimental.prepare_conv3d_weights(weight_tensor=e.host, device=e.mesh),
            VALUE,
            "OC, C/groups, KD, KH, KW",
        ),
        Case(  # (ttnn's class, which tt-metal's model configs name in annotations)
            "GrayskullComputeKernelConfig",
            "math_fidelity a string",
            lambda e: ttnn.GrayskullComputeKernelConfig(math_fidelity="HiFi4"),
            TYPE,
            "math_fidelity",
        ),
        Case("fold", "input not 4D", lambda e: ttnn.fold(e.rm, 2, 2), VALUE, "input"),
        Case("fold", "stride 0", lambda e: ttnn.fold(e.rm, 0, 2), VALUE, "stride_h"),
    ]
