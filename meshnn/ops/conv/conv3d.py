"""``ttnn.experimental.conv3d``: a 3D convolution of an ``[N, D, H, W, C]`` ROW_MAJOR input
(channels padded to ttnn's alignment with zeros) by a weight already laid out as the device
multiplies it, ``[(C/C_in_block) * KD*KH*KW * C_in_block, OC]`` (rows in (channel block, kd, kh,
kw, channel) order; grouped weights made whole with zeros: ``ttnn.experimental.prepare_conv3d_weights``
lays out torch's ``[OC, C/groups, KD, KH, KW]`` so), plus a ``[1, OC]`` bias.  The geometry (output
channels, kernel, stride, padding: ``"zeros"`` or ``"replicate"``, dilation, output dtype) comes from
the call's keywords (tt-metal of 2026) or from the ``ttnn.Conv3dConfig`` (ttnn 0.81's form); the
config gives the output layout and the blocking.  Output ``[N, OD, OH, OW, OC]``.

Computed on every device with torch in float32, rounded once into the output's format.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry,
config and checks, the conv package and the pool package's launch.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.conv.config import Conv3dConfig
from meshnn.ops.conv.geometry import positive, torch_module
from meshnn.ops.conv.weights import host_values
from meshnn.ops.data_movement import to_layout
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.pool.common import run_pool
from meshnn.ops.registry import DeviceWork, OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.storage import StorageType
from meshnn.tensor.tensor import Tensor


def out_dims(config: Conv3dConfig, sizes: tuple[int, int, int]) -> tuple[int, int, int]:
    """The output's (depth, height, width)."""
    return tuple(
        (size + 2 * pad - d * (k - 1) - 1) // s + 1
        for size, pad, k, s, d in zip(
            sizes, config.padding, config.kernel_size, config.stride, config.dilation, strict=True
        )
    )  # type: ignore[return-value]


def _weight(w: np.ndarray, config: Conv3dConfig, channels: int) -> np.ndarray:
    """The device layout's rows as torch's ``[OC, C, KD, KH, KW]``."""
    kd, kh, kw = config.kernel_size
    block = config.C_in_block or channels
    out = w.shape[-1]
    w = w.reshape(channels // block, kd, kh, kw, block, out)
    return np.ascontiguousarray(w.transpose(5, 0, 4, 1, 2, 3).reshape(out, channels, kd, kh, kw), dtype=np.float32)


def geometry(op: str, config: Conv3dConfig | None, given: dict[str, object]) -> Conv3dConfig:
    """The config the conv runs with: ``config`` (or the default one) with the call's geometry
    keywords put in where given; ``output_channels`` and ``kernel_size`` (and ``dtype`` in the newer
    form, where ``output_channels`` is a keyword) must come from one or the other."""
    if config is not None and not isinstance(config, Conv3dConfig):
        raise MeshnnTypeError(f"ttnn.experimental.{op}: config must be a ttnn.Conv3dConfig, got {config!r}")
    if given["dtype"] is not None and not isinstance(given["dtype"], DataType):
        raise MeshnnTypeError(f"ttnn.experimental.{op}: dtype must be a ttnn.DataType, got {given['dtype']!r}")
    newer = given["output_channels"] is not None
    if newer and given["dtype"] is None:
        raise MeshnnValueError(f"ttnn.experimental.{op}: dtype must be given with output_channels")
    changes = {k: v for k, v in given.items() if v is not None}
    made = dataclasses.replace(config if config is not None else Conv3dConfig(), **changes)
    if made.output_channels is None or made.kernel_size is None:
        raise MeshnnValueError(f"ttnn.experimental.{op}: output_channels and kernel_size must be given")
    return _defaults(made)


def _defaults(config: Conv3dConfig) -> Conv3dConfig:
    """``config`` with ttnn's defaults for the geometry it leaves None (stride 1, no padding)."""
    return dataclasses.replace(config, stride=config.stride or (1, 1, 1), padding=config.padding or (0, 0, 0))


@register(
    "experimental.conv3d",
    kind=OpKind.CONV,
    family=OpFamily.MATMUL,
    device_operation="Conv3dDeviceOperation",
)
def conv3d(
    input_tensor: Tensor,
    weight_tensor: Tensor,
    bias_tensor: Tensor | None = None,
    *,
    config: Conv3dConfig | None = None,
    device: object = None,
    dtype: DataType | None = None,
    output_channels: int | None = None,
    kernel_size: tuple[int, int, int] | None = None,
    stride: tuple[int, int, int] | None = None,
    padding: tuple[int, int, int] | None = None,
    dilation: tuple[int, int, int] | None = None,
    padding_mode: str | None = None,
    groups: int | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """A 3D convolution (see the module's text); ``device``: the inputs' (accepted, as ttnn's)."""
    op = "conv3d"
    given = dict(output_channels=output_channels, kernel_size=kernel_size, stride=stride, padding=padding)
    given |= dict(dilation=dilation, padding_mode=padding_mode, groups=groups, dtype=dtype)
    config = geometry(op, config, given)
    check_compute_kernel_config(op, compute_kernel_config)
    tensor = device_input(op, "input_tensor", input_tensor)
    weight = device_input(op, "weight_tensor", _prepared(op, weight_tensor, config, device))
    if weight.layout is not Layout.TILE:  # (ttnn tilizes a prepared weight given otherwise)
        weight = to_layout(weight, Layout.TILE)
    inputs = [tensor, weight]
    if bias_tensor is not None:
        inputs.append(device_input(op, "bias_tensor", bias_tensor))
    return _run(op, config, inputs, memory_config, compute_kernel_config)


def _prepared(op: str, weight: object, config: Conv3dConfig, device: object) -> object:
    """``weight``, or a rank-5 host weight (torch's layout) prepared on ``device`` as ttnn's conv3d
    prepares one it is given unprepared (tt-metal of 2026)."""
    if not isinstance(weight, Tensor) or len(weight.shape) != 5:
        return weight
    if weight.storage_type() is not StorageType.HOST:
        raise MeshnnValueError(f"ttnn.experimental.{op}: Unprepared weight tensor must be on host")
    if device is None:
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: Device must be provided when weight tensor is unprepared (rank 5)"
        )
    return prepare_conv3d_weights(
        weight_tensor=weight, groups=config.groups, C_in_block=config.C_in_block, alignment=config.alignment,
        device=device,
    )  # fmt: skip


def _run(op: str, config: Conv3dConfig, inputs: list[Tensor], memory_config, compute_kernel_config) -> Tensor:
    """Check the shapes and launch the conv of ``config``'s geometry on every device."""
    tensor, weight = inputs[0], inputs[1]
    if len(tensor.shape) != 5:
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: input_tensor must be [N, D, H, W, C], got {list(tensor.shape)}"
        )
    n, d, h, w, c = tensor.shape
    kd, kh, kw = config.kernel_size  # type: ignore[misc]
    block = config.C_in_block or c
    if c % block or tuple(weight.shape[-2:]) != (kd * kh * kw * c, config.output_channels):
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: weight_tensor must be [KD*KH*KW*C, output_channels] = "
            f"[{kd * kh * kw * c}, {config.output_channels}] (C_in_block dividing C {c}), got {list(weight.shape)}"
        )
    dims = out_dims(config, (d, h, w))
    if min(dims) < 1:
        raise MeshnnValueError(f"ttnn.experimental.{op}: the kernel {list(config.kernel_size)} does not fit the input")
    shape = (n, *dims, config.output_channels)
    spec = out_spec_like(
        tensor, shape=shape, dtype=config.dtype, layout=config.output_layout, memory_config=memory_config, op=op
    )

    def compute(x: np.ndarray, wv: np.ndarray, b: np.ndarray | None = None) -> list[np.ndarray]:
        torch = torch_module()
        functional = torch.nn.functional
        xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 4, 1, 2, 3), dtype=np.float32))
        pd, ph, pw = config.padding  # type: ignore[misc]
        mode = "constant" if config.padding_mode == "zeros" else "replicate"
        xt = functional.pad(xt, (pw, pw, ph, ph, pd, pd), mode=mode)
        bias = (
            None
            if b is None
            else torch.from_numpy(np.ascontiguousarray(b.reshape(-1)[: config.output_channels], dtype=np.float32))
        )
        wt = torch.from_numpy(_weight(wv.reshape(-1, wv.shape[-1]), config, c))
        out = functional.conv3d(xt, wt, bias, stride=config.stride, dilation=config.dilation)
        return [out.numpy().transpose(0, 2, 3, 4, 1)]

    return run_pool(op, inputs, [spec], compute, {"config": config, "compute_kernel_config": compute_kernel_config})[0]


