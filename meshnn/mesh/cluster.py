"""What ttnn says of the cluster it runs on, answered by the simulated system in use
(``$MESHNN_SYSTEM``, default t3k): ``ttnn.get_arch_name``, ``ttnn.cluster.get_cluster_type`` with
``ttnn.cluster.ClusterType``, ``is_galaxy_cluster`` and ``number_of_user_devices``; and the
``ttnn.cluster`` and ``ttnn._ttnn.multi_device`` namespaces that hold them (any other name in them
raises :class:`~meshnn.errors.NotImplementedByMeshnn` naming it).

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device.arch` and the mesh layer's device and
coordinate types.
"""

from __future__ import annotations

import enum
import importlib
import types

from meshnn.device.arch import system_spec
from meshnn.errors import NotImplementedByMeshnn
from meshnn.mesh import reports
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange, MeshShape
from meshnn.mesh.mesh_device import MeshDevice


class ClusterType(enum.Enum):
    """``ttnn.cluster.ClusterType``, numbered as tt-metal numbers it (``ClusterType : uint8_t``)."""

    INVALID = 0
    N150 = 1
    N300 = 2
    T3K = 3
    GALAXY = 4
    TG = 5
    P100 = 6
    P150 = 7
    P150_X2 = 8
    P150_X4 = 9
    SIMULATOR_WORMHOLE_B0 = 10
    SIMULATOR_BLACKHOLE = 11
    N300_2x2 = 12
    P150_X8 = 13
    P300 = 14
    SIMULATOR_QUASAR = 15
    BLACKHOLE_GALAXY = 16
    P300_X2 = 17
    CUSTOM = 18


_CLUSTER_OF_SYSTEM = {
    "n150": ClusterType.N150,
    "n300": ClusterType.N300,
    "t3k": ClusterType.T3K,
    "galaxy": ClusterType.GALAXY,
    "p150": ClusterType.P150,
    "p300": ClusterType.P300,
}


def get_cluster_type() -> ClusterType:
    """The cluster the simulated system is: N150, N300, T3K, GALAXY, P150 or P300."""
    return _CLUSTER_OF_SYSTEM[system_spec().name]


def is_galaxy_cluster() -> bool:
    return get_cluster_type() in (ClusterType.GALAXY, ClusterType.TG, ClusterType.BLACKHOLE_GALAXY)


def number_of_user_devices() -> int:
    """Chips a user's program can open (every chip of the simulated system)."""
    return system_spec().num_devices


def get_arch_name() -> str:
    """``ttnn.get_arch_name()``: the chips' architecture, ``"wormhole_b0"`` or ``"blackhole"``."""
    return system_spec().arch_spec.arch.value


def get_dram_alignment() -> int:
    """``ttnn.get_dram_alignment()``: the DRAM page alignment of the chips' architecture, bytes
    (Wormhole 32, Blackhole 64)."""
    return system_spec().arch_spec.dram_alignment


def get_max_worker_l1_unreserved_size() -> int:
    """``ttnn.get_max_worker_l1_unreserved_size()``: bytes of a worker core's L1 above its reserved
    base, the most a mesh's ``worker_l1_size`` may be (tt-metal's hal figure for the chips' arch)."""
    return system_spec().arch_spec.max_worker_l1_unreserved


def get_l1_alignment() -> int:
    """``ttnn.get_l1_alignment()``: the L1 page alignment of the chips' architecture, bytes (16)."""
    return system_spec().arch_spec.l1_alignment


class Namespace(types.ModuleType):
    """A ttnn namespace: the names meshnn has under it; any other raises NotImplementedByMeshnn.
    ``lazy`` (name -> module path) names members imported on first use (from a higher layer)."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        module = self.__dict__.get("lazy", {}).get(name)
        if module is not None:
            return getattr(importlib.import_module(module), name)
        raise NotImplementedByMeshnn(f"{self.__name__.removeprefix('meshnn.')}.{name}")


def namespace(name: str, doc: str, **members: object) -> Namespace:
    module = Namespace(f"meshnn.{name}", doc)
    for key, value in members.items():
        setattr(module, key, value)
    return module


cluster = namespace(
    "cluster",
    "ttnn.cluster: what the simulated cluster is.",
    ClusterType=ClusterType,
    get_cluster_type=get_cluster_type,
    is_galaxy_cluster=is_galaxy_cluster,
    number_of_user_devices=number_of_user_devices,
)
cluster.lazy = {"serialize_cluster_descriptor": "meshnn.capture.cluster_desc"}  # (writes a file: the capture layer)
_multi_device = namespace(
    "_ttnn.multi_device",
    "ttnn._ttnn.multi_device: the mesh types under their binary module's path.",
    MeshDevice=MeshDevice,
    MeshShape=MeshShape,
    MeshCoordinate=MeshCoordinate,
    MeshCoordinateRange=MeshCoordinateRange,
)
_multi_device.lazy = {"SystemMeshDescriptor": "meshnn.mesh.system_descriptor"}  # the system's mesh (tt-metal 2026)
_core = namespace("_ttnn.core", "ttnn._ttnn.core: host helpers of ttnn's binary module.")
_core.lazy = dict.fromkeys(("tilize_and_pack_bfp8_b", "tilize_and_pack_bfp4_b"), "meshnn.formats.tile_pack")
_ttnn = namespace(
    "_ttnn",
    "ttnn._ttnn: the paths of ttnn's binary module that model code names.",
    multi_device=_multi_device,
    reports=reports,
    core=_core,
)
