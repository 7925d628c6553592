"""Conversions of a tensor's bytes: ``ttnn.to_layout`` (ROW_MAJOR <-> TILE), ``ttnn.typecast`` /
``to_dtype``, and the host ``Tensor.pad`` / ``pad_to_tile``.  On the host each shard is converted
once (replicas share it) into a new host tensor of the same topology; a device tensor's
to_layout and typecast run as ops, reached through :mod:`meshnn.tensor.device_hooks`.

Layer: tensor.  Imports errors, the byte formats (dtypes, layout, encoding), the mesh layer's
op_keywords (ttnn's keyword arguments) and the tensor modules spec, memory_config, storage, tensor
and device_hooks.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.codec import decode, encode
from meshnn.formats.conversions import to_layout as layout_bytes
from meshnn.formats.conversions import typecast as typecast_bytes
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, padded_shape
from meshnn.mesh.op_keywords import QUEUE_ID, SUB_CORE_GRIDS, ttnn_keywords
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DeviceStorage, DistributedHostBuffer, HostBuffer, HostStorage
from meshnn.tensor.tensor import Tensor, check_tensor

TILE_EDGE = 32  # ttnn's pad_to_tile pads to 32x32 (TILE_HEIGHT, TILE_WIDTH), whatever the tile


def _per_shard(tensor: Tensor, spec: TensorSpec, convert) -> Tensor:
    """A host tensor whose every shard is ``convert(raw bytes)``, with the same topology."""
    source = tensor.host_buffer()
    out = DistributedHostBuffer(source.shape())
    done: dict[int, HostBuffer] = {}
    for coord in source.shard_coords():
        shard = source.get_shard(coord)
        if shard is None:
            continue
        if id(shard) not in done:  # replicas share one buffer: convert it once
            done[id(shard)] = HostBuffer(convert(shard.data))
        converted = done[id(shard)]
        out.emplace_shard(coord, lambda b=converted: b)
    return Tensor.make(spec, HostStorage(out), tensor.tensor_topology())


@ttnn_keywords(records=("pad_value",), sub_core_grids=SUB_CORE_GRIDS)
def to_layout(
    tensor: Tensor,
    layout: Layout,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    *,
    pad_value: float | None = None,
) -> Tensor:
    """ROW_MAJOR <-> TILE (``pad_value`` fills the tile padding).  On host ``dtype`` is ignored, as
    in ttnn 0.81.  An explicitly padded ROW_MAJOR tensor is tilized with its padding as data.  A
    host block-float tensor stays in tiles (ttnn warns and converts nothing)."""
    check_tensor(tensor)
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"layout must be a ttnn Layout, got {layout!r}")
    if isinstance(tensor.storage, DeviceStorage):
        from meshnn.tensor.device_hooks import device_to_layout

        if pad_value is not None:
            return device_to_layout(tensor, layout, dtype=dtype, memory_config=memory_config, pad_value=pad_value)
        return device_to_layout(tensor, layout, dtype=dtype, memory_config=memory_config)
    if layout is tensor.layout:
        return tensor
    if tensor.dtype.is_block_float:  # ttnn warns and leaves a host bfloat8_b / bfloat4_b tensor as it is
        warnings.warn(
            f"Tensor layout must be Layout::TILE for {tensor.dtype}! Conversion from {tensor.layout} to {layout} "
            "was not executed!",
            stacklevel=2,
        )
        return tensor
    spec = tensor.spec
    stored = spec.encoded_shape
    padded = None if spec.explicit_padded_shape is None else padded_shape(stored, layout, spec.tile)
    new = TensorSpec(
        spec.shape, spec.dtype, layout, tile=spec.tile, memory_config=spec.memory_config, padded_shape=padded
    )
    fill = 0.0 if pad_value is None else float(pad_value)
    target = tuple(new.encoded_shape)
    if layout is Layout.ROW_MAJOR and target != tuple(stored):  # a sharded ROW_MAJOR spec pads its width to whole
        # shards, and its bytes hold them (a TILE target keeps the stored shape's values, padding included)
        return _per_shard(tensor, new, lambda raw: _refit(raw, spec, new, fill))
    return _per_shard(
        tensor,
        new,
        lambda raw: layout_bytes(raw, spec.dtype, spec.layout, layout, stored, tile=spec.tile, pad_value=fill),
    )


def _refit(raw: np.ndarray, old: TensorSpec, new: TensorSpec, fill: float) -> np.ndarray:
    """``raw`` (bytes of ``old``) as the bytes of ``new``, whose stored shape differs (ranks equal): the
    values of the shapes' common part kept, the rest of ``new``'s stored shape ``fill``."""
    values = decode(raw, old.dtype, old.layout, old.encoded_shape, tile=old.tile)
    target = tuple(new.encoded_shape)
    out = np.full(target, fill, dtype=values.dtype)
    common = tuple(slice(0, min(a, b)) for a, b in zip(values.shape, target, strict=True))
    out[common] = values[common]
    return encode(out, new.dtype, new.layout, tile=new.tile, pad_value=fill)


@ttnn_keywords(sub_core_grids=SUB_CORE_GRIDS, queue_id=QUEUE_ID)
def typecast(
    tensor: Tensor,
    dtype: DataType,
    output_dtype: DataType | None = None,
    *,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """Convert every element to ``dtype`` (host rules of typecast.json; device tensors as an op,
    written into the device tensor ``output_tensor`` when given).  ttnn's second form
    ``typecast(tensor, input_dtype, output_dtype)``: ``dtype`` names the tensor's own dtype
    (checked) and ``output_dtype`` the target."""
    check_tensor(tensor)
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"dtype must be a ttnn DataType, got {dtype!r}")
    if output_dtype is not None:
        if not isinstance(output_dtype, DataType):
            raise MeshnnTypeError(f"typecast: output_dtype must be a ttnn DataType, got {output_dtype!r}")
        if dtype is not tensor.dtype:
            raise MeshnnValueError(
                f"typecast: input_dtype {dtype} and the input tensor's dtype {tensor.dtype} provided should match"
            )
        dtype = output_dtype
    if isinstance(tensor.storage, DeviceStorage):
        from meshnn.tensor.device_hooks import device_typecast

        return device_typecast(tensor, dtype, memory_config=memory_config, output_tensor=output_tensor)
    if output_tensor is not None:
        raise MeshnnValueError("ttnn.typecast: output_tensor is for device tensors; this tensor is on the host")
    spec = tensor.spec
    layout = Layout.TILE if dtype.is_block_float else spec.layout
    stored = spec.encoded_shape
    padded = None if spec.explicit_padded_shape is None else padded_shape(stored, layout, spec.tile)
    new = TensorSpec(spec.shape, dtype, layout, tile=spec.tile, memory_config=spec.memory_config, padded_shape=padded)
    return _per_shard(
        tensor, new, lambda raw: typecast_bytes(raw, spec.dtype, dtype, spec.layout, stored, tile=spec.tile)
    )


def to_dtype(tensor: Tensor, dtype: DataType) -> Tensor:
    return typecast(tensor, dtype)


def pad_host(tensor: Tensor, output_shape: Sequence[int], input_start: Sequence[int], value: float) -> Tensor:
    """``Tensor.pad`` (host, ROW_MAJOR): the tensor's stored array placed at ``input_start`` in a
    ``value``-filled array of ``output_shape``.  As in ttnn the LOGICAL shape stays the input's
    (left-padded with 1s to the output rank) and only the padded shape becomes ``output_shape``."""
    check_tensor(tensor)
    if not isinstance(tensor.storage, HostStorage):
        raise MeshnnValueError("Tensor.pad works on host tensors; use ttnn.pad on device")
    spec = tensor.spec
    if spec.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(
            f"Tensor.pad on host needs a ROW_MAJOR tensor, got {spec.layout}: "
            "call ttnn.to_layout(tensor, ttnn.ROW_MAJOR_LAYOUT) first"
        )
    out_shape, start = tuple(int(d) for d in output_shape), tuple(int(d) for d in input_start)
    rank = len(out_shape)
    if len(spec.shape) > rank or len(start) != rank:
        raise MeshnnValueError(
            f"pad: output shape {list(out_shape)} and start {list(start)} need one rank, at least the tensor's "
            f"rank {len(spec.shape)}"
        )
    lead = (1,) * (rank - len(spec.shape))
    stored = lead + tuple(spec.encoded_shape)
    if any(s < 0 or s + d > o for s, d, o in zip(start, stored, out_shape, strict=True)):
        raise MeshnnValueError(
            f"pad: a tensor of padded shape {list(stored)} at {list(start)} does not fit in {list(out_shape)}"
        )
    new = TensorSpec(
        lead + tuple(spec.shape),
        spec.dtype,
        spec.layout,
        tile=spec.tile,
        memory_config=spec.memory_config,
        padded_shape=out_shape,
    )

    def padded(raw: np.ndarray) -> np.ndarray:
        values = decode(raw, spec.dtype, spec.layout, spec.encoded_shape).reshape(stored)
        out = np.full(out_shape, value, dtype=values.dtype)
        out[tuple(slice(s, s + d) for s, d in zip(start, stored, strict=True))] = values
        return encode(out, spec.dtype, spec.layout)

    return _per_shard(tensor, new, padded)


def pad_to_tile(tensor: Tensor, value: float) -> Tensor:
    """``Tensor.pad_to_tile``: pad the last two dims of the padded shape up to multiples of 32."""
    dims = tuple(tensor.padded_shape) if len(tensor.shape) >= 2 else (1, *tensor.padded_shape)
    *outer, height, width = dims
    target = (*outer, -(-height // TILE_EDGE) * TILE_EDGE, -(-width // TILE_EDGE) * TILE_EDGE)
    if target == dims and tensor.layout is Layout.TILE:  # already whole tiles: nothing to pad
        return tensor
    return pad_host(tensor, target, (0,) * len(target), value)


def unpad_from_tile(tensor: Tensor, output_shape: Sequence[int]) -> Tensor:
    """``Tensor.unpad_from_tile`` (host, ROW_MAJOR): the ``output_shape`` corner of the stored
    array, with no padding kept."""
    shape = tuple(int(d) for d in output_shape)
    return unpad_host(tensor, (0,) * len(shape), shape, "unpad_from_tile")


def unpad_host(tensor: Tensor, start: Sequence[int], end: Sequence[int], op: str = "unpad") -> Tensor:
    """``Tensor.unpad`` (host, ROW_MAJOR): the stored array from ``start`` up to ``end`` (exclusive)
    in every dim, as a tensor of shape ``end - start`` with no padding kept."""
    check_tensor(tensor)
    spec = tensor.spec
    if not isinstance(tensor.storage, HostStorage) or spec.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"Tensor.{op} works on ROW_MAJOR host tensors, got {spec.layout}")
    first, last, stored = tuple(int(d) for d in start), tuple(int(d) for d in end), tuple(spec.encoded_shape)
    if len(first) != len(stored) or len(last) != len(stored):
        raise MeshnnValueError(f"{op}: start {list(first)} and end {list(last)} need the tensor's rank {len(stored)}")
    if any(not 0 <= a <= b <= s for a, b, s in zip(first, last, stored, strict=True)):
        raise MeshnnValueError(f"{op}: the range {list(first)} .. {list(last)} must fit in {list(stored)}")
    shape = tuple(b - a for a, b in zip(first, last, strict=True))
    new = TensorSpec(shape, spec.dtype, spec.layout, tile=spec.tile, memory_config=spec.memory_config)
    window = tuple(slice(a, b) for a, b in zip(first, last, strict=True))

    def unpadded(raw: np.ndarray) -> np.ndarray:
        values = decode(raw, spec.dtype, spec.layout, stored)
        return encode(np.ascontiguousarray(values[window]), spec.dtype, spec.layout)

    return _per_shard(tensor, new, unpadded)
