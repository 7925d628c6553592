"""Where a tensor's shards sit on a mesh: the placements (``PlacementShard`` / ``PlacementReplicate``),
the :class:`TensorTopology` (distribution shape, one placement per dimension of it, each shard's mesh
coordinate), ttnn's mapping of distribution coordinates to mesh coordinates, and the argument checks
mappers and composers share (a mesh or its shape, a shape override, a pair of dims).

Layer: tensor.  Imports errors and mesh only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from meshnn.errors import DeviceClosedError, MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.coord import MeshCoordinate, MeshShape
from meshnn.mesh.mesh_device import MeshDevice


@dataclass(frozen=True, slots=True)
class PlacementShard:
    """Cut tensor dim ``dim`` across one mesh dimension."""

    dim: int

    def __post_init__(self) -> None:
        if isinstance(self.dim, bool) or not isinstance(self.dim, int):
            raise MeshnnTypeError(f"PlacementShard needs an int dim, got {self.dim!r}")

    def __repr__(self) -> str:
        return f"PlacementShard({self.dim})"


@dataclass(frozen=True, slots=True)
class PlacementReplicate:
    """Copy the tensor across one mesh dimension."""

    def __repr__(self) -> str:
        return "PlacementReplicate()"


Placement = PlacementShard | PlacementReplicate


@dataclass(frozen=True, slots=True)
class TensorTopology:
    """How a tensor's shards sit on a mesh: the distribution shape, one placement per dimension of
    it, and the mesh coordinate of each shard (in distribution order).  Each reads as an attribute
    (``topology.placements``) and, as ttnn's readers are methods, as a call
    (``topology.placements()``: the same value)."""

    distribution_shape: MeshShape
    placements: tuple[Placement, ...]
    mesh_coords: tuple[MeshCoordinate, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "distribution_shape", _ReadableShape(self.distribution_shape))
        object.__setattr__(self, "placements", _ReadableTuple(self.placements))
        object.__setattr__(self, "mesh_coords", _ReadableTuple(self.mesh_coords))

    @staticmethod
    def unit() -> TensorTopology:
        """The topology of a plain host tensor: one replicated shard."""
        return TensorTopology(MeshShape([1]), (PlacementReplicate(),), (MeshCoordinate(0, 0),))

    @staticmethod
    def replicated(mesh_shape: MeshShape) -> TensorTopology:
        return TensorTopology(
            mesh_shape, tuple(PlacementReplicate() for _ in range(mesh_shape.dims())), tuple(mesh_shape.coords())
        )

    def __repr__(self) -> str:
        coords = ", ".join(map(repr, self.mesh_coords))
        return (
            f"TensorTopology(distribution_shape={self.distribution_shape!r}, "
            f"placements=SmallVector([{', '.join(map(repr, self.placements))}]), mesh_coords={coords})"
        )


class _ReadableTuple(tuple):
    """A tuple that is also its own reader: ``t() is t`` (ttnn's ``placements()`` / ``mesh_coords()``)."""

    __slots__ = ()

    def __call__(self) -> _ReadableTuple:
        return self


class _ReadableShape(MeshShape):
    """A MeshShape that is also its own reader (ttnn's ``distribution_shape()``)."""

    __slots__ = ()

    def __call__(self) -> _ReadableShape:
        return self


def compute_distribution_to_mesh_mapping(distribution_shape: MeshShape, mesh_shape: MeshShape) -> list[MeshCoordinate]:
    """The mesh coordinate of each distribution coordinate (row-major), as ttnn computes it."""
    dist, mesh = MeshShape(distribution_shape), MeshShape(mesh_shape)
    if dist.mesh_size() > mesh.mesh_size():
        raise MeshnnValueError(f"a {dist!r} distribution does not fit on a {mesh!r} mesh")
    if dist.dims() == mesh.dims() and all(d <= m for d, m in zip(dist, mesh, strict=True)):
        return [MeshCoordinate(c.coords()) for c in dist.coords()]
    return list(mesh.coords())[: dist.mesh_size()]


def shape_override(shape: object) -> MeshShape | None:
    """A ``mesh_shape_override`` as a MeshShape (a sequence of ints is converted)."""
    if shape is None or isinstance(shape, MeshShape):
        return shape
    if isinstance(shape, str) or not isinstance(shape, Sequence):
        raise MeshnnTypeError(f"mesh_shape_override must be a MeshShape, got {shape!r}")
    return MeshShape(shape)


def mesh_shape_of(target: MeshDevice | MeshShape) -> MeshShape:
    if isinstance(target, MeshDevice):
        return target.shape
    if isinstance(target, MeshShape):
        return target
    raise MeshnnTypeError(f"mesh_device must be a MeshDevice or a MeshShape, got {type(target).__name__}")


def pair_of_dims(op: str, dims: object) -> list:
    if isinstance(dims, str) or not isinstance(dims, Sequence):
        raise MeshnnTypeError(f"{op}: dims must be a pair of dims, got {dims!r}")
    return list(dims)


def num_devices(mesh: MeshDevice | MeshShape) -> int:
    return mesh_shape_of(mesh).mesh_size()


def check_made_for(what: str, mesh: MeshDevice | None, device: MeshDevice | None) -> None:
    """A mapper or composer made for ``mesh`` (None: for a bare MeshShape) may serve ``device``
    (None: a host tensor) only when its mesh is open and is that device."""
    if mesh is None:
        return
    if mesh.closing:
        raise DeviceClosedError(f"{what} was made for mesh device {mesh.shape}, which is closed")
    if device is not None and device is not mesh:
        raise WrongMeshError(
            f"{what} was made for another mesh device ({mesh!r}) than the tensor's ({device!r}); "
            "make it for the tensor's mesh"
        )


def positional_dims(first: object, second: object) -> bool:
    """Whether a config's first two positional arguments are ttnn's ``(row_dim, col_dim)`` form:
    ints (None for a replicated axis), at least one of them an int."""

    def dim_or_none(x: object) -> bool:
        return x is None or (isinstance(x, int) and not isinstance(x, bool))

    return dim_or_none(first) and dim_or_none(second) and (first is not None or second is not None)
