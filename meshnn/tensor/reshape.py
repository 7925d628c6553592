"""``ttnn.reshape`` and its rules: when a new logical shape is a view of the same bytes (no data
moves: the result shares the host buffers or the MeshBuffer), and what happens otherwise (a
converted host copy, or the device reshape op through :mod:`meshnn.tensor.device_hooks`).

Layer: tensor.  Imports errors, the byte formats (layout), the mesh layer's op_keywords and the tensor
modules spec, memory_config, storage,
tensor, lifetime, interop and device_hooks.
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.op_keywords import QUEUE_ID, SUB_CORE_GRIDS, Keyword, flag, number, optional, ttnn_keywords
from meshnn.tensor.interop import to_numpy
from meshnn.tensor.lifetime import device_tensor
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor, host_tensor_from_array


def int_dims(shape: Sequence[object]) -> list[int] | None:
    """``shape``'s dims as ints: ints, numpy integers and anything else with ``__index__`` (a
    one-element torch integer tensor, which ttnn's bindings convert: model code reshapes by a shapes
    tensor's values); None when one is not an integer (a bool, a float, a float tensor)."""
    try:
        items = list(shape)
    except TypeError:  # (not a sequence: a 0-d tensor)
        return None
    dims = []
    for d in items:
        if isinstance(d, bool | np.bool_) or "bool" in str(getattr(d, "dtype", "")):
            return None
        try:
            dims.append(operator.index(d))  # type: ignore[arg-type]
        except (TypeError, ValueError, RuntimeError):
            return None
    return dims


def _resolved_shape(shape: Sequence[int], volume: int) -> tuple[int, ...]:
    if isinstance(shape, str) or not isinstance(shape, Sequence | np.ndarray):
        raise MeshnnTypeError(f"reshape: shape must be a sequence of ints, got {shape!r}")
    dims = int_dims(shape)
    if dims is None:
        raise MeshnnTypeError(f"reshape: shape must hold ints, got {list(shape)!r}")
    if dims.count(-1) > 1:
        raise MeshnnValueError(f"reshape: only one dimension may be -1, got {dims}")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or volume % known:
            raise MeshnnValueError(f"reshape: cannot infer -1 in {dims} for a volume of {volume}")
        dims[dims.index(-1)] = volume // known
    if any(d < 0 for d in dims) or math.prod(dims) != volume:
        raise MeshnnValueError(f"reshape: shape {dims} does not hold the {volume} elements of the tensor")
    return tuple(dims)


def _padded_view(tensor: Tensor, new_shape: tuple[int, ...], padded_shape: Sequence[int]) -> Tensor:
    """``tensor``'s bytes under the logical shape ``new_shape`` and padded shape ``padded_shape``."""
    spec = tensor.spec
    if isinstance(padded_shape, str) or not isinstance(padded_shape, Sequence | np.ndarray):
        raise MeshnnTypeError(f"reshape: padded_shape must be a sequence of ints, got {padded_shape!r}")
    padded = _resolved_shape(padded_shape, math.prod(int(d) for d in padded_shape) if len(padded_shape) else 1)
    if len(padded) != len(new_shape) or any(p < s for p, s in zip(padded, new_shape, strict=True)):
        raise MeshnnValueError(
            f"reshape: padded_shape {list(padded)} must have the rank of shape {list(new_shape)} and hold it"
        )
    try:
        new_spec = TensorSpec(
            new_shape, spec.dtype, spec.layout, tile=spec.tile, memory_config=spec.memory_config, padded_shape=padded
        )
    except MeshnnValueError as error:
        raise MeshnnValueError(f"reshape: padded_shape {list(padded)}: {error}") from None
    if new_spec.physical_shape != spec.physical_shape:
        raise MeshnnValueError(
            f"reshape: padded_shape {list(padded)} is not a view of the tensor's padded shape "
            f"{list(spec.padded_shape)} (their 2-D views {list(new_spec.physical_shape)} and "
            f"{list(spec.physical_shape)} differ)"
        )
    if isinstance(tensor.storage, DeviceStorage):
        return device_tensor(new_spec, tensor.storage.mesh_buffer, tensor.storage.coords, tensor.tensor_topology())
    return Tensor.make(new_spec, tensor.storage, tensor.tensor_topology())


def is_view_reshape(spec: TensorSpec, new_shape: tuple[int, ...]) -> bool:
    """True when the bytes of ``spec`` already are those of ``new_shape`` (no data moves).  A
    sharded tensor is a view (keeping its memory config, as ttnn's view keeps it) only when its
    last dim stays: its 2-D view, and so every shard, is then the same."""
    if spec.explicit_padded_shape is not None:
        return tuple(spec.shape) == new_shape
    if spec.memory_config.is_sharded() and (not new_shape or not spec.shape or new_shape[-1] != spec.shape[-1]):
        return tuple(spec.shape) == new_shape
    if spec.layout is Layout.ROW_MAJOR:
        return True
    old = tuple(spec.shape)
    if len(old) < 2 or len(new_shape) < 2:
        return old == new_shape
    th = spec.tile.tile_shape[0]
    if old[-2:] == new_shape[-2:]:
        return True
    return old[-1] == new_shape[-1] and old[-2] % th == 0 and new_shape[-2] % th == 0


