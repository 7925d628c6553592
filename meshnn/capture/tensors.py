"""How graph capture and reports name a tensor: its process-wide id and its text forms.

ttnn gives every tensor a ``tensor_id``; meshnn gives one to each Tensor object the first time a
capture or report sees it (ids count up from 1 for the whole process, never reused), held in a
weak map so that watching a tensor never keeps it alive.  The texts are ttnn's: C++ forms
(``DataType::BFLOAT16``, ``Tensor(storage=DeviceStorage(),tensor_spec=...)``) in graph nodes, Python
forms (``DataType.BFLOAT16``) in report rows.

Layers: imports errors, the host's identity map and the tensor layer's types.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from meshnn.errors import MeshnnTypeError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.host.identity import WeakIdentityMap
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor

_IDS: WeakIdentityMap[Tensor] = WeakIdentityMap()  # (a WeakKeyDictionary would compare tensors by ==: ttnn.eq)
_NEXT = itertools.count(1)  # (from 1: ttnn's importer reads a tensor id of 0 as none)
_LOCK = threading.Lock()


def tensor_id(tensor: Tensor) -> int:
    """The tensor's id: the same for the same Tensor object as long as it lives."""
    with _LOCK:
        found = _IDS.get(tensor)
        if found is None:
            found = _IDS[tensor] = next(_NEXT)
        return found


def mesh_buffer_of(tensor: Tensor) -> Any:
    """The tensor's MeshBuffer while it is allocated on a device, else None (a host tensor)."""
    storage = tensor.storage
    if isinstance(storage, DeviceStorage) and tensor.is_allocated():
        return storage.mesh_buffer
    return None


def is_tensor(value: object) -> bool:
    return isinstance(value, Tensor)


def check_tensor(value: object, what: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise MeshnnTypeError(f"{what} must be a ttnn.Tensor, got {type(value).__name__}")
    return value


def shape_text(tensor: Tensor) -> str:
    """``Shape([1, 1, 32, 1024])``: the logical shape of one device's shard, as ttnn prints it."""
    return f"Shape({list(tensor.shape)})"


def cpp_dtype(tensor: Tensor) -> str:
    return f"DataType::{tensor.dtype.name}"


def cpp_layout(tensor: Tensor) -> str:
    return f"Layout::{tensor.layout.name}"


def cpp_tensor_text(tensor: Tensor) -> str:
    """The tensor as ttnn's graph capture serializes a Tensor argument."""
    tile = tensor.tile
    (th, tw), (fh, fw) = tile.tile_shape, tile.face_shape
    page = "TilePageConfig" if tensor.layout.name == "TILE" else "RowMajorPageConfig"
    storage = "DeviceStorage()" if isinstance(tensor.storage, DeviceStorage) else "HostStorage()"
    tile_text = f"Tile(tile_shape={{{th}, {tw}}},face_shape={{{fh}, {fw}}},num_faces={tile.num_faces})"
    return (
        f"Tensor(storage={storage},tensor_spec=TensorSpec(logical_shape={shape_text(tensor)},"
        f"tensor_layout=TensorLayout(dtype={cpp_dtype(tensor)},page_config=PageConfig(config={page}("
        f"tile={tile_text})),memory_config={tensor.memory_config()!r})))"
    )


def python_tensor_text(tensor: Tensor) -> str:
    """The tensor as ttnn's report writes an argument: ``ttnn.Tensor(shape=..., dtype=..., layout=...)``."""
    return f"ttnn.Tensor(shape={shape_text(tensor)}, dtype={tensor.dtype}, layout={tensor.layout})"


def argument_text(value: object, *, cpp: bool) -> str:
    """One op argument as text: a tensor in ttnn's form, anything else by its repr."""
    if isinstance(value, Tensor):
        return cpp_tensor_text(value) if cpp else python_tensor_text(value)
    if isinstance(value, list | tuple) and value and all(isinstance(v, Tensor) for v in value):
        return "[" + ", ".join(argument_text(v, cpp=cpp) for v in value) + "]"
    if value is None:
        return "std::nullopt" if cpp else "None"
    if isinstance(value, DataType | Layout):  # ttnn's text of its enums: DataType::BFLOAT16 / DataType.BFLOAT16
        return f"{type(value).__name__}{'::' if cpp else '.'}{value.name}"
    return repr(value)
