"""A distributed tensor's shards as tensors of their own, and back: ``get_device_tensors`` (one
tensor per shard; device shards share the MeshBuffer), ``combine_device_tensors`` and
``from_host_shards`` (shards back into one tensor), ``aggregate_tensor`` (compose into one plain
host tensor) and ``distribute_tensor`` (map a plain host tensor over a mesh).

Layer: tensor.  Imports errors, mesh and the tensor modules storage, topology, mappers, composers,
tensor, lifetime, placement and interop.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshShape
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.composers import MeshToTensor
from meshnn.tensor.interop import to_numpy
from meshnn.tensor.lifetime import device_tensor
from meshnn.tensor.mappers import TensorToMesh
from meshnn.tensor.placement import to_device
from meshnn.tensor.storage import DeviceStorage, DistributedHostBuffer, HostStorage
from meshnn.tensor.tensor import Tensor, check_tensor, host_tensor_from_array
from meshnn.tensor.topology import PlacementReplicate, PlacementShard, TensorTopology


def get_device_tensors(tensor: Tensor) -> list[Tensor]:
    """One tensor per populated shard, in coordinate order; device shards share the MeshBuffer."""
    check_tensor(tensor)
    if isinstance(tensor.storage, DeviceStorage):
        buffer = tensor.storage.mesh_buffer
        return [
            device_tensor(tensor.spec, buffer, [c], TensorTopology(MeshShape([1]), (PlacementReplicate(),), (c,)))
            for c in sorted(tensor.storage.coords)
        ]
    shards = tensor.host_buffer().local_shards()
    out = []
    for coord in sorted(tensor.tensor_topology().mesh_coords):
        if coord in shards:
            unit = DistributedHostBuffer(MeshShape(1, 1), {MeshCoordinate(0, 0): shards[coord]})
            out.append(Tensor.make(tensor.spec, HostStorage(unit), TensorTopology.unit()))
    return out


def combine_device_tensors(tensors: Sequence[Tensor] | None = None, shard_dim: int | None = None) -> Tensor:
    """Shards of ONE MeshBuffer (e.g. from get_device_tensors) back into one device tensor."""
    items = list(tensors or [])
    if not items:
        raise MeshnnValueError("combine_device_tensors needs at least one tensor shard")
    for t in items:
        check_tensor(t, "tensor shard")
        if not isinstance(t.storage, DeviceStorage):
            raise MeshnnValueError("combine_device_tensors: all tensor shards must be on device")
    buffer = items[0].storage.mesh_buffer  # type: ignore[union-attr]
    if any(t.storage.mesh_buffer is not buffer for t in items):  # type: ignore[union-attr]
        raise MeshnnValueError("tensor shards must be allocated on the same mesh buffer.")
    if any(t.spec != items[0].spec for t in items):
        raise MeshnnValueError("All tensor shards must have the same tensor spec")
    coords: list[MeshCoordinate] = []
    for t in items:
        for coord in t.storage.coords:  # type: ignore[union-attr]
            if coord in coords:
                raise MeshnnValueError(f"Found a tensor shard at duplicate coordinate {coord!r}")
            coords.append(coord)
    coords.sort()
    rank = len(items[0].shape)
    if shard_dim is not None and not 0 <= shard_dim < rank:
        raise MeshnnValueError(f"shard_dim {shard_dim} is out of range for a tensor of rank {rank}")
    placement = PlacementReplicate() if shard_dim is None else PlacementShard(shard_dim)
    topology = TensorTopology(MeshShape([len(coords)]), (placement,), tuple(coords))
    return device_tensor(items[0].spec, buffer, coords, topology)


def from_host_shards(tensors: Sequence[Tensor], mesh_shape: MeshShape) -> Tensor:
    """Host shards, one per coordinate of ``mesh_shape`` (row-major), as one distributed host tensor."""
    items = list(tensors)
    if not items or not all(isinstance(t, Tensor) for t in items):
        raise MeshnnTypeError("from_host_shards needs a list of ttnn.Tensors")
    if any(not isinstance(t.storage, HostStorage) for t in items):
        raise MeshnnValueError("All tensor shards must be on host")
    if any(t.spec != items[0].spec for t in items):
        raise MeshnnValueError("All tensor shards must have the same tensor spec")
    shape = mesh_shape if isinstance(mesh_shape, MeshShape) else MeshShape(mesh_shape)
    if len(items) != shape.mesh_size():
        raise MeshnnValueError(f"Number of tensor shards must match mesh size: {len(items)} != {shape.mesh_size()}")
    coords = list(shape.coords())
    host = DistributedHostBuffer(shape)
    for coord, t in zip(coords, items, strict=True):
        shard = t.host_buffer().get_shard(t.tensor_topology().mesh_coords[0])
        host.emplace_shard(coord, lambda s=shard: s)
    topology = TensorTopology(MeshShape([len(items)]), (PlacementShard(0),), tuple(coords))
    return Tensor.make(items[0].spec, HostStorage(host), topology)


def aggregate_tensor(tensor_or_shards: Tensor | Sequence[Tensor], composer: MeshToTensor) -> Tensor:
    """Compose shards into one plain host tensor of the same dtype and layout."""
    if not isinstance(composer, MeshToTensor):
        raise MeshnnTypeError(f"aggregate_tensor needs a mesh composer, got {type(composer).__name__}")
    if isinstance(tensor_or_shards, Tensor):
        array, spec = to_numpy(tensor_or_shards, mesh_composer=composer), tensor_or_shards.spec
    else:
        items = list(tensor_or_shards)
        if not items:
            raise MeshnnValueError("aggregate_tensor needs at least one shard")
        array = composer.concat([to_numpy(t) for t in items])
        spec = items[0].spec
    return host_tensor_from_array(array, spec.dtype, spec.layout, tile=spec.tile)


def distribute_tensor(tensor: Tensor, mapper: TensorToMesh, mesh_device: MeshDevice | None = None) -> Tensor:
    """Apply ``mapper`` to a plain host tensor (and write the result to ``mesh_device``)."""
    check_tensor(tensor)
    if not isinstance(tensor.storage, HostStorage):
        raise MeshnnValueError("TensorToMesh only supports host tensors")
    spec = tensor.spec
    mapped = host_tensor_from_array(to_numpy(tensor), spec.dtype, spec.layout, tile=spec.tile, mesh_mapper=mapper)
    return mapped if mesh_device is None else to_device(mapped, mesh_device)
