"""Questions ttnn asks of the whole system rather than of an open mesh (``ttnn.get_num_devices``,
``ttnn.set_fabric_config``, ...), answered by the simulated system in use."""

from __future__ import annotations

import enum

from meshnn.device.arch import system_spec
from meshnn.distributed.context import get_context
from meshnn.errors import MeshnnTypeError


class FabricConfig(enum.Enum):
    """``ttnn.FabricConfig``: accepted and recorded; meshnn's collectives need no fabric."""

    DISABLED = 0
    FABRIC_1D = 1
    FABRIC_1D_RING = 2
    FABRIC_2D = 3
    FABRIC_2D_TORUS = 4
    FABRIC_2D_DYNAMIC = 5
    CUSTOM = 6


_fabric = FabricConfig.DISABLED
_fabric_options: tuple[tuple[str, object], ...] = ()


def get_num_devices() -> int:
    """Chips of the simulated system (``$MESHNN_SYSTEM``, default t3k)."""
    return system_spec().num_devices


GetNumAvailableDevices = get_num_devices


def get_device_ids() -> list[int]:
    return list(range(get_num_devices()))


def get_num_pcie_devices() -> int:
    return system_spec().pcie_devices


def get_pcie_device_ids() -> list[int]:
    return list(range(get_num_pcie_devices()))


def using_distributed_env() -> bool:
    """True when the process is one rank of a multi-process run."""
    return get_context().world_size > 1


def set_fabric_config(
    config: FabricConfig,
    reliability_mode: object = None,
    num_planes: int | None = None,
    fabric_tensix_config: object = None,
    fabric_udm_mode: object = None,
    fabric_manager: object = None,
    router_config: object = None,
) -> None:
    """``ttnn.set_fabric_config``: the fabric the next meshes open with.  Every option is kept as
    given (:func:`fabric_options`); a mesh records them when it opens."""
    if not isinstance(config, FabricConfig):
        raise MeshnnTypeError(f"set_fabric_config needs a ttnn.FabricConfig, got {config!r}")
    if num_planes is not None and (isinstance(num_planes, bool) or not isinstance(num_planes, int) or num_planes < 1):
        raise MeshnnTypeError(f"set_fabric_config: num_planes must be a positive int or None, got {num_planes!r}")
    given = {
        "reliability_mode": reliability_mode,
        "num_planes": num_planes,
        "fabric_tensix_config": fabric_tensix_config,
        "fabric_udm_mode": fabric_udm_mode,
        "fabric_manager": fabric_manager,
        "router_config": router_config,
    }
    global _fabric, _fabric_options
    _fabric = config
    _fabric_options = tuple((k, v) for k, v in given.items() if v is not None)


def get_fabric_config() -> FabricConfig:
    return _fabric


def fabric_options() -> tuple[tuple[str, object], ...]:
    """The options of the latest ``set_fabric_config`` that were given, as (name, value) pairs."""
    return _fabric_options
