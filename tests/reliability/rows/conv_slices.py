"""Bad slice configs of conv1d and conv_transpose2d and its weight preparation (tt-metal of 2026's
``slice_config`` / ``dram_slice_config`` / ``output_padding``): refused, naming the argument, before anything
is allocated."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def _conv1d(e, **changes):
    args = dict(
        input_tensor=e.a,
        weight_tensor=ttnn.from_torch(np.ones((4, 2, 3), np.float32), ttnn.float32),
        device=e.mesh,
        in_channels=2,
        out_channels=4,
        batch_size=1,
        input_length=8,
        kernel_size=3,
    )
    return ttnn.conv1d(**{**args, **changes})


def _transpose(e, **changes):
    args = dict(
        input_tensor=e.a,
        weight_tensor=ttnn.from_torch(np.ones((2, 4, 3, 3), np.float32), ttnn.float32),
        device=e.mesh,
        in_channels=2,
        out_channels=4,
        batch_size=1,
        input_height=4,
        input_width=4,
        kernel_size=(3, 3),
    )
    return ttnn.conv_transpose2d(**{**args, **changes})


def _prepare_transposed(e, **changes):
    args = dict(
        weight_tensor=ttnn.from_torch(np.ones((2, 4, 3, 3), np.float32), ttnn.float32),
        input_memory_config=ttnn.DRAM_MEMORY_CONFIG, input_layout=ttnn.ROW_MAJOR_LAYOUT, weights_format="IOHW",
        in_channels=2, out_channels=4, batch_size=1, input_height=4, input_width=4, kernel_size=(3, 3),
        stride=(2, 2), padding=(1, 1), dilation=(1, 1), has_bias=False, groups=1, device=e.mesh,
        input_dtype=ttnn.bfloat16,
    )  # fmt: skip
    return ttnn.prepare_conv_transpose2d_weights(**{**args, **changes})


def _height_slices():
    return ttnn.Conv2dSliceConfig(slice_type=ttnn.Conv2dSliceConfig.SliceTypeEnum.DRAMSliceHeight, num_slices=2)


def rows() -> list[Case]:
    return [
        Case("conv1d", "slice_config not a Conv2dSliceConfig", lambda e: _conv1d(e, slice_config="width"), TYPE,
             "slice_config"),
        Case("conv1d", "DRAM height slices", lambda e: _conv1d(e, slice_config=_height_slices()), VALUE,
             "slice_config"),
        Case("conv_transpose2d", "dram_slice_config not a Conv2dSliceConfig",
             lambda e: _transpose(e, dram_slice_config=4), TYPE, "dram_slice_config"),
        Case("prepare_conv_transpose2d_weights", "negative output_padding",
             lambda e: _prepare_transposed(e, output_padding=(-1, 0)), VALUE, "output_padding"),
        Case("prepare_conv_transpose2d_weights", "dram_slice_config not a Conv2dSliceConfig",
             lambda e: _prepare_transposed(e, dram_slice_config="width"), TYPE, "dram_slice_config"),
    ]  # fmt: skip
