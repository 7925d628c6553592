"""``ttnn.model_preprocessing.preprocess_model_parameters`` for torch models built of Linear,
LayerNorm and Embedding layers: weights converted as ttnn's default preprocessors do.

Linear: weight (out, in) transposed to (in, out), bias reshaped to (1, out), both bfloat16 TILE;
LayerNorm: weight and bias reshaped to (1, H), bfloat16 TILE; Embedding: weight as is, bfloat16
ROW_MAJOR.  An active ``ttnn.distribute(mapper)`` applies to every conversion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import meshnn
from meshnn.testing.module_args import (  # noqa: F401  (ttnn.model_preprocessing's names)
    Conv2dArgs,
    ConvTranspose2dArgs,
    GroupNormArgs,
    MaxPool2dArgs,
    ModuleArgs,
    infer_ttnn_module_args,
)


class ParameterDict(dict):
    """Parameters by name, also reachable as attributes (``parameters.fc1.weight``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no parameter {name!r}; have {sorted(self)}") from None


def make_parameter_dict(dictionary: dict) -> ParameterDict:
    """``dictionary`` as a ParameterDict, its dict values converted too (a ParameterDict and a
    ``ModuleArgs`` record are kept as they are), as ttnn converts a custom preprocessor's result."""
    if isinstance(dictionary, ParameterDict):
        return dictionary
    return ParameterDict(
        {
            key: make_parameter_dict(value) if isinstance(value, dict) and not isinstance(value, ModuleArgs) else value
            for key, value in dictionary.items()
        }
    )


class ParameterList(list):
    """Parameters by index (a model's ``ModuleList`` s); ``i in parameters`` asks whether index ``i``
    exists, as ttnn's does."""

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and index < len(self)  # (a negative index counts from the end)


def fold_batch_norm2d_into_conv2d(conv: Any, bn: Any) -> tuple[Any, Any]:
    """A ``Conv2d`` followed by an eval-mode ``BatchNorm2d`` as one conv's ``(weight, bias)`` (torch
    tensors): with ``s = bn.weight / sqrt(running_var + eps)`` per output channel, ``weight * s`` and
    ``(bias - running_mean) * s + bn.bias`` (``bn.bias - running_mean * s`` for a conv without bias).
    A norm without running statistics cannot be folded and is refused."""
    if not getattr(bn, "track_running_stats", False):
        raise meshnn.MeshnnValueError("BatchNorm2d must have track_running_stats=True to be folded into Conv2d")
    import torch

    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    weight = conv.weight * scale[:, None, None, None]
    if conv.bias is not None:
        return weight, (conv.bias - bn.running_mean) * scale + bn.bias
    return weight, bn.bias - bn.running_mean * scale


def _convert(tensor: Any, layout: meshnn.Layout, device: meshnn.MeshDevice | None) -> meshnn.Tensor:
    return meshnn.from_torch(tensor.detach().contiguous(), dtype=meshnn.bfloat16, layout=layout, device=device)


def preprocess_linear_weight(
    weight: Any,
    *,
    dtype: meshnn.DataType = meshnn.bfloat16,
    layout: meshnn.Layout = meshnn.TILE_LAYOUT,
    weights_mesh_mapper: Any = None,
    device=None,
) -> meshnn.Tensor:
    """A torch Linear's weight ``(out, in)`` as ttnn's ``(in, out)`` host tensor (on ``device`` when given)."""
    weight = weight.T.contiguous()
    return meshnn.from_torch(weight, dtype=dtype, layout=layout, mesh_mapper=weights_mesh_mapper, device=device)


def preprocess_linear_bias(
    bias: Any,
    *,
    dtype: meshnn.DataType = meshnn.bfloat16,
    layout: meshnn.Layout = meshnn.TILE_LAYOUT,
    weights_mesh_mapper: Any = None,
    device=None,
) -> meshnn.Tensor:
    """A torch Linear's bias ``(out,)`` as a ``(1, out)`` tensor."""
    return meshnn.from_torch(
        bias.reshape(1, -1), dtype=dtype, layout=layout, mesh_mapper=weights_mesh_mapper, device=device
    )


def preprocess_layernorm_parameter(
    parameter: Any, *, dtype: meshnn.DataType, layout: meshnn.Layout = meshnn.TILE_LAYOUT
) -> meshnn.Tensor:
    """A norm's weight or bias ``(H,)`` as a ``(1, H)`` host tensor, as ttnn's preprocessor makes it."""
    return meshnn.from_torch(parameter.reshape(1, -1), dtype=dtype, layout=layout)


def preprocess_embedding_weight(weight: Any, *, dtype: meshnn.DataType) -> meshnn.Tensor:
    """An embedding's table as it is, ROW_MAJOR on the host."""
    return meshnn.from_torch(weight, dtype=dtype)


def _default(module: Any, device: meshnn.MeshDevice | None) -> ParameterDict:
    import torch

    if isinstance(module, torch.nn.Linear):
        out = ParameterDict(weight=preprocess_linear_weight(module.weight, device=device))
        if module.bias is not None:
            out["bias"] = preprocess_linear_bias(module.bias, device=device)
        return out
    if isinstance(module, torch.nn.LayerNorm):
        out = ParameterDict()
        if module.weight is not None:
            out["weight"] = _convert(module.weight.reshape(1, -1), meshnn.TILE_LAYOUT, device)
        if module.bias is not None:
            out["bias"] = _convert(module.bias.reshape(1, -1), meshnn.TILE_LAYOUT, device)
        return out
    if isinstance(module, torch.nn.Embedding):
        return ParameterDict(weight=_convert(module.weight, meshnn.ROW_MAJOR_LAYOUT, device))
    children = dict(module.named_children())
    if not children:
        if not any(True for _ in module.parameters(recurse=False)):
            return ParameterDict()  # activations, dropout: nothing to convert
        raise meshnn.NotImplementedByMeshnn(f"model_preprocessing of {type(module).__name__} layers")
    return ParameterDict({name: _default(child, device) for name, child in children.items()})


def preprocess_model_parameters(
    model_name: str | None = None,
    *,
    initialize_model: Callable[[], Any] | None = None,
    model: Any = None,
    device: meshnn.MeshDevice | None = None,
    custom_preprocessor: Callable[..., ParameterDict | dict] | None = None,
    convert_to_ttnn: Callable[..., bool] | None = None,
    prefix: str = "",
    version: str | None = None,
    **unknown: Any,
) -> ParameterDict:
    """Convert every parameter of the torch model (``initialize_model()`` or ``model``).  ``version``
    keys ttnn's on-disk cache of converted parameters; meshnn converts afresh, so it is only checked.
    Any other keyword is refused by name, as ttnn's signature would."""
    if unknown:
        raise meshnn.MeshnnTypeError(
            f"preprocess_model_parameters() got an unexpected keyword argument {next(iter(unknown))!r}"
        )
    if version is not None and not isinstance(version, str):
        raise meshnn.MeshnnTypeError(f"preprocess_model_parameters: version must be a str, got {version!r}")
    module = model if model is not None else (initialize_model() if initialize_model is not None else None)
    if module is None:
        raise meshnn.MeshnnValueError("preprocess_model_parameters needs initialize_model= or model=")

    def walk(current: Any, name: str) -> ParameterDict:
        if custom_preprocessor is not None:
            custom = custom_preprocessor(current, name, **_custom_keywords(custom_preprocessor, convert_to_ttnn))
            if custom:
                return make_parameter_dict(custom)
        children = dict(current.named_children())
        if children and not _is_leaf_layer(current):
            return ParameterDict({n: walk(c, f"{name}.{n}" if name else n) for n, c in children.items()})
        return _default(current, device)

    return walk(module, prefix)


def _is_leaf_layer(module: Any) -> bool:
    import torch

    return isinstance(module, torch.nn.Linear | torch.nn.LayerNorm | torch.nn.Embedding)


def _custom_keywords(function: Callable[..., Any], convert_to_ttnn: Callable[..., bool] | None) -> dict[str, Any]:
    """What ttnn passes a custom preprocessor besides ``(model, name)``: ``ttnn_module_args`` (None:
    no model is run here) and ``convert_to_ttnn`` (the caller's, or one that is always True), each
    by keyword when its signature names it; any other parameter is refused, as ttnn refuses it."""
    import inspect

    try:
        names = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return {}
    if len(names) < 2:
        raise meshnn.MeshnnValueError("Custom preprocessor must have at least two parameters: model and name")
    keywords: dict[str, Any] = {}
    for name in names[2:]:
        if name == "ttnn_module_args":
            keywords[name] = None
        elif name == "convert_to_ttnn":
            keywords[name] = convert_to_ttnn if convert_to_ttnn is not None else (lambda model, full_name: True)
        else:
            raise meshnn.MeshnnValueError(f"Custom preprocessor: unsupported parameter {name!r}")
    return keywords
