"""GRID_2D shard distribution (tt-metal's ``BufferDistributionSpec::compute_core_list``): a 2-D
sharded buffer's shards go to its one core range cut to the shards' own columns x rows from the
range's start, not dealt over the whole range.  A BLOCK_SHARDED tensor's buffer is always dealt
this way in tt-metal 2026 (its tensor layout asks for GRID_2D), whether made with a 2-D ``ShardSpec``
or an ``NdShardSpec``; tt-metal refuses a 2-D ``ShardSpec`` whose grid GRID_2D cannot place, where
meshnn keeps the older whole-grid dealing (:func:`fits`), as some ops' derived specs (a 1-D matmul's
block-sharded output on ``num_cores_to_corerangeset``'s several ranges) still make them."""

from __future__ import annotations

import functools

from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnValueError


def fits(grid: CoreRangeSet, row_wise: bool, tensor_pages: tuple[int, ...], shard_pages: tuple[int, ...]) -> bool:
    """Whether GRID_2D can place these shards: one range, at least as wide and tall as the shards."""
    try:
        trimmed_cores(grid, row_wise, tensor_pages, shard_pages)
    except MeshnnValueError:
        return False
    return True


@functools.lru_cache(maxsize=256)
def trimmed_cores(
    grid: CoreRangeSet, row_wise: bool, tensor_pages: tuple[int, ...], shard_pages: tuple[int, ...]
) -> tuple[CoreCoord, ...]:
    """The cores shards are dealt to, in order: shard ``i`` (row-major over the shard grid) goes to
    the ``i``-th.  ``tensor_pages`` / ``shard_pages`` are shapes in pages (rank 1 or 2 for the
    shard; the tensor's leading dims fold into its height).  ROW_MAJOR (``row_wise``) puts the
    shard columns along x and walks x fastest; COL_MAJOR puts shard rows along x and walks y
    fastest, so shard (r, c) lands on core (start.x + r, start.y + c).  Raises when the shard grid
    is wider or taller than the range, or the grid is not one range."""
    if len(shard_pages) > 2:
        raise MeshnnValueError("2D grid distribution is only supported for 2D sharding!")
    ranges = grid.ranges()
    if len(ranges) != 1:
        raise MeshnnValueError("2D grid distribution is only supported for one contiguous core grid!")
    volume = 1
    for extent in tensor_pages:
        volume *= extent
    across = max(-(-tensor_pages[-1] // shard_pages[-1]), 1)
    height = volume // tensor_pages[-1] if volume else 0
    down = max(-(-height // (shard_pages[-2] if len(shard_pages) == 2 else 1)), 1)
    if not row_wise:
        across, down = down, across
    box = ranges[0]
    size = box.grid_size()
    if across > size.x or down > size.y:
        raise MeshnnValueError(
            f"{down}x{across} shards (core rows x columns, {'ROW' if row_wise else 'COL'}_MAJOR) do not fit the "
            f"{size.y}x{size.x} core grid of a GRID_2D distribution (BLOCK_SHARDED): the shards along each side "
            "must not exceed the grid's"
        )
    end = CoreCoord(box.start.x + across - 1, box.start.y + down - 1)
    return tuple(CoreRange(box.start, end).cores(row_wise=row_wise))
