"""Tensix core coordinates and ranges of one chip (``ttnn.CoreCoord``, ``CoreRange``, ...).

Coordinates are logical ``(x, y)``: x is the column, y the row.  Ranges are inclusive at both
ends, as in tt-metal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from meshnn.errors import MeshnnTypeError, MeshnnValueError


@dataclass(frozen=True, slots=True, order=True)
class CoreCoord:
    """A logical Tensix core: column ``x``, row ``y``."""

    x: int
    y: int = -1  # -1: ``x`` is an ``(x, y)`` pair, as ttnn's ``CoreCoord((x, y))`` takes one

    def to_json(self) -> str:
        """ttnn's JSON text of this object (:mod:`meshnn.device.json_forms`)."""
        from meshnn.device import json_forms

        return json_forms.dumps(json_forms.coord_form(self))

    @staticmethod
    def from_json(json_string: str) -> CoreCoord:
        """The object a :meth:`to_json` text (or ttnn's) describes."""
        from meshnn.device import json_forms

        return json_forms.coord_from(json_forms.loads(json_string, "CoreCoord"))

    def __post_init__(self) -> None:
        if self.y == -1 and isinstance(self.x, tuple) and len(self.x) == 2:
            x, y = self.x
            object.__setattr__(self, "x", x)
            object.__setattr__(self, "y", y)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (self.x, self.y)):
            raise MeshnnTypeError(f"CoreCoord needs ints x and y, got ({self.x!r}, {self.y!r})")
        if not all(v >= 0 for v in (self.x, self.y)):
            raise MeshnnValueError(f"CoreCoord needs non-negative x and y, got ({self.x!r}, {self.y!r})")

    def __repr__(self) -> str:
        return f"CoreCoord(x={self.x}, y={self.y})"

    def __str__(self) -> str:
        return f"(x={self.x},y={self.y})"


def as_core_coord(value: object, what: str) -> CoreCoord:
    """``value`` as a CoreCoord: a CoreCoord, or an (x, y) pair (a tuple or list of two ints), which
    ttnn's binding converts to one wherever it takes a CoreCoord."""
    if isinstance(value, CoreCoord):
        return value
    if isinstance(value, tuple | list) and len(value) == 2:
        return CoreCoord(*value)
    raise MeshnnTypeError(f"{what} must be a ttnn.CoreCoord or an (x, y) pair, got {value!r}")


@dataclass(frozen=True, slots=True)
class CoreRange:
    """The cores from ``start`` to ``end``, both included."""

    start: CoreCoord
    end: CoreCoord

    def to_json(self) -> str:
        """ttnn's JSON text of this object (:mod:`meshnn.device.json_forms`)."""
        from meshnn.device import json_forms

        return json_forms.dumps(json_forms.range_form(self))

    @staticmethod
    def from_json(json_string: str) -> CoreRange:
        """The object a :meth:`to_json` text (or ttnn's) describes."""
        from meshnn.device import json_forms

        return json_forms.range_from(json_forms.loads(json_string, "CoreRange"))

    def __post_init__(self) -> None:
        for name in ("start", "end"):  # an (x, y) pair converts, as ttnn's binding converts it
            value = getattr(self, name)
            if isinstance(value, tuple | list) and len(value) == 2:
                object.__setattr__(self, name, CoreCoord(*value))
        if not isinstance(self.start, CoreCoord) or not isinstance(self.end, CoreCoord):
            raise MeshnnTypeError(f"CoreRange needs two CoreCoords, got {self.start!r}, {self.end!r}")
        if self.end.x < self.start.x or self.end.y < self.start.y:
            raise MeshnnValueError(f"CoreRange end {self.end} is before its start {self.start}")

    @property
    def start_coord(self) -> CoreCoord:
        return self.start

    @property
    def end_coord(self) -> CoreCoord:
        return self.end

    def grid_size(self) -> CoreCoord:
        return CoreCoord(self.end.x - self.start.x + 1, self.end.y - self.start.y + 1)

    def num_cores(self) -> int:
        size = self.grid_size()
        return size.x * size.y

    def contains(self, core: CoreCoord | CoreRange | CoreRangeSet) -> bool:
        """Whether the core, or every core of a range or range set, lies in this range (ttnn's overloads)."""
        if isinstance(core, CoreRange):
            return self.contains(core.start) and self.contains(core.end)
        if isinstance(core, CoreRangeSet):
            return all(self.contains(r) for r in core.ranges_)
        return self.start.x <= core.x <= self.end.x and self.start.y <= core.y <= self.end.y

    def cores(self, *, row_wise: bool = True) -> Iterator[CoreCoord]:
        """Every core; ``row_wise`` walks x fastest (ROW_MAJOR), otherwise y fastest."""
        xs = range(self.start.x, self.end.x + 1)
        ys = range(self.start.y, self.end.y + 1)
        if row_wise:
            return (CoreCoord(x, y) for y in ys for x in xs)
        return (CoreCoord(x, y) for x in xs for y in ys)

    def __repr__(self) -> str:
        return f"CoreRange(start={self.start!r}, end={self.end!r})"


