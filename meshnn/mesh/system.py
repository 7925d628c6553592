"""Questions ttnn asks of the whole system rather than of an open mesh (``ttnn.get_num_devices``,
``ttnn.set_fabric_config``, ...), answered by the simulated system in use."""

from __future__ import annotations

import enum

from meshnn.device.arch import system_spec
from meshnn.distributed.context import get_context
from meshnn.errors import MeshnnTypeError, MeshnnValueError


class FabricConfig(enum.Enum):
    """``ttnn.FabricConfig`` (the members of tt-metal's 2025 and 2026 bindings): recorded; sockets
    between devices need one other than DISABLED, meshnn's collectives need none."""

    DISABLED = 0
    FABRIC_1D = 1
    FABRIC_1D_RING = 2
    FABRIC_2D = 3
    FABRIC_2D_TORUS = 4
    FABRIC_2D_DYNAMIC = 5
    CUSTOM = 6
    FABRIC_1D_NEIGHBOR_EXCHANGE = 7
    FABRIC_2D_TORUS_X = 8
    FABRIC_2D_TORUS_Y = 9
    FABRIC_2D_TORUS_XY = 10


class FabricReliabilityMode(enum.Enum):
    """``ttnn.FabricReliabilityMode``: how fabric start-up treats links or devices that are down
    (strict: every one live; relaxed: fewer routing planes; dynamic: unsupported in tt-metal too)."""

    STRICT_INIT = 0
    RELAXED_INIT = 1
    DYNAMIC_RECONFIG = 2


class FabricTensixConfig(enum.Enum):
    """``ttnn.FabricTensixConfig``: whether fabric router channels move to a Tensix MUX kernel."""

    DISABLED = 0
    MUX = 1


class FabricUDMMode(enum.Enum):
    """``ttnn.FabricUDMMode``: the unified data-movement mode of the fabric."""

    DISABLED = 0
    ENABLED = 1


class FabricManagerMode(enum.Enum):
    """``ttnn.FabricManagerMode``: whether a separate process manages the fabric."""

    DEFAULT = 0
    ENABLED = 1
    INIT_FABRIC = 2
    TERMINATE_FABRIC = 3


class FabricRouterConfig:
    """``ttnn.FabricRouterConfig``: router-level fabric options, given to ``set_fabric_config``'s
    ``router_config`` and recorded.  ``max_packet_payload_size_bytes``: a fabric packet's largest
    payload in bytes (None: the arch's and routing mode's default); a positive int when set."""

    __slots__ = ("_payload",)

    def __init__(self) -> None:
        self._payload: int | None = None

    @property
    def max_packet_payload_size_bytes(self) -> int | None:
        return self._payload

    @max_packet_payload_size_bytes.setter
    def max_packet_payload_size_bytes(self, value: int | None) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise MeshnnValueError(
                f"FabricRouterConfig.max_packet_payload_size_bytes must be a positive int or None, got {value!r}"
            )
        self._payload = value

    def __repr__(self) -> str:
        return f"FabricRouterConfig(max_packet_payload_size_bytes={self._payload!r})"


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


def get_pcie_device_id(device_id: int) -> int:
    """``ttnn.GetPCIeDeviceID``: the PCIe-attached chip that reaches chip ``device_id`` (itself when it
    is one; on a T3000 the chips 4-7 are reached through 0-3)."""
    if isinstance(device_id, bool) or not isinstance(device_id, int) or not 0 <= device_id < get_num_devices():
        raise MeshnnTypeError(f"GetPCIeDeviceID: device_id must be a device id of the system, got {device_id!r}")
    return device_id % get_num_pcie_devices()


def using_distributed_env() -> bool:
    """True when the process is one rank of a multi-process run."""
    return get_context().world_size > 1


def fabric_config_of(value: object, where: str) -> FabricConfig:
    """A ``ttnn.FabricConfig`` argument as the nanobind binding of tt-metal 2026 converts it: the member
    itself, or an int (``True`` is 1) equal to a member's value (meshnn's numbers: ``True`` is
    ``FABRIC_1D``); any other value is refused, naming ``where``."""
    if isinstance(value, FabricConfig):
        return value
    if not isinstance(value, int):
        raise MeshnnTypeError(f"{where} needs a ttnn.FabricConfig, got {value!r}")
    try:
        return FabricConfig(int(value))
    except ValueError:
        raise MeshnnValueError(
            f"{where}: {value!r} is no ttnn.FabricConfig value (0 to {len(FabricConfig) - 1})"
        ) from None


