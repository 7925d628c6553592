"""``tt_lib.fallback_ops``: torch operations on ttnn tensors (read back, computed by torch, written as
ttnn tensors again: :mod:`.fallback_conversion`), and torch modules whose weights are given as ttnn
tensors.  Every function takes ``output_layout`` (TILE by default) and ``output_on_device`` (True)."""

from __future__ import annotations

import sys
from typing import Any

import torch

from .fallback_conversion import fallback
from .fallback_modules import AdaptiveAvgPool2d, BatchNorm2d, Conv2d, GroupNorm, LayerNorm, MaxPool2d

F = torch.nn.functional


@fallback
def full(size: list[int], fill_value: float) -> Any:
    """A tensor of ``size`` filled with ``fill_value``."""
    return torch.full(size, fill_value, dtype=torch.float32)


@fallback
def tensor_slice(input: Any, slices: list[Any]) -> Any:
    """``input[slices]`` (``slice(None)`` for ``:``, ``...`` for an ellipsis)."""
    return input[tuple(slices)]


@fallback
def reshape(input: Any, N: int, C: int, H: int, W: int) -> Any:
    """``input`` as ``(N, C, H, W)``."""
    return torch.reshape(input, (N, C, H, W))


@fallback
def permute(input: Any, dims: tuple[int, ...]) -> Any:
    return torch.permute(input, dims)


@fallback
def chunk(input: Any, chunks: int, dim: int = 0) -> Any:
    return torch.chunk(input, chunks, dim)


@fallback
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Any:
    """A 2-D convolution; ``bias`` of any shape ending in the output channels."""
    bias = None if bias is None else bias.reshape(bias.shape[-1])
    return F.conv2d(input, weight, bias, stride, padding, dilation, groups)


@fallback
def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-05) -> Any:
    """Group norm over ``input``'s channels (dim 1); weight and bias reshaped to the channels."""
    channels = input.shape[1]
    weight = None if weight is None else weight.reshape(channels)
    bias = None if bias is None else bias.reshape(channels)
    return F.group_norm(input, num_groups, weight, bias, eps)


@fallback
def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-05) -> Any:
    """Layer norm over the last dims ``normalized_shape``; weight and bias reshaped to them."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    weight = None if weight is None else weight.reshape(shape)
    bias = None if bias is None else bias.reshape(shape)
    return F.layer_norm(input, shape, weight, bias, eps)


@fallback
def pad(input, pad: tuple[int, ...], mode: str = "constant", value: float | None = None) -> Any:
    return F.pad(input, pad, mode, value)


@fallback
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, **options) -> Any:
    return F.interpolate(input, size, scale_factor, mode, align_corners, **options)


@fallback
def repeat(input: Any, sizes: list[int]) -> Any:
    return input.repeat(sizes)


@fallback
def repeat_interleave(input, repeats, dim=None, *, output_size=None) -> Any:
    return torch.repeat_interleave(input, repeats, dim, output_size=output_size)


@fallback
def concat(tensors: list[Any], dim: int = 0) -> Any:
    return torch.concat(tensors, dim)


@fallback
def silu(input: Any) -> Any:
    return F.silu(input)


@fallback
def softmax(input: Any, dim: int | None = None) -> Any:
    return F.softmax(input, dim)


@fallback
def torch_argmax(input: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    return torch.argmax(input, dim=dim, keepdim=keepdim)


@fallback
def torch_argmin(input: Any, dim: int, keepdim: bool) -> Any:
    return torch.argmin(input, dim=dim, keepdim=keepdim)


def _elementwise(name: str, function: Any) -> Any:
    def run(*args: Any) -> Any:
        return function(*args)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"``torch.{function.__name__}`` element by element."
    return fallback(run)


ceil = _elementwise("ceil", torch.ceil)
floor = _elementwise("floor", torch.floor)
trunc = _elementwise("trunc", torch.trunc)
bitwise_not = _elementwise("bitwise_not", torch.bitwise_not)
unary_fmod = binary_fmod = _elementwise("fmod", torch.fmod)
unary_bitwise_or = binary_bitwise_or = _elementwise("bitwise_or", torch.bitwise_or)
unary_bitwise_and = binary_bitwise_and = _elementwise("bitwise_and", torch.bitwise_and)
unary_bitwise_xor = binary_bitwise_xor = _elementwise("bitwise_xor", torch.bitwise_xor)
unary_bitwise_right_shift = binary_bitwise_right_shift = _elementwise("right_shift", torch.bitwise_right_shift)
unary_bitwise_left_shift = binary_bitwise_left_shift = _elementwise("left_shift", torch.bitwise_left_shift)

fallback_ops = sys.modules[__name__]
"""``from tt_lib.fallback_ops import fallback_ops``: tt-metal's package re-exports its one module."""

MODULES = (AdaptiveAvgPool2d, BatchNorm2d, Conv2d, GroupNorm, LayerNorm, MaxPool2d)
"""The torch modules of ttnn-tensor weights (:mod:`.fallback_modules`)."""
