"""How a mesh device was opened: its dispatch cores (``ttnn.DispatchCoreType`` / ``DispatchCoreAxis``
/ ``DispatchCoreConfig``, with ttnn's defaults and checks) and :class:`DeviceSettings`, the record of
every argument of ``open_mesh_device`` that only matters on hardware, kept on the mesh
(``mesh_device.settings``) so a user can read it back.

On a chip the dispatch cores are a row or a column of Tensix cores (``WORKER``) or Ethernet cores
(``ETH``) set aside for the command queues.  A simulated mesh dispatches on the host, so the
configuration changes no result and no figure here; it is checked as ttnn checks it and recorded.
ttnn's defaults follow the system: ``ETH`` dispatch on N300 and T3000 clusters, ``WORKER``
elsewhere; axis ``ROW`` on Wormhole, ``COL`` on Blackhole (where ``ROW`` needs the fabric's Tensix
MUX).

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` (the system's arch) and the mesh layer's
:mod:`meshnn.mesh.system`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from meshnn.device.arch import Arch, SystemSpec, system_spec
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.system import FabricConfig, FabricTensixConfig

ETH_DISPATCH_SYSTEMS = ("n300", "t3k")  # ttnn's clusters whose default dispatch cores are Ethernet cores


class DispatchCoreType(enum.Enum):
    """``ttnn.DispatchCoreType``: which cores run dispatch."""

    WORKER = 0
    ETH = 1


class MeshType(enum.Enum):
    """``ttnn.MeshType`` (``open_mesh_device(mesh_type=)`` of tt-metal's 2025 API): how the chips
    of a mesh are connected, ``RowMajor`` (a 2-D grid, the default), ``Ring`` (each chip linked
    to the next, the last to the first) or ``Line``.  It chose which physical chips a mesh took;
    a simulated mesh records it (``mesh_device.settings.mesh_type``) and changes nothing else."""

    RowMajor = 0
    Ring = 1
    Line = 2


def checked_mesh_type(mesh_type: object) -> MeshType:
    """``mesh_type`` if it is a ``ttnn.MeshType``; else a MeshnnTypeError naming it."""
    if not isinstance(mesh_type, MeshType):
        raise MeshnnTypeError(f"open_mesh_device: mesh_type must be a ttnn.MeshType, got {mesh_type!r}")
    return mesh_type


class DispatchCoreAxis(enum.Enum):
    """``ttnn.DispatchCoreAxis``: whether the dispatch cores are a row or a column of the grid."""

    ROW = 0
    COL = 1


def _check_member(kind: type[enum.Enum], value: object, what: str) -> None:
    if value is not None and not isinstance(value, kind):
        valid = [str(member) for member in kind]
        raise MeshnnValueError(f"Invalid dispatch core {what}: {value!r}. Valid values are: {valid}")


def default_dispatch_core_type(system: SystemSpec | None = None) -> DispatchCoreType:
    """ETH on the N300 and T3000 systems, WORKER elsewhere (ttnn's ``get_default_dispatch_core_type``)."""
    spec = system or system_spec()
    return DispatchCoreType.ETH if spec.name in ETH_DISPATCH_SYSTEMS else DispatchCoreType.WORKER


def default_dispatch_core_axis(
    system: SystemSpec | None = None, fabric_tensix_config: object = None
) -> DispatchCoreAxis:
    """ROW on Wormhole; COL on Blackhole unless the fabric's Tensix MUX is on."""
    spec = system or system_spec()
    if spec.arch_spec.arch is Arch.BLACKHOLE and fabric_tensix_config is not FabricTensixConfig.MUX:
        return DispatchCoreAxis.COL
    return DispatchCoreAxis.ROW


@dataclass(frozen=True, slots=True, init=False)
class DispatchCoreConfig:
    """``ttnn.DispatchCoreConfig(type=None, axis=None, fabric_tensix_config=None)``: what is not
    given takes the system's default (the system in use when the config is made, as in ttnn)."""

    type: DispatchCoreType
    axis: DispatchCoreAxis

    def __init__(
        self,
        type: DispatchCoreType | None = None,
        axis: DispatchCoreAxis | None = None,
        fabric_tensix_config: FabricTensixConfig | None = None,
    ) -> None:
        _check_member(DispatchCoreType, type, "type")
        _check_member(DispatchCoreAxis, axis, "axis")
        _check_member(FabricTensixConfig, fabric_tensix_config, "fabric_tensix_config")
        if type is DispatchCoreType.ETH and axis is DispatchCoreAxis.COL:
            raise MeshnnValueError("COL axis is not supported for ETH dispatch core type")
        spec = system_spec()
        if axis is DispatchCoreAxis.ROW:
            check_axis_on(spec, axis, fabric_tensix_config)
        if axis is None:
            axis = default_dispatch_core_axis(spec, fabric_tensix_config)
        if type is None:  # a COL axis is only supported on WORKER cores
            type = DispatchCoreType.WORKER if axis is DispatchCoreAxis.COL else default_dispatch_core_type(spec)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "axis", axis)

    def __repr__(self) -> str:
        return f"DispatchCoreConfig(type={self.type}, axis={self.axis})"


def check_axis_on(spec: SystemSpec, axis: DispatchCoreAxis, fabric_tensix_config: object = None) -> None:
    """ROW dispatch cores on a Blackhole need the fabric's Tensix MUX (ttnn's check)."""
    blackhole = spec.arch_spec.arch is Arch.BLACKHOLE
    if axis is DispatchCoreAxis.ROW and blackhole and fabric_tensix_config is not FabricTensixConfig.MUX:
        raise MeshnnValueError(
            "ROW dispatch core axis is not supported for blackhole arch unless fabric tensix MUX is enabled"
        )


def dispatch_core_config_for(
    spec: SystemSpec, config: object, fabric_tensix_config: object = None
) -> DispatchCoreConfig:
    """``dispatch_core_config`` as ``open_mesh_device`` takes it (``fabric_tensix_config``: the one
    ``set_fabric_config`` set): None gives the system's default; a config made for another arch is
    refused as ttnn refuses it."""
    if config is None:
        axis = default_dispatch_core_axis(spec, fabric_tensix_config)
        return _made(
            DispatchCoreType.WORKER if axis is DispatchCoreAxis.COL else default_dispatch_core_type(spec), axis
        )
    if not isinstance(config, DispatchCoreConfig):
        raise MeshnnValueError(f"dispatch_core_config must be a ttnn.DispatchCoreConfig, got {config!r}")
    check_axis_on(spec, config.axis, fabric_tensix_config)
    return config


def _made(kind: DispatchCoreType, axis: DispatchCoreAxis) -> DispatchCoreConfig:
    """A config of a checked type and axis, made without consulting the system in use."""
    made = object.__new__(DispatchCoreConfig)
    object.__setattr__(made, "type", kind)
    object.__setattr__(made, "axis", axis)
    return made


def check_worker_l1_size(value: object, spec: SystemSpec) -> SystemSpec:
    """``open_mesh_device(worker_l1_size=)``: an int of bytes; 0 is tt-metal's default (the device's
    own size, ``spec`` as it is; so is the chip's full size).  Another size ``W`` is the
    allocatable L1 of each bank, as tt-metal's allocator takes it (``worker_l1_size -
    l1_unreserved_base == W``): the unreserved base moves up to ``full - W`` (aligned up to the DRAM
    alignment, as every base is); ``W`` must leave the default reserved region below it."""
    arch = spec.arch_spec
    full = arch.worker_l1_size
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"worker_l1_size must be an int of bytes, got {value!r}")
    if value in (0, full):
        return spec
    if not 0 < value <= arch.l1_bank_size:
        raise MeshnnValueError(
            f"worker_l1_size {value} is not supported: it must be 0 (the default) or a positive size of at most "
            f"{arch.l1_bank_size} B (the L1 above the reserved base {arch.l1_unreserved_base})"
        )
    align = arch.dram_alignment
    base = -(-(full - value) // align) * align
    return replace(spec, arch_spec=replace(arch, l1_unreserved_base=base))


@dataclass(frozen=True, slots=True)
class DeviceSettings:
    """What a mesh was opened with (bytes unless named otherwise): the sizes as given, the queues,
    the dispatch cores, and the fabric configuration in force when it opened."""

    l1_small_size: int
    trace_region_size: int
    num_command_queues: int
    dispatch_core_config: DispatchCoreConfig
    worker_l1_size: int
    fabric_config: FabricConfig
    fabric_options: tuple[tuple[str, object], ...] = ()
    mesh_type: MeshType = MeshType.RowMajor
