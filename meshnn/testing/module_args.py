"""``ttnn.model_preprocessing.infer_ttnn_module_args`` and its argument records (``ModuleArgs``,
``Conv2dArgs``, ``ConvTranspose2dArgs``, ``MaxPool2dArgs``, ``GroupNormArgs``): what a torch model's
convolutions, poolings and group norms were called with, found by running it once.

ttnn traces the run (``ttnn.tracer``) and reads the graph; meshnn watches the same run through
forward hooks on every submodule, which see the same calls: each module called during
``run_model(model)`` gets an entry, under the last part of its name, in the entry of the module
whose call it ran in (a ``ModuleList``'s children sit in the module that iterates them, as in
ttnn's graph; a name that is a number is also an int key), the last call winning.  A ``Conv2d`` /
``ConvTranspose2d`` / ``MaxPool2d`` / ``GroupNorm`` gets its record (its own attributes plus the
batch size, height and width of its first input, and ttnn's fixed choices: HiFi4, bfloat16
activations and weights); any other module a dict of its children's entries (empty for one with no
called children).  The result is the root's entry, as nested ``DotAccessDict`` s with the records
left as they are (records read as attributes too).

Layers: imports the public root and :mod:`meshnn.compat`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import meshnn
from meshnn.compat.dot_access import make_dot_access_dict


class ModuleArgs(dict):
    """A module's recorded arguments (a dict)."""


class _Record(ModuleArgs):
    """Arguments readable as attributes (``args.kernel_size``); a missing one is a KeyError, as in ttnn."""

    __getattr__ = dict.__getitem__
    __delattr__ = dict.__delitem__


class Conv2dArgs(_Record):
    """A ``torch.nn.Conv2d`` call."""


class ConvTranspose2dArgs(_Record):
    """A ``torch.nn.ConvTranspose2d`` call."""


class MaxPool2dArgs(_Record):
    """A ``torch.nn.MaxPool2d`` call."""


class GroupNormArgs(_Record):
    """A ``torch.nn.GroupNorm`` call."""


def _conv(module: Any, shape: tuple[int, ...], device: Any, *, transposed: bool) -> ModuleArgs:
    fields = dict(
        in_channels=module.in_channels,
        out_channels=module.out_channels,
        kernel_size=module.kernel_size,
        stride=module.stride,
        padding=module.padding,
    )
    if transposed:
        fields["output_padding"] = module.output_padding
    fields |= dict(
        dilation=module.dilation,
        groups=module.groups,
        padding_mode=module.padding_mode,
        batch_size=shape[0],
        input_height=shape[-2],
        input_width=shape[-1],
        math_fidelity=meshnn.MathFidelity.HiFi4,
        dtype=meshnn.bfloat16,
        weights_dtype=meshnn.bfloat16,
        use_1d_systolic_array=True,
        enable_auto_formatting=False,
        conv_blocking_and_parallelization_config_override={},
        device=device,
    )
    return (ConvTranspose2dArgs if transposed else Conv2dArgs)(fields)


def _record(module: Any, shape: tuple[int, ...], device: Any) -> ModuleArgs | None:
    """The record of a module of the four kinds, None for any other."""
    import torch

    if isinstance(module, torch.nn.ConvTranspose2d | torch.nn.Conv2d):
        return _conv(module, shape, device, transposed=isinstance(module, torch.nn.ConvTranspose2d))
    if isinstance(module, torch.nn.MaxPool2d):
        pool = ("kernel_size", "stride", "padding", "dilation")
        sizes = dict(batch_size=shape[0], input_channels=shape[1], input_height=shape[-2], input_width=shape[-1])
        return MaxPool2dArgs({n: getattr(module, n) for n in pool} | sizes | dict(dtype=meshnn.bfloat16))
    if isinstance(module, torch.nn.GroupNorm):
        norm = ("num_groups", "num_channels", "eps", "affine")
        sizes = dict(batch_size=shape[0], input_height=shape[-2], input_width=shape[-1])
        return GroupNormArgs({n: getattr(module, n) for n in norm} | sizes | dict(dtype=meshnn.bfloat16))
    return None


def infer_ttnn_module_args(*, model: Any, run_model: Callable[[Any], Any] | None, device: Any) -> Any:
    """The arguments of every module ``run_model(model)`` calls, nested as the calls are (the
    module's rules); None when ``run_model`` is None."""
    if run_model is None:
        return None
    top: dict[Any, Any] = {}
    stack: list[dict[Any, Any]] = [top]

    def enter(name: str) -> Callable[..., None]:
        key = name.rsplit(".", 1)[-1]

        def hook(module: Any, args: tuple[Any, ...]) -> None:
            first = args[0] if args else None
            entry = _record(module, tuple(first.shape) if hasattr(first, "shape") else (), device)
            parent = stack[-1]
            inner = parent.get(key, {}) if entry is None else {}
            parent[key] = entry if entry is not None else inner
            if key.isdigit():
                parent[int(key)] = parent[key]
            stack.append(inner)

        return hook

    def leave(module: Any, args: tuple[Any, ...], output: Any) -> None:
        stack.pop()

    handles = []
    for name, module in model.named_modules():
        handles += [module.register_forward_pre_hook(enter(name)), module.register_forward_hook(leave)]
    try:
        run_model(model)
    finally:
        for handle in handles:
            handle.remove()
    return make_dot_access_dict(top.get("", {}), ignore_types=(ModuleArgs,))