@dataclass(frozen=True, slots=True, init=False)
class CoreRangeSet:
    """Disjoint core ranges, kept in the order given."""

    ranges_: tuple[CoreRange, ...]

    def to_json(self) -> str:
        """ttnn's JSON text of this object (:mod:`meshnn.device.json_forms`)."""
        from meshnn.device import json_forms

        return json_forms.dumps(json_forms.range_set_form(self))

    @staticmethod
    def from_json(json_string: str) -> CoreRangeSet:
        """The object a :meth:`to_json` text (or ttnn's) describes."""
        from meshnn.device import json_forms

        return json_forms.range_set_from(json_forms.loads(json_string, "CoreRangeSet"))

    def __init__(self, ranges: Iterable[CoreRange] | CoreRange = ()) -> None:
        items = (ranges,) if isinstance(ranges, CoreRange) else tuple(ranges)
        if not all(isinstance(r, CoreRange) for r in items):
            raise MeshnnTypeError(f"CoreRangeSet needs CoreRanges, got {items!r}")
        if isinstance(ranges, set | frozenset):
            items = tuple(sorted(items, key=lambda r: (r.start.y, r.start.x)))
        for i, a in enumerate(items):
            for b in items[i + 1 :]:
                if _overlap(a, b):
                    raise MeshnnValueError(f"CoreRangeSet ranges overlap: {a!r} and {b!r}")
        object.__setattr__(self, "ranges_", items)

    def ranges(self) -> tuple[CoreRange, ...]:
        return self.ranges_

    def num_cores(self) -> int:
        return sum(r.num_cores() for r in self.ranges_)

    def contains(self, core: CoreCoord | CoreRange | CoreRangeSet) -> bool:
        """Whether the core, or every core of a range or range set, lies in this set (ttnn's overloads)."""
        if isinstance(core, CoreRange | CoreRangeSet):
            return all(self.contains(c) for c in core.cores())
        return any(r.contains(core) for r in self.ranges_)

    def bounding_box(self) -> CoreRange:
        if not self.ranges_:
            raise MeshnnValueError("an empty CoreRangeSet has no bounding box")
        return CoreRange(
            CoreCoord(min(r.start.x for r in self.ranges_), min(r.start.y for r in self.ranges_)),
            CoreCoord(max(r.end.x for r in self.ranges_), max(r.end.y for r in self.ranges_)),
        )

    def cores(self, *, row_wise: bool = True) -> list[CoreCoord]:
        """Every core, range after range, each range walked as :meth:`CoreRange.cores`."""
        return [core for r in self.ranges_ for core in r.cores(row_wise=row_wise)]

    def subtract(self, other: CoreRangeSet) -> CoreRangeSet:
        """The cores of this set outside ``other``, as ranges: each range cut around each of
        ``other``'s it overlaps (the rows above and below it, then the columns either side)."""
        if not isinstance(other, CoreRangeSet):
            raise MeshnnTypeError(f"CoreRangeSet.subtract needs a CoreRangeSet, got {other!r}")
        pieces = list(self.ranges_)
        for cut in other.ranges_:
            pieces = [part for piece in pieces for part in _cut(piece, cut)]
        return CoreRangeSet(pieces)

    def __repr__(self) -> str:
        return f"CoreRangeSet({list(self.ranges_)!r})"


