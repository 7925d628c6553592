"""``ttnn.max_pool2d`` and ``ttnn.avg_pool2d`` over an input in ttnn's flattened NHWC layout
(``[1, 1, N*H*W, C]`` or ``[N, H, W, C]``), writing ``[1, 1, N*OH*OW, C]``.

ttnn's semantics: padding ``[h, w]`` or ``[top, bottom, left, right]``; max pool pads with -inf,
avg pool with zeros; ``ceil_mode`` keeps a last window only when it starts inside the input or
its leading padding; avg pool divides by ``divisor_override``, else by the window's elements
inside the padded input (``count_include_pad``) or inside the input.  ``return_indices`` gives
the flat ``h * W + w`` index of each maximum in its image (uint16, as ttnn).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' registry and config, the conv geometry and the pool package.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.op_keywords import flag
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.conv.geometry import Window, flat_input, flat_output, padding4, pair, positive, torch_module
from meshnn.ops.pool import goldens
from meshnn.ops.pool.common import check_slice_config, nchw_tensor, pool_input, pool_spec, run_pool
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

POOL_OPERATION = "Pool2D"


def _window(op: str, args: dict, dilation: object = (1, 1)) -> Window:
    scheme = args["applied_shard_scheme"]
    if scheme is not None and (not isinstance(scheme, TensorMemoryLayout) or scheme is TensorMemoryLayout.INTERLEAVED):
        raise MeshnnTypeError(f"ttnn.{op}: applied_shard_scheme must be a sharded ttnn.TensorMemoryLayout or None")
    if not isinstance(args["ceil_mode"], bool):
        raise MeshnnTypeError(f"ttnn.{op}: ceil_mode must be a bool, got {args['ceil_mode']!r}")
    window = Window(
        positive(op, "batch_size", args["batch_size"]),
        positive(op, "input_h", args["input_h"]),
        positive(op, "input_w", args["input_w"]),
        pair(op, "kernel_size", args["kernel_size"]),  # type: ignore[arg-type]
        pair(op, "stride", args["stride"]),  # type: ignore[arg-type]
        padding4(op, args["padding"]),
        pair(op, "dilation", dilation),  # type: ignore[arg-type]
        args["ceil_mode"],
    )
    window.check(op)
    return window


def padded(torch, x, window: Window, value: float):
    """``x`` padded as ttnn pads (``value``), plus what the last (ceil-mode) window reaches past."""
    top, bottom, left, right = window.padding
    (kh, kw), (sh, sw), (dh, dw) = window.kernel, window.stride, window.dilation
    need_h = (window.out_height - 1) * sh + dh * (kh - 1) + 1
    need_w = (window.out_width - 1) * sw + dw * (kw - 1) + 1
    extra_h = max(0, need_h - (window.height + top + bottom))
    extra_w = max(0, need_w - (window.width + left + right))
    return torch.nn.functional.pad(x, (left, right + extra_w, top, bottom + extra_h), value=value)


def _max(window: Window, channels: int, indices: bool):
    def compute(x: np.ndarray) -> list[np.ndarray]:
        torch = torch_module()
        xt = padded(torch, nchw_tensor(x, window.batch, window.height, window.width, channels), window, float("-inf"))
        pooled = torch.nn.functional.max_pool2d(
            xt, window.kernel, window.stride, 0, window.dilation, return_indices=indices
        )
        out, where = pooled if indices else (pooled, None)
        out = out[:, :, : window.out_height, : window.out_width]
        result = [flat_output(out.numpy())]
        if indices:  # the padded image's flat index, as the input image's
            width, where = xt.shape[3], where[:, :, : window.out_height, : window.out_width]
            row, col = where // width - window.padding[0], where % width - window.padding[2]
            result.append(flat_output((row * window.width + col).numpy().astype(np.float64)))
        return result

    return compute


@register(
    kind=OpKind.POOL,
    family=OpFamily.REDUCTION,
    device_operation=POOL_OPERATION,
    golden=goldens.golden_maxpool2d,
)
def max_pool2d(
    input_tensor: Tensor,
    batch_size: int,
    input_h: int,
    input_w: int,
    channels: int,
    kernel_size: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, ...],
    dilation: tuple[int, int],
    ceil_mode: bool = False,
    *,
    memory_config: MemoryConfig | None = None,
    dram_slice_config: object = None,
    applied_shard_scheme: object = None,
    deallocate_input: bool = False,
    reallocate_halo_output: bool = True,
    return_indices: bool = False,
    dtype: DataType = DataType.BFLOAT16,
    output_layout: Layout = Layout.ROW_MAJOR,
    config_tensor_in_dram: bool = False,
):
    """The max over each window (see the module's text); with ``return_indices`` also the
    indices of the maxima (``[output, indices]``)."""
    op = "max_pool2d"
    window = _window(op, dict(locals()), dilation)
    c = positive(op, "channels", channels)
    for name, value in (("deallocate_input", deallocate_input), ("reallocate_halo_output", reallocate_halo_output)):
        flag(op, name, value)
    flag(op, "return_indices", return_indices)
    flag(op, "config_tensor_in_dram", config_tensor_in_dram)  # where the kernels' config table lives
    check_slice_config(op, dram_slice_config)
    tensor = pool_input(op, input_tensor)
    flat_input(op, tuple(tensor.shape), window, c)
    shape = (1, 1, window.batch * window.out_height * window.out_width, c)
    specs = [pool_spec(op, tensor, shape, dtype, output_layout, memory_config)]
    if return_indices:
        specs.append(pool_spec(op, tensor, shape, DataType.UINT16, Layout.ROW_MAJOR, memory_config))
    attrs = {"applied_shard_scheme": applied_shard_scheme, "memory_config": specs[0].memory_config}
    attrs["config_tensor_in_dram"] = config_tensor_in_dram
    attrs["dram_slice_config"] = dram_slice_config
    attrs["kernel_size"] = window.kernel  # (the perf model's reads of each window)
    outs = run_pool(op, [tensor], specs, _max(window, c, return_indices), attrs)
    if deallocate_input:
        tensor.deallocate()
    return outs if return_indices else outs[0]


def _avg(window: Window, channels: int, count_include_pad: bool, divisor: int | None):
    def compute(x: np.ndarray) -> list[np.ndarray]:
        torch = torch_module()
        xt = padded(torch, nchw_tensor(x, window.batch, window.height, window.width, channels), window, 0.0)
        sums = torch.nn.functional.avg_pool2d(xt, window.kernel, window.stride, divisor_override=1)
        sums = sums[:, :, : window.out_height, : window.out_width]
        if divisor is not None:
            return [flat_output((sums / divisor).numpy())]
        top, bottom, left, right = window.padding
        mask = torch.ones((1, 1, window.height, window.width))
        inner = (left, right, top, bottom) if count_include_pad else (0, 0, 0, 0)
        mask = torch.nn.functional.pad(mask, inner, value=1.0)
        outer = (0, 0, 0, 0) if count_include_pad else (left, right, top, bottom)
        mask = torch.nn.functional.pad(mask, outer, value=0.0)
        extra = (0, xt.shape[3] - mask.shape[3], 0, xt.shape[2] - mask.shape[2])
        mask = torch.nn.functional.pad(mask, extra, value=0.0)
        counts = torch.nn.functional.avg_pool2d(mask, window.kernel, window.stride, divisor_override=1)
        counts = counts[:, :, : window.out_height, : window.out_width]
        return [flat_output((sums / counts.clamp(min=1)).numpy())]

    return compute


@register(
    kind=OpKind.POOL,
    family=OpFamily.REDUCTION,
    device_operation=POOL_OPERATION,
    golden=goldens.golden_avg_pool2d,
)
def avg_pool2d(
    input_tensor: Tensor,
    batch_size: int,
    input_h: int,
    input_w: int,
    channels: int,
    kernel_size: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, ...],
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
    *,
    memory_config: MemoryConfig | None = None,
    dram_slice_config: object = None,
    applied_shard_scheme: object = None,
    compute_kernel_config: object = None,
    deallocate_input: bool = False,
    reallocate_halo_output: bool = True,
    dtype: DataType = DataType.BFLOAT16,
    output_layout: Layout = Layout.ROW_MAJOR,
    config_tensor_in_dram: bool = False,
) -> Tensor:
    """The mean over each window (see the module's text)."""
    op = "avg_pool2d"
    window = _window(op, dict(locals()))
    c = positive(op, "channels", channels)
    if not isinstance(count_include_pad, bool):
        raise MeshnnTypeError(f"ttnn.{op}: count_include_pad must be a bool, got {count_include_pad!r}")
    if divisor_override is not None:
        positive(op, "divisor_override", divisor_override)
    for name, value in (("deallocate_input", deallocate_input), ("reallocate_halo_output", reallocate_halo_output)):
        flag(op, name, value)
    flag(op, "config_tensor_in_dram", config_tensor_in_dram)  # where the kernels' config table lives
    check_slice_config(op, dram_slice_config)
    check_compute_kernel_config(op, compute_kernel_config)
    tensor = pool_input(op, input_tensor)
    flat_input(op, tuple(tensor.shape), window, c)
    shape = (1, 1, window.batch * window.out_height * window.out_width, c)
    spec = pool_spec(op, tensor, shape, dtype, output_layout, memory_config)
    attrs = {"applied_shard_scheme": applied_shard_scheme, "memory_config": spec.memory_config}
    attrs["compute_kernel_config"] = compute_kernel_config
    attrs["config_tensor_in_dram"] = config_tensor_in_dram
    attrs["dram_slice_config"] = dram_slice_config
    attrs["kernel_size"] = window.kernel  # (the perf model's reads of each window)
    out = run_pool(op, [tensor], [spec], _avg(window, c, count_include_pad, divisor_override), attrs)[0]
    if deallocate_input:
        tensor.deallocate()
    return out
