"""``ttnn.operation_tracer`` (tt-metal 2026-06): each top-level op's parameters and return value,
written to a JSON file per call while tracing is on (``enable_tracing(True)``, the module's
``_ENABLE_TRACE`` set, or pytest run with ``--trace-params``).

A file is ``<n>_<op name with '.' as '_'>_<timestamp>.json`` in ``$TTNN_OPERATION_TRACE_DIR``, else
``ttnn.CONFIG.root_report_path / "operation_parameters"``; it holds ``operation_id`` (``n``, the
module's ``_OPERATION_COUNTER``), ``operation_name`` (``ttnn.add``), ``args`` (``{"position", "value"}``
each), ``kwargs``, ``return_value`` and, when set, ``sweep_source_hash``.  A tensor is its metadata
(shape, dtype, layout, storage type, memory config, its mesh's shape and device ids, placements),
and its values too after ``enable_tensor_value_serialization(True)`` (read back to the host: the
read is not traced).  Other values: JSON scalars as they are, lists and dicts walked, a MeshDevice
by its shape and device ids, configs through tt-metal's ``models.common.tensor_utils`` serializers
when that package is importable, anything else as ``{"type", "repr"}``.

While tracing is on, the module's hook is among ttnn's post-operation hooks
(:mod:`meshnn.mesh.op_hooks`): every registry op's top-level call is offered to it.  Turning tracing
on or off (``enable_tracing``, or setting ``_ENABLE_TRACE``: the module's attribute is a property
that keeps the hook in step) adds or removes the hook, so an untraced run has none.  (Host calls
that are no registry op, ``ttnn.from_torch`` / ``ttnn.to_device``, are not traced.)

Layers: imports errors, the mesh layer's hooks, the tensor layer, the registry (an op's ttnn name)
and ``ttnn.CONFIG``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import pathlib
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import wraps
from typing import Any

from meshnn.capture.config import CONFIG
from meshnn.errors import MeshnnTypeError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.op_hooks import POST_OPERATION_HOOKS
from meshnn.ops.registry import entry_of
from meshnn.tensor.interop import to_torch
from meshnn.tensor.tensor import Tensor

_OPERATION_COUNTER = 0
_STATE = {"enabled": False}  # ``_ENABLE_TRACE``: read and set through the module's property
_TRACE_PARAMS_IN_ARGV: bool | None = None
_IS_SERIALIZING = False
_SERIALIZE_TENSOR_VALUES = False
_SWEEP_SOURCE_HASH: str | None = None
_TRACE_PARAMS_FLAG = "--trace-params"


def _set_enabled(enable: bool) -> None:
    """Tracing on or off, the hook added or removed with it (kept while ``--trace-params`` is given)."""
    _STATE["enabled"] = bool(enable)
    wanted = _is_tracing_enabled()
    if wanted and _operation_hook not in POST_OPERATION_HOOKS:
        POST_OPERATION_HOOKS.append(_operation_hook)
    elif not wanted and _operation_hook in POST_OPERATION_HOOKS:
        POST_OPERATION_HOOKS.remove(_operation_hook)


def enable_tracing(enable: bool = True) -> None:
    """Turn tracing on (or off)."""
    if not isinstance(enable, bool):
        raise MeshnnTypeError(f"operation_tracer.enable_tracing: enable must be a bool, got {enable!r}")
    _set_enabled(enable)


def _is_tracing_enabled() -> bool:
    global _TRACE_PARAMS_IN_ARGV
    if _TRACE_PARAMS_IN_ARGV is None:
        _TRACE_PARAMS_IN_ARGV = _TRACE_PARAMS_FLAG in sys.argv
    return bool(_STATE["enabled"] or _TRACE_PARAMS_IN_ARGV)


def is_tracing_enabled() -> bool:
    """Whether tracing is on."""
    return _is_tracing_enabled()


def set_sweep_source_hash(hash_value: str | None = None) -> None:
    """The sweep vector's config hash written into every trace file from now on (None: none)."""
    global _SWEEP_SOURCE_HASH
    if hash_value is not None and not isinstance(hash_value, str):
        raise MeshnnTypeError(f"operation_tracer.set_sweep_source_hash: hash_value must be a str, got {hash_value!r}")
    _SWEEP_SOURCE_HASH = hash_value


