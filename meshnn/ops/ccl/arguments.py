"""What every collective takes and checks: ``ttnn.Topology``, ``ttnn.ReduceType``, the input (a device tensor with a
shard on every device, ``dim`` in range), the options a simulated collective only checks
(``mesh_device``, ``num_links``, ``topology``, ``memory_config``), ``cluster_axis`` and the fabric's
tuning keywords (``FABRIC_KEYWORDS``).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and
:mod:`meshnn.ops.checks`.
"""

from __future__ import annotations

import enum

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, Keyword, count, flag, optional, recorded
from meshnn.mesh.sub_device import SubDeviceId
from meshnn.ops.checks import device_input, same_mesh
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


class Topology(enum.Enum):
    """Fabric topologies (``ttnn.Topology``); accepted, the simulated links need none."""

    Ring = 0
    Linear = 1
    Mesh = 2
    Torus = 3


class ReduceType(enum.Enum):
    """``ttnn.ReduceType``: the reduction of a reduce collective (``math_op=``).  meshnn's reduce
    collectives sum, as ttnn's do; another member is refused by name."""

    Sum = 0
    Mean = 1
    Max = 2
    Min = 3
    Std = 4
    Var = 5


FABRIC_KEYWORDS: dict[str, Keyword] = {
    "subdevice_id": Keyword(None, optional(SubDeviceId, int, what="a ttnn.SubDeviceId")),
    "sub_core_grids": SUB_CORE_GRIDS,
    "chunks_per_sync": Keyword(None, count),
    "num_workers_per_link": Keyword(None, count),
    "num_buffers_per_channel": Keyword(None, count),
    "use_l1_small_for_semaphores": Keyword(False, flag),
    "num_workers": Keyword(None, count),  # the legacy CCL's (v0.5x) name
}
"""The fabric's worker and link tuning every collective's binding takes; a simulated collective
moves no packets, so each is checked and recorded (:mod:`meshnn.mesh.op_keywords`)."""


def check_math_op(op: str, math_op: object) -> None:
    """``math_op`` of a reduce collective: None or ``ttnn.ReduceType.Sum``."""
    if math_op is None or math_op is ReduceType.Sum:
        return
    if not isinstance(math_op, ReduceType):
        raise MeshnnTypeError(f"ttnn.{op}: math_op must be a ttnn.ReduceType, got {math_op!r}")
    raise MeshnnValueError(f"ttnn.{op}: math_op {math_op} is not supported; the collective sums (ReduceType.Sum)")


def group_grid(mesh: MeshDevice, cluster_axis: int | None, op: str) -> tuple[tuple[int, ...], int | None]:
    """The mesh as a grid of devices and the grid axis a group runs along (None: the whole mesh)."""
    shape = tuple(mesh.shape)
    if cluster_axis is None:
        return shape, None
    if isinstance(cluster_axis, bool) or not isinstance(cluster_axis, int):
        raise MeshnnTypeError(f"ttnn.{op}: cluster_axis must be an int or None, got {cluster_axis!r}")
    if not 0 <= cluster_axis < len(shape):
        raise MeshnnValueError(
            f"ttnn.{op}: cluster_axis {cluster_axis!r} must be one of {list(range(len(shape)))} for a "
            f"{mesh.shape!r} mesh"
        )
    return shape, cluster_axis


def tensor_grid(
    op: str, tensor: Tensor, mesh: MeshDevice, cluster_axis: int | None
) -> tuple[tuple[int, ...], int | None]:
    """The devices a collective on ``tensor`` runs over, as :func:`group_grid` gives them: the whole
    mesh when ``tensor`` populates every device; otherwise (no ``cluster_axis``) the devices it
    populates, one ring in row-major order, as ttnn's fabric collectives count them (the ring size
    is the number of coordinates the tensor's storage holds, and the output populates the same)."""
    k = len(tensor.storage.coords)  # type: ignore[union-attr]
    if k == mesh.get_num_devices():
        return group_grid(mesh, cluster_axis, op)
    if cluster_axis is not None and mesh.all_local:
        group_grid(mesh, cluster_axis, op)  # (cluster_axis checked)
        box = populated_box(tensor.storage.coords)  # type: ignore[union-attr]
        if box is not None:
            return box, cluster_axis
    if cluster_axis is not None or not mesh.all_local:
        where = "with a cluster_axis" if cluster_axis is not None else "across ranks"
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor populates {k} of {mesh.get_num_devices()} devices; a collective {where} "
            "needs a shard on every device"
        )
    return (k,), None


