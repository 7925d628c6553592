"""The torch references of ttnn's pool ops (``ttnn.get_golden_function``), and ttnn's Python module
``ttnn.operations.pool`` that holds them under their names (``golden_maxpool2d``,
``golden_avg_pool2d``...; tt-metal's pool tests import them from there).

The 2-D window pools take ttnn's flattened ``[1, 1, N*H*W, C]`` input with the batch and image
size given and return the output flattened the same way, ``[1, 1, N*OH*OW, C]``;
``global_avg_pool2d``, ``upsample``, ``rotate`` and ``grid_sample`` take and return NHWC tensors.
A padding of four values is ``[top, bottom, left, right]``, applied with the pool's neutral value
(-inf for max, 0 for average); two values ``(h, w)`` are torch's symmetric padding.  torch is
imported when one is called.

May import: nothing of meshnn but the conv geometry.
"""

from __future__ import annotations

import math
from typing import Any

from meshnn.ops.conv.geometry import torch_module


def _nchw(input_tensor: Any, batch_size: int, input_h: int, input_w: int, channels: int) -> Any:
    """The flattened ``[1, 1, N*H*W, C]`` input as ``[N, C, H, W]``."""
    return input_tensor.reshape(batch_size, input_h, input_w, channels).permute(0, 3, 1, 2)


def _flat(output: Any) -> Any:
    """``[N, C, H, W]`` as ttnn's flattened ``[1, 1, N*H*W, C]``."""
    n, c, h, w = output.shape
    return output.permute(0, 2, 3, 1).reshape(1, 1, n * h * w, c)


def _padded(x: Any, padding: Any, value: float) -> tuple[Any, Any]:
    """``x`` padded explicitly for a four-value padding (torch's padding then 0), else ``x`` and
    the padding for torch."""
    if isinstance(padding, list | tuple) and len(padding) == 4:
        top, bottom, left, right = padding
        return torch_module().nn.functional.pad(x, (left, right, top, bottom), value=value), 0
    return x, padding


def golden_maxpool2d(
    input_tensor: Any,
    batch_size: int,
    input_h: int,
    input_w: int,
    channels: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool = False,
    return_indices: bool = False,
    **_: Any,
) -> Any:
    """``ttnn.max_pool2d``'s reference; with ``return_indices`` also each maximum's flat index
    ``h * W + w`` in its (padded) image, flattened as the output."""
    torch = torch_module()
    x, torch_padding = _padded(_nchw(input_tensor, batch_size, input_h, input_w, channels), padding, float("-inf"))
    out, indices = torch.nn.functional.max_pool2d(
        x, kernel_size, stride, torch_padding, dilation, ceil_mode=ceil_mode, return_indices=True
    )
    return (_flat(out), _flat(indices)) if return_indices else _flat(out)


def golden_avg_pool2d(
    input_tensor: Any,
    batch_size: int,
    input_h: int,
    input_w: int,
    channels: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
    **_: Any,
) -> Any:
    """``ttnn.avg_pool2d``'s reference: torch's avg_pool2d; a four-value padding is zero-filled
    first, so its zeros count as input even without ``count_include_pad`` (as tt-metal's golden)."""
    torch = torch_module()
    x, torch_padding = _padded(_nchw(input_tensor, batch_size, input_h, input_w, channels), padding, 0.0)
    out = torch.nn.functional.avg_pool2d(
        x,
        kernel_size,
        stride,
        torch_padding,
        ceil_mode=ceil_mode,
        count_include_pad=count_include_pad,
        divisor_override=divisor_override,
    )
    return _flat(out)


def golden_adaptive_avg_pool2d(
    input_tensor: Any, batch_size: int, input_h: int, input_w: int, channels: int, output_size: Any, **_: Any
) -> Any:
    """``ttnn.adaptive_avg_pool2d``'s reference: torch's adaptive average to ``output_size``."""
    x = _nchw(input_tensor, batch_size, input_h, input_w, channels)
    return _flat(torch_module().nn.functional.adaptive_avg_pool2d(x, output_size))


def golden_adaptive_max_pool2d(
    input_tensor: Any, batch_size: int, input_h: int, input_w: int, channels: int, output_size: Any, **_: Any
) -> Any:
    """``ttnn.adaptive_max_pool2d``'s reference: torch's adaptive maximum to ``output_size``."""
    x = _nchw(input_tensor, batch_size, input_h, input_w, channels)
    return _flat(torch_module().nn.functional.adaptive_max_pool2d(x, output_size))


def golden_global_avg_pool2d(input_tensor: Any, **_: Any) -> Any:
    """``ttnn.global_avg_pool2d``'s reference: the mean over height and width, kept as 1s, in the
    input's dtype: ``[N, H, W, C]`` to ``[N, 1, 1, C]``, ``[H, W, C]`` to ``[1, 1, C]``, ``[H, W]``
    to ``[1, 1]``."""
    dims = (1, 2) if input_tensor.dim() == 4 else (0, 1)
    return input_tensor.float().mean(dim=dims, keepdim=True).to(input_tensor.dtype)


