"""Distribution: mesh mappers (a host array -> a shard per mesh coordinate), composers (the inverse),
placements and the tensor topology, with ttnn 0.81's semantics.

Mapping (``create_mesh_mapper``): the *distribution shape* is the mesh shape or
``mesh_shape_override``, one placement per distribution dimension.  Each ``PlacementShard(d)``
cuts tensor dim ``d`` into chunks of ``ceil(n / k)`` (torch.chunk: possibly fewer than ``k``); a
``PlacementReplicate`` copies.  A 1-D distribution may get fewer chunks than devices (the first
coordinates are populated and the distribution shape shrinks); an N-D one may not.  Every shard
must have the same shape.  When the distribution shape fits inside the mesh dimension by
dimension, its coordinates are the mesh's (shifted by ``mesh_offset_override``); otherwise the
k-th distribution coordinate goes to the k-th mesh coordinate, row-major.

Composing (``create_mesh_composer``): the shards, in distribution order, are concatenated along
``dims`` — one dim: all shards along it; N dims: shards grouped per composer mesh dimension.
Replicas are concatenated too, as in ttnn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshShape, as_coord
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
    it, and the mesh coordinate of each shard (in distribution order)."""

    distribution_shape: MeshShape
    placements: tuple[Placement, ...]
    mesh_coords: tuple[MeshCoordinate, ...]

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


def _override(shape: object) -> MeshShape | None:
    """A ``mesh_shape_override`` as a MeshShape (a sequence of ints is converted)."""
    if shape is None or isinstance(shape, MeshShape):
        return shape
    if isinstance(shape, str) or not isinstance(shape, Sequence):
        raise MeshnnTypeError(f"mesh_shape_override must be a MeshShape, got {shape!r}")
    return MeshShape(shape)


def _mesh_shape_of(target: MeshDevice | MeshShape) -> MeshShape:
    if isinstance(target, MeshDevice):
        return target.shape
    if isinstance(target, MeshShape):
        return target
    raise MeshnnTypeError(f"mesh_device must be a MeshDevice or a MeshShape, got {type(target).__name__}")


@dataclass(frozen=True, slots=True, init=False)
class MeshMapperConfig:
    """``MeshMapperConfig(placements, mesh_shape_override=None, mesh_offset_override=None)`` or the
    2-D shorthand ``MeshMapperConfig(row_dim=, col_dim=)`` (None replicates along that axis)."""

    placements: tuple[Placement, ...]
    mesh_shape_override: MeshShape | None
    mesh_offset_override: MeshCoordinate | None

    def __init__(
        self,
        placements: Sequence[Placement] | None = None,
        mesh_shape_override: MeshShape | None = None,
        mesh_offset_override: MeshCoordinate | None = None,
        *,
        row_dim: int | None = None,
        col_dim: int | None = None,
    ) -> None:
        if placements is None:
            placements = [PlacementReplicate() if d is None else PlacementShard(d) for d in (row_dim, col_dim)]
        items = tuple(placements)
        if not items or not all(isinstance(p, PlacementShard | PlacementReplicate) for p in items):
            raise MeshnnTypeError(f"placements must be PlacementShard / PlacementReplicate, got {list(items)!r}")
        mesh_shape_override = _override(mesh_shape_override)
        object.__setattr__(self, "placements", items)
        object.__setattr__(self, "mesh_shape_override", mesh_shape_override)
        object.__setattr__(
            self, "mesh_offset_override", None if mesh_offset_override is None else as_coord(mesh_offset_override)
        )

    def __repr__(self) -> str:
        extra = "" if self.mesh_shape_override is None else f", mesh_shape_override: {self.mesh_shape_override!r}"
        return f"MeshMapperConfig(placements: [{', '.join(map(repr, self.placements))}]{extra})"


