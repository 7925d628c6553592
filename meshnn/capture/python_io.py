"""The records of ttnn's graph ``python_io`` (``ttnn.graph.record_python_operation``): an op's
name, its arguments as text (keyword arguments first, then positional ones by index), the ids of
its input tensors and, while stack traces are on, the user's stack trace (innermost first, as Python
formats frames; meshnn's and pytest's own frames left out).

``_safe_arg_str`` (ttnn's name) writes an argument without reading any device data: a ttnn tensor
as a one-line summary of its spec, storage, device and topology; a torch tensor as its shape and
dtype; anything else as ``str``.

Layers: imports the tensor layer, the mesh layer's call sites and :mod:`meshnn.capture.tensors`.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence

from meshnn.capture.tensors import tensor_id
from meshnn.mesh.call_sites import user_frames
from meshnn.tensor.tensor import Tensor


def _ttnn_tensor_summary(tensor: Tensor) -> str:
    """``ttnn.Tensor(shape=..., dtype=..., ...)``: the tensor's facts that need no device read."""
    info: dict[str, object] = {
        "shape": tensor.shape,
        "dtype": tensor.dtype,
        "layout": tensor.layout,
        "memory_config": tensor.memory_config(),
        "storage_type": tensor.storage_type(),
        "tensor_id": tensor_id(tensor),
        "is_allocated": tensor.is_allocated(),
    }
    device = tensor.device()
    if device is not None:
        info["device_id"] = device.id()
        info["mesh_shape"] = str(device.shape)
    topology = tensor.tensor_topology()
    coords = topology.mesh_coords()
    if coords:
        info["mesh_coords"] = [str(c) for c in coords]
    info["distribution_shape"] = str(topology.distribution_shape())
    placements = topology.placements()
    if placements:
        info["placements"] = [str(p) for p in placements]
    return "ttnn.Tensor(" + ", ".join(f"{k}={v}" for k, v in info.items()) + ")"


def _safe_arg_str(value: object) -> str:
    """One argument as text, reading no device data (see the module's text)."""
    if isinstance(value, Tensor):
        return _ttnn_tensor_summary(value)
    if type(value).__module__ == "torch" and type(value).__name__ in ("Tensor", "Parameter"):
        return f"torch.Tensor(shape={list(value.shape)}, dtype={value.dtype})"  # type: ignore[attr-defined]
    return str(value)


def _tensor_ids(value: object) -> list[int]:
    """The ids of the ttnn tensors in ``value`` (lists and tuples walked)."""
    if isinstance(value, Tensor):
        return [tensor_id(value)]
    if isinstance(value, list | tuple):
        return [found for item in value for found in _tensor_ids(item)]
    return []


def python_io_record(
    name: str, function_args: Sequence[object], function_kwargs: Mapping[str, object], stack_traces: bool
) -> dict[str, object]:
    """One record of ``python_io``: ``name``, ``arguments``, ``input_tensor_ids`` and, with
    ``stack_traces``, ``python_stack_trace``."""
    arguments = {str(k): _safe_arg_str(v) for k, v in function_kwargs.items()}
    arguments |= {str(i): _safe_arg_str(v) for i, v in enumerate(function_args)}
    record: dict[str, object] = {
        "name": name,
        "arguments": arguments,
        "input_tensor_ids": _tensor_ids((*function_args, *function_kwargs.values())),
    }
    if stack_traces:
        record["python_stack_trace"] = traceback.format_list(user_frames())
    return record
