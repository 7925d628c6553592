"""The torch references ttnn attaches to its conv ops (``ttnn.get_golden_function``),
with ttnn's golden signatures: flattened ``[1, 1, N*H*W, C]`` inputs read with the batch and
image size given, outputs flattened the same way (the pool ops' are in
:mod:`meshnn.ops.pool.goldens`).  torch is imported when one is called.

May import: nothing of meshnn but the conv geometry.
"""

from __future__ import annotations

from typing import Any

from meshnn.ops.conv.geometry import torch_module


def _pads(padding: Any) -> tuple[int, int, int, int]:
    """ttnn's padding (an int, [h, w] or [top, bottom, left, right]) as torch's pad order
    (left, right, top, bottom)."""
    if not hasattr(padding, "__len__"):
        padding = (padding, padding)
    if len(padding) == 2:
        return (padding[1], padding[1], padding[0], padding[0])
    top, bottom, left, right = padding
    return (left, right, top, bottom)


def _flat(output: Any) -> Any:
    n, c, h, w = output.shape
    return output.permute(0, 2, 3, 1).reshape(1, 1, n * h * w, c)


def _activation(torch: Any, conv_config: Any, output: Any) -> Any:
    activation = getattr(conv_config, "activation", None)
    if activation is None:
        return output
    from meshnn.ops.eltwise.activations import activation_steps, apply_steps

    steps = activation_steps("conv2d", "conv_config.activation", activation)
    return torch.from_numpy(apply_steps(steps, output.numpy()))


def conv2d(
    input_tensor: Any,
    weight_tensor: Any,
    in_channels: int,
    out_channels: int,
    batch_size: int,
    input_height: int,
    input_width: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any = (1, 1),
    groups: int = 1,
    bias_tensor: Any = None,
    conv_config: Any = None,
    return_output_dim: bool = False,
    return_weights_and_bias: bool = False,
    **_: Any,
) -> Any:
    """``ttnn.conv2d``'s reference: torch's conv2d of the flattened NHWC input, zero-padded as
    ttnn pads (asymmetric padding too), the activation applied, flattened back."""
    torch = torch_module()
    x = input_tensor.reshape(batch_size, input_height, input_width, -1)[..., :in_channels].permute(0, 3, 1, 2)
    x = torch.nn.functional.pad(x.float(), _pads(padding))
    bias = None if bias_tensor is None else bias_tensor.reshape(-1).float()
    out = torch.nn.functional.conv2d(x, weight_tensor.float(), bias, stride=stride, dilation=dilation, groups=groups)
    out = _flat(_activation(torch, conv_config, out))
    return [out] if return_output_dim or return_weights_and_bias else out
