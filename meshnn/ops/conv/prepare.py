"""``ttnn.prepare_conv_weights`` / ``prepare_conv_bias`` and their transposed-conv forms: a
torch-layout weight or bias (host or device) made into the prepared device tensor a conv takes
(:mod:`meshnn.ops.conv.weights` says its layout), once, to be reused by every call of the conv.

The conv's geometry arguments are checked as the conv checks them (so a preparation for a conv
that cannot run is refused here); the memory and layout arguments only matter on hardware and
are checked for their type.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry
and config, and the conv package.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.conv.geometry import Window, padding4, pair, positive
from meshnn.ops.conv.running import INPUT_DTYPES, check_slice_config
from meshnn.ops.conv.weights import (
    check_weight,
    conv_args,
    conv_config_of,
    grouped_layout,
    padded_groups,
    prepared_bias,
    prepared_on,
    transposed_as_conv,
    weight_matrix,
    weights_dtype,
)
from meshnn.ops.registry import DeviceWork, OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor, check_tensor

_PREPARE = {"kind": OpKind.CONV, "family": OpFamily.COPY, "modelled": False, "runs": DeviceWork.HOST}


def _checked(op: str, args: dict) -> tuple[int, int, int, tuple[int, int]]:
    """The common arguments checked; returns in_channels, out_channels, groups and the kernel."""
    if not isinstance(args["input_memory_config"], MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: input_memory_config must be a ttnn.MemoryConfig")
    if not isinstance(args["input_layout"], Layout):
        raise MeshnnTypeError(f"ttnn.{op}: input_layout must be a ttnn Layout, got {args['input_layout']!r}")
    for name in ("input_dtype", "output_dtype"):
        value = args[name]
        if (value is not None or name == "input_dtype") and value not in INPUT_DTYPES:
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be bfloat16, bfloat8_b or float32, got {value!r}")
    conv_config_of(op, args["conv_config"])
    check_compute_kernel_config(op, args["compute_config"])
    ic, oc, groups, kernel = conv_args(
        op, args["in_channels"], args["out_channels"], args["groups"], args["kernel_size"]
    )
    window = Window(
        positive(op, "batch_size", args["batch_size"]),
        positive(op, "input_height", args["input_height"]),
        positive(op, "input_width", args["input_width"]),
        kernel,
        pair(op, "stride", args["stride"]),  # type: ignore[arg-type]
        padding4(op, args["padding"]),
        pair(op, "dilation", args["dilation"]),  # type: ignore[arg-type]
    )
    if not args.get("transposed"):
        window.check(op)
    return ic, oc, groups, kernel


@register(**_PREPARE)
def prepare_conv_weights(
    *,
    weight_tensor: Tensor,
    input_memory_config: MemoryConfig,
    input_layout: Layout,
    weights_format: str,
    in_channels: int,
    out_channels: int,
    batch_size: int,
    input_height: int,
    input_width: int,
    kernel_size: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, ...],
    dilation: tuple[int, int],
    has_bias: bool,
    groups: int,
    device: object,
    input_dtype: DataType,
    output_dtype: DataType | None = None,
    conv_config: object = None,
    compute_config: object = None,
    slice_config: object = None,
) -> Tensor:
    """A conv2d weight (``weights_format`` ``"OIHW"``) prepared on ``device``."""
    op = "prepare_conv_weights"
    ic, oc, groups, kernel = _checked(op, dict(locals()))
    if weights_format != "OIHW":
        raise MeshnnValueError(f"ttnn.{op}: weights_format must be 'OIHW', got {weights_format!r}")
    if not isinstance(has_bias, bool):
        raise MeshnnTypeError(f"ttnn.{op}: has_bias must be a bool, got {has_bias!r}")
    tensor = check_tensor(weight_tensor, f"ttnn.{op}: weight_tensor")
    dtype = weights_dtype(op, conv_config_of(op, conv_config), tensor.dtype)
    conv1d = kernel[0] == 1 and input_height == 1  # tt-metal's is_1d_conv: a conv1d's weight
    padded = padded_groups(groups, ic, oc, conv1d=conv1d, has_bias=has_bias)

    def prepare(values):  # (float32 OIHW values -> the weight matrix, a grouped weight zero-padded)
        return weight_matrix(grouped_layout(check_weight(op, values, oc, ic // groups, kernel), padded))

    return prepared_on(op, "weight_tensor", tensor, prepare, dtype, device)


@register(**_PREPARE)
def prepare_conv_bias(
    *,
    bias_tensor: Tensor,
    input_memory_config: MemoryConfig,
    input_layout: Layout,
    in_channels: int,
    out_channels: int,
    batch_size: int,
    input_height: int,
    input_width: int,
    kernel_size: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, ...],
    dilation: tuple[int, int],
    groups: int,
    device: object,
    input_dtype: DataType,
    output_dtype: DataType | None = None,
    conv_config: object = None,
    compute_config: object = None,
    slice_config: object = None,
) -> Tensor:
    """A conv2d bias (``out_channels`` values) prepared on ``device``: ``[1, 1, 1, OC]`` TILE in the
    weights dtype."""
    op = "prepare_conv_bias"
    _, oc, _, _ = _checked(op, dict(locals()))
    tensor = check_tensor(bias_tensor, f"ttnn.{op}: bias_tensor")
    dtype = weights_dtype(op, conv_config_of(op, conv_config), tensor.dtype)
    return prepared_bias(op, tensor, oc, dtype, device)


@register(**_PREPARE)
def prepare_conv_transpose2d_weights(
    *,
    weight_tensor: Tensor,
    input_memory_config: MemoryConfig,
    input_layout: Layout,
    weights_format: str,
    in_channels: int,
    out_channels: int,
    batch_size: int,
    input_height: int,
    input_width: int,
    kernel_size: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, ...],
    dilation: tuple[int, int],
    has_bias: bool,
    groups: int,
    device: object,
    input_dtype: DataType,
    output_padding: tuple[int, int] = (0, 0),
    output_dtype: DataType | None = None,
    conv_config: object = None,
    compute_config: object = None,
    dram_slice_config: object = None,
    mirror_kernel: bool = True,
) -> Tensor:
    """A conv_transpose2d weight (``weights_format`` ``"IOHW"``: ``[IC, OC/groups, KH, KW]``)
    prepared on ``device`` as the equivalent conv's (mirrored unless ``mirror_kernel`` is False);
    ``output_padding`` and ``dram_slice_config`` (tt-metal of 2026) are checked and change nothing in it."""
    op = "prepare_conv_transpose2d_weights"
    ic, oc, groups, kernel = _checked(op, dict(locals(), transposed=True))
    pair(op, "output_padding", output_padding, least=0)  # type: ignore[arg-type]
    check_slice_config(op, dram_slice_config, "dram_slice_config")
    if weights_format != "IOHW":
        raise MeshnnValueError(f"ttnn.{op}: weights_format must be 'IOHW', got {weights_format!r}")
    if not isinstance(mirror_kernel, bool) or not isinstance(has_bias, bool):
        raise MeshnnTypeError(f"ttnn.{op}: mirror_kernel and has_bias must be bools")
    tensor = check_tensor(weight_tensor, f"ttnn.{op}: weight_tensor")
    dtype = weights_dtype(op, conv_config_of(op, conv_config), tensor.dtype)

    def prepare(values):  # (float32 IOHW values -> the equivalent conv's weight matrix)
        conv = transposed_as_conv(check_weight(op, values, ic, oc // groups, kernel), groups, mirror_kernel)
        return weight_matrix(grouped_layout(conv, groups))

    return prepared_on(op, "weight_tensor", tensor, prepare, dtype, device)


@register(**_PREPARE)
def prepare_conv_transpose2d_bias(
    *,
    bias_tensor: Tensor,
    input_memory_config: MemoryConfig,
    input_layout: Layout,
    in_channels: int,
    out_channels: int,
    batch_size: int,
    input_height: int,
    input_width: int,
    kernel_size: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, ...],
    dilation: tuple[int, int],
    groups: int,
    device: object,
    input_dtype: DataType,
    output_dtype: DataType | None = None,
    conv_config: object = None,
    compute_config: object = None,
    dram_slice_config: object = None,
) -> Tensor:
    """A conv_transpose2d bias prepared on ``device`` (as a conv's)."""
    op = "prepare_conv_transpose2d_bias"
    _, oc, _, _ = _checked(op, dict(locals(), transposed=True))
    check_slice_config(op, dram_slice_config, "dram_slice_config")
    tensor = check_tensor(bias_tensor, f"ttnn.{op}: bias_tensor")
    dtype = weights_dtype(op, conv_config_of(op, conv_config), tensor.dtype)
    return prepared_bias(op, tensor, oc, dtype, device)
