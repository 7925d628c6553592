"""ttnn's small questions about a tensor (``ttnn.has_storage_type_of``,
``ttnn.is_tensor_storage_on_device``, ``ttnn.is_sharded``) and ``ttnn.DEVICE_STORAGE_TYPE``.

Layer: tensor.  Imports the tensor modules storage and tensor.
"""

from __future__ import annotations

from meshnn.tensor.storage import StorageType
from meshnn.tensor.tensor import Tensor, check_tensor

DEVICE_STORAGE_TYPE = StorageType.DEVICE


def has_storage_type_of(tensor: Tensor, storage_type: StorageType) -> bool:
    """Whether ``tensor``'s storage is of ``storage_type``."""
    return check_tensor(tensor).storage_type() == storage_type


def is_tensor_storage_on_device(tensor: Tensor) -> bool:
    """Whether ``tensor`` lives on a device (its storage is DEVICE)."""
    return has_storage_type_of(tensor, DEVICE_STORAGE_TYPE)


def is_sharded(tensor: Tensor) -> bool:
    """Whether ``tensor``'s memory config is sharded."""
    return check_tensor(tensor).is_sharded()