def set_fabric_config(
    config: FabricConfig,
    reliability_mode: object = None,
    num_planes: int | None = None,
    fabric_tensix_config: object = None,
    fabric_udm_mode: object = None,
    fabric_manager_mode: object = None,
    router_config: object = None,
) -> None:
    """``ttnn.set_fabric_config``: the fabric the next meshes open with.  Every option given is
    checked (its enum) and kept (:func:`fabric_options`); a mesh records them when it opens."""
    config = fabric_config_of(config, "set_fabric_config")
    kinds = {
        "reliability_mode": (reliability_mode, FabricReliabilityMode),
        "fabric_tensix_config": (fabric_tensix_config, FabricTensixConfig),
        "fabric_udm_mode": (fabric_udm_mode, FabricUDMMode),
        "fabric_manager_mode": (fabric_manager_mode, FabricManagerMode),
    }
    for name, (value, kind) in kinds.items():
        if value is not None and not isinstance(value, kind):
            raise MeshnnTypeError(f"set_fabric_config: {name} must be a ttnn.{kind.__name__}, got {value!r}")
    if router_config is not None and not isinstance(router_config, FabricRouterConfig):
        raise MeshnnTypeError(
            f"set_fabric_config: router_config must be a ttnn.FabricRouterConfig, got {router_config!r}"
        )
    if num_planes is not None and (isinstance(num_planes, bool) or not isinstance(num_planes, int) or num_planes < 1):
        raise MeshnnTypeError(f"set_fabric_config: num_planes must be a positive int or None, got {num_planes!r}")
    given = {
        "reliability_mode": reliability_mode,
        "num_planes": num_planes,
        "fabric_tensix_config": fabric_tensix_config,
        "fabric_udm_mode": fabric_udm_mode,
        "fabric_manager_mode": fabric_manager_mode,
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


FABRIC_MAX_PAYLOAD_BYTES = 4352
"""A fabric packet's largest payload by default (bytes): Wormhole's 1-D / 2-D routing channel
buffer less the packet header, as tt-metal's fabric context reports it."""


def get_tt_fabric_max_payload_size_bytes() -> int:
    """``ttnn.get_tt_fabric_max_payload_size_bytes()``: the fabric's largest packet payload in bytes:
    the latest ``set_fabric_config``'s ``router_config.max_packet_payload_size_bytes`` when it set
    one, else :data:`FABRIC_MAX_PAYLOAD_BYTES`."""
    router = dict(_fabric_options).get("router_config")
    payload = getattr(router, "max_packet_payload_size_bytes", None)
    return FABRIC_MAX_PAYLOAD_BYTES if payload is None else int(payload)


FABRIC_HEADER_BYTES_1D = 48
"""A 1-D fabric packet's header (bytes): tt-metal's low-latency header with no extension word, which
routes up to 16 hops (every line and ring of the systems here; 64 B from 17 to 64 hops)."""
FABRIC_HEADER_BYTES_2D = 96
"""A 2-D fabric packet's header (bytes): the hybrid-mesh header with its 35-byte route buffer, the
smallest tier tt-metal enables (its 80 B tier is off), up to 35 hops: every mesh here."""
FABRIC_UDM_FIELDS_BYTES = 16
"""What UDM mode (``fabric_udm_mode=ENABLED``, 2-D routing only) adds to a 2-D header (bytes)."""
_FABRIC_2D = frozenset(
    {
        FabricConfig.FABRIC_2D,
        FabricConfig.FABRIC_2D_TORUS,
        FabricConfig.FABRIC_2D_DYNAMIC,
        FabricConfig.FABRIC_2D_TORUS_X,
        FabricConfig.FABRIC_2D_TORUS_Y,
        FabricConfig.FABRIC_2D_TORUS_XY,
    }
)


def get_tt_fabric_packet_header_size_bytes() -> int:
    """``ttnn.get_tt_fabric_packet_header_size_bytes()``: a fabric packet's header in bytes, for the
    latest ``set_fabric_config``: :data:`FABRIC_HEADER_BYTES_2D` under a 2-D config (plus
    :data:`FABRIC_UDM_FIELDS_BYTES` in UDM mode), else :data:`FABRIC_HEADER_BYTES_1D`."""
    if _fabric not in _FABRIC_2D:
        return FABRIC_HEADER_BYTES_1D
    udm = dict(_fabric_options).get("fabric_udm_mode")
    udm_on = udm is not None and getattr(udm, "name", "") == "ENABLED"
    return FABRIC_HEADER_BYTES_2D + (FABRIC_UDM_FIELDS_BYTES if udm_on else 0)