def _cut(piece: CoreRange, cut: CoreRange) -> list[CoreRange]:
    """``piece`` less ``cut``: up to four ranges (above, below, left, right of the overlap)."""
    if not _overlap(piece, cut):
        return [piece]
    (x0, y0), (x1, y1) = (piece.start.x, piece.start.y), (piece.end.x, piece.end.y)
    top, bottom = max(y0, cut.start.y), min(y1, cut.end.y)
    boxes = [(x0, y0, x1, top - 1), (x0, bottom + 1, x1, y1)]
    boxes += [(x0, top, cut.start.x - 1, bottom), (cut.end.x + 1, top, x1, bottom)]
    return [CoreRange(CoreCoord(a, b), CoreCoord(c, d)) for a, b, c, d in boxes if a <= c and b <= d]


def _overlap(a: CoreRange, b: CoreRange) -> bool:
    return not (a.end.x < b.start.x or b.end.x < a.start.x or a.end.y < b.start.y or b.end.y < a.start.y)


@dataclass(frozen=True, slots=True)
class CoreGrid:
    """A rectangular grid of ``x`` columns by ``y`` rows starting at core (0, 0)."""

    x: int
    y: int

    def __post_init__(self) -> None:
        if not all(isinstance(v, int) and v > 0 for v in (self.x, self.y)):
            raise MeshnnValueError(f"CoreGrid needs positive ints, got x={self.x!r}, y={self.y!r}")

    @property
    def num_cores(self) -> int:
        return self.x * self.y

    def to_core_range_set(self) -> CoreRangeSet:
        return CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(self.x - 1, self.y - 1))])

    def __repr__(self) -> str:
        return f"ttnn.CoreGrid(x={self.x}, y={self.y})"


def corerange_to_cores(
    core_range_set: CoreRangeSet, max_cores: int | None = None, row_wise: bool = False
) -> list[CoreCoord]:
    """``ttnn.corerange_to_cores``: the set's cores range by range, column by column unless
    ``row_wise`` (ttnn's default is column-wise), the first ``max_cores`` of them when given."""
    if not isinstance(core_range_set, CoreRangeSet):
        raise MeshnnTypeError(f"corerange_to_cores needs a CoreRangeSet, got {type(core_range_set).__name__}")
    cores = [core for piece in core_range_set.ranges() for core in piece.cores(row_wise=row_wise)]
    return cores if max_cores is None else cores[:max_cores]


def num_cores_to_corerangeset(target_num_cores: int, grid_size: CoreCoord, row_wise: bool = False) -> CoreRangeSet:
    """``ttnn.num_cores_to_corerangeset``: the first ``target_num_cores`` cores of a ``grid_size``
    grid, as whole rows (``row_wise``) or whole columns from (0, 0) plus the part-row / part-column
    of the remainder."""
    if isinstance(target_num_cores, bool) or not isinstance(target_num_cores, int):
        raise MeshnnTypeError(f"num_cores_to_corerangeset: target_num_cores must be an int, got {target_num_cores!r}")
    grid_size = as_core_coord(grid_size, "num_cores_to_corerangeset: grid_size")
    if not isinstance(row_wise, bool):
        raise MeshnnTypeError(f"num_cores_to_corerangeset: row_wise must be a bool, got {row_wise!r}")
    total = grid_size.x * grid_size.y
    if not 0 < target_num_cores <= total:
        raise MeshnnValueError(
            f"num_cores_to_corerangeset: target_num_cores {target_num_cores} must be in 1..{total} (the cores of a "
            f"{grid_size.x}x{grid_size.y} grid)"
        )
    stick = grid_size.x if row_wise else grid_size.y
    full, left = divmod(target_num_cores, stick)

    def at(along: int, across: int) -> CoreCoord:
        return CoreCoord(along, across) if row_wise else CoreCoord(across, along)

    if full == 0:
        return CoreRangeSet([CoreRange(at(0, 0), at(left - 1, 0))])
    ranges = [CoreRange(at(0, 0), at(stick - 1, full - 1))]
    if left:
        ranges.append(CoreRange(at(0, full), at(left - 1, full)))
    return CoreRangeSet(ranges)


