"""Mesh composers: shards -> one host array (``ttnn.MeshToTensor``, its config and factories), with
ttnn 0.81's semantics.

The shards, in distribution order, are concatenated along ``dims`` — one dim: all shards along
it; N dims: shards grouped per composer mesh dimension.  Replicas are concatenated too, as in ttnn.

Layer: tensor.  Imports errors, mesh and :mod:`meshnn.tensor.topology`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshShape, as_coord
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.topology import (
    PlacementShard,
    TensorTopology,
    mesh_shape_of,
    num_devices,
    pair_of_dims,
    positional_dims,
    shape_override,
)


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
        if positional_dims(dims, mesh_shape_override):  # ttnn's MeshComposerConfig(row_dim, col_dim[, shape])
            dims, row_dim, col_dim, mesh_shape_override, mesh_offset_override = (
                None,
                dims,
                mesh_shape_override,
                mesh_offset_override,
                None,
            )
        if dims is None:
            dims = [d for d in (row_dim, col_dim) if d is not None]
        items = tuple(dims)
        if not items or not all(isinstance(d, int) and not isinstance(d, bool) for d in items):
            raise MeshnnTypeError(f"MeshComposerConfig dims must be ints, got {list(items)!r}")
        mesh_shape_override = shape_override(mesh_shape_override)
        object.__setattr__(self, "dims", items)
        object.__setattr__(self, "mesh_shape_override", mesh_shape_override)
        object.__setattr__(
            self, "mesh_offset_override", None if mesh_offset_override is None else as_coord(mesh_offset_override)
        )


class MeshToTensor:
    """A mesh composer: shards -> one host array (``ttnn.MeshToTensor``)."""

    def __init__(self, mesh: MeshDevice | MeshShape, config: MeshComposerConfig) -> None:
        if not isinstance(config, MeshComposerConfig):
            raise MeshnnTypeError(f"config must be a MeshComposerConfig, got {config!r}")
        self.mesh_shape = mesh_shape_of(mesh)
        self.mesh_device = mesh if isinstance(mesh, MeshDevice) else None
        self.config = config
        shape = config.mesh_shape_override or self.mesh_shape
        if shape.dims() != len(config.dims):
            raise MeshnnValueError(
                f"a composer over a {shape!r} mesh needs {shape.dims()} concat dims, got {list(config.dims)}"
            )
        self.compose_shape = shape

    def picks(self, coords: Sequence[MeshCoordinate], mesh_shape: MeshShape) -> list[int] | None:
        """Which of a tensor's shards (at ``coords``, in distribution order, on a mesh of
        ``mesh_shape``) a composer whose ``mesh_shape_override`` is smaller than the shard count
        composes, as ttnn picks them: each coordinate of the override's range is the mesh's same
        coordinate when the override fits inside the mesh (a submesh from the origin), else the
        mesh's next coordinate in row-major order; the indices of those the tensor has.  None when
        every shard is composed (no override, or one as large as the shards)."""
        override = self.config.mesh_shape_override
        if override is None or override.mesh_size() >= len(coords):
            return None
        dims, mesh_dims = tuple(override), tuple(mesh_shape)
        fits = len(dims) == len(mesh_dims) and all(o <= m for o, m in zip(dims, mesh_dims, strict=True))
        grid = itertools.product(*(range(d) for d in (dims if fits else mesh_dims)))
        chosen = list(grid) if fits else list(itertools.islice(grid, override.mesh_size()))
        where = {tuple(c): i for i, c in enumerate(coords)}
        return [where[c] for c in chosen if c in where]

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
            if len(set(dims)) != len(dims) and len(shapes) > 1:  # (one shard is returned whole, as in ttnn)
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


def topology_composer(topology: TensorTopology) -> MeshToTensor | None:
    """The composer a tensor's topology fully determines, which ``to_torch()`` without one uses (as
    tt-metal PR #53481 does): when every distribution axis of more than one device is a Shard, the
    shards concatenate along those dims.  None otherwise: a replicated axis still needs a composer."""
    cut = [(size, p) for size, p in zip(topology.distribution_shape, topology.placements, strict=True) if size > 1]
    if not cut or not all(isinstance(p, PlacementShard) for _, p in cut):
        return None
    dims = [p.dim for _, p in cut]  # type: ignore[union-attr]
    if len(set(dims)) != len(dims):
        return None
    return MeshToTensor(MeshShape([size for size, _ in cut]), MeshComposerConfig(dims))


def create_mesh_composer(mesh: MeshDevice | MeshShape, config: MeshComposerConfig) -> MeshToTensor:
    return MeshToTensor(mesh, config)


def concat_mesh_to_tensor_composer(mesh_device: MeshDevice, dim: int) -> MeshToTensor:
    """Concatenate every shard along ``dim``, in row-major device order."""
    return MeshToTensor(mesh_device, MeshComposerConfig([dim], MeshShape(num_devices(mesh_device))))


def concat_2d_mesh_to_tensor_composer(
    mesh_device: MeshDevice, dims: Sequence[int], mesh_shape: Sequence[int] | None = None
) -> MeshToTensor:
    return ConcatMesh2dToTensor(mesh_device, mesh_shape or tuple(mesh_shape_of(mesh_device)), dims)


def ConcatMeshToTensor(mesh_device: MeshDevice, dim: int) -> MeshToTensor:
    return concat_mesh_to_tensor_composer(mesh_device, dim)


def ConcatMesh2dToTensor(mesh_device: MeshDevice, mesh_shape: Sequence[int], dims: Sequence[int]) -> MeshToTensor:
    dims = pair_of_dims("ConcatMesh2dToTensor", dims)
    if len(dims) != 2 or dims[0] == dims[1]:
        raise MeshnnValueError(f"ConcatMesh2dToTensor: both dimensions in 'dims' must be different, got {dims}")
    shape = MeshShape(mesh_shape)
    device_shape = mesh_shape_of(mesh_device)
    if 0 in tuple(shape):
        raise MeshnnValueError(f"ConcatMesh2dToTensor: mesh_shape {list(shape)} has a dimension of size 0")
    if shape.dims() != 2 or device_shape.dims() != 2 or any(n > m for n, m in zip(shape, device_shape, strict=True)):
        raise MeshnnValueError(
            f"ConcatMesh2dToTensor: mesh_shape {list(shape)} must be 2-D and fit in the mesh {list(device_shape)} "
            "(each dimension at most the mesh's)"
        )
    return MeshToTensor(mesh_device, MeshComposerConfig(dims, shape))