def golden_upsample(input_tensor: Any, scale_factor: Any, mode: str = "nearest", **_: Any) -> Any:
    """``ttnn.upsample``'s reference: torch's interpolate of the NHWC image by ``scale_factor`` (a
    number or (height, width) factors)."""
    scale = (scale_factor, scale_factor) if isinstance(scale_factor, int | float) else tuple(scale_factor)
    out = torch_module().nn.functional.interpolate(input_tensor.permute(0, 3, 1, 2), scale_factor=scale, mode=mode)
    return out.permute(0, 2, 3, 1)


def golden_grid_sample(
    input_tensor: Any,
    grid: Any,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool = False,
    batch_output_channels: bool = False,
    grid_batching_factor: int | None = None,
    **_: Any,
) -> Any:
    """``ttnn.grid_sample``'s reference: torch's grid_sample (in float32) of the NHWC image at a
    grid ``[N, HO, WO, 2*K]`` holding K points per position, in the input's dtype.  The
    ``N * HO * WO * K`` samples in row order make ``[N, HO, WO*K/k, C]`` (or ``[N, HO, WO*K/k, C*k]``
    with ``batch_output_channels``) for a batching factor ``k`` (``grid_batching_factor``, default K)."""
    torch = torch_module()
    n, rows, cols, last = grid.shape
    points = cols * (last // 2)
    image = input_tensor.permute(0, 3, 1, 2).float()
    out = torch.nn.functional.grid_sample(
        image,
        grid.reshape(n, rows, points, 2).float(),
        mode=mode,
        padding_mode=padding_mode,
        align_corners=align_corners,
    )
    out = out.permute(0, 2, 3, 1).to(input_tensor.dtype)
    k = grid_batching_factor if grid_batching_factor is not None else last // 2
    channels = image.shape[1]
    if batch_output_channels:
        return out.reshape(n, rows, points // k, channels * k)
    return out.reshape(n, rows, (points // k) * k, channels)


def golden_rotate(
    input_tensor: Any,
    angle: float,
    center: Any = None,
    fill: float = 0.0,
    expand: bool = False,
    interpolation_mode: str = "nearest",
    **_: Any,
) -> Any:
    """``ttnn.rotate``'s reference, as torchvision rotates a tensor image: an inverse affine grid
    about ``center`` (pixel (x, y); default the image's middle) sampled with torch's grid_sample
    (``align_corners=False``), ``fill`` where the point falls outside (nearest: a point outside;
    bilinear: ``sample * coverage + (1 - coverage) * fill``, torchvision's blend, the zero-padded
    sample scaled by its coverage once more).  NHWC in, NHWC out, input dtype."""
    if interpolation_mode not in ("nearest", "bilinear"):
        raise ValueError(f"Unsupported interpolation mode: {interpolation_mode}")
    torch = torch_module()
    n, height, width, channels = input_tensor.shape
    x = input_tensor.permute(0, 3, 1, 2).float()
    grid = _rotation_grid(torch, height, width, float(angle), center).expand(n, height, width, 2)
    ones = torch.ones((n, 1, height, width), dtype=x.dtype)
    sampled = torch.nn.functional.grid_sample(
        torch.cat((x, ones), dim=1), grid, mode=interpolation_mode, padding_mode="zeros", align_corners=False
    )
    values, mask = sampled[:, :channels], sampled[:, channels:]
    if interpolation_mode == "nearest":
        mask = (mask >= 0.5).to(values.dtype)
    out = values * mask + (1.0 - mask) * float(fill)
    return out.permute(0, 2, 3, 1).to(input_tensor.dtype)


def _rotation_grid(torch: Any, height: int, width: int, angle: float, center: Any) -> Any:
    """``[1, H, W, 2]`` normalised (x, y) source points of a rotation by ``angle`` degrees
    (counter-clockwise on screen) about ``center``."""
    cx, cy = (0.0, 0.0) if center is None else (center[0] - width * 0.5, center[1] - height * 0.5)
    radians = math.radians(angle)
    cos, sin = math.cos(radians), math.sin(radians)
    ys, xs = torch.meshgrid(
        torch.arange(height, dtype=torch.float32) - (height - 1) / 2,
        torch.arange(width, dtype=torch.float32) - (width - 1) / 2,
        indexing="ij",
    )
    dx, dy = xs - cx, ys - cy
    src_x = cos * dx - sin * dy + cx
    src_y = sin * dx + cos * dy + cy
    return torch.stack((src_x / (width * 0.5), src_y / (height * 0.5)), dim=-1).unsqueeze(0)


TTNN_NAMES = {
    "golden_maxpool2d": golden_maxpool2d,
    "golden_avg_pool2d": golden_avg_pool2d,
    "golden_adaptive_avg_pool2d": golden_adaptive_avg_pool2d,
    "golden_adaptive_max_pool2d": golden_adaptive_max_pool2d,
    "golden_global_avg_pool2d": golden_global_avg_pool2d,
    "golden_upsample": golden_upsample,
    "golden_grid_sample": golden_grid_sample,
    "golden_rotate": golden_rotate,
}
"""``ttnn.operations.pool``'s names (besides ttnn's ops it re-exports: ``prepare_grid_sample_grid``...)."""
