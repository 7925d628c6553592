"""Mesh mappers: a host array -> a shard per mesh coordinate (``ttnn.TensorToMesh``, its config and
factories), with ttnn 0.81's semantics.

The *distribution shape* is the mesh shape or ``mesh_shape_override``, one placement per
distribution dimension.  Each ``PlacementShard(d)`` cuts tensor dim ``d`` into chunks of
``ceil(n / k)`` (torch.chunk: possibly fewer than ``k``); a ``PlacementReplicate`` copies.  A 1-D
distribution may get fewer chunks than devices (the first coordinates are populated and the
distribution shape shrinks); an N-D one may not.  Every shard must have the same shape.  When the
distribution shape fits inside the mesh dimension by dimension, its coordinates are the mesh's
(shifted by ``mesh_offset_override``); otherwise the k-th distribution coordinate goes to the k-th
mesh coordinate, row-major.

Layer: tensor.  Imports errors, mesh and :mod:`meshnn.tensor.topology`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshShape, as_coord
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.topology import (
    Placement,
    PlacementReplicate,
    PlacementShard,
    TensorTopology,
    mesh_shape_of,
    num_devices,
    pair_of_dims,
    positional_dims,
    shape_override,
)


@dataclass(frozen=True, slots=True, init=False)
class MeshMapperConfig:
    """``MeshMapperConfig(placements, mesh_shape_override=None, mesh_offset_override=None)`` or the
    2-D shorthand ``MeshMapperConfig(row_dim=, col_dim=)`` (None replicates along that axis)."""

    placements: tuple[Placement, ...]
    mesh_shape_override: MeshShape | None
    mesh_offset_override: MeshCoordinate | None

    def __init__(
        self,
        placements: Sequence[Placement] | int | None = None,
        mesh_shape_override: MeshShape | int | None = None,
        mesh_offset_override: MeshCoordinate | MeshShape | None = None,
        *,
        row_dim: int | None = None,
        col_dim: int | None = None,
    ) -> None:
        if positional_dims(placements, mesh_shape_override):
            # ttnn's positional form MeshMapperConfig(row_dim, col_dim[, mesh_shape_override])
            row_dim, col_dim, mesh_shape_override, mesh_offset_override = (
                placements,
                mesh_shape_override,
                mesh_offset_override,
                None,
            )
            placements = None
        if placements is None:
            placements = [PlacementReplicate() if d is None else PlacementShard(d) for d in (row_dim, col_dim)]
        items = tuple(placements)
        if not items or not all(isinstance(p, PlacementShard | PlacementReplicate) for p in items):
            raise MeshnnTypeError(f"placements must be PlacementShard / PlacementReplicate, got {list(items)!r}")
        mesh_shape_override = shape_override(mesh_shape_override)
        object.__setattr__(self, "placements", items)
        object.__setattr__(self, "mesh_shape_override", mesh_shape_override)
        object.__setattr__(
            self, "mesh_offset_override", None if mesh_offset_override is None else as_coord(mesh_offset_override)
        )

    def __repr__(self) -> str:
        extra = "" if self.mesh_shape_override is None else f", mesh_shape_override: {self.mesh_shape_override!r}"
        return f"MeshMapperConfig(placements: [{', '.join(map(repr, self.placements))}]{extra})"


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
        self.mesh_shape = mesh_shape_of(mesh)
        self.mesh_device = mesh if isinstance(mesh, MeshDevice) else None
        self.config = config
        dist = config.mesh_shape_override or self.mesh_shape
        if 0 in tuple(dist):
            raise MeshnnValueError(
                f"the distribution shape {dist!r} has a dimension of size 0: every dimension must be at least 1"
            )
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
            shard = array[(*selector, Ellipsis)]  # (the Ellipsis keeps a rank-0 array an array, not a scalar)
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


def create_mesh_mapper(mesh: MeshDevice | MeshShape, config: MeshMapperConfig) -> TensorToMesh:
    return TensorToMesh(mesh, config)


def shard_tensor_to_mesh_mapper(mesh_device: MeshDevice, dim: int) -> TensorToMesh:
    """Cut ``dim`` over all devices, row-major (a 1-D distribution)."""
    return TensorToMesh(mesh_device, MeshMapperConfig([PlacementShard(dim)], MeshShape(num_devices(mesh_device))))


def replicate_tensor_to_mesh_mapper(mesh_device: MeshDevice) -> TensorToMesh:
    return TensorToMesh(mesh_device, MeshMapperConfig([PlacementReplicate()], MeshShape(num_devices(mesh_device))))


def shard_tensor_to_2d_mesh_mapper(
    mesh_device: MeshDevice, mesh_shape: Sequence[int], dims: Sequence[int | None]
) -> TensorToMesh:
    return ShardTensor2dMesh(mesh_device, mesh_shape, dims)


def ShardTensorToMesh(mesh_device: MeshDevice, dim: int) -> TensorToMesh:
    return shard_tensor_to_mesh_mapper(mesh_device, dim)


def ReplicateTensorToMesh(mesh_device: MeshDevice) -> TensorToMesh:
    return replicate_tensor_to_mesh_mapper(mesh_device)


def ShardTensor2dMesh(mesh_device: MeshDevice, mesh_shape: Sequence[int], dims: Sequence[int | None]) -> TensorToMesh:
    """Rows of the mesh cut ``dims[0]``, columns ``dims[1]`` (None replicates).  ttnn reads only the
    first two entries of ``dims``; more are taken when they are None (nothing to place), refused otherwise."""
    dims = pair_of_dims("ShardTensor2dMesh", dims)
    if len(dims) > 2 and all(d is None for d in dims[2:]):
        dims = dims[:2]
    shape = MeshShape(mesh_shape)
    device_shape = mesh_shape_of(mesh_device)
    if shape.dims() != 2 or len(dims) != 2:
        raise MeshnnValueError(f"ShardTensor2dMesh needs a 2-D mesh_shape and two dims, got {mesh_shape}, {dims}")
    if 0 in tuple(shape):
        raise MeshnnValueError(f"ShardTensor2dMesh: mesh_shape {list(shape)} has a dimension of size 0")
    if shape.dims() != device_shape.dims() or any(n > m for n, m in zip(shape, device_shape, strict=True)):
        raise MeshnnValueError(
            f"ShardTensor2dMesh: mesh_shape {list(shape)} exceeds the mesh {list(device_shape)} "
            "(each dimension must be at most the mesh's)"
        )
    placements = [PlacementReplicate() if d is None else PlacementShard(d) for d in dims]
    return TensorToMesh(mesh_device, MeshMapperConfig(placements, shape))
