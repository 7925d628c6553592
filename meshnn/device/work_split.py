"""How tt-metal hands work and cores out over a chip's grid: ``ttnn.grid_to_cores`` (the cores of
a grid or a range, column by column or row by row) and ``ttnn.split_work_to_cores`` (units of work
over the cores of a grid or a CoreRangeSet: the first cores take one unit more).

These are tt-metal's host functions, with its orders: over a grid from (0, 0), column by column
unless ``row_wise``; a second group that starts after the first in the same column (row) or at the
top (start) of the next.  Bad arguments are refused before anything is made.

Part of the ``device`` layer; imports :mod:`meshnn.errors` and the device's core types.
"""

from __future__ import annotations

import itertools

from meshnn.device.core import (
    CoreCoord,
    CoreRange,
    CoreRangeSet,
    as_core_coord,
    num_cores_to_corerangeset,
    num_cores_to_corerangeset_in_subcoregrids,
)
from meshnn.errors import MeshnnTypeError, MeshnnValueError

Split = tuple[int, CoreRangeSet, CoreRangeSet, CoreRangeSet, int, int]
"""(cores used, all of them, the cores of one unit more, the others, their units per core)."""


def _count(op: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a non-negative int, got {value!r}")
    return value


def _flag(op: str, row_wise: object) -> bool:
    if not isinstance(row_wise, bool):
        raise MeshnnTypeError(f"ttnn.{op}: row_wise must be a bool, got {row_wise!r}")
    return row_wise


def grid_to_cores(*args: object, row_wise: bool = False) -> list[CoreCoord]:
    """``grid_to_cores(num_cores, grid_size_x, grid_size_y, row_wise=False)``: the first
    ``num_cores`` cores of the grid; ``grid_to_cores(start, end, row_wise=False)``: every core of
    the range.  Column by column (y fastest) unless ``row_wise`` (x fastest)."""
    if len(args) == 2 and all(isinstance(a, CoreCoord) for a in args):
        start, end = args  # type: ignore[misc]
        cores = CoreRange(start, end)  # (refuses an end before the start)
        return list(cores.cores(row_wise=_flag("grid_to_cores", row_wise)))
    if len(args) != 3:
        raise MeshnnTypeError(
            f"ttnn.grid_to_cores takes (num_cores, grid_size_x, grid_size_y) or (start, end) CoreCoords, got {args!r}"
        )
    count, width, height = (
        _count("grid_to_cores", n, v) for n, v in zip(("num_cores", "grid_size_x", "grid_size_y"), args, strict=True)
    )
    if count > width * height:
        raise MeshnnValueError(f"ttnn.grid_to_cores: Number of cores {count} exceeds grid size {width}x{height}")
    if _flag("grid_to_cores", row_wise):
        return [CoreCoord(i % width, i // width) for i in range(count)]
    return [CoreCoord(i // height, i % height) for i in range(count)]


def _cores_from(start: CoreCoord, count: int, grid: CoreCoord, row_wise: bool) -> CoreRangeSet:
    """``count`` cores of a ``grid`` from ``start`` on (tt-metal's start-core form of
    num_cores_to_corerangeset): a part line to the grid's edge, whole lines, a part line."""
    along = grid.x if row_wise else grid.y
    pos, line = (start.x, start.y) if row_wise else (start.y, start.x)

    def at(p: int, q: int) -> CoreCoord:
        return CoreCoord(p, q) if row_wise else CoreCoord(q, p)

    ranges = []
    if pos != 0 and count > along - pos:
        ranges.append(CoreRange(at(pos, line), at(along - 1, line)))
        count, pos, line = count - (along - pos), 0, line + 1
    if count > along:
        full = count // along
        ranges.append(CoreRange(at(pos, line), at(along - 1, line + full - 1)))
        count, pos, line = count - full * along, 0, line + full
    if count > 0:
        ranges.append(CoreRange(at(pos, line), at(pos + count - 1, line)))
    if any(r.end.x >= grid.x or r.end.y >= grid.y for r in ranges):
        raise MeshnnValueError(f"ttnn.split_work_to_cores: the cores from {start} run past the {grid.x}x{grid.y} grid")
    return CoreRangeSet(ranges)


def split_work_to_cores(grid: CoreCoord | CoreRangeSet, units_to_divide: int, row_wise: bool = False) -> Split:
    """``ttnn.split_work_to_cores``: ``units_to_divide`` units over a ``grid_size`` grid (a
    CoreCoord) or the cores of a CoreRangeSet: ``(num_cores, all_cores, core_group_1, core_group_2,
    units_per_core_group_1, units_per_core_group_2)``, group 1 being the cores that take one unit
    more (every core when the units divide evenly); zero units use no core."""
    units = _count("split_work_to_cores", "units_to_divide", units_to_divide)
    wise = _flag("split_work_to_cores", row_wise)
    if isinstance(grid, CoreRangeSet):
        return _split_over_set(grid, units, wise)
    if not isinstance(grid, CoreCoord | tuple | list):
        raise MeshnnTypeError(
            f"ttnn.split_work_to_cores: grid_size must be a CoreCoord or a CoreRangeSet, got {grid!r}"
        )
    grid = as_core_coord(grid, "ttnn.split_work_to_cores: grid_size")
    if units == 0:
        return 0, CoreRangeSet(), CoreRangeSet(), CoreRangeSet(), 0, 0
    most = grid.x * grid.y
    if most == 0:
        raise MeshnnValueError(f"ttnn.split_work_to_cores: the grid {grid.x}x{grid.y} has no cores")
    used = min(units, most)
    every = CoreRangeSet(CoreRange(CoreCoord(0, 0), CoreCoord(grid.x - 1, grid.y - 1)))
    every = every if used == most else num_cores_to_corerangeset(used, grid, wise)
    base, more = divmod(units, used)
    if more == 0:
        return used, every, every, CoreRangeSet(), base, 0
    first = num_cores_to_corerangeset(more, grid, wise)
    last = first.ranges()[-1].end
    edge = (last.x == grid.x - 1) if wise else (last.y == grid.y - 1)
    if wise:
        start = CoreCoord(0, last.y + 1) if edge else CoreCoord(last.x + 1, last.y)
    else:
        start = CoreCoord(last.x + 1, 0) if edge else CoreCoord(last.x, last.y + 1)
    return used, every, first, _cores_from(start, used - more, grid, wise), base + 1, base


def _split_over_set(grid: CoreRangeSet, units: int, wise: bool) -> Split:
    if units == 0:
        return 0, CoreRangeSet(), CoreRangeSet(), CoreRangeSet(), 0, 0
    most = grid.num_cores()
    if most == 0:
        raise MeshnnValueError("ttnn.split_work_to_cores: Core grid must contain at least one core")
    ranges = grid.ranges()
    origin = ranges[0].start
    used = min(units, most)
    every = grid if used == most else num_cores_to_corerangeset_in_subcoregrids(origin, used, grid, wise)
    base, more = divmod(units, used)
    if more == 0:
        return used, every, every, CoreRangeSet(), base, 0
    first = num_cores_to_corerangeset_in_subcoregrids(origin, more, grid, wise)
    last = first.ranges()[-1].end
    totals = itertools.accumulate(r.num_cores() for r in ranges)
    index = next(i for i, total in enumerate(totals) if total >= more)  # the range of group 1's last core
    holder = ranges[index]
    if last == holder.end:
        start = ranges[index + 1].start
    elif wise:
        start = CoreCoord(last.x + 1, last.y) if last.x != holder.end.x else CoreCoord(holder.start.x, last.y + 1)
    else:
        start = CoreCoord(last.x, last.y + 1) if last.y != holder.end.y else CoreCoord(last.x + 1, holder.start.y)
    second = num_cores_to_corerangeset_in_subcoregrids(start, used - more, grid, wise)
    return used, every, first, second, base + 1, base