@dataclass(frozen=True, slots=True, init=False)
class MeshComposerConfig:
    """Tensor dims to concatenate along, one per composer mesh dimension."""

    dims: tuple[int, ...]
    mesh_shape_override: MeshShape | None
    mesh_offset_override: MeshCoordinate | None

    def __init__(
        self,
        dims: Sequence[int] | None = None,
        mesh_shape_override: MeshShape | None = None,
        mesh_offset_override: MeshCoordinate | None = None,
        *,
        row_dim: int | None = None,
        col_dim: int | None = None,
    ) -> None:
        if dims is None:
            dims = [d for d in (row_dim, col_dim) if d is not None]
        items = tuple(dims)
        if not items or not all(isinstance(d, int) and not isinstance(d, bool) for d in items):
            raise MeshnnTypeError(f"MeshComposerConfig dims must be ints, got {list(items)!r}")
        mesh_shape_override = _override(mesh_shape_override)
        object.__setattr__(self, "dims", items)
        object.__setattr__(self, "mesh_shape_override", mesh_shape_override)
        object.__setattr__(
            self, "mesh_offset_override", None if mesh_offset_override is None else as_coord(mesh_offset_override)
        )


def compute_distribution_to_mesh_mapping(distribution_shape: MeshShape, mesh_shape: MeshShape) -> list[MeshCoordinate]:
    """The mesh coordinate of each distribution coordinate (row-major), as ttnn computes it."""
    dist, mesh = MeshShape(distribution_shape), MeshShape(mesh_shape)
    if dist.mesh_size() > mesh.mesh_size():
        raise MeshnnValueError(f"a {dist!r} distribution does not fit on a {mesh!r} mesh")
    if dist.dims() == mesh.dims() and all(d <= m for d, m in zip(dist, mesh, strict=True)):
        return [MeshCoordinate(c.coords()) for c in dist.coords()]
    return list(mesh.coords())[: dist.mesh_size()]


