"""``device_params`` as tt-metal's conftest takes them (``@pytest.mark.parametrize("device_params",
[{...}], indirect=True)``), checked and split into what ``open_mesh_device`` takes and what
``set_fabric_config`` takes.

Every key tt-metal's tests pass is accepted: the sizes (``l1_small_size``, ``trace_region_size``,
``worker_l1_size``), ``num_command_queues``, the dispatch cores (``dispatch_core_axis`` and
``dispatch_core_type``, made into a ``DispatchCoreConfig`` as tt-metal's ``get_updated_device_params``
does, or a ready ``dispatch_core_config``) and the fabric (``fabric_config`` with
``reliability_mode``, ``fabric_tensix_config``, ``fabric_manager``, ``fabric_udm_mode``,
``fabric_router_config``), and ``require_exact_physical_num_devices`` (the ``mesh_device`` fixture
skips unless the mesh has every device of the system, as tt-metal's conftest does; then nothing
else to apply).  An unknown key is an error naming it, never dropped; the opened mesh records
everything (``mesh_device.settings``).

Layers: imports the public root and :mod:`meshnn.errors`.
"""

from __future__ import annotations

from dataclasses import dataclass

import meshnn
from meshnn.errors import MeshnnTypeError, MeshnnValueError

OPEN_KEYS = ("l1_small_size", "trace_region_size", "num_command_queues", "worker_l1_size", "dispatch_core_config")
DISPATCH_KEYS = ("dispatch_core_axis", "dispatch_core_type")
FABRIC_KEYS = {  # device_params key -> set_fabric_config argument
    "reliability_mode": "reliability_mode",
    "fabric_tensix_config": "fabric_tensix_config",
    "fabric_udm_mode": "fabric_udm_mode",
    "fabric_manager": "fabric_manager_mode",
    "fabric_router_config": "router_config",
}
EXACT_KEY = "require_exact_physical_num_devices"  # the mesh_device fixture's: skip unless the mesh is the system
KNOWN_KEYS = (*OPEN_KEYS, *DISPATCH_KEYS, "fabric_config", *FABRIC_KEYS, EXACT_KEY)


@dataclass(frozen=True)
class OpenArguments:
    """``device_params`` split: keyword arguments of ``open_mesh_device``, and the fabric to set
    first (``fabric_config`` None: leave the fabric as it is)."""

    open_kwargs: dict
    fabric_config: object = None
    fabric_kwargs: dict | None = None


def open_arguments(device_params: object) -> OpenArguments:
    """Check ``device_params`` and split it; nothing is opened or set here."""
    if not isinstance(device_params, dict):
        raise MeshnnTypeError(f"device_params must be a dict, got {type(device_params).__name__}")
    unknown = sorted(str(k) for k in device_params if k not in KNOWN_KEYS)
    if unknown:
        raise MeshnnTypeError(
            f"device_params: unknown key(s) {unknown}; the keys tt-metal's fixtures take are {list(KNOWN_KEYS)}"
        )
    open_kwargs = {k: device_params[k] for k in OPEN_KEYS if k in device_params}
    dispatch = {k.removeprefix("dispatch_core_"): device_params[k] for k in DISPATCH_KEYS if k in device_params}
    if dispatch:
        if "dispatch_core_config" in device_params:
            raise MeshnnValueError(
                "device_params: give dispatch_core_config or dispatch_core_axis / dispatch_core_type, not both"
            )
        tensix = device_params.get("fabric_tensix_config")
        open_kwargs["dispatch_core_config"] = meshnn.DispatchCoreConfig(
            dispatch.get("type"),
            dispatch.get("axis"),
            tensix if isinstance(tensix, meshnn.FabricTensixConfig) else None,
        )
    fabric_kwargs = {arg: device_params[k] for k, arg in FABRIC_KEYS.items() if device_params.get(k) is not None}
    fabric_config = device_params.get("fabric_config")
    if fabric_config is False:  # tt-metal's conftest sets a fabric only for a true fabric_config
        fabric_config = None
    if fabric_config is None and fabric_kwargs:
        raise MeshnnValueError(f"device_params: {sorted(fabric_kwargs)} need a fabric_config to apply to")
    if fabric_config is not None and not isinstance(fabric_config, meshnn.FabricConfig):
        fabric_config = _fabric_from_int(fabric_config)
    return OpenArguments(open_kwargs, fabric_config, fabric_kwargs)


def _fabric_from_int(value: object) -> object:
    """An int ``fabric_config`` (tt-metal's Mixtral tests pass ``True``) taken as ttnn's nanobind
    binding takes it: the member of that value (meshnn's numbers: ``True`` is ``FABRIC_1D``)."""
    if not isinstance(value, int):
        raise MeshnnTypeError(f"device_params: fabric_config must be a ttnn.FabricConfig, got {value!r}")
    try:
        return meshnn.FabricConfig(int(value))
    except ValueError:
        raise MeshnnValueError(f"device_params: fabric_config {value!r} is no ttnn.FabricConfig value") from None
