"""The checks of a tensor file's topology against its spec and its shard table, each field
already well-formed on its own (the reader checked types and ranges):

- the distribution shape has one position per listed mesh coordinate, and those coordinates are
  distinct and inside the host buffer's shape (a distribution of 2^40 - 1 positions is refused
  here, before anything is made of it);
- a shard placement names a dim of the tensor (``-rank <= dim < rank``);
- no coordinate is listed twice in the shard table, none lies outside the host buffer's shape
  (the mesh the file was written for), and every coordinate of the topology has a
  shard: a file that lacks some (as one rank of several used to write) is refused, so that an
  ``as_tensor`` cache rebuilds it, unless it says it is one rank's (``"local": true``,
  ``DumpTensorMode.LOCAL``);
- (``check_replicas``) along a dimension placed ``Replicate``, the shards hold the same payload:
  the writer stores equal payloads once, so different payloads there are different bytes.

Every problem is a TensorFileError.  Layer: tensor.  Imports errors, mesh and tensor modules.
"""

from __future__ import annotations

import itertools
from typing import Any

from meshnn.mesh.coord import MeshCoordinate, MeshShape
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.topology import PlacementReplicate, PlacementShard, TensorTopology


def check_consistency(
    reader: Any,
    spec: TensorSpec,
    topology: TensorTopology,
    host_shape: MeshShape,
    shards: list[tuple[MeshCoordinate, int]],
    *,
    partial: bool = False,
) -> None:
    """``partial``: the file says it holds one rank's shards (DumpTensorMode.LOCAL); missing ones are
    not refused here (the loader checks the loading rank's are there)."""
    dist, coords = topology.distribution_shape, topology.mesh_coords
    if dist.mesh_size() != len(coords):
        reader.fail(
            f"topology distribution_shape {list(dist)} has {dist.mesh_size()} positions but lists "
            f"{len(coords)} mesh coordinates"
        )
    if len(set(coords)) != len(coords):
        reader.fail("topology lists a mesh coordinate twice")
    for coord in coords:
        if coord.dims() != host_shape.dims() or any(c >= n for c, n in zip(coord, host_shape, strict=True)):
            reader.fail(f"topology mesh coordinate {coord} lies outside the {list(host_shape)} host buffer")
    rank = len(spec.shape)
    for placement in topology.placements:
        if isinstance(placement, PlacementShard) and not -rank <= placement.dim < rank:
            reader.fail(f"placement shard dim {placement.dim} is out of range for a rank-{rank} tensor")
    seen: set[MeshCoordinate] = set()
    for coord, _ in shards:
        if coord in seen:
            reader.fail(f"shard coordinate {coord} is listed twice")
        if coord.dims() != host_shape.dims() or any(c >= n for c, n in zip(coord, host_shape, strict=True)):
            reader.fail(f"shard coordinate {coord} lies outside the {list(host_shape)} host buffer")
        seen.add(coord)
    missing = [c for c in coords if c not in seen]
    if missing and not partial:
        reader.fail(
            f"holds no shard at {missing[0]}"
            + (f" (nor at {len(missing) - 1} more)" if len(missing) > 1 else "")
            + f" of its {len(coords)}: a partial file (written by one MPI rank of several?)"
        )


def check_replicas(reader: Any, topology: TensorTopology, shards: list[tuple[MeshCoordinate, int]]) -> None:
    """Shards along a replicated dimension of the distribution share one payload."""
    payload_at = dict(shards)
    dist = list(topology.distribution_shape)
    replicated = [k for k, p in enumerate(topology.placements) if isinstance(p, PlacementReplicate)]
    if not replicated:
        return
    strides = [1] * len(dist)
    for k in range(len(dist) - 2, -1, -1):
        strides[k] = strides[k + 1] * dist[k + 1]

    def coord_at(position: list[int] | tuple[int, ...]) -> MeshCoordinate:
        return topology.mesh_coords[sum(p * s for p, s in zip(position, strides, strict=True))]

    for position in itertools.product(*(range(n) for n in dist)):
        for k in replicated:
            if position[k] == 0:
                continue
            first = [0 if i == k else p for i, p in enumerate(position)]
            if payload_at[coord_at(position)] != payload_at[coord_at(first)]:
                reader.fail(
                    f"placement {k} is Replicate, but the shards at {coord_at(first)} and {coord_at(position)} "
                    "hold different bytes"
                )
