"""Sets of mesh coordinate ranges, with tt-metal's semantics: MeshCoordinateRangeSet (disjoint
ranges, merged as tt-metal merges them) and ``subtract`` (a range less a box inside it).

Layers: imports only :mod:`meshnn.errors` and :mod:`meshnn.mesh.coord`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange


def _mergeable(a: MeshCoordinateRange, b: MeshCoordinateRange) -> bool:
    """Can ``a`` and ``b`` be replaced by their bounding box?  When they are equal, when they
    differ in one dimension only and touch or overlap there, or when one contains the other."""
    differ = [
        i for i in range(a.dims()) if (a.start_coord()[i], a.end_coord()[i]) != (b.start_coord()[i], b.end_coord()[i])
    ]
    if not differ:
        return True
    if len(differ) == 1:
        d = differ[0]
        return max(a.start_coord()[d], b.start_coord()[d]) <= min(a.end_coord()[d], b.end_coord()[d]) + 1
    return a.contains(b) or b.contains(a)


def _bounding_box(ranges: Sequence[MeshCoordinateRange]) -> MeshCoordinateRange:
    dims = range(ranges[0].dims())
    return MeshCoordinateRange(
        MeshCoordinate([min(r.start_coord()[i] for r in ranges) for i in dims]),
        MeshCoordinate([max(r.end_coord()[i] for r in ranges) for i in dims]),
    )


class MeshCoordinateRangeSet:
    """Disjoint coordinate ranges, kept sorted; :meth:`merge` fuses what can be fused.

    Merging follows tt-metal: the new range absorbs every range it can be fused with (repeatedly,
    as it grows); ranges it overlaps otherwise are removed and their coordinates outside it are
    merged back one by one; the result is sorted and collapses to one box when the ranges tile
    their bounding box exactly.
    """

    __slots__ = ("_ranges",)

    def __init__(self, ranges: MeshCoordinateRange | Iterable[MeshCoordinateRange] | None = None) -> None:
        self._ranges: list[MeshCoordinateRange] = []
        if isinstance(ranges, MeshCoordinateRange):
            self._ranges.append(ranges)
        elif ranges is not None:
            for r in ranges:
                self.merge(r)

    def merge(self, to_merge: MeshCoordinateRange) -> None:
        if not isinstance(to_merge, MeshCoordinateRange):
            raise MeshnnTypeError(f"merge needs a MeshCoordinateRange, got {to_merge!r}")
        if self._ranges and self._ranges[0].dims() != to_merge.dims():
            raise MeshnnValueError(
                "Cannot merge range with different dimensions into a range set: "
                f"{self._ranges[0].dims()} != {to_merge.dims()}"
            )
        merged, add_back = to_merge, []
        fused = True
        while fused:
            fused = False
            kept = []
            for i, existing in enumerate(self._ranges):
                if _mergeable(merged, existing):
                    merged = _bounding_box([merged, existing])
                    kept += self._ranges[i + 1 :]
                    fused = True
                    break
                if merged.intersects(existing):
                    add_back += [MeshCoordinateRange(c) for c in existing if not merged.contains(c)]
                else:
                    kept.append(existing)
            self._ranges = kept
        self._ranges.append(merged)
        for single in add_back:
            self.merge(single)
        self._ranges.sort()
        if len(self._ranges) > 1:
            box = _bounding_box(self._ranges)
            if box.size() == sum(r.size() for r in self._ranges):
                self._ranges = [box]

    def ranges(self) -> list[MeshCoordinateRange]:
        return list(self._ranges)

    def size(self) -> int:
        """Number of ranges."""
        return len(self._ranges)

    def coords(self) -> list[MeshCoordinate]:
        """Every coordinate of every range, sorted."""
        return sorted(c for r in self._ranges for c in r)

    def contains(self, coord: MeshCoordinate) -> bool:
        return any(r.contains(coord) for r in self._ranges)

    def __iter__(self) -> Iterator[MeshCoordinateRange]:
        return iter(self._ranges)

    def __len__(self) -> int:
        return len(self._ranges)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MeshCoordinateRangeSet) and self._ranges == other._ranges

    def __hash__(self) -> int:
        return hash(tuple(self._ranges))

    def __repr__(self) -> str:
        return f"MeshCoordinateRangeSet({self._ranges!r})"


def subtract(parent: MeshCoordinateRange, part: MeshCoordinateRange) -> MeshCoordinateRangeSet:
    """The coordinates of ``parent`` outside ``part``, as a range set."""
    if parent.dims() != part.dims():
        raise MeshnnValueError(f"Parent and intersection dimensions do not match: {parent.dims()} != {part.dims()}")
    rest = MeshCoordinateRangeSet()
    if parent == part:
        return rest
    if not parent.intersects(part):
        rest.merge(parent)
        return rest
    differ = [
        i
        for i in range(parent.dims())
        if (parent.start_coord()[i], parent.end_coord()[i]) != (part.start_coord()[i], part.end_coord()[i])
    ]
    if len(differ) == 1:
        d = differ[0]
        start, end = list(parent.start_coord()), list(parent.end_coord())
        if parent.start_coord()[d] < part.start_coord()[d]:
            rest.merge(
                MeshCoordinateRange(
                    MeshCoordinate(start),
                    MeshCoordinate([*end[:d], part.start_coord()[d] - 1, *end[d + 1 :]]),
                )
            )
        if part.end_coord()[d] < parent.end_coord()[d]:
            rest.merge(
                MeshCoordinateRange(
                    MeshCoordinate([*start[:d], part.end_coord()[d] + 1, *start[d + 1 :]]),
                    MeshCoordinate(end),
                )
            )
        return rest
    for coord in parent:
        if not part.contains(coord):
            rest.merge(MeshCoordinateRange(coord))
    return rest
