"""Bad calls of the pools and resampling ops (``ttnn.max_pool2d`` / ``avg_pool2d``, the adaptive
pools, ``global_avg_pool2d``, ``upsample``, ``grid_sample``, ``prepare_grid_sample_grid``): each
is refused, naming the argument, before anything is allocated."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def _pool(function, e, **changes):
    args = dict(
        input_tensor=e.a,
        batch_size=1,
        input_h=3,
        input_w=1,
        channels=40,
        kernel_size=(1, 1),
        stride=(1, 1),
        padding=(0, 0),
    )
    return function(**{**args, **changes})


def _adaptive(function, e, **changes):
    args = dict(input_tensor=e.a, batch_size=1, input_h=3, input_w=1, channels=40, output_size=(1, 1))
    return function(**{**args, **changes})


def rows() -> list[Case]:
    return [
        Case(
            "max_pool2d",
            "kernel past the input",
            lambda e: _pool(ttnn.max_pool2d, e, kernel_size=(5, 5), dilation=(1, 1)),
            VALUE,
            "kernel",
        ),
        Case(
            "max_pool2d",
            "ceil_mode an int",
            lambda e: _pool(ttnn.max_pool2d, e, dilation=(1, 1), ceil_mode=1),
            TYPE,
            "ceil_mode",
        ),
        Case(
            "avg_pool2d",
            "divisor_override 0",
            lambda e: _pool(ttnn.avg_pool2d, e, divisor_override=0),
            VALUE,
            "divisor_override",
        ),
        Case(
            "avg_pool2d", "input rows do not fit", lambda e: _pool(ttnn.avg_pool2d, e, input_h=4), VALUE, "input_tensor"
        ),
        Case(
            "adaptive_avg_pool2d",
            "output larger than the input",
            lambda e: _adaptive(ttnn.adaptive_avg_pool2d, e, output_size=(4, 4)),
            VALUE,
            "output_size",
        ),
        Case(
            "adaptive_max_pool2d",
            "input on the host",
            lambda e: _adaptive(ttnn.adaptive_max_pool2d, e, input_tensor=e.host),
            VALUE,
            "input_tensor",
        ),
        Case(
            "max_pool2d",
            "dram_slice_config a string",
            lambda e: _pool(ttnn.max_pool2d, e, dilation=(1, 1), dram_slice_config="height"),
            TYPE,
            "dram_slice_config",
        ),
        Case(
            "Op2DSliceConfig",
            "num_slices negative",
            lambda e: ttnn.Op2DSliceConfig(slice_type=ttnn.Op2DDRAMSliceWidth, num_slices=-1),
            VALUE,
            "num_slices",
        ),
        Case("global_avg_pool2d", "input not 4D", lambda e: ttnn.global_avg_pool2d(e.a), VALUE, "input_tensor"),
        Case("rotate", "expand True", lambda e: ttnn.rotate(e.a, 30.0, expand=True), VALUE, "expand"),
        Case(
            "rotate",
            "mode cubic",
            lambda e: ttnn.rotate(e.a, 30.0, interpolation_mode="cubic"),
            VALUE,
            "interpolation_mode",
        ),
        Case("rotate", "angle a string", lambda e: ttnn.rotate(e.a, "30"), TYPE, "angle"),
        Case("upsample", "mode cubic", lambda e: ttnn.upsample(e.a, 2, mode="cubic"), VALUE, "mode"),
        Case("upsample", "scale_factor 0", lambda e: ttnn.upsample(e.a, 0), VALUE, "scale_factor"),
        Case(
            "grid_sample",
            "padding_mode border",
            lambda e: ttnn.grid_sample(e.a, e.a, padding_mode="border"),
            VALUE,
            "padding_mode",
        ),
        Case(
            "prepare_grid_sample_grid",
            "grid not [N, HO, WO, 2]",
            lambda e: ttnn.prepare_grid_sample_grid(e.a, [1, 4, 4, 8]),
            VALUE,
            "grid",
        ),
    ]
