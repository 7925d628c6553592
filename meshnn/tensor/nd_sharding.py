"""The tensor side of N-D sharding: checking an :class:`NdShardSpec` against a tensor, the 2-D
shard spec a tensor's spec fills in when one deals the same pages (ttnn's
``populate_legacy_shard_spec_from_nd``), and the shard shapes of ``TensorSpec.sharded_across_dims``.

Shapes are in elements; ``padded`` is the tensor's padded shape, ``physical`` its 2-D
(height, width).

Layer: tensor.  Imports errors, device, the byte formats' layout and
:mod:`meshnn.tensor.memory_config`.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreRange, CoreRangeSet
from meshnn.device.nd_shard import NdShardSpec, ShardDistributionStrategy
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile
from meshnn.tensor.memory_config import MemoryConfig, grid_of

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


def required_alignment(layout: Layout, tile: Tile) -> tuple[int, ...]:
    """The alignment a shard's last dims need: the tile (TILE), else none (a row-major row)."""
    return tuple(tile.tile_shape) if layout is Layout.TILE else (1,)


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


def two_d_config(
    physical: tuple[int, int],
    page: tuple[Layout, Tile, DataType],
    buffer_type: BufferType,
    kind: str,
    grid: CoreRangeSet,
    orientation: ShardOrientation,
) -> MemoryConfig:
    """The N-D sharded config of ``TensorSpec.height_sharded`` / ``width_sharded`` / ``block_sharded``
    (``kind``) over the tensor's ``physical`` (height, width): height and width cut the one dim over
    every core of ``grid`` (one shard a core), the shard aligned as its pages require (a tile, or a
    row); block cuts both over the grid's rows and columns (swapped for COL_MAJOR), GRID_2D, aligned
    as ttnn recommends (:func:`recommended_alignment`)."""
    layout, tile, dtype = page
    height, width = physical
    if kind == "block":
        if len(grid.ranges()) != 1:
            raise MeshnnValueError("Block sharding requires a single CoreRange")
        size = grid.ranges()[0].grid_size()
        down, across = (size.y, size.x) if orientation is ShardOrientation.ROW_MAJOR else (size.x, size.y)
        shard = aligned_shard((-(-height // down), -(-width // across)), recommended_alignment(layout, tile, dtype))
        spec = NdShardSpec(shard, grid, orientation, ShardDistributionStrategy.GRID_2D)
        return MemoryConfig(buffer_type, spec)
    cores = grid.num_cores()
    shard = (-(-height // cores), width) if kind == "height" else (height, -(-width // cores))
    shard = aligned_shard(shard, required_alignment(layout, tile))
    return MemoryConfig(buffer_type, NdShardSpec(shard, grid, orientation))


_FORMS = (
    ("buffer_type", "tile", "memory_config"),
    ("memory_layout", "shard_spec", "buffer_type", "tile"),
    ("nd_shard_spec", "buffer_type", "tile"),
)
"""``TensorSpec``'s arguments after its layout, in each of ttnn's three constructors (meshnn's
``memory_config`` added to the first)."""
_FORM_NAMES = {names: frozenset(names) for names in _FORMS}


def spec_form(given: tuple, named: dict) -> tuple[BufferType, object, MemoryConfig | None]:
    """(buffer_type, tile, memory_config) of ``TensorSpec(shape, dtype, layout, *given, **named)`` in
    whichever of ttnn's constructors its arguments name: interleaved ``(buffer_type=DRAM, tile=None)``,
    legacy-sharded ``(memory_layout, shard_spec=None, buffer_type=DRAM, tile=None)`` or N-D sharded
    ``(nd_shard_spec, buffer_type=DRAM, tile=None)``; the form is told by the fourth argument's type
    or by the name it is given under."""
    first = given[0] if given else None
    if isinstance(first, NdShardSpec) or (not given and "nd_shard_spec" in named):
        names = _FORMS[2]
    elif isinstance(first, TensorMemoryLayout) or (not given and "memory_layout" in named):
        names = _FORMS[1]
    else:
        names = _FORMS[0]
    if len(given) > len(names):
        raise MeshnnTypeError(f"TensorSpec takes at most {3 + len(names)} positional arguments, got {3 + len(given)}")
    if not named.keys() <= _FORM_NAMES[names]:
        unknown = sorted(named.keys() - _FORM_NAMES[names])
        raise MeshnnTypeError(f"TensorSpec got unexpected keyword arguments {unknown} (this form takes {list(names)})")
    values = named  # (the common call: every argument after the layout by name)
    if given:
        values = dict(zip(names, given, strict=False))
        for name, value in named.items():
            if name in values:
                raise MeshnnTypeError(f"TensorSpec got multiple values for argument {name!r}")
            values[name] = value
    buffer_type = values.get("buffer_type", BufferType.DRAM)
    if names is _FORMS[0]:
        return buffer_type, values.get("tile"), values.get("memory_config")
    if not isinstance(buffer_type, BufferType):
        raise MeshnnTypeError(f"buffer_type must be a BufferType, got {buffer_type!r}")
    if names is _FORMS[2]:
        return buffer_type, values.get("tile"), MemoryConfig(buffer_type, values["nd_shard_spec"])
    config = MemoryConfig(values["memory_layout"], buffer_type, values.get("shard_spec"))
    return buffer_type, values.get("tile"), config


class ShardShapeAlignment(enum.Enum):
    """How ``TensorSpec.sharded`` rounds a shard shape up (``ttnn.ShardShapeAlignment``): not at all
    (a misaligned shape is refused), to what the pages require (a tile; a row-major row) or to what
    ttnn recommends (:func:`recommended_alignment`)."""

    NONE = 0
    REQUIRED = 1
    RECOMMENDED = 2

    def __str__(self) -> str:
        return f"ShardShapeAlignment.{self.name}"


class ShardingMethods:
    """``TensorSpec``'s N-D sharding methods (a base of it, holding no state): each returns the spec
    with an N-D sharded memory config in the spec's own buffer type, as tt-metal's TensorSpec makes it."""

    __slots__ = ()

    def sharded(
        self,
        shard_shape: Sequence[int] | NdShardSpec,
        grid: CoreRangeSet | None = None,
        shard_alignment: ShardShapeAlignment = ShardShapeAlignment.RECOMMENDED,
        orientation: ShardOrientation = ShardOrientation.ROW_MAJOR,
        shard_distribution_strategy: ShardDistributionStrategy = ShardDistributionStrategy.ROUND_ROBIN_1D,
    ) -> Any:
        """N-D sharded by ``shard_shape`` over ``grid`` (or by an NdShardSpec, with ``shard_alignment``
        second), the shard's last dims rounded up as ``shard_alignment`` says."""
        if isinstance(shard_shape, NdShardSpec):
            if isinstance(grid, ShardShapeAlignment):
                shard_alignment, grid = grid, None
            if grid is not None:
                raise MeshnnTypeError("TensorSpec.sharded(nd_shard_spec, shard_alignment) takes no grid")
            spec = shard_shape
        else:
            spec = NdShardSpec(shard_shape, grid_of(grid), orientation, shard_distribution_strategy)
        if not isinstance(shard_alignment, ShardShapeAlignment):
            raise MeshnnTypeError(f"shard_alignment must be a ttnn.ShardShapeAlignment, got {shard_alignment!r}")
        if shard_alignment is not ShardShapeAlignment.NONE:
            page = (self.layout is Layout.TILE and tuple(self.tile.tile_shape)) or (1,)
            if shard_alignment is ShardShapeAlignment.RECOMMENDED:
                page = recommended_alignment(self.layout, self.tile, self.dtype)
            shard = aligned_shard(spec.shard_shape, page)
            spec = NdShardSpec(shard, spec.grid, spec.orientation, spec.shard_distribution_strategy)
        return self.with_memory_config(MemoryConfig(self.memory_config.buffer_type, spec))

    def sharded_across_dims(
        self, dims: Sequence[int], grid: CoreRangeSet, orientation: ShardOrientation = ShardOrientation.ROW_MAJOR
    ) -> Any:
        """N-D sharded: a shard of 1 in ``dims``, the whole padded tensor elsewhere."""
        return self._across_dims((dims, False, grid_of(grid), orientation))

    def sharded_across_dims_except(
        self, dims: Sequence[int], grid: CoreRangeSet, orientation: ShardOrientation = ShardOrientation.ROW_MAJOR
    ) -> Any:
        """N-D sharded: the whole padded tensor in ``dims``, a shard of 1 elsewhere."""
        return self._across_dims((dims, True, grid_of(grid), orientation))

    def _across_dims(self, placement: tuple) -> Any:
        buffer_type = self.memory_config.buffer_type
        config = across_dims_config(self.padded_shape, self.layout, self.tile, self.dtype, buffer_type, placement)
        return self.with_memory_config(config)

    def height_sharded(self, grid: CoreRangeSet, orientation: ShardOrientation = ShardOrientation.ROW_MAJOR) -> Any:
        """2-D height sharding, one shard a core (:func:`~meshnn.tensor.nd_sharding.two_d_config`)."""
        return self._two_d("height", grid_of(grid), orientation)

    def width_sharded(self, grid: CoreRangeSet, orientation: ShardOrientation = ShardOrientation.ROW_MAJOR) -> Any:
        """2-D width sharding, one shard a core."""
        return self._two_d("width", grid_of(grid), orientation)

    def block_sharded(
        self, grid: CoreRange | CoreRangeSet, orientation: ShardOrientation = ShardOrientation.ROW_MAJOR
    ) -> Any:
        """2-D block sharding over one range of cores, a block a core."""
        return self._two_d("block", grid_of(grid), orientation)

    def _two_d(self, kind: str, grid: CoreRangeSet, orientation: ShardOrientation) -> Any:
        page = (self.layout, self.tile, self.dtype)
        config = two_d_config(self.physical_shape, page, self.memory_config.buffer_type, kind, grid, orientation)
        return self.with_memory_config(config)