def _chunks(length: int, parts: int) -> list[slice]:
    """torch.chunk: pieces of ceil(length / parts), the last possibly smaller; maybe fewer than parts."""
    if length == 0:
        return [slice(0, 0)]
    size = -(-length // parts)
    return [slice(start, min(start + size, length)) for start in range(0, length, size)]


@dataclass(frozen=True, slots=True)
class Distribution:
    """The result of mapping: a view of the input per mesh coordinate, and the topology."""

    shards: dict[MeshCoordinate, np.ndarray]
    topology: TensorTopology


class TensorToMesh:
    """A mesh mapper: host array -> a shard per mesh coordinate (``ttnn.TensorToMesh``)."""

    def __init__(self, mesh: MeshDevice | MeshShape, config: MeshMapperConfig) -> None:
        if not isinstance(config, MeshMapperConfig):
            raise MeshnnTypeError(f"config must be a MeshMapperConfig, got {config!r}")
        self.mesh_shape = _mesh_shape_of(mesh)
        self.mesh_device = mesh if isinstance(mesh, MeshDevice) else None
        self.config = config
        dist = config.mesh_shape_override or self.mesh_shape
        if dist.dims() != len(config.placements):
            raise MeshnnValueError(
                f"The number of dimensions in the mesh shape {dist!r} does not match the number of placements "
                f"in the config {config!r}"
            )
        if dist.mesh_size() > self.mesh_shape.mesh_size():
            raise MeshnnValueError(
                f"the distribution shape {dist!r} has more devices than the mesh {self.mesh_shape!r}"
            )
        submesh = dist.dims() == self.mesh_shape.dims() and all(
            d <= m for d, m in zip(dist, self.mesh_shape, strict=True)
        )
        offset = config.mesh_offset_override
        if offset is not None:
            if not submesh:
                raise MeshnnValueError("mesh_offset_override needs a mesh_shape_override that fits inside the mesh")
            if offset.dims() != dist.dims() or any(
                o + d > m for o, d, m in zip(offset, dist, self.mesh_shape, strict=True)
            ):
                raise MeshnnValueError(
                    f"a {dist!r} distribution at offset {offset!r} does not fit the {self.mesh_shape!r} mesh"
                )
        self.distribution_shape = dist
        self._mesh_coords = tuple(self.mesh_shape.coords())
        self._submesh = submesh
        self._offset = offset

    def _coord_of(self, dist_coord: MeshCoordinate, index: int) -> MeshCoordinate:
        if not self._submesh:
            return self._mesh_coords[index]
        if self._offset is None:
            return dist_coord
        return MeshCoordinate([c + o for c, o in zip(dist_coord, self._offset, strict=True)])

    def _normalised_dims(self, rank: int) -> list[int | None]:
        dims: list[int | None] = []
        for placement in self.config.placements:
            if isinstance(placement, PlacementReplicate):
                dims.append(None)
                continue
            d = placement.dim + rank if placement.dim < 0 else placement.dim
            if not 0 <= d < rank:
                raise MeshnnValueError(f"Invalid dimension index {placement.dim} for a tensor of rank {rank}")
            dims.append(d)
        sharded = [d for d in dims if d is not None]
        if len(set(sharded)) != len(sharded):
            raise MeshnnValueError("dims must be unique")
        return dims

    def map(self, array: np.ndarray) -> Distribution:
        """Views of ``array``, one per mesh coordinate; raises before anything is allocated."""
        dims = self._normalised_dims(array.ndim)
        dist = self.distribution_shape
        cuts: list[list[slice] | None] = [
            None if d is None else _chunks(array.shape[d], dist[i]) for i, d in enumerate(dims)
        ]
        if dist.dims() > 1:
            got = math.prod(len(c) for c in cuts if c is not None)
            needed = math.prod(dist[i] for i, c in enumerate(cuts) if c is not None)
            if got != needed:
                raise MeshnnValueError(
                    f"ND sharding requires the number of chunks {got} to match the mesh dimension size {needed}"
                )
        elif cuts[0] is not None and len(cuts[0]) < dist[0]:
            dist = MeshShape([len(cuts[0])])
        shards: dict[MeshCoordinate, np.ndarray] = {}
        expected: tuple[int, ...] | None = None
        for index, dist_coord in enumerate(dist.coords()):
            selector = [slice(None)] * array.ndim
            for i, d in enumerate(dims):
                if d is not None:
                    selector[d] = cuts[i][dist_coord[i]]  # type: ignore[index]
            shard = array[tuple(selector)]
            if expected is None:
                expected = shard.shape
            elif shard.shape != expected:
                raise MeshnnValueError(
                    f"Shard shape mismatch: expected Shape({list(expected)}) but got Shape({list(shard.shape)})"
                )
            shards[self._coord_of(dist_coord, index)] = shard
        topology = TensorTopology(dist, self.config.placements, tuple(shards))
        return Distribution(shards, topology)

    def __repr__(self) -> str:
        return f"TensorToMesh({self.mesh_shape!r}, {self.config!r})"


class MeshToTensor:
    """A mesh composer: shards -> one host array (``ttnn.MeshToTensor``)."""

    def __init__(self, mesh: MeshDevice | MeshShape, config: MeshComposerConfig) -> None:
        if not isinstance(config, MeshComposerConfig):
            raise MeshnnTypeError(f"config must be a MeshComposerConfig, got {config!r}")
        self.mesh_shape = _mesh_shape_of(mesh)
        self.config = config
        shape = config.mesh_shape_override or self.mesh_shape
        if shape.dims() != len(config.dims):
            raise MeshnnValueError(
                f"a composer over a {shape!r} mesh needs {shape.dims()} concat dims, got {list(config.dims)}"
            )
        self.compose_shape = shape

    def concat(self, shards: Sequence[np.ndarray]) -> np.ndarray:
        """Concatenate ``shards`` (in distribution order) into the global array."""
        if not shards:
            raise MeshnnValueError("nothing to compose: the tensor has no shards")
        shape, slots = self.slots([s.shape for s in shards])
        out = np.empty(shape, dtype=np.result_type(*shards))
        for shard, slot in zip(shards, slots, strict=True):
            out[slot] = shard
        return out

    def slots(self, shapes: Sequence[tuple[int, ...]]) -> tuple[tuple[int, ...], list[tuple[slice, ...]]]:
        """Where each shard goes: the global shape, and for each of ``shapes`` (in distribution
        order) the index of its block in the global array."""
        if not shapes:
            raise MeshnnValueError("nothing to compose: the tensor has no shards")
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes):
            raise MeshnnValueError(f"shards of different ranks cannot be composed: {[list(s) for s in shapes]}")
        dims = [d + rank if d < 0 else d for d in self.config.dims]
        if any(not 0 <= d < rank for d in dims):
            raise MeshnnValueError(f"composer dims {list(self.config.dims)} are out of range for rank {rank}")
        if len(dims) == 1:
            if len(shapes) > self.compose_shape.mesh_size():
                raise MeshnnValueError(
                    f"a mesh_composer over {self.compose_shape!r} composes at most {self.compose_shape.mesh_size()} "
                    f"shards; the tensor has {len(shapes)} (create the composer for the tensor's mesh)"
                )
            grid = [len(shapes)]
        else:
            if len(set(dims)) != len(dims):
                raise MeshnnValueError("Both dimensions in 'dims' must be different")
            if len(shapes) != self.compose_shape.mesh_size():
                raise MeshnnValueError(
                    f"ND composition requires the number of tensors {len(shapes)} to match the mesh shape "
                    f"{self.compose_shape!r}"
                )
            grid = list(self.compose_shape)
        shape, offsets = _grid_layout([tuple(s) for s in shapes], grid, dims)
        slots = [
            tuple(slice(o, o + n) for o, n in zip(offset, size, strict=True))
            for offset, size in zip(offsets, shapes, strict=True)
        ]
        return shape, slots

    def __repr__(self) -> str:
        return f"MeshToTensor({self.compose_shape!r}, dims={list(self.config.dims)})"