def enable_tensor_value_serialization(enable: bool = True) -> None:
    """Write tensors' values too (default: their metadata only)."""
    global _SERIALIZE_TENSOR_VALUES
    if not isinstance(enable, bool):
        raise MeshnnTypeError(
            f"operation_tracer.enable_tensor_value_serialization: enable must be a bool, got {enable!r}"
        )
    _SERIALIZE_TENSOR_VALUES = enable


def _serializers() -> dict[str, Callable[[Any], Any]] | None:
    """tt-metal's config serializers (``models.common.tensor_utils``) when importable."""
    try:
        if importlib.util.find_spec("models.common.tensor_utils") is None:
            return None
        utils = importlib.import_module("models.common.tensor_utils")
    except (ImportError, AttributeError, ValueError):
        return None
    names = ("memory_config_to_dict", "compute_kernel_config_to_dict", "program_config_to_dict")
    return {name: getattr(utils, name) for name in names if hasattr(utils, name)}


def _mesh_facts(mesh: MeshDevice) -> dict[str, Any]:
    return {"shape": list(mesh.shape), "device_ids": list(mesh.get_device_ids())}


def _memory_config(value: Any) -> Any:
    serializers = _serializers()
    if serializers and "memory_config_to_dict" in serializers:
        try:
            return serializers["memory_config_to_dict"](value)
        except Exception:
            return repr(value)
    return repr(value)


def _serialize_ttnn_tensor(value: Tensor, serialize_values: bool) -> dict[str, Any]:
    """A ttnn tensor's metadata (and values): see the module's text."""
    data: dict[str, Any] = {
        "type": "ttnn.Tensor",
        "original_shape": list(value.shape),
        "original_dtype": str(value.dtype),
    }
    topology = value.tensor_topology()
    mesh_data: dict[str, Any] = {}
    placements = topology.placements()
    if placements:
        mesh_data["placements"] = [
            f"{type(p).__name__}({p.dim})" if hasattr(p, "dim") else type(p).__name__ for p in placements
        ]
    mesh_data["distribution_shape"] = list(topology.distribution_shape())
    device = value.device()
    if isinstance(device, MeshDevice):
        mesh_data |= _mesh_facts(device)
    data["mesh_device"] = mesh_data
    if serialize_values:
        host = to_torch(value)
        array = (host.float() if str(host.dtype) == "torch.bfloat16" else host).numpy()
        data |= {"shape": list(array.shape), "dtype": str(array.dtype), "values": array.tolist()}
    else:
        data |= {"shape": list(value.shape), "dtype": str(value.dtype)}
    data["layout"] = str(value.layout)
    data["storage_type"] = str(value.storage_type())
    data["memory_config"] = _memory_config(value.memory_config())
    return data


def _serialize_torch_tensor(value: Any, serialize_values: bool) -> dict[str, Any]:
    """A torch tensor's shape and dtype (and values)."""
    if not serialize_values:
        return {"type": "torch.Tensor", "shape": list(value.shape), "dtype": str(value.dtype)}
    array = value.detach().cpu()
    array = (array.float() if str(array.dtype) == "torch.bfloat16" else array).numpy()
    return {"type": "torch.Tensor", "shape": list(array.shape), "dtype": str(array.dtype), "values": array.tolist()}


def _other(value: Any) -> Any:
    """A value that is no tensor, scalar, list or dict."""
    name = type(value).__name__
    if isinstance(value, MeshDevice):
        return {"type": "MeshDevice", "repr": str(value), **_mesh_facts(value)}
    serializers = _serializers() or {}
    kernel_configs = ("WormholeComputeKernelConfig", "BlackholeComputeKernelConfig", "DeviceComputeKernelConfig")
    try:
        if name == "MemoryConfig" and "memory_config_to_dict" in serializers:
            return serializers["memory_config_to_dict"](value)
        if name in kernel_configs and "compute_kernel_config_to_dict" in serializers:
            return serializers["compute_kernel_config_to_dict"](value)
        if "ProgramConfig" in name and "Matmul" in name and "program_config_to_dict" in serializers:
            return serializers["program_config_to_dict"](value)
    except Exception:
        pass
    return {"type": name, "repr": str(value)} if hasattr(value, "__dict__") else {"type": name, "value": str(value)}


