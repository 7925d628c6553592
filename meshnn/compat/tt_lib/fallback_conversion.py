"""How ``tt_lib.fallback_ops`` runs a torch function on ttnn tensors: every ttnn tensor among the
arguments (in lists, tuples and dicts too) read back as torch (bfloat16 as float32, UINT16 / UINT32 as
int16 / int32), the function called, and every torch tensor it returns made a ttnn tensor again:
leading dims of 1 up to 4-D, float32 as bfloat16, TILE (by default, ``output_layout``) where its last two
dims are whole tiles and ROW_MAJOR otherwise, on the first input's device (else ttnn's default device)
unless ``output_on_device=False``; a ROW_MAJOR tensor of odd width stays on the host."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

import meshnn

_WIDENED = {torch.bfloat16: torch.float32, torch.uint16: torch.int16, torch.uint32: torch.int32}


class OutputFormat:
    """Where and how the outputs of one fallback call go (filled in as the inputs are read)."""

    def __init__(self, layout: Any, on_device: bool) -> None:
        self.layout = layout
        self.on_device = on_device
        self.device: Any = None


def to_torch_args(value: Any, out: OutputFormat) -> Any:
    """``value`` with every ttnn tensor in it read back as torch (module docstring)."""
    if isinstance(value, meshnn.Tensor):
        if out.device is None and out.on_device and meshnn.is_tensor_storage_on_device(value):
            out.device = value.device()
        tensor = meshnn.to_torch(value)
        return tensor.to(_WIDENED[tensor.dtype]) if tensor.dtype in _WIDENED else tensor
    if isinstance(value, dict):
        return {key: to_torch_args(item, out) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_torch_args(item, out) for item in value]
    return value


def to_ttnn_outputs(value: Any, out: OutputFormat) -> Any:
    """``value`` with every torch tensor in it made a ttnn tensor (module docstring)."""
    if isinstance(value, torch.Tensor):
        return _to_ttnn(value, out)
    if isinstance(value, dict):
        return {key: to_ttnn_outputs(item, out) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_ttnn_outputs(item, out) for item in value]
    return value


def _to_ttnn(tensor: torch.Tensor, out: OutputFormat) -> meshnn.Tensor:
    tensor = tensor.detach().reshape((1,) * (4 - tensor.dim()) + tuple(tensor.shape))
    if tensor.dtype == torch.float32:
        tensor = tensor.to(torch.bfloat16)
    tiled = out.layout == meshnn.TILE_LAYOUT and tensor.shape[2] % 32 == 0 and tensor.shape[3] % 32 == 0
    layout = meshnn.TILE_LAYOUT if tiled else meshnn.ROW_MAJOR_LAYOUT
    device = out.device if out.on_device and (tiled or tensor.shape[3] % 2 == 0) else None
    return meshnn.from_torch(tensor, layout=layout, device=device)


def fallback(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (of torch tensors) run on ttnn tensors as the module docstring says."""

    @functools.wraps(function)
    def wrapper(*args: Any, output_layout: Any = meshnn.TILE_LAYOUT, output_on_device: bool = True, **kwargs: Any):
        out = OutputFormat(output_layout, output_on_device)
        torch_args, torch_kwargs = to_torch_args(args, out), to_torch_args(kwargs, out)
        if out.device is None and out.on_device:
            out.device = meshnn.GetDefaultDevice()
        return to_ttnn_outputs(function(*torch_args, **torch_kwargs), out)

    return wrapper


def torch_args(*values: Any) -> list[Any]:
    """Values (ttnn tensors or anything else) as a module's constructor takes them: ttnn tensors read
    back as torch."""
    return to_torch_args(list(values), OutputFormat(meshnn.TILE_LAYOUT, False))