def _grid_layout(
    shapes: list[tuple[int, ...]], grid: list[int], dims: list[int]
) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Shape and per-shard offsets of a row-major grid of shards joined along ``dims`` (the last
    mesh dim first, as nested concatenations would join them)."""
    if len(grid) == 1:
        parts = [(s, (0,) * len(s)) for s in shapes]
        return _joined([(s, [o]) for s, o in parts], dims[0])
    step = math.prod(grid[1:])
    rows = [_grid_layout(shapes[i * step : (i + 1) * step], grid[1:], dims[1:]) for i in range(grid[0])]
    return _joined(rows, dims[0])


def _joined(
    parts: Sequence[tuple[tuple[int, ...], list[tuple[int, ...]]]], dim: int
) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Join blocks (each a shape and its shards' offsets) end to end along ``dim``."""
    first = parts[0][0]
    offsets: list[tuple[int, ...]] = []
    start = 0
    for shape, inner in parts:
        if any(a != b for i, (a, b) in enumerate(zip(shape, first, strict=True)) if i != dim):
            raise MeshnnValueError(f"shards of shapes {list(first)} and {list(shape)} cannot be joined along dim {dim}")
        offsets.extend(tuple(o + start if i == dim else o for i, o in enumerate(off)) for off in inner)
        start += shape[dim]
    return tuple(start if i == dim else d for i, d in enumerate(first)), offsets


# ------------------------------------------------------------------------------ factories


def create_mesh_mapper(mesh: MeshDevice | MeshShape, config: MeshMapperConfig) -> TensorToMesh:
    return TensorToMesh(mesh, config)


def create_mesh_composer(mesh: MeshDevice | MeshShape, config: MeshComposerConfig) -> MeshToTensor:
    return MeshToTensor(mesh, config)


def _num_devices(mesh: MeshDevice | MeshShape) -> int:
    return _mesh_shape_of(mesh).mesh_size()


