"""The tensor side of N-D sharding: checking an :class:`NdShardSpec` against a tensor, the 2-D
shard spec a tensor's spec fills in when one deals the same pages (ttnn's
``populate_legacy_shard_spec_from_nd``), and the shard shapes of ``TensorSpec.sharded_across_dims``.

Shapes are in elements; ``padded`` is the tensor's padded shape, ``physical`` its 2-D
(height, width).

Layer: tensor.  Imports errors, device, the byte formats' layout and
:mod:`meshnn.tensor.memory_config`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreRangeSet
from meshnn.device.nd_shard import NdShardSpec, ShardDistributionStrategy
from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile
from meshnn.tensor.memory_config import MemoryConfig

RECOMMENDED_ALIGNMENT_BYTES = 64  # tt-metal's largest device memory alignment, of any buffer type


def check_nd_shard(spec: NdShardSpec, padded: Sequence[int], layout: Layout, tile: Tile) -> None:
    """Raises unless ``spec`` can shard a tensor of ``padded`` shape in ``layout``."""
    shard = spec.shard_shape
    if len(shard) > max(len(padded), 1):
        raise MeshnnValueError(f"Tensor shape rank ({len(padded)}) can't be less than shard shape rank ({len(shard)})!")
    if layout is Layout.TILE:
        th, tw = tile.tile_shape
        if len(shard) < 2 or shard[-2] % th or shard[-1] % tw:
            raise MeshnnValueError(f"Physical shard shape {list(shard)} must be tile {[th, tw]} sized!")


def _flattened(shard: tuple[int, ...], padded: Sequence[int]) -> tuple[int, int] | None:
    """The N-D shard folded to a 2-D (height, width) dealing the same pages, or None."""
    height, volume = 1, padded[-1]
    for dim in range(-2, -len(shard) - 1, -1):
        size, piece = padded[dim], shard[dim]
        volume *= size
        height *= piece
        if size == piece:
            continue
        if math.prod(shard) != height * shard[-1]:
            return None
        last = dim == -len(shard)
        if last or size % piece == 0 or math.prod(padded) == volume:
            break
        return None
    return height, shard[-1]


def legacy_form(config: MemoryConfig, padded: Sequence[int], physical: tuple[int, int]) -> MemoryConfig | None:
    """``config`` (made with an N-D spec) with the equivalent HEIGHT / WIDTH / BLOCK_SHARDED layout
    and 2-D shard spec filled in, or None when no 2-D layout deals the same pages."""
    nd = config.given_nd_shard_spec
    if nd is None or not padded:
        return None
    flat = _flattened(nd.shard_shape, padded)
    if flat is None:
        return None
    spec = ShardSpec(nd.grid, flat, nd.orientation)
    down, across = -(-physical[0] // flat[0]), -(-physical[1] // flat[1])
    if nd.orientation is not ShardOrientation.ROW_MAJOR:
        down, across = across, down
    if down * across > nd.grid.num_cores():
        return None
    kind = TensorMemoryLayout.BLOCK_SHARDED
    if nd.shard_distribution_strategy is ShardDistributionStrategy.ROUND_ROBIN_1D:
        if flat[0] == math.prod(padded) // padded[-1]:
            kind = TensorMemoryLayout.WIDTH_SHARDED
        elif flat[1] == padded[-1]:
            kind = TensorMemoryLayout.HEIGHT_SHARDED
    if kind is TensorMemoryLayout.BLOCK_SHARDED:
        if len(nd.grid.ranges()) != 1:
            return None
        size = nd.grid.ranges()[0].grid_size()
        if nd.shard_distribution_strategy is ShardDistributionStrategy.ROUND_ROBIN_1D and across != size.x:
            return None
        if across > size.x or down > size.y:
            return None
    return MemoryConfig(kind, config.buffer_type, spec, nd, created_with_nd_shard_spec=True)


def recommended_alignment(layout: Layout, tile: Tile, dtype: DataType) -> tuple[int, ...]:
    """The alignment of a shard's last dims ttnn recommends: the tile (TILE), else a width of a
    whole number of 64-byte units."""
    if layout is Layout.TILE:
        return tuple(tile.tile_shape)
    size = dtype.row_major_element_size
    return (math.lcm(RECOMMENDED_ALIGNMENT_BYTES, size) // size,)


def aligned_shard(shard: Sequence[int], alignment: Sequence[int]) -> tuple[int, ...]:
    """``shard`` with its last dims rounded up to ``alignment`` (aligned from the last dim)."""
    dims = list(shard)
    for back in range(1, min(len(alignment), len(dims)) + 1):
        dims[-back] = -(-dims[-back] // alignment[-back]) * alignment[-back]
    return tuple(dims)


def across_dims_shard(padded: Sequence[int], dims: Sequence[int], keep: bool) -> tuple[int, ...]:
    """The shard shape of ``sharded_across_dims`` (``keep`` False: 1 in ``dims``, the tensor's size
    elsewhere) or ``sharded_across_dims_except`` (``keep`` True: the tensor's size in ``dims``, 1
    elsewhere)."""
    rank = len(padded)
    picked = set()
    for d in dims:
        if not -rank <= int(d) < rank:
            raise MeshnnValueError(f"dim {d} is outside a tensor of rank {rank}")
        picked.add(int(d) % rank)
    if keep:
        return tuple(padded[i] if i in picked else 1 for i in range(rank))
    return tuple(1 if i in picked else padded[i] for i in range(rank))


def across_dims_config(
    padded: Sequence[int],
    layout: Layout,
    tile: Tile,
    dtype: DataType,
    buffer_type: BufferType,
    placement: tuple[Sequence[int], bool, CoreRangeSet, ShardOrientation],
) -> MemoryConfig:
    """The N-D sharded config of ``TensorSpec.sharded_across_dims(_except)``: ``placement`` is
    (dims, keep, grid, orientation) (see :func:`across_dims_shard`), the shard's last dims aligned
    as ttnn recommends (:func:`recommended_alignment`)."""
    dims, keep, grid, orientation = placement
    shard = aligned_shard(across_dims_shard(padded, dims, keep), recommended_alignment(layout, tile, dtype))
    return MemoryConfig(buffer_type, NdShardSpec(shard, grid, orientation))


def nd_form(
    buffer_type: BufferType | NdShardSpec, tile: object, memory_config: object, nd_shard_spec: NdShardSpec | None
) -> tuple[BufferType, object, MemoryConfig]:
    """``TensorSpec``'s N-D form, ``TensorSpec(shape, dtype, layout, nd_shard_spec, buffer_type=DRAM,
    tile=None)`` (positional, or ``nd_shard_spec=`` by name): (buffer_type, tile, memory_config)."""
    if isinstance(buffer_type, NdShardSpec):  # the N-D spec given fourth: buffer_type comes fifth
        buffer_type, nd_shard_spec, tile = tile if isinstance(tile, BufferType) else BufferType.DRAM, buffer_type, None
    if memory_config is not None:
        raise MeshnnValueError("TensorSpec takes an nd_shard_spec or a memory_config, not both")
    return buffer_type, tile, MemoryConfig(buffer_type, nd_shard_spec)
