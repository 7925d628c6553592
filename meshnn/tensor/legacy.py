"""ttnn's older free-function spellings that tt-metal code and tests still call, each the current
API underneath: ``aggregate_as_tensor`` (shards -> one tensor: ``from_host_shards`` for host shards,
``combine_device_tensors`` for device shards), ``get_device_tensor`` (the shard on one device),
``get_memory_config`` (``tensor.memory_config()``), and the mappers ``CppReplicateTensorToMesh`` /
``CppShardTensorToMesh``.

Layer: tensor.  Imports errors, mesh and the tensor modules tensor, storage, mappers and shards.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshShape
from meshnn.mesh.mesh_device import Device, MeshDevice
from meshnn.tensor.mappers import TensorToMesh, replicate_tensor_to_mesh_mapper, shard_tensor_to_mesh_mapper
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.shards import combine_device_tensors, from_host_shards, get_device_tensors
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor


def aggregate_as_tensor(tensors: Sequence[Tensor]) -> Tensor:
    """One tensor from its shards: host shards become a host tensor with shard i at coordinate (i,)
    of a 1-D distribution; device shards (of ONE MeshBuffer, e.g. from ``get_device_tensors``) stay
    on device.  All shards must have the same spec."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence) or not tensors:
        raise MeshnnTypeError(f"aggregate_as_tensor: tensors must be a non-empty list of ttnn.Tensor, got {tensors!r}")
    for i, tensor in enumerate(tensors):
        check_tensor(tensor, f"tensors[{i}]")
    on_device = [isinstance(t.storage, DeviceStorage) for t in tensors]
    if all(on_device):
        return combine_device_tensors(list(tensors))
    if any(on_device):
        raise MeshnnValueError("aggregate_as_tensor: tensors must be all on host or all on device, not a mix")
    return from_host_shards(list(tensors), MeshShape(len(tensors)))


def get_device_tensor(tensor: Tensor, device: Device | int) -> Tensor:
    """The shard of device tensor ``tensor`` on ``device`` (a device of its mesh, or its id), sharing
    the MeshBuffer."""
    check_tensor(tensor)
    mesh = tensor.device()
    if mesh is None:
        raise MeshnnValueError("get_device_tensor needs a device tensor; a host tensor has no device shards")
    if isinstance(device, Device):
        device_id = device.id()
    elif isinstance(device, int) and not isinstance(device, bool):
        device_id = device
    else:
        raise MeshnnTypeError(f"get_device_tensor: device must be a device of the mesh or its id, got {device!r}")
    ids = mesh.get_device_ids()
    if device_id not in ids:
        raise MeshnnValueError(f"get_device_tensor: device {device_id} is not a device of {mesh!r} (ids {ids})")
    coord = list(mesh.shape.coords())[ids.index(device_id)]
    for shard in get_device_tensors(tensor):
        if shard.device_coords() == [coord]:
            return shard
    raise MeshnnValueError(f"get_device_tensor: the tensor has no shard on device {device_id} ({coord})")


def get_memory_config(tensor: Tensor) -> MemoryConfig:
    """``ttnn.get_memory_config``: where the tensor lives (its spec's memory config)."""
    check_tensor(tensor)
    return tensor.memory_config()


def CppReplicateTensorToMesh(mesh_device: MeshDevice) -> TensorToMesh:
    """The older name of ``replicate_tensor_to_mesh_mapper``."""
    return replicate_tensor_to_mesh_mapper(mesh_device)


def CppShardTensorToMesh(mesh_device: MeshDevice, dim: int) -> TensorToMesh:
    """The older name of ``shard_tensor_to_mesh_mapper``."""
    return shard_tensor_to_mesh_mapper(mesh_device, dim)