def shard_tensor_to_mesh_mapper(mesh_device: MeshDevice, dim: int) -> TensorToMesh:
    """Cut ``dim`` over all devices, row-major (a 1-D distribution)."""
    return TensorToMesh(mesh_device, MeshMapperConfig([PlacementShard(dim)], MeshShape(_num_devices(mesh_device))))


def replicate_tensor_to_mesh_mapper(mesh_device: MeshDevice) -> TensorToMesh:
    return TensorToMesh(mesh_device, MeshMapperConfig([PlacementReplicate()], MeshShape(_num_devices(mesh_device))))


def shard_tensor_to_2d_mesh_mapper(
    mesh_device: MeshDevice, mesh_shape: Sequence[int], dims: Sequence[int | None]
) -> TensorToMesh:
    return ShardTensor2dMesh(mesh_device, mesh_shape, dims)


def concat_mesh_to_tensor_composer(mesh_device: MeshDevice, dim: int) -> MeshToTensor:
    """Concatenate every shard along ``dim``, in row-major device order."""
    return MeshToTensor(mesh_device, MeshComposerConfig([dim], MeshShape(_num_devices(mesh_device))))


def concat_2d_mesh_to_tensor_composer(
    mesh_device: MeshDevice, dims: Sequence[int], mesh_shape: Sequence[int] | None = None
) -> MeshToTensor:
    return ConcatMesh2dToTensor(mesh_device, mesh_shape or tuple(_mesh_shape_of(mesh_device)), dims)


def ShardTensorToMesh(mesh_device: MeshDevice, dim: int) -> TensorToMesh:
    return shard_tensor_to_mesh_mapper(mesh_device, dim)


def ReplicateTensorToMesh(mesh_device: MeshDevice) -> TensorToMesh:
    return replicate_tensor_to_mesh_mapper(mesh_device)


def _two_dims(op: str, dims: object) -> list:
    if isinstance(dims, str) or not isinstance(dims, Sequence):
        raise MeshnnTypeError(f"{op}: dims must be a pair of dims, got {dims!r}")
    return list(dims)


def ShardTensor2dMesh(mesh_device: MeshDevice, mesh_shape: Sequence[int], dims: Sequence[int | None]) -> TensorToMesh:
    """Rows of the mesh cut ``dims[0]``, columns ``dims[1]`` (None replicates)."""
    dims = _two_dims("ShardTensor2dMesh", dims)
    shape = MeshShape(mesh_shape)
    device_shape = _mesh_shape_of(mesh_device)
    if shape.dims() != 2 or len(dims) != 2:
        raise MeshnnValueError(f"ShardTensor2dMesh needs a 2-D mesh_shape and two dims, got {mesh_shape}, {dims}")
    if shape.mesh_size() > device_shape.mesh_size():
        raise MeshnnValueError(f"ShardTensor2dMesh: mesh_shape {list(shape)} exceeds the mesh {list(device_shape)}")
    placements = [PlacementReplicate() if d is None else PlacementShard(d) for d in dims]
    return TensorToMesh(mesh_device, MeshMapperConfig(placements, shape))


def ConcatMeshToTensor(mesh_device: MeshDevice, dim: int) -> MeshToTensor:
    return concat_mesh_to_tensor_composer(mesh_device, dim)


def ConcatMesh2dToTensor(mesh_device: MeshDevice, mesh_shape: Sequence[int], dims: Sequence[int]) -> MeshToTensor:
    dims = _two_dims("ConcatMesh2dToTensor", dims)
    if len(dims) != 2 or dims[0] == dims[1]:
        raise MeshnnValueError(f"ConcatMesh2dToTensor: both dimensions in 'dims' must be different, got {dims}")
    shape = MeshShape(mesh_shape)
    device_shape = _mesh_shape_of(mesh_device)
    if shape.dims() != 2 or shape.mesh_size() > device_shape.mesh_size():
        raise MeshnnValueError(
            f"ConcatMesh2dToTensor: mesh_shape {list(shape)} must be 2-D and fit in the mesh {list(device_shape)}"
        )
    return MeshToTensor(mesh_device, MeshComposerConfig(dims, shape))
