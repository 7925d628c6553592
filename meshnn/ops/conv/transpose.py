"""``ttnn.conv_transpose2d``: the transposed convolution of an input in ttnn's flattened NHWC
layout by a torch-layout ``[IC, OC/groups, KH, KW]`` weight (prepared here as the equivalent
conv's, or already prepared by ``ttnn.prepare_conv_transpose2d_weights``).  Output
``[1, 1, N*OH*OW, OC]`` with ``OH = (H-1)*stride - pad_top - pad_bottom + dilation*(KH-1) +
output_padding + 1`` (likewise OW).

Computed on every device with torch in float32 from the values the device holds, rounded once
into the output's format.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry
and config, and the conv package.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meshnn.errors import MeshnnValueError, NotImplementedByMeshnn
from meshnn.formats.dtypes import DataType
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.conv.config import Conv2dConfig, Conv2dSliceConfig, PaddingMode
from meshnn.ops.conv.conv2d import prepared_weight
from meshnn.ops.conv.geometry import Window, flat_input, flat_output, padding4, pair, positive, torch_module
from meshnn.ops.conv.running import (
    ConvRun,
    activation_of,
    check_returns,
    check_slice_config,
    on_device,
    output_memory,
    output_spec,
    results,
)
from meshnn.ops.conv.weights import (
    check_weight,
    conv_args,
    conv_as_transposed,
    conv_config_of,
    group_blocks,
    grouped_layout,
    host_values,
    is_prepared,
    place,
    prepared_bias,
    transposed_as_conv,
    weight_matrix,
    weight_oihw,
    weights_dtype,
)
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor, check_tensor


def out_size(size: int, kernel: int, stride: int, pads: int, dilation: int, output_padding: int) -> int:
    """A transposed conv's output size along one dimension (``pads``: both sides together)."""
    return (size - 1) * stride - pads + dilation * (kernel - 1) + output_padding + 1


