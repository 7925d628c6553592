"""The names ttnn gives a meshnn op in traces and reports.

An op is known to meshnn by its ttnn Python name relative to ``ttnn`` (``add``,
``transformer.scaled_dot_product_attention``); ttnn's traces call it by its C++ name
(``ttnn::add``), its report by its Python name (``ttnn.add``), and its device operation by
tt-metal's class name (``BinaryNgDeviceOperation``, the performance model's family names).

Layers: imports the op registry (each op's family and device-operation name) and the performance
model's op families.
"""

from __future__ import annotations

from meshnn.mesh.observers import CREATE_DEVICE_TENSOR
from meshnn.ops.registry import family_of
from meshnn.perf.desc import OpFamily

__all__ = ["CREATE_DEVICE_TENSOR"]


def function_name(op: str) -> str:
    """The op's ttnn C++ name: ``add`` -> ``ttnn::add``, ``transformer.x`` -> ``ttnn::transformer::x``."""
    return "ttnn::" + op.replace(".", "::")


def op_family(op: str) -> OpFamily | None:
    """The performance model's family of an op (its registry entry's), or None when the model has
    none for it (an op it times as a copy of its tensors, or one outside the registry)."""
    entry = family_of(op)
    return entry.family if entry is not None and entry.modelled else None


def device_operation_name(op: str) -> str:
    """The device operation an op runs, named as tt-metal names it in traces and profiles
    (``BinaryNgDeviceOperation``): its registry entry's, else the op's own name in CamelCase +
    ``DeviceOperation`` (``to_layout`` -> ``ToLayoutDeviceOperation``)."""
    entry = family_of(op)
    if entry is not None:
        return entry.device_operation_name
    return "".join(part.capitalize() for part in op.rsplit(".", 1)[-1].split("_")) + "DeviceOperation"


def python_name(op: str) -> str:
    """The op's ttnn Python name, as reports give it: ``ttnn.add``."""
    return "ttnn." + op