@register(
    "experimental.prepare_conv3d_weights",
    kind=OpKind.CONV,
    family=OpFamily.COPY,
    modelled=False,
    runs=DeviceWork.HOST,
)
def prepare_conv3d_weights(
    *, weight_tensor: Tensor, groups: int = 1, C_in_block: int = 0, alignment: int = 32, device: object = None
) -> Tensor:
    """torch's ``[OC, C/groups, KD, KH, KW]`` conv3d weight (a host tensor) laid out as ``conv3d``
    multiplies it, as tt-metal's ``prepare_conv3d_weights`` does: the groups made one whole weight
    (zeros off each group's channels), the channels padded with zeros to a multiple of ``alignment``,
    rows in (channel block of ``C_in_block`` (0: all), kd, kh, kw, channel) order: ``[rows, OC]``
    ROW_MAJOR in the weight's dtype, on ``device`` (a mesh: every device) when given."""
    op = "experimental.prepare_conv3d_weights"
    owner = f"ttnn.{op}"
    values = host_values(op, "weight_tensor", weight_tensor)
    for name, value, least in (("groups", groups, 1), ("C_in_block", C_in_block, 0), ("alignment", alignment, 1)):
        positive(op, name, value, least)
    if values.ndim != 5 or values.shape[0] % groups:
        raise MeshnnValueError(
            f"{owner}: weight_tensor must be [OC, C/groups, KD, KH, KW] with groups ({groups}) dividing OC, "
            f"got {list(values.shape)}"
        )
    oc, per_group = values.shape[:2]
    whole = np.zeros((oc, per_group * groups, *values.shape[2:]), np.float32)
    for o in range(oc):  # (ttnn's grouped layout: output o reads its group's channels only)
        group = o // (oc // groups)
        whole[o, group * per_group : (group + 1) * per_group] = values[o]
    moved = whole.transpose(2, 3, 4, 1, 0)  # (KD, KH, KW, C, OC)
    aligned = -(-moved.shape[3] // alignment) * alignment
    moved = np.pad(moved, [(0, 0)] * 3 + [(0, aligned - moved.shape[3]), (0, 0)])
    block = C_in_block or aligned
    if aligned % block:
        raise MeshnnValueError(f"{owner}: C_in_aligned ({aligned}) must be divisible by C_in_block ({block})")
    kd, kh, kw = moved.shape[:3]
    rows = moved.reshape(kd, kh, kw, aligned // block, block, oc).transpose(3, 0, 1, 2, 4, 5).reshape(-1, oc)
    made = Tensor(np.ascontiguousarray(rows), weight_tensor.dtype)
    return made if device is None else made.to(device)