def _serialize(value: Any, values: bool) -> Any:
    if isinstance(value, Tensor):
        return _serialize_ttnn_tensor(value, values)
    if type(value).__module__.startswith("torch") and type(value).__name__ in ("Tensor", "Parameter"):
        return _serialize_torch_tensor(value, values)
    if value is None or isinstance(value, int | float | bool | str):
        return value
    if isinstance(value, list | tuple):
        return [_serialize(item, values) for item in value]
    if isinstance(value, dict):
        return {str(k): _serialize(v, values) for k, v in value.items()}
    return _other(value)


def serialize_operation_parameters(
    operation_name: str,
    function_args: Sequence[Any],
    function_kwargs: Mapping[str, Any],
    log_dir: pathlib.Path,
    return_value: Any = None,
    serialize_tensor_values: bool = True,
) -> None:
    """Write one call's trace file into ``log_dir`` (made when missing); a call made while a trace
    is being written (a tensor's read back) writes none."""
    global _OPERATION_COUNTER, _IS_SERIALIZING
    if _IS_SERIALIZING:
        return
    _IS_SERIALIZING = True
    try:
        directory = pathlib.Path(log_dir)
        directory.mkdir(parents=True, exist_ok=True)
        _OPERATION_COUNTER += 1
        stamp = datetime.now().strftime("%Y%m%d_%H%M%S_%f")
        safe = operation_name.replace(".", "_").replace("::", "_")
        values = serialize_tensor_values
        data: dict[str, Any] = {
            "operation_id": _OPERATION_COUNTER,
            "operation_name": operation_name,
            "args": [
                {"position": i, "value": _serialize(a, serialize_tensor_values)} for i, a in enumerate(function_args)
            ],
            "kwargs": {k: _serialize(v, serialize_tensor_values) for k, v in function_kwargs.items()},
        }
        if _SWEEP_SOURCE_HASH:
            data["sweep_source_hash"] = _SWEEP_SOURCE_HASH
        if return_value is not None:
            data["return_value"] = _serialize(return_value, values)
        path = directory / f"{_OPERATION_COUNTER}_{safe}_{stamp}.json"
        path.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
    finally:
        _IS_SERIALIZING = False


def _log_dir() -> pathlib.Path:
    if os.environ.get("TTNN_OPERATION_TRACE_DIR"):
        return pathlib.Path(os.environ["TTNN_OPERATION_TRACE_DIR"])
    return pathlib.Path(CONFIG.root_report_path) / "operation_parameters"


def _trace(name: str, args: Sequence[Any], kwargs: Mapping[str, Any], output: Any) -> None:
    if _is_tracing_enabled():
        serialize_operation_parameters(name, args, kwargs, _log_dir(), output, _SERIALIZE_TENSOR_VALUES)


def wrap_function_for_tracing(original_function: Callable[..., Any], operation_name: str) -> Callable[..., Any]:
    """``original_function`` made to write a trace file after each call while tracing is on."""
    if hasattr(original_function, "decorated_function"):
        return original_function

    @wraps(original_function)
    def wrapped_function(*function_args: Any, **function_kwargs: Any) -> Any:
        output = original_function(*function_args, **function_kwargs)
        _trace(operation_name, function_args, function_kwargs, output)
        return output

    return wrapped_function


def _operation_hook(operation: Any, args: tuple, kwargs: dict, output: Any) -> None:
    """The post-operation hook: a top-level registry op's call, traced while tracing is on."""
    if not _is_tracing_enabled():
        return
    entry = entry_of(operation)
    name = f"ttnn.{entry.name}" if entry is not None else f"ttnn.{getattr(operation, '__name__', 'operation')}"
    _trace(name, args, kwargs, output)


class _TracerModule(types.ModuleType):
    """This module, whose ``_ENABLE_TRACE`` (ttnn's flag, which tests set directly) turns tracing on
    and off through :func:`_set_enabled`."""

    @property
    def _ENABLE_TRACE(self) -> bool:
        return _STATE["enabled"]

    @_ENABLE_TRACE.setter
    def _ENABLE_TRACE(self, value: bool) -> None:
        _set_enabled(value)


sys.modules[__name__].__class__ = _TracerModule
_set_enabled(False)  # (the hook goes in now when the run was started with --trace-params)
