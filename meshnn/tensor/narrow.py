"""``ttnn.narrow``: ``length`` entries of one dim from ``start``, as a view of the input's buffer.

No data moves: the result's MeshBuffer views part of its input's (:mod:`meshnn.mesh.slab_window`),
at the address ttnn gives it (the input's address plus the offset of its first page in a bank or
shard), with the spec ttnn gives it.  ttnn's cases and checks (tt-metal's ``narrow.cpp``):

- DRAM INTERLEAVED: only along the first dim that is not 1 (every dim before it 1), from a page
  that bank 0 holds (``start_page % num_banks == 0``); the view keeps the input's memory config and
  starts ``start_page // num_banks`` aligned pages up the input's address.
- L1 sharded (height, width, block): the narrowed range is whole shards, or one part of each shard
  at the same page offset; the view's shard spec holds the cores with narrowed pages, in the
  ROW_MAJOR orientation, and starts ``page_offset`` aligned pages up each core's shard.
- TILE: a narrow along the height or width is whole tiles; ROW_MAJOR along the width starts at a
  multiple of the buffer type's alignment.
- ``start`` and ``dim`` may be negative; the whole dim is the input itself.

The view's bytes are its pages in its own host page order, picked out of its input's (one run of
bytes when every dim before the narrowed one is 1: readable and writable; strided otherwise:
readable, a write refused by name).  A view is recorded as a view of its input's buffer too, so a
``deallocate(input, force=False)`` leaves the buffer while the view lives.

Layer: tensor.  Imports errors, the device and mesh layers' buffer types, and the tensor layer's
spec, memory config, tensor and lifetime.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec
from meshnn.device.core import CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.tensor.lifetime import device_tensor, track_view, view_mesh_buffer
from meshnn.tensor.memory_config import MemoryConfig, TensorMemoryLayout
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor

TILE = 32
"""ttnn's tile height and width constants, which its narrow checks use."""