def num_cores_to_corerangeset_in_subcoregrids(
    start_core: CoreCoord, target_num_cores: int, sub_core_grids: CoreRangeSet, row_wise: bool = False
) -> CoreRangeSet:
    """``ttnn.num_cores_to_corerangeset_in_subcoregrids``: ``target_num_cores`` cores of the ranges of
    ``sub_core_grids`` taken in order, from ``start_core`` on, each range row by row (``row_wise``)
    or column by column; the cores as one range per run of a row (column), runs of the same extent
    in adjacent rows (columns) merged into rectangles."""
    op = "num_cores_to_corerangeset_in_subcoregrids"
    start_core = as_core_coord(start_core, f"{op}: start_core")
    if not isinstance(sub_core_grids, CoreRangeSet):
        raise MeshnnTypeError(f"{op}: sub_core_grids must be a ttnn.CoreRangeSet, got {sub_core_grids!r}")
    if isinstance(target_num_cores, bool) or not isinstance(target_num_cores, int) or not isinstance(row_wise, bool):
        raise MeshnnTypeError(f"{op}: target_num_cores must be an int and row_wise a bool")
    if not 0 < target_num_cores <= sub_core_grids.num_cores():
        raise MeshnnValueError(
            f"{op}: Target number of cores {target_num_cores} must be in 1..{sub_core_grids.num_cores()} (the "
            "available cores)"
        )
    if not sub_core_grids.contains(start_core):
        raise MeshnnValueError(f"{op}: Start core must be contained within the input CoreRangeSet")
    runs: list[tuple[int, int, int]] = []  # (line, first, last) along rows (row_wise) or columns
    found, left = False, target_num_cores
    for grid in sub_core_grids.ranges():
        s, e = grid.start, grid.end
        lines = range(s.y, e.y + 1) if row_wise else range(s.x, e.x + 1)
        for line in lines:
            span = range(s.x, e.x + 1) if row_wise else range(s.y, e.y + 1)
            for at in span:
                core = CoreCoord(at, line) if row_wise else CoreCoord(line, at)
                found = found or core == start_core
                if not found or not left:
                    continue
                if runs and runs[-1][0] == line and runs[-1][2] == at - 1:
                    runs[-1] = (line, runs[-1][1], at)
                else:
                    runs.append((line, at, at))
                left -= 1
    return CoreRangeSet([_run_range(run, row_wise) for run in _merged(runs)])


def _merged(runs: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Runs (line, first, last) as rectangles (first line, last line, first, last)."""
    boxes: list[tuple[int, int, int, int]] = []
    for line, first, last in runs:
        if boxes and boxes[-1][1] == line - 1 and boxes[-1][2:] == (first, last):
            boxes[-1] = (boxes[-1][0], line, first, last)
        else:
            boxes.append((line, line, first, last))
    return boxes


def _run_range(box: tuple[int, int, int, int], row_wise: bool) -> CoreRange:
    top, bottom, first, last = box
    if row_wise:
        return CoreRange(CoreCoord(first, top), CoreCoord(last, bottom))
    return CoreRange(CoreCoord(top, first), CoreCoord(bottom, last))
