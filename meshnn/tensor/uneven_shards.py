"""``ttnn.create_sharded_memory_config_``: ttnn's second way of cutting a shape over cores, the one its
vision models call (ResNet-50, MobileNetV2, UFLD-v2).  Unlike ``create_sharded_memory_config`` it
takes a ``TensorMemoryLayout`` as well as a ``ShardStrategy``, a pair of ``CoreGrid`` s (a full
rectangle and a partial row under it), and pads the height first when ``tile_layout`` asks for it:

- HEIGHT: the 2-D view's height ``H`` (rounded up to a multiple of the core count with
  ``tile_layout``) over the cores: shards of ``(ceil(H / cores), W)``;
- WIDTH: ``(H, ceil(W / cores))``;
- BLOCK: the grid must be a full rectangle; ROW_MAJOR gives ``(ceil(H' / rows), ceil(W / columns))``
  with ``H'`` = ``H`` rounded up to ``rows * 32`` under ``tile_layout``; COL_MAJOR swaps rows and
  columns.

With ``use_height_and_width_as_shard_shape`` the last two dims are the shard itself, ``(h, w)`` for
ROW_MAJOR and ``(w, h)`` for COL_MAJOR.  With ``tile_layout`` a shard neither of whose sides is a
multiple of 32 is refused.  Bad arguments raise ``MeshnnTypeError`` / ``MeshnnValueError`` (ttnn raises
``RuntimeError``; both are ``RuntimeError`` s here).  The buffer type is always L1.

Layer: tensor.  Imports errors, device and the tensor layer's memory configs and shapes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreGrid, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.tensor.memory_config import MemoryConfig, ShardStrategy
from meshnn.tensor.spec import Shape

TILE_SIDE = 32
"""A tile's side in elements: the unit ``tile_layout`` pads to."""

_LAYOUTS = {
    ShardStrategy.HEIGHT: TensorMemoryLayout.HEIGHT_SHARDED,
    ShardStrategy.WIDTH: TensorMemoryLayout.WIDTH_SHARDED,
    ShardStrategy.BLOCK: TensorMemoryLayout.BLOCK_SHARDED,
}


def _grid(core_grid: CoreGrid | CoreRangeSet | Sequence[CoreGrid]) -> CoreRangeSet:
    """The cores: a CoreGrid's rectangle; a pair (full, partial): the full rectangle and, in the row
    under it, the partial grid's first ``x`` cores; a CoreRangeSet as given."""
    if isinstance(core_grid, CoreRangeSet):
        return core_grid
    if isinstance(core_grid, CoreGrid):
        return CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(core_grid.x - 1, core_grid.y - 1))])
    if isinstance(core_grid, (list, tuple)):
        if len(core_grid) != 2 or not all(isinstance(grid, CoreGrid) for grid in core_grid):
            raise MeshnnValueError(f"core_grid as a sequence must be two CoreGrids (full, partial), got {core_grid!r}")
        full, partial = core_grid
        return CoreRangeSet(
            [
                CoreRange(CoreCoord(0, 0), CoreCoord(full.x - 1, full.y - 1)),
                CoreRange(CoreCoord(0, full.y), CoreCoord(partial.x - 1, full.y)),
            ]
        )
    raise MeshnnTypeError(f"core_grid must be a CoreGrid, a pair of CoreGrids or a CoreRangeSet, got {core_grid!r}")


def _layout(strategy: ShardStrategy | TensorMemoryLayout) -> TensorMemoryLayout:
    if isinstance(strategy, ShardStrategy):
        return _LAYOUTS[strategy]
    if isinstance(strategy, TensorMemoryLayout):
        if strategy is TensorMemoryLayout.INTERLEAVED:
            raise MeshnnValueError("create_sharded_memory_config_: INTERLEAVED is not a sharding scheme")
        return strategy
    raise MeshnnTypeError(f"strategy must be a ShardStrategy or TensorMemoryLayout, got {strategy!r}")


def _shard(
    layout: TensorMemoryLayout, grid: CoreRangeSet, height: int, width: int, row_major: bool, tile_layout: bool
) -> tuple[int, int]:
    cores = grid.num_cores()
    if layout is TensorMemoryLayout.HEIGHT_SHARDED:
        padded = -(-height // cores) * cores if tile_layout else height
        return -(-padded // cores), width
    if layout is TensorMemoryLayout.WIDTH_SHARDED:
        return height, -(-width // cores)
    box = grid.bounding_box().grid_size()
    if box.x * box.y != cores:
        raise MeshnnValueError(f"block sharding needs a full rectangle of cores; {grid!r} is not one")
    rows, columns = (box.y, box.x) if row_major else (box.x, box.y)
    padded = -(-height // (rows * TILE_SIDE)) * rows * TILE_SIDE if tile_layout else height
    return -(-padded // rows), -(-width // columns)


def create_sharded_memory_config_(
    shape: Shape | Sequence[int],
    core_grid: CoreGrid | CoreRangeSet | Sequence[CoreGrid],
    strategy: ShardStrategy | TensorMemoryLayout,
    orientation: ShardOrientation,
    use_height_and_width_as_shard_shape: bool = False,
    tile_layout: bool = False,
) -> MemoryConfig:
    """An L1 sharded MemoryConfig for ``shape`` over ``core_grid`` (the module's rules); the 2-D
    view's height is the product of every dim but the last (elements)."""
    if not isinstance(shape, (list, tuple, Shape)):
        raise MeshnnTypeError(f"shape must be a list, tuple or ttnn.Shape, got {type(shape).__name__}")
    dims = tuple(int(d) for d in shape)
    if len(dims) < 2 or any(d <= 0 for d in dims):
        raise MeshnnValueError(f"create_sharded_memory_config_ needs a positive shape of rank >= 2, got {list(dims)}")
    if not isinstance(orientation, ShardOrientation):
        raise MeshnnTypeError(f"orientation must be a ttnn.ShardOrientation, got {orientation!r}")
    grid, layout = _grid(core_grid), _layout(strategy)
    row_major = orientation is ShardOrientation.ROW_MAJOR
    if use_height_and_width_as_shard_shape:
        shard = (dims[-2], dims[-1]) if row_major else (dims[-1], dims[-2])
    else:
        shard = _shard(layout, grid, math.prod(dims[:-1]), dims[-1], row_major, tile_layout)
    if tile_layout and shard[0] % TILE_SIDE and shard[1] % TILE_SIDE:
        raise MeshnnValueError(f"create_sharded_memory_config_: shard {list(shard)} has no side of whole tiles")
    return MemoryConfig(layout, BufferType.L1, ShardSpec(grid, shard, orientation))
