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


def set_fabric_config(config: FabricConfig, *_: object, **__: object) -> None:
    if not isinstance(config, FabricConfig):
        raise MeshnnTypeError(f"set_fabric_config needs a ttnn.FabricConfig, got {config!r}")
    global _fabric
    _fabric = config


def get_fabric_config() -> FabricConfig:
    return _fabric