def _compute(window: Window, dims: tuple[int, int], in_channels: int, groups: int, activation: Callable | None):
    """The per-device computation: torch's conv_transpose2d without padding, then the padding
    cropped away (asymmetric padding too) and the output padding added as zeros, then the bias."""

    def compute(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
        torch = torch_module()
        xt = torch.from_numpy(np.ascontiguousarray(window.nchw(x, in_channels), dtype=np.float32))
        oihw = group_blocks(weight_oihw(w, window.kernel), groups)
        wt = torch.from_numpy(conv_as_transposed(oihw, groups).astype(np.float32))
        full = torch.nn.functional.conv_transpose2d(
            xt, wt, stride=window.stride, dilation=window.dilation, groups=groups
        )
        top, _, left, _ = window.padding
        full = torch.nn.functional.pad(
            full, (0, max(0, left + dims[1] - full.shape[3]), 0, max(0, top + dims[0] - full.shape[2]))
        )
        out = full[:, :, top : top + dims[0], left : left + dims[1]].numpy()
        if b is not None:
            out = out + b.reshape(1, -1, 1, 1)
        return flat_output(activation(out) if activation is not None else out)

    return compute


def output_dims(op: str, window: Window, extra: tuple[int, ...]) -> tuple[int, int]:
    """The output's (height, width), checked: at least 1x1, ``output_padding`` (``extra``)
    smaller than the stride or the dilation."""
    pads = (window.padding[0] + window.padding[1], window.padding[2] + window.padding[3])
    dims = tuple(
        out_size(size, window.kernel[i], window.stride[i], pads[i], window.dilation[i], extra[i])
        for i, size in enumerate((window.height, window.width))
    )
    if min(dims) < 1 or any(extra[i] >= max(window.stride[i], window.dilation[i]) for i in (0, 1)):
        raise MeshnnValueError(
            f"ttnn.{op}: the output would be {list(dims)} (output_padding {list(extra)} must be smaller than the "
            "stride or dilation, and the output at least 1x1)"
        )
    return dims  # type: ignore[return-value]


@register(kind=OpKind.CONV, family=OpFamily.MATMUL, device_operation="Conv2dDeviceOperation")
def conv_transpose2d(
    *,
    input_tensor: Tensor,
    weight_tensor: Tensor,
    device: object,
    in_channels: int,
    out_channels: int,
    batch_size: int,
    input_height: int,
    input_width: int,
    kernel_size: tuple[int, int],
    stride: tuple[int, int] = (1, 1),
    padding: tuple[int, ...] = (0, 0),
    output_padding: tuple[int, int] = (0, 0),
    dilation: tuple[int, int] = (1, 1),
    groups: int = 1,
    dtype: DataType | None = None,
    bias_tensor: Tensor | None = None,
    conv_config: Conv2dConfig | None = None,
    compute_config: object = None,
    memory_config: MemoryConfig | None = None,
    dram_slice_config: Conv2dSliceConfig | None = None,
    mirror_kernel: bool = True,
    return_output_dim: bool = False,
    return_weights_and_bias: bool = False,
):
    """A transposed 2D convolution (see the module's text).  Returns the output, and with
    ``return_output_dim`` its ``[out_height, out_width]``, with ``return_weights_and_bias`` the
    prepared ``(weight, bias)``."""
    op = "conv_transpose2d"
    check_returns(op, return_output_dim, return_weights_and_bias)
    config = _checked_config(op, conv_config, mirror_kernel, dram_slice_config)
    check_compute_kernel_config(op, compute_config)
    ic, oc, groups, kernel = conv_args(op, in_channels, out_channels, groups, kernel_size)
    window = Window(
        positive(op, "batch_size", batch_size),
        positive(op, "input_height", input_height),
        positive(op, "input_width", input_width),
        kernel,
        pair(op, "stride", stride),  # type: ignore[arg-type]
        padding4(op, padding),
        pair(op, "dilation", dilation),  # type: ignore[arg-type]
    )
    dims = output_dims(op, window, pair(op, "output_padding", output_padding, least=0))
    tensor = check_tensor(input_tensor, f"ttnn.{op}: input_tensor")
    flat_input(op, tuple(tensor.shape), window, ic)
    memory = output_memory(op, tensor, memory_config, dram_slice_config, name="dram_slice_config")
    spec = output_spec(op, tensor, (1, 1, window.batch * dims[0] * dims[1], oc), dtype, config, memory)
    activation = activation_of(op, config)
    tensor, mesh = on_device(op, tensor, device)
    weight = _prepared(op, weight_tensor, (ic, oc, groups), kernel, config, mirror_kernel, mesh)
    bias = None if bias_tensor is None else prepared_bias(op, bias_tensor, oc, weight.dtype, mesh)
    inputs = (tensor, weight) if bias is None else (tensor, weight, bias)
    attrs = {"conv_config": config, "compute_kernel_config": compute_config, "memory_config": memory}
    attrs["slice_config"] = dram_slice_config
    run = ConvRun(op, mesh, inputs, spec, _compute(window, dims, ic, groups, activation), attrs)
    return results(
        run.launch(config, input_tensor), list(dims), (weight, bias), return_output_dim, return_weights_and_bias
    )


def _prepared(op: str, weight: object, channels: tuple[int, int, int], kernel, config, mirror: bool, mesh) -> Tensor:
    """The prepared weight: a prepared device tensor as it is, else an ``IOHW`` weight prepared."""
    ic, oc, groups = channels
    tensor = check_tensor(weight, f"ttnn.{op}: weight_tensor")
    dtype_of = lambda given: weights_dtype(op, config, given)  # noqa: E731
    if is_prepared(tensor):
        return prepared_weight(op, tensor, oc, ic // groups, kernel, dtype_of, mesh, groups)
    values = host_values(op, "weight_tensor", tensor)
    values = check_weight(op, values, ic, oc // groups, kernel)
    matrix = weight_matrix(grouped_layout(transposed_as_conv(values, groups, mirror), groups))
    return place(matrix, dtype_of(tensor.dtype), mesh)


def _checked_config(op: str, conv_config: object, mirror_kernel: object, dram_slice_config: object) -> Conv2dConfig:
    """``conv_config`` checked (replicate padding refused), with ``mirror_kernel`` and ``dram_slice_config``."""
    check_slice_config(op, dram_slice_config, "dram_slice_config")
    if not isinstance(mirror_kernel, bool):
        raise MeshnnValueError(f"ttnn.{op}: mirror_kernel must be a bool, got {mirror_kernel!r}")
    return _zero_padded(op, conv_config_of(op, conv_config))


def _zero_padded(op: str, config: Conv2dConfig) -> Conv2dConfig:
    """``config``, refused by name when it asks for replicate padding (not implemented here)."""
    if config.padding_mode is not PaddingMode.Zeros:
        raise NotImplementedByMeshnn(
            f"ttnn.{op}: conv_config.padding_mode={config.padding_mode} (replicate padding of a transposed conv) is "
            "not implemented by meshnn yet"
        )
    return config