def populated_box(coords: object) -> tuple[int, ...] | None:
    """The shape of the box of devices ``coords`` fill, in row-major order, when it starts at
    coordinate 0 along every axis (tt-metal's ring along ``cluster_axis`` is the populated
    coordinates' largest index there plus one: a tensor mapped to the first row of a larger mesh
    runs its collective over that row); None otherwise."""
    points = [tuple(c) for c in coords]  # type: ignore[attr-defined]
    shape = tuple(max(p[d] for p in points) + 1 for d in range(len(points[0])))
    expected = [tuple(int(i) for i in np.unravel_index(n, shape)) for n in range(int(np.prod(shape)))]
    return shape if points == expected else None


def checked_input(
    op: str, input_tensor: Tensor, dim: int | None, *, partial: bool = False
) -> tuple[Tensor, MeshDevice, int | None]:
    """The input of a collective and its mesh, and ``dim`` made non-negative; ``partial``: the op
    also runs on a tensor populating some of the devices (see :func:`tensor_grid`)."""
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    if not partial and len(tensor.storage.coords) != mesh.get_num_devices():  # type: ignore[union-attr]
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor populates {len(tensor.storage.coords)} of {mesh.get_num_devices()} devices; "  # type: ignore[union-attr]
            "a collective needs a shard on every device"
        )
    if dim is None:
        return tensor, mesh, None
    rank = len(tensor.shape)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise MeshnnTypeError(f"ttnn.{op}: dim must be an int, got {dim!r}")
    if not -rank <= dim < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {dim!r} is out of range for input_tensor of shape {list(tensor.shape)}")
    return tensor, mesh, dim % rank


def check_options(
    op: str, mesh: MeshDevice, mesh_device: object, num_links: object, topology: object, memory_config: object
) -> None:
    """The arguments a simulated collective only checks: ``mesh_device`` (when given, the input's
    mesh), ``num_links`` (a positive int or None), ``topology`` (a ttnn.Topology or None) and
    ``memory_config`` (a MemoryConfig or None)."""
    if mesh_device is not None:
        if not isinstance(mesh_device, MeshDevice):
            raise MeshnnTypeError(f"ttnn.{op}: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
        if mesh_device.mesh_id != mesh.mesh_id:
            raise WrongMeshError(f"ttnn.{op}: mesh_device is not the mesh device input_tensor lives on")
    if num_links is not None and (isinstance(num_links, bool) or not isinstance(num_links, int)):
        raise MeshnnTypeError(f"ttnn.{op}: num_links must be an int, got {num_links!r}")
    if num_links is not None and num_links < 1:
        raise MeshnnValueError(f"ttnn.{op}: num_links must be >= 1, got {num_links}")
    if topology is not None and not isinstance(topology, Topology):
        raise MeshnnTypeError(f"ttnn.{op}: topology must be a ttnn.Topology, got {topology!r}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    check_subdevice(op, mesh, recorded().get("subdevice_id"))


def check_subdevice(op: str, mesh: MeshDevice, subdevice_id: object) -> None:
    """A ``subdevice_id`` (None: any) must name a sub-device of the mesh's loaded sub-device
    manager, as tt-metal checks a sub-device index."""
    if subdevice_id is None:
        return
    count = len(mesh.get_sub_device_ids())
    if not 0 <= int(subdevice_id) < count:  # type: ignore[call-overload]
        raise MeshnnValueError(
            f"ttnn.{op}: subdevice_id: SubDevice index {int(subdevice_id)} out of bounds {count} (the loaded "  # type: ignore[call-overload]
            f"sub-device manager has {count} sub-device(s))"
        )
