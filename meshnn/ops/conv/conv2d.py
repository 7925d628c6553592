"""``ttnn.conv2d`` and ``ttnn.conv1d``: convolution of an input in ttnn's flattened NHWC layout
(``[1, 1, N*H*W, C]`` or ``[N, H, W, C]``; conv1d also ``[N, L, C]``) by a torch-layout weight
(``[OC, IC/groups, KH, KW]``; conv1d ``[OC, IC/groups, K]``), prepared here unless it is already a
prepared device tensor, plus a bias and ``conv_config.activation``.  The output is
``[1, 1, N*OH*OW, OC]`` in ``conv_config.output_layout`` and ``dtype`` (None: the input's).

Computed on every device with torch in float32 from the values the device holds (the input, and
the weight and bias rounded into the weights dtype), rounded once into the output's format.
``compute_config`` (math fidelity, fp32 accumulation...) and the hardware fields of
``conv_config`` are checked and recorded; they change no value here.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' registry, config and launch modules, and the conv package.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.conv import goldens
from meshnn.ops.conv.config import Conv2dConfig, Conv2dSliceConfig, PaddingMode, SliceType
from meshnn.ops.conv.geometry import Window, flat_input, padding4, pair, positive, torch_module
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
    check_prepared,
    check_weight,
    conv_args,
    conv_config_of,
    group_blocks,
    grouped_layout,
    is_prepared,
    padded_groups,
    prepared_bias,
    prepared_on,
    weight_matrix,
    weight_oihw,
    weights_dtype,
)
from meshnn.ops.registry import OpKind, register
from meshnn.perf.conv_desc import ConvConfig
from meshnn.perf.conv_slices import dram_slices
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor


def conv_compute(
    window: Window,
    in_channels: int,
    groups: int,
    activation: Callable | None,
    *,
    replicate: bool = False,
    padded: int = 1,
):
    """The per-device computation of a conv over ``window`` (see :class:`ConvRun`): torch's conv2d
    on a channels-last view of the NHWC values (its output is channels-last too, so flattening
    it back copies nothing); a 1x1 conv of stride 1 is the matmul of the rows by the prepared
    weight matrix.  ``replicate``: the padded border repeats the edge pixels (``PaddingMode.Replicate``);
    ``padded``: the groups the prepared weight is zero-padded over (its blocks are taken back out)."""
    pointwise = window.kernel == (1, 1) and window.stride == (1, 1) and not any(window.padding) and groups == 1

    def compute(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
        torch = torch_module()
        rows = _writable(x.reshape(window.batch, window.height, window.width, -1)[..., :in_channels])
        bt = None if b is None else torch.from_numpy(_writable(b.reshape(-1)))
        if pointwise:
            matrix = torch.from_numpy(_writable(w.reshape(in_channels, -1)))
            out = torch.from_numpy(rows.reshape(-1, in_channels)) @ matrix
            out = (out if bt is None else out + bt).numpy().reshape(1, 1, -1, matrix.shape[1])
        else:
            top, bottom, left, right = window.padding
            xt = torch.from_numpy(rows).permute(0, 3, 1, 2)
            if any(window.padding):
                mode = "replicate" if replicate else "constant"
                xt = torch.nn.functional.pad(xt, (left, right, top, bottom), mode=mode)
            wt = torch.from_numpy(_writable(group_blocks(weight_oihw(w, window.kernel), padded)))
            out = torch.nn.functional.conv2d(xt, wt, bt, stride=window.stride, dilation=window.dilation, groups=groups)
            out = out.permute(0, 2, 3, 1).reshape(1, 1, -1, out.shape[1]).numpy()
        return activation(out) if activation is not None else out

    return compute


def _writable(values: np.ndarray) -> np.ndarray:
    """``values`` as a writable, C-contiguous float32 array (torch takes only those), copied only
    when it is not one already."""
    if values.dtype == np.float32 and values.flags.c_contiguous and values.flags.writeable:
        return values
    return np.array(values, dtype=np.float32, order="C")


def perf_config(window: Window, ic: int, oc: int, groups: int, config: Conv2dConfig) -> ConvConfig:
    """What the performance model needs of the conv (:class:`meshnn.perf.conv_desc.ConvConfig`)."""
    return ConvConfig(
        window.batch,
        (window.out_height, window.out_width),
        window.kernel,
        window.stride,
        ic,
        oc,
        groups,
        config.shard_layout,
        config.enable_act_double_buffer,
        config.enable_weights_double_buffer,
        config.enable_activation_reuse,
        window.padding,
        window.dilation,
        config.act_block_h_override,
    )


def dram_sliced(conv: ConvConfig, tensor: Tensor, slice_config: object, config: Conv2dConfig, mesh) -> ConvConfig:
    """``conv`` with the DRAM slices tt-metal (2026) runs it in (:func:`meshnn.perf.conv_slices.dram_slices`):
    none on the L1 path (a slice config of L1_FULL, or none with ``tensor`` in L1); else the given slices, or
    the count and dimension tt-metal picks for the free L1 of a core of ``mesh``."""
    in_l1 = isinstance(tensor.storage, DeviceStorage) and tensor.memory_config().buffer_type is BufferType.L1
    if isinstance(slice_config, Conv2dSliceConfig):
        if not slice_config.in_dram:
            return conv
        given = (slice_config.slice_type is SliceType.DRAMSliceWidth, slice_config.num_slices)
    elif in_l1:
        return conv
    else:
        given = None
    free = mesh.allocator.manager(BufferType.L1).statistics().total_free_bytes
    return dram_slices(
        conv,
        mesh.system.compute_grid,
        free_l1=free,
        tiled_input=tensor.layout is Layout.TILE,
        tiled_output=config.output_layout is Layout.TILE,
        element_bytes=4 if tensor.dtype is DataType.FLOAT32 else 2,
        given=given,
    )


def prepared_weight(op: str, weight: object, oc: int, icg: int, kernel, dtype_of, mesh, padded: int = 1) -> Tensor:
    """The conv's prepared weight: ``weight`` itself when it is a prepared device tensor (checked),
    else its torch-layout values checked and prepared (zero-padded over ``padded`` groups)."""
    tensor = check_tensor(weight, f"ttnn.{op}: weight_tensor")
    if is_prepared(tensor) and len(tensor.shape) == 4 and tensor.shape[0] == 1 and tensor.shape[1] == 1:
        check_prepared(op, tensor, oc, icg * padded, kernel)
        return tensor
    prepare = lambda values: weight_matrix(grouped_layout(check_weight(op, values, oc, icg, kernel), padded))  # noqa: E731
    return prepared_on(op, "weight_tensor", tensor, prepare, dtype_of(tensor.dtype), mesh)


def run_conv(op: str, args: dict, window: Window, ranks=(4,)) -> tuple[Tensor, tuple[Tensor, Tensor | None]]:
    """Check, prepare and launch one conv (``args``: conv2d's arguments by name); returns the output
    and the prepared weight and bias."""
    config = conv_config_of(op, args["conv_config"])
    ic, oc, groups, _ = conv_args(op, args["in_channels"], args["out_channels"], args["groups"], window.kernel)
    window.check(op)
    check_compute_kernel_config(op, args["compute_config"])
    tensor = given = check_tensor(args["input_tensor"], f"ttnn.{op}: input_tensor")
    flat_input(op, tuple(tensor.shape), window, ic, ranks=ranks)
    memory = output_memory(op, tensor, args["memory_config"], args["slice_config"])
    rows = window.batch * window.out_height * window.out_width
    spec = output_spec(op, tensor, (1, 1, rows, oc), args["dtype"], config, memory)
    activation = activation_of(op, config)
    tensor, mesh = on_device(op, tensor, args["device"])
    dtype_of = lambda given: weights_dtype(op, config, given)  # noqa: E731
    bias = args["bias_tensor"]
    conv1d = op == "conv1d" or (window.kernel[0] == 1 and window.height == 1)  # tt-metal's is_1d_conv
    padded = padded_groups(groups, ic, oc, conv1d=conv1d, has_bias=bias is not None)
    weight = prepared_weight(op, args["weight_tensor"], oc, ic // groups, window.kernel, dtype_of, mesh, padded)
    if bias is not None:
        bias = prepared_bias(op, bias, oc, weight.dtype, mesh)
    inputs = (tensor, weight) if bias is None else (tensor, weight, bias)
    attrs = {"conv_config": config, "compute_kernel_config": args["compute_config"], "memory_config": memory}
    attrs["slice_config"] = args["slice_config"]
    attrs["conv"] = dram_sliced(perf_config(window, ic, oc, groups, config), given, args["slice_config"], config, mesh)
    replicate = config.padding_mode is PaddingMode.Replicate
    compute = conv_compute(window, ic, groups, activation, replicate=replicate, padded=padded)
    run = ConvRun(op, mesh, inputs, spec, compute, attrs)
    return run.launch(config, args["input_tensor"]), (weight, bias)


@register(kind=OpKind.CONV, family=OpFamily.MATMUL, device_operation="Conv2dDeviceOperation", golden=goldens.conv2d)
def conv2d(
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
    dilation: tuple[int, int] = (1, 1),
    groups: int = 1,
    dtype: DataType | None = None,
    bias_tensor: Tensor | None = None,
    conv_config: Conv2dConfig | None = None,
    compute_config: object = None,
    memory_config: MemoryConfig | None = None,
    slice_config: object = None,
    return_output_dim: bool = False,
    return_weights_and_bias: bool = False,
):
    """A 2D convolution (see the module's text).  Returns the output, and with
    ``return_output_dim`` its ``[out_height, out_width]``, with ``return_weights_and_bias`` the
    prepared ``(weight, bias)`` to pass to the next call."""
    op = "conv2d"
    check_returns(op, return_output_dim, return_weights_and_bias)
    window = Window(
        positive(op, "batch_size", batch_size),
        positive(op, "input_height", input_height),
        positive(op, "input_width", input_width),
        pair(op, "kernel_size", kernel_size),  # type: ignore[arg-type]
        pair(op, "stride", stride),  # type: ignore[arg-type]
        padding4(op, padding),
        pair(op, "dilation", dilation),  # type: ignore[arg-type]
    )
    output, prepared = run_conv(op, dict(locals()), window)
    dims = [window.out_height, window.out_width]
    return results(output, dims, prepared, return_output_dim, return_weights_and_bias)


def _padding_1d(op: str, padding: object) -> tuple[int, int, int, int]:
    """conv1d's padding (an int, or [left, right] along the length) as (top, bottom, 0, 0)."""
    if isinstance(padding, int | np.integer) and not isinstance(padding, bool):
        padding = (padding, padding)
    first, last = pair(op, "padding", padding, least=0)
    return (first, last, 0, 0)


@register(kind=OpKind.CONV, family=OpFamily.MATMUL, device_operation="Conv2dDeviceOperation")
def conv1d(
    *,
    input_tensor: Tensor,
    weight_tensor: Tensor,
    device: object,
    in_channels: int,
    out_channels: int,
    batch_size: int,
    input_length: int,
    kernel_size: int,
    stride: int = 1,
    padding: int | tuple[int, int] = 0,
    dilation: int = 1,
    groups: int = 1,
    dtype: DataType | None = None,
    bias_tensor: Tensor | None = None,
    conv_config: Conv2dConfig | None = None,
    compute_config: object = None,
    memory_config: MemoryConfig | None = None,
    slice_config: Conv2dSliceConfig | None = None,
    return_output_dim: bool = False,
    return_weights_and_bias: bool = False,
):
    """A 1D convolution along the length of ``[N, L, C]`` (or ``[1, 1, N*L, C]``): ttnn runs it as
    a conv2d of width 1.  ``slice_config`` (tt-metal of 2026): slices in DRAM along the length, or None
    (all in L1); DRAM height slices are refused (a conv1d's height is 1).  Returns the output
    ``[1, 1, N*OL, OC]``, and with ``return_output_dim`` the output length, with
    ``return_weights_and_bias`` the prepared ``(weight, bias)``."""
    op = "conv1d"
    check_returns(op, return_output_dim, return_weights_and_bias)
    window = Window(
        positive(op, "batch_size", batch_size),
        positive(op, "input_length", input_length),
        1,
        (positive(op, "kernel_size", kernel_size), 1),
        (positive(op, "stride", stride), 1),
        _padding_1d(op, padding),
        (positive(op, "dilation", dilation), 1),
    )
    check_slice_config(op, slice_config)
    if isinstance(slice_config, Conv2dSliceConfig) and slice_config.slice_type is SliceType.DRAMSliceHeight:
        raise MeshnnValueError(
            f"ttnn.{op}: slice_config: DRAM_HEIGHT slices are not supported (a conv1d's height is 1)"
        )
    output, prepared = run_conv(op, dict(locals()), window, ranks=(3, 4))
    return results(output, window.out_height, prepared, return_output_dim, return_weights_and_bias)
