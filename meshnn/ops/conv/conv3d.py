"""``ttnn.experimental.conv3d``: a 3D convolution of an ``[N, D, H, W, C]`` ROW_MAJOR input
(channels padded to ttnn's alignment with zeros) by a weight already laid out as the device
multiplies it, ``[(C/C_in_block) * KD*KH*KW * C_in_block, OC]`` (rows in (channel block, kd, kh,
kw, channel) order), plus a ``[1, OC]`` bias; ``config`` (a ``ttnn.Conv3dConfig``) gives the
kernel, stride, padding (``"zeros"`` or ``"replicate"``), output dtype and layout.  Output
``[N, OD, OH, OW, OC]``.

Computed on every device with torch in float32, rounded once into the output's format.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry,
config and checks, the conv package and the pool package's launch.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.checks import device_input
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.conv.config import Conv3dConfig
from meshnn.ops.conv.geometry import torch_module
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.pool.common import run_pool
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def out_dims(config: Conv3dConfig, sizes: tuple[int, int, int]) -> tuple[int, int, int]:
    """The output's (depth, height, width)."""
    return tuple(
        (size + 2 * pad - k) // s + 1
        for size, pad, k, s in zip(sizes, config.padding, config.kernel_size, config.stride, strict=True)
    )  # type: ignore[return-value]


def _weight(w: np.ndarray, config: Conv3dConfig, channels: int) -> np.ndarray:
    """The device layout's rows as torch's ``[OC, C, KD, KH, KW]``."""
    kd, kh, kw = config.kernel_size
    block = config.C_in_block or channels
    out = w.shape[-1]
    w = w.reshape(channels // block, kd, kh, kw, block, out)
    return np.ascontiguousarray(w.transpose(5, 0, 4, 1, 2, 3).reshape(out, channels, kd, kh, kw), dtype=np.float32)


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
    config: Conv3dConfig,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """A 3D convolution (see the module's text)."""
    op = "conv3d"
    if not isinstance(config, Conv3dConfig):
        raise MeshnnTypeError(f"ttnn.experimental.{op}: config must be a ttnn.Conv3dConfig, got {config!r}")
    check_compute_kernel_config(op, compute_kernel_config)
    tensor = device_input(op, "input_tensor", input_tensor)
    weight = device_input(op, "weight_tensor", weight_tensor)
    inputs = [tensor, weight]
    if bias_tensor is not None:
        inputs.append(device_input(op, "bias_tensor", bias_tensor))
    if len(tensor.shape) != 5:
        raise MeshnnValueError(
            f"ttnn.experimental.{op}: input_tensor must be [N, D, H, W, C], got {list(tensor.shape)}"
        )
    n, d, h, w, c = tensor.shape
    kd, kh, kw = config.kernel_size
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
        pd, ph, pw = config.padding
        mode = "constant" if config.padding_mode == "zeros" else "replicate"
        xt = functional.pad(xt, (pw, pw, ph, ph, pd, pd), mode=mode)
        bias = (
            None
            if b is None
            else torch.from_numpy(np.ascontiguousarray(b.reshape(-1)[: config.output_channels], dtype=np.float32))
        )
        wt = torch.from_numpy(_weight(wv.reshape(-1, wv.shape[-1]), config, c))
        out = functional.conv3d(xt, wt, bias, stride=config.stride)
        return [out.numpy().transpose(0, 2, 3, 4, 1)]

    return run_pool(op, inputs, [spec], compute, {"config": config, "compute_kernel_config": compute_kernel_config})[0]
