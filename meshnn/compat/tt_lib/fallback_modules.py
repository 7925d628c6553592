"""``tt_lib.fallback_ops``' torch modules: built from ttnn tensors (weights, biases, running statistics
read back as torch) and run on ttnn tensors as the fallback functions are
(:func:`.fallback_conversion.fallback`)."""

from __future__ import annotations

from typing import Any

import torch

from .fallback_conversion import fallback, torch_args


def _vector(value: Any, length: int) -> torch.nn.Parameter:
    return torch.nn.Parameter(value.reshape(length))


class _Fallback(torch.nn.Module):
    """A module whose ``pt_fallback`` torch module runs on ttnn tensors (NCHW unless ``channels_last``)."""

    pt_fallback: torch.nn.Module
    channels_last = False

    @fallback
    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if self.channels_last:
            return self.pt_fallback(input.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        return self.pt_fallback(input)


class Conv2d(_Fallback):
    """``torch.nn.Conv2d`` with ``weights`` (and ``biases`` of any shape ending in the output channels)."""

    def __init__(self, weights, biases, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros") -> None:  # fmt: skip
        super().__init__()
        weights, biases = torch_args(weights, biases)
        self.pt_fallback = torch.nn.Conv2d(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode
        )
        self.pt_fallback.weight = torch.nn.Parameter(weights)
        self.pt_fallback.bias = None if biases is None else _vector(biases, biases.shape[-1])


class BatchNorm2d(_Fallback):
    """``torch.nn.BatchNorm2d`` with its weights, biases and running statistics given."""

    def __init__(self, weights, biases, running_mean, running_var, num_batches_tracked, num_features, eps=1e-05,
                 momentum=0.1, affine=True, track_running_stats=True) -> None:  # fmt: skip
        super().__init__()
        weights, biases, mean, var, tracked = torch_args(
            weights, biases, running_mean, running_var, num_batches_tracked
        )
        self.pt_fallback = torch.nn.BatchNorm2d(num_features, eps, momentum, affine, track_running_stats)
        self.pt_fallback.weight = _vector(weights, num_features)
        self.pt_fallback.bias = _vector(biases, num_features)
        self.pt_fallback.running_mean = mean.reshape(num_features)
        self.pt_fallback.running_var = var.reshape(num_features)
        self.pt_fallback.num_batches_tracked = torch.tensor(torch.as_tensor(tracked).reshape(-1)[0].item())


class GroupNorm(_Fallback):
    """``torch.nn.GroupNorm`` with its weights and biases given."""

    def __init__(self, weights, biases, num_groups: int, num_channels: int, eps=1e-05, affine=True) -> None:
        super().__init__()
        weights, biases = torch_args(weights, biases)
        self.pt_fallback = torch.nn.GroupNorm(num_groups, num_channels, eps, affine)
        self.pt_fallback.weight = _vector(weights, num_channels)
        self.pt_fallback.bias = _vector(biases, num_channels)


class LayerNorm(_Fallback):
    """``torch.nn.LayerNorm`` over ``normalized_shape`` with its weights and biases given."""

    def __init__(self, weights, biases, normalized_shape, eps=1e-05, elementwise_affine=True) -> None:
        super().__init__()
        weights, biases = torch_args(weights, biases)
        shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
        self.pt_fallback = torch.nn.LayerNorm(shape, eps, elementwise_affine)
        self.pt_fallback.weight = torch.nn.Parameter(weights.reshape(shape))
        self.pt_fallback.bias = torch.nn.Parameter(biases.reshape(shape))


class MaxPool2d(_Fallback):
    """``torch.nn.MaxPool2d``; ``channels_last`` takes and gives NHWC; ``reshape_2d`` gives the output as
    ``(1, 1, N * H * W, C)`` (of an NHWC output)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False,
                 channels_last=False, reshape_2d=False) -> None:  # fmt: skip
        super().__init__()
        self.pt_fallback = torch.nn.MaxPool2d(kernel_size, stride, padding, dilation, return_indices, ceil_mode)
        self.channels_last = channels_last
        self.reshape_2d = reshape_2d

    @fallback
    def forward(self, input: torch.Tensor) -> torch.Tensor:
        output = input.permute(0, 3, 1, 2) if self.channels_last else input
        output = self.pt_fallback(output)
        output = output.permute(0, 2, 3, 1) if self.channels_last else output
        if self.reshape_2d:
            output = output.reshape(1, 1, output.shape[0] * output.shape[1] * output.shape[2], output.shape[3])
        return output


class AdaptiveAvgPool2d(_Fallback):
    """``torch.nn.AdaptiveAvgPool2d``; ``channels_last`` takes and gives NHWC."""

    def __init__(self, output_size, channels_last: bool = False) -> None:
        super().__init__()
        self.pt_fallback = torch.nn.AdaptiveAvgPool2d(output_size)
        self.channels_last = channels_last