def narrow(input_tensor: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``input_tensor`` with ``shape[dim] == length`` from index ``start``: a view, no copy."""
    if not isinstance(input_tensor, Tensor):
        raise MeshnnTypeError(f"ttnn.narrow: input_tensor must be a ttnn.Tensor, got {type(input_tensor).__name__}")
    for name, value in (("dim", dim), ("start", start), ("length", length)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise MeshnnTypeError(f"ttnn.narrow: {name} must be an int, got {value!r}")
    input_tensor.check_usable("ttnn.narrow: input_tensor")
    spec = input_tensor.spec
    padded = tuple(spec.padded_shape)
    rank = len(padded)
    if not -rank <= dim < rank:
        raise MeshnnValueError(f"ttnn.narrow: dim {dim} is out of range for a rank-{rank} tensor")
    dim = int(dim) % rank
    start = int(start) + padded[dim] if start < 0 else int(start)
    if start == 0 and length == padded[dim]:
        return input_tensor
    if not 0 <= start < padded[dim]:
        raise MeshnnValueError(f"Narrow start index {start} out of bounds for dimension {dim} with size {padded[dim]}")
    if not (length > 0 and start + length <= padded[dim]):
        raise MeshnnValueError(
            f"Narrow length {length} out of bounds for dimension {dim} with start index {start} and size {padded[dim]}"
        )
    if not isinstance(input_tensor.storage, DeviceStorage):
        raise MeshnnValueError("NarrowOperation currently only supports DEVICE tensors, got a host tensor")
    _check_layout(spec, dim, start, length, input_tensor)
    config = spec.memory_config
    if config.buffer_type is BufferType.DRAM and config.memory_layout is TensorMemoryLayout.INTERLEAVED:
        view_config, page_offset = config, _interleaved_offset(input_tensor, dim, start)
    elif config.buffer_type is BufferType.L1 and config.is_sharded() and config.shard_spec is not None:
        view_config, page_offset = _sharded_view(spec, dim, start, length)
    else:
        raise MeshnnValueError(
            "Narrowing for the given tensor configuration is not yet implemented. Supported: DRAM INTERLEAVED "
            f"tensors on the first non-trivial dimension, L1 sharded tensors with restrictions (got {config})"
        )
    return _view(input_tensor, dim, start, length, view_config, page_offset)


def _check_layout(spec: TensorSpec, dim: int, start: int, length: int, tensor: Tensor) -> None:
    rank = len(spec.padded_shape)
    if spec.layout is Layout.TILE and rank < 2:
        raise MeshnnValueError("ttnn.narrow: a TILE tensor of rank below 2 is not supported by meshnn")
    if spec.layout is Layout.TILE and dim >= rank - 2 and (start % TILE or length % TILE):
        side = "width" if dim == rank - 1 else "height"
        raise MeshnnValueError(
            f"Narrowing on {side} for TILE layout requires start and length to be multiples of "
            f"TILE_{side.upper()} ({TILE}), got start {start} and length {length}"
        )
    alignment = _facts(tensor).alignment
    if spec.layout is Layout.ROW_MAJOR and dim == rank - 1 and start % alignment:
        raise MeshnnValueError(
            f"Narrowing on width for ROW_MAJOR layout requires start ({start}) to be aligned to buffer "
            f"alignment ({alignment})"
        )


def _facts(tensor: Tensor) -> object:
    buffer = tensor.storage.mesh_buffer  # type: ignore[union-attr]
    return buffer.device().allocator.manager(buffer.buffer_type()).facts


def _interleaved_offset(tensor: Tensor, dim: int, start: int) -> int:
    """The first page's offset from the input's address, in aligned pages (DRAM interleaved)."""
    spec, padded = tensor.spec, tuple(tensor.spec.padded_shape)
    if any(d != 1 for d in padded[:dim]):
        raise MeshnnValueError(
            f"Narrowing on dimension {dim} for DRAM INTERLEAVED tensors requires all preceding dimensions to be "
            f"trivial (size 1). Got non-trivial dimensions before dimension {dim}."
        )
    per_index = math.prod(padded[dim + 1 :])
    if spec.layout is Layout.TILE:
        start_page = start * per_index // (spec.tile.tile_shape[0] * spec.tile.tile_shape[1])
    else:
        start_page = start * per_index * spec.dtype.row_major_element_size // spec.page_size
    facts = _facts(tensor)
    if start_page % facts.num_banks:  # type: ignore[attr-defined]
        raise MeshnnValueError("Start page ID must be aligned with number of banks for INTERLEAVED DRAM buffer")
    return start_page // facts.num_banks  # type: ignore[attr-defined]


def _sharded_view(spec: TensorSpec, dim: int, start: int, length: int) -> tuple[MemoryConfig, int]:
    """The view's memory config and its first page's offset in each core's shard (L1 sharded)."""
    padded, rank = tuple(spec.padded_shape), len(spec.padded_shape)
    config, buffer = spec.memory_config, spec.shard_spec_buffer()
    (sh, sw), (ph, pw) = config.shard_spec.shape, buffer.page_shape  # type: ignore[union-attr]
    if dim == rank - 1:
        lo, span, size, whole_page = start, length, sw, sh == ph
    else:
        per_row = math.prod(padded[dim + 1 : rank - 1])
        lo, span, size, whole_page = start * per_row, length * per_row, sh, True
    if whole_page and lo % size + span <= size:  # one part of each shard
        shard = (sh, span) if dim == rank - 1 else (span, sw)
        page_offset = (lo % size) // pw if dim == rank - 1 else (lo % size) // ph * (sw // pw)
    elif lo % size == 0 and span % size == 0:  # whole shards
        shard, page_offset = (sh, sw), 0
    else:
        where = "last" if dim == rank - 1 else "non-last"
        raise MeshnnValueError(
            f"Narrowing on {where} dimension for L1 sharded tensor only supports full shards or splitting within "
            f"single shard. Got start {start} and length {length} with shard shape ({sh}, {sw})"
        )
    cores = _cores_with_pages(spec, dim, start, length, page_offset)
    grid = CoreRangeSet([CoreRange(c, c) for c in cores])
    view_spec = ShardSpec(grid, shard, ShardOrientation.ROW_MAJOR)
    return MemoryConfig(config.memory_layout, BufferType.L1, view_spec), page_offset


def _cores_with_pages(spec: TensorSpec, dim: int, start: int, length: int, page_offset: int) -> list:
    """The input's cores holding narrowed pages, in dealing order (tt-metal's filter of
    ``cores_with_data`` by each core's first page after ``page_offset``)."""
    padded, rank = tuple(spec.padded_shape), len(spec.padded_shape)
    buffer = spec.shard_spec_buffer()
    (sh, sw), (ph, pw) = buffer.spec.shape, buffer.page_shape  # type: ignore[union-attr]
    (tph, tpw), (sph, spw) = buffer.tensor2d_shape_in_pages, buffer.shape_in_pages  # type: ignore[union-attr]
    grid_width = tpw // spw
    with_data = buffer.dealt_cores()[: -(-tph // sph) * -(-tpw // spw)]  # type: ignore[union-attr]
    kept = []
    for core_id, core in enumerate(with_data):
        if dim == rank - 1:
            page = (core_id % grid_width) * sw // pw + page_offset
            inside = start // pw <= page < (start + length) // pw
        else:
            per_row = math.prod(padded[dim + 1 : rank - 1])
            page = (core_id // grid_width * sh // ph + page_offset // (sw // pw)) % (padded[dim] * per_row // ph)
            inside = start * per_row // ph <= page < (start + length) * per_row // ph
        if inside:
            kept.append(core)
    return kept


def _select(spec: TensorSpec, dim: int, start: int, length: int) -> Callable[[np.ndarray], np.ndarray]:
    """The view's bytes out of the input's ``(devices, size)`` rows, in the view's host page order
    (tiles in tile-grid order for TILE, elements in order for ROW_MAJOR)."""
    padded, rank = tuple(spec.padded_shape), len(spec.padded_shape)
    if spec.layout is Layout.TILE:
        th, tw = spec.tile.tile_shape
        grid = (*padded[:-2], padded[-2] // th, padded[-1] // tw, spec.page_size)
        unit = th if dim == rank - 2 else tw if dim == rank - 1 else 1
    else:
        grid = (*padded, spec.dtype.row_major_element_size)
        unit = 1
    picked = slice(start // unit, (start + length) // unit)
    index = (slice(None),) * (1 + dim) + (picked,)

    def select(rows: np.ndarray) -> np.ndarray:
        return rows.reshape(rows.shape[0], *grid)[index]

    return select


def _view(tensor: Tensor, dim: int, start: int, length: int, config: MemoryConfig, page_offset: int) -> Tensor:
    spec = tensor.spec
    shape, padded = list(spec.shape), list(spec.padded_shape)
    shape[dim], padded[dim] = length, length
    view_spec = TensorSpec(
        shape,
        spec.dtype,
        spec.layout,
        tile=spec.tile,
        memory_config=config,
        padded_shape=padded if spec.explicit_padded_shape is not None else None,
    )
    storage = tensor.storage
    owner = storage.mesh_buffer  # type: ignore[union-attr]
    alignment = _facts(tensor).alignment  # type: ignore[attr-defined]
    address = owner.address() + page_offset * (-(-spec.page_size // alignment) * alignment)
    buffer = view_mesh_buffer(view_spec, owner, address, _select(spec, dim, start, length))
    view = device_tensor(view_spec, buffer, storage.coords, tensor.tensor_topology())  # type: ignore[union-attr]
    return track_view(view, owner)
