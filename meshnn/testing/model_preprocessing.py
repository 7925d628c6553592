"""``ttnn.model_preprocessing.preprocess_model_parameters``: a torch model's parameters converted
as ttnn converts them, module by module (a custom preprocessor first, then ttnn's default one), then
put on the device when one is given.

Linear: weight (out, in) transposed to (in, out), bias reshaped to (1, out), both bfloat16 TILE;
LayerNorm: weight and bias reshaped to (1, H), bfloat16 TILE; Embedding: weight as is, bfloat16
ROW_MAJOR; any other layer's own parameters as host ROW_MAJOR tensors by their torch dtype.  A
``ModuleList`` becomes a ParameterList, a Sequential's children int keys.  An active
``ttnn.distribute(mapper)`` applies to every conversion.
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


TORCH_TO_TTNN_DTYPE = {  # ttnn's map for parameters of layers its default preprocessor does not know
    "uint8": "uint8",
    "int16": "uint16",
    "int32": "int32",
    "int64": "uint32",
    "bfloat16": "bfloat16",
    "float32": "bfloat16",
    "float64": "bfloat16",
}


def default_preprocessor(model: Any, name: str, ttnn_module_args: Any) -> ParameterDict:
    """ttnn's default: a Linear's weight and bias, a LayerNorm's weight and bias, an Embedding's
    table, converted to bfloat16 host tensors; an empty dict for any other layer."""
    import torch

    parameters: dict[str, Any] = {}
    if isinstance(model, torch.nn.Linear):
        parameters["weight"] = preprocess_linear_weight(model.weight, dtype=meshnn.bfloat16)
        if model.bias is not None:
            parameters["bias"] = preprocess_linear_bias(model.bias, dtype=meshnn.bfloat16)
    elif isinstance(model, torch.nn.LayerNorm):
        parameters["weight"] = preprocess_layernorm_parameter(model.weight, dtype=meshnn.bfloat16)
        parameters["bias"] = preprocess_layernorm_parameter(model.bias, dtype=meshnn.bfloat16)
    elif isinstance(model, torch.nn.Embedding):
        parameters["weight"] = preprocess_embedding_weight(model.weight, dtype=meshnn.bfloat16)
    return make_parameter_dict(parameters)


def _own_parameters(model: Any, converting: bool) -> dict[str, Any]:
    """A module's own parameters (not its children's) when the default preprocessor does not take
    it: host ROW_MAJOR tensors by their torch dtype (:data:`TORCH_TO_TTNN_DTYPE`), or, where
    ``convert_to_ttnn`` said no, the torch tensors as they are (a Linear's weight transposed)."""
    import torch

    own = [(key, value) for key, value in model.named_parameters() if "." not in key]
    if converting:
        return {key: meshnn.from_torch(value, dtype=_ttnn_dtype(value.dtype)) for key, value in own}
    if isinstance(model, torch.nn.Linear):
        kept = {"weight": model.weight.T.contiguous()}
        if model.bias is not None:
            kept["bias"] = model.bias
        return kept
    return dict(own)


def _ttnn_dtype(dtype: Any) -> meshnn.DataType:
    name = str(dtype).removeprefix("torch.")
    if name not in TORCH_TO_TTNN_DTYPE:
        raise meshnn.MeshnnTypeError(f"preprocess_model_parameters: no ttnn dtype for a torch.{name} parameter")
    return getattr(meshnn, TORCH_TO_TTNN_DTYPE[name])


def convert_torch_model_to_ttnn_model(
    model: Any,
    *,
    convert_to_ttnn: Callable[..., bool],
    custom_preprocessor: Callable[..., Any] | None,
    name: Any,
    ttnn_module_args: Any,
) -> ParameterDict | ParameterList:
    """One module's parameters as ttnn converts them: a ``ModuleList`` as a ParameterList of its
    children's; else the custom preprocessor's result when it returns anything; else the module's
    own parameters (:func:`_own_parameters`) and, for a module the default preprocessor does not
    know, its children's by name: a digit name as an int key (``parameters[0]`` for a Sequential's
    first layer), a child with no parameters left out."""
    import torch

    def child_args(key: Any) -> Any:
        if ttnn_module_args is None:
            return None
        return (
            ttnn_module_args[key]
            if isinstance(key, int) and isinstance(ttnn_module_args, list)
            else ttnn_module_args.get(key)
        )

    def convert(child: Any, key: Any, child_name: Any) -> Any:
        return convert_torch_model_to_ttnn_model(
            child, convert_to_ttnn=convert_to_ttnn, custom_preprocessor=custom_preprocessor,
            name=child_name, ttnn_module_args=child_args(key),
        )  # fmt: skip

    if isinstance(model, torch.nn.ModuleList):
        return ParameterList(
            convert(child, index, f"{name}.{index}" if name else f"{index}")
            for index, child in enumerate(model.children())
        )
    if custom_preprocessor is not None:
        keywords = _custom_keywords(custom_preprocessor, convert_to_ttnn, ttnn_module_args)
        custom = custom_preprocessor(model, name, **keywords)
        if custom:
            return make_parameter_dict(custom)
    converting = convert_to_ttnn(model, name)
    if converting:
        preprocessed = default_preprocessor(model, name, ttnn_module_args)
        if preprocessed:
            _check_complete(model, preprocessed)
            return preprocessed
    parameters = make_parameter_dict(_own_parameters(model, converting))
    for child_name, child in model.named_children():
        key: Any = int(child_name) if child_name.isdigit() else child_name
        converted = convert(child, key, f"{name}.{key}" if name else key)
        if converted:
            parameters[key] = converted
    return parameters


def move_to_device(parameters: Any, device: Any) -> Any:
    """Every ttnn tensor in ``parameters`` (ParameterDicts and ParameterLists, nested) put on
    ``device`` in place, as ttnn does when ``preprocess_model_parameters`` is given a device; a
    tensor already on a device and anything else stay as they are."""
    if isinstance(parameters, ParameterDict):
        for key, value in list(parameters.items()):
            parameters[key] = move_to_device(value, device)
    elif isinstance(parameters, ParameterList):
        for index, value in enumerate(parameters):
            parameters[index] = move_to_device(value, device)
    elif isinstance(parameters, meshnn.Tensor) and not meshnn.is_tensor_storage_on_device(parameters):
        return meshnn.to_device(parameters, device)
    return parameters


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
    """Convert every parameter of the torch model (``initialize_model()`` or ``model``, put in eval
    mode as ttnn does) by :func:`convert_torch_model_to_ttnn_model`, then put every ttnn tensor on
    ``device`` when one is given (:func:`move_to_device`).  ``version`` keys ttnn's on-disk cache of
    converted parameters; meshnn converts afresh, so it is only checked.  Any other keyword is
    refused by name, as ttnn's signature would."""
    if unknown:
        raise meshnn.MeshnnTypeError(
            f"preprocess_model_parameters() got an unexpected keyword argument {next(iter(unknown))!r}"
        )
    if version is not None and not isinstance(version, str):
        raise meshnn.MeshnnTypeError(f"preprocess_model_parameters: version must be a str, got {version!r}")
    module = model if model is not None else (initialize_model() if initialize_model is not None else None)
    if module is None:
        raise meshnn.MeshnnValueError("preprocess_model_parameters needs initialize_model= or model=")
    if getattr(module, "training", False):
        module.eval()
    parameters = convert_torch_model_to_ttnn_model(
        module,
        convert_to_ttnn=convert_to_ttnn if convert_to_ttnn is not None else (lambda model, full_name: True),
        custom_preprocessor=custom_preprocessor,
        name=prefix if prefix is not None else "",
        ttnn_module_args=None,
    )
    if isinstance(parameters, dict):
        parameters = make_parameter_dict(parameters)
    return move_to_device(parameters, device) if device is not None else parameters


def _check_complete(model: Any, preprocessed: ParameterDict) -> None:
    children = list(model.named_children())
    own = [key for key, _ in model.named_parameters() if "." not in key]
    if len(preprocessed) != len(children) + len(own):
        raise meshnn.MeshnnValueError("Not all children or parameters were converted using default_preprocessor!")


def _custom_keywords(
    function: Callable[..., Any], convert_to_ttnn: Callable[..., bool], ttnn_module_args: Any
) -> dict[str, Any]:
    """What ttnn passes a custom preprocessor besides ``(model, name)``: ``ttnn_module_args`` (None:
    no model is run here) and ``convert_to_ttnn``, each by keyword when its signature names it; any
    other parameter is refused, as ttnn refuses it."""
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
            keywords[name] = ttnn_module_args
        elif name == "convert_to_ttnn":
            keywords[name] = convert_to_ttnn
        else:
            raise meshnn.MeshnnValueError(f"Custom preprocessor: unsupported parameter {name!r}")
    return keywords