class TileReshapeMapMode(enum.Enum):
    """``ttnn.TileReshapeMapMode``: whether a TILE reshape's page map is kept in the program cache
    (CACHE, ttnn's default) or built again at every call (RECREATE).  Device-side bookkeeping only:
    the values are the same either way; reshape records the mode."""

    CACHE = 0
    RECREATE = 1


@ttnn_keywords(
    pad_value=Keyword(None, number),
    reshape_tile_mode=Keyword(None, optional(TileReshapeMapMode, what="a ttnn.TileReshapeMapMode")),
    recreate_mapping_tensor=Keyword(False, flag),  # the older name of reshape_tile_mode=RECREATE
    sub_core_grids=SUB_CORE_GRIDS,
    skip_padding_fill=Keyword(False, flag),
    queue_id=QUEUE_ID,
)
def reshape(
    tensor: Tensor,
    shape: Sequence[int],
    padded_shape: Sequence[int] | None = None,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """A view with a new logical shape where the bytes allow it; otherwise a converted copy (host)
    or a data-movement op (device).  With ``padded_shape`` (ttnn's ``reshape(t, logical, padded)``)
    the result has that padded shape and is always a view: the padded shapes' 2-D views must match.
    A device result is moved to ``memory_config`` when given and not already its memory config.
    ``pad_value`` fills tile padding, which meshnn's device values do not hold: recorded."""
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.reshape: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    result = _reshape(tensor, shape, padded_shape)
    if memory_config is None or not isinstance(result.storage, DeviceStorage):
        return result
    if result.memory_config() == memory_config:
        return result
    from meshnn.tensor.device_hooks import convert_memory_config

    return convert_memory_config(result, memory_config)


def _reshape(tensor: Tensor, shape: Sequence[int], padded_shape: Sequence[int] | None) -> Tensor:
    check_tensor(tensor)
    spec = tensor.spec
    if padded_shape is not None:  # the logical volume may change: the padding holds the rest
        dims = tuple(shape) if isinstance(shape, Sequence | np.ndarray) and not isinstance(shape, str) else shape
        new_shape = (
            _resolved_shape(dims, math.prod(dims)) if -1 not in dims else _resolved_shape(dims, spec.logical_volume())
        )  # type: ignore[arg-type]
        return _padded_view(tensor, new_shape, padded_shape)
    widened = _tile_padding_view(tensor, shape)
    if widened is not None:
        return widened
    new_shape = _resolved_shape(shape, spec.logical_volume())
    if not is_view_reshape(spec, new_shape):
        if isinstance(tensor.storage, DeviceStorage):
            from meshnn.tensor.device_hooks import device_reshape

            return device_reshape(tensor, new_shape)
        values = to_numpy(tensor) if len(tensor.tensor_topology().mesh_coords) == 1 else None
        if values is None:
            raise MeshnnValueError("reshape of a multi-shard TILE host tensor needs ttnn.to_layout(ROW_MAJOR) first")
        return host_tensor_from_array(values.reshape(new_shape), spec.dtype, spec.layout, tile=spec.tile)
    new_spec = TensorSpec(
        new_shape,
        spec.dtype,
        spec.layout,
        tile=spec.tile,
        memory_config=spec.memory_config,
        padded_shape=spec.explicit_padded_shape if new_shape == tuple(spec.shape) else None,
    )
    if new_spec.compute_packed_buffer_size_bytes() != spec.compute_packed_buffer_size_bytes():
        raise MeshnnValueError(f"reshape to {list(new_shape)} changes the padded size; not a view")
    if isinstance(tensor.storage, DeviceStorage):
        return device_tensor(new_spec, tensor.storage.mesh_buffer, tensor.storage.coords, tensor.tensor_topology())
    return Tensor.make(new_spec, tensor.storage, tensor.tensor_topology())


def _tile_padding_view(tensor: Tensor, shape: Sequence[int]) -> Tensor | None:
    """ttnn's reshape of a TILE tensor to a shape of another volume whose tile-padded shape has the
    tensor's padded width and whose 2-D view is the tensor's (``ttnn.reshape(t, t.padded_shape)``:
    the tile padding becomes values, as ttnn allows it); None for any other reshape."""
    spec = tensor.spec
    if spec.layout is not Layout.TILE or isinstance(shape, str) or not isinstance(shape, Sequence | np.ndarray):
        return None
    if not all(isinstance(d, int | np.integer) and not isinstance(d, bool) and d > 0 for d in shape):
        return None
    dims = tuple(int(d) for d in shape)
    if len(dims) < 2 or math.prod(dims) == spec.logical_volume() or spec.memory_config.is_sharded():
        return None
    th, tw = spec.tile.tile_shape
    padded = (*dims[:-2], -(-dims[-2] // th) * th, -(-dims[-1] // tw) * tw)
    if padded[-1] != spec.padded_shape[-1] or math.prod(padded) != math.prod(spec.padded_shape):
        return None
    return _padded_view(tensor, dims, padded)
