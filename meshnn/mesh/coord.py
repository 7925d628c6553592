"""Mesh shapes, coordinates and coordinate ranges (boxes), with tt-metal's semantics.

All are frozen and hashable.  Iteration is row-major (last dimension fastest) everywhere, and a
range is inclusive at both ends.  Unlike ttnn's Python binding, iterating a range yields a fresh
coordinate each step.  Sets of ranges are in :mod:`meshnn.mesh.range_set`.

Layers: imports only :mod:`meshnn.errors`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from meshnn.errors import MeshnnTypeError, MeshnnValueError


def _ints(values: Sequence[object], what: str) -> tuple[int, ...]:
    out = []
    for v in values:
        if isinstance(v, bool) or (not isinstance(v, int) and not hasattr(v, "__index__")):
            raise MeshnnTypeError(f"{what} needs ints, got {list(values)!r}")
        i = int(v)  # type: ignore[call-overload]
        if i < 0:
            raise MeshnnValueError(f"{what} values must be >= 0, got {list(values)!r}")
        out.append(i)
    return tuple(out)


def _flatten_args(args: tuple[object, ...]) -> Sequence[object]:
    if len(args) == 1 and isinstance(args[0], Iterable) and not isinstance(args[0], str | bytes):
        return list(args[0])  # type: ignore[arg-type]
    return args


class MeshShape:
    """The shape of a mesh: ``MeshShape(2, 4)``, ``MeshShape([8, 4])``; the first value is rows."""

    __slots__ = ("_dims",)

    @overload
    def __init__(self, shape: Iterable[int], /) -> None: ...
    @overload
    def __init__(self, *dims: int) -> None: ...
    def __init__(self, *args: object) -> None:
        dims = _ints(_flatten_args(args), "MeshShape")
        if not dims:
            raise MeshnnValueError("MeshShape cannot have 0 dimension")
        object.__setattr__(self, "_dims", dims)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("MeshShape is immutable")

    def __reduce__(self) -> tuple[type, tuple[tuple[int, ...]]]:
        return MeshShape, (self._dims,)

    def dims(self) -> int:
        return len(self._dims)

    def mesh_size(self) -> int:
        return math.prod(self._dims)

    def get_stride(self, dim: int) -> int:
        return math.prod(self._dims[dim + 1 :])

    def is_line_topology(self) -> bool:
        """True when at most one dimension is larger than 1."""
        return sum(d != 1 for d in self._dims) <= 1

    def as_tuple(self) -> tuple[int, ...]:
        return self._dims

    @property
    def num_rows(self) -> int:
        return self._dims[0]

    @property
    def num_cols(self) -> int:
        return self._dims[1] if len(self._dims) > 1 else 1

    def coords(self) -> Iterator[MeshCoordinate]:
        """Every coordinate of the mesh, row-major."""
        return map(MeshCoordinate._of, itertools.product(*map(range, self._dims)))

    def __getitem__(self, index: int) -> int:
        return self._dims[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self._dims)

    def __len__(self) -> int:
        return len(self._dims)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MeshShape):
            return self._dims == other._dims
        if isinstance(other, tuple | list):
            return self._dims == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("MeshShape", self._dims))

    def __repr__(self) -> str:
        return f"MeshShape({list(self._dims)})"

    def __str__(self) -> str:
        return "x".join(map(str, self._dims))


class MeshCoordinate:
    """The position of one device: ``MeshCoordinate(1, 3)``, ``MeshCoordinate([1, 3])``."""

    __slots__ = ("_coords",)

    @overload
    def __init__(self, coords: Iterable[int], /) -> None: ...
    @overload
    def __init__(self, *coords: int) -> None: ...
    def __init__(self, *args: object) -> None:
        coords = _ints(_flatten_args(args), "MeshCoordinate")
        if not coords:
            raise MeshnnValueError("MeshCoordinate cannot have 0 dimension")
        object.__setattr__(self, "_coords", coords)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("MeshCoordinate is immutable")

    def __reduce__(self) -> tuple[type, tuple[tuple[int, ...]]]:
        return MeshCoordinate, (self._coords,)

    @classmethod
    def _of(cls, coords: tuple[int, ...]) -> MeshCoordinate:
        """A coordinate of ``coords``, known to be a non-empty tuple of non-negative ints."""
        made = object.__new__(cls)
        object.__setattr__(made, "_coords", coords)
        return made

    @staticmethod
    def zero_coordinate(dims: int) -> MeshCoordinate:
        return MeshCoordinate((0,) * dims)

    def dims(self) -> int:
        return len(self._coords)

    def coords(self) -> tuple[int, ...]:
        return self._coords

    def to_linear_index(self, shape: MeshShape) -> int:
        return to_linear_index(shape, self)

    def __getitem__(self, index: int) -> int:
        return self._coords[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self._coords)

    def __len__(self) -> int:
        return len(self._coords)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MeshCoordinate):
            return self._coords == other._coords
        if isinstance(other, tuple | list):
            return self._coords == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._coords)

    def _key(self, other: MeshCoordinate) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if not isinstance(other, MeshCoordinate):
            raise MeshnnTypeError(f"cannot compare a MeshCoordinate with {other!r}")
        if other.dims() != self.dims():
            raise MeshnnValueError(
                f"Cannot compare coordinates with different dimensions: {self.dims()} != {other.dims()}"
            )
        return self._coords, other._coords

    def __lt__(self, other: MeshCoordinate) -> bool:
        a, b = self._key(other)
        return a < b

    def __le__(self, other: MeshCoordinate) -> bool:
        a, b = self._key(other)
        return a <= b

    def __gt__(self, other: MeshCoordinate) -> bool:
        a, b = self._key(other)
        return a > b

    def __ge__(self, other: MeshCoordinate) -> bool:
        a, b = self._key(other)
        return a >= b

    def __repr__(self) -> str:
        return f"MeshCoordinate({list(self._coords)})"

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self._coords)) + ")"


def as_coord(value: MeshCoordinate | Sequence[int]) -> MeshCoordinate:
    return value if isinstance(value, MeshCoordinate) else MeshCoordinate(value)


def to_linear_index(shape: MeshShape, coord: MeshCoordinate) -> int:
    """Row-major index of ``coord`` in ``shape``; raises if it lies outside."""
    if shape.dims() != coord.dims():
        raise MeshnnValueError(f"Shape and coordinate dimensions do not match: {shape.dims()} != {coord.dims()}")
    index = 0
    for c, d in zip(coord, shape, strict=True):
        if c >= d:
            raise MeshnnValueError(f"Coordinate {coord!r} is out of bounds for shape {shape!r}")
        index = index * d + c
    return index


class MeshCoordinateRange:
    """The box of coordinates from ``start`` to ``end`` (both included), or a whole mesh shape."""

    __slots__ = ("_end", "_start")

    @overload
    def __init__(self, shape: MeshShape, /) -> None: ...
    @overload
    def __init__(self, start: MeshCoordinate, end: MeshCoordinate | None = None) -> None: ...
    def __init__(self, start: MeshShape | MeshCoordinate, end: MeshCoordinate | None = None) -> None:
        if isinstance(start, MeshShape):
            if end is not None:
                raise MeshnnTypeError("MeshCoordinateRange(shape) takes no end coordinate")
            begin = MeshCoordinate.zero_coordinate(start.dims())
            stop = MeshCoordinate([d - 1 for d in start])
        else:
            begin = as_coord(start)
            stop = begin if end is None else as_coord(end)
        if begin.dims() != stop.dims():
            raise MeshnnValueError(
                f"Start and end dimensions of a coordinate range do not match: {begin.dims()} != {stop.dims()}"
            )
        if any(s > e for s, e in zip(begin, stop, strict=True)):
            raise MeshnnValueError(f"Start coordinate is greater than end coordinate: {begin!r} > {stop!r}")
        object.__setattr__(self, "_start", begin)
        object.__setattr__(self, "_end", stop)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("MeshCoordinateRange is immutable")

    def __reduce__(self) -> tuple[type, tuple[MeshCoordinate, MeshCoordinate]]:
        return MeshCoordinateRange, (self._start, self._end)

    def start_coord(self) -> MeshCoordinate:
        return self._start

    def end_coord(self) -> MeshCoordinate:
        return self._end

    def dims(self) -> int:
        return self._start.dims()

    def shape(self) -> MeshShape:
        return MeshShape([e - s + 1 for s, e in zip(self._start, self._end, strict=True)])

    def size(self) -> int:
        return self.shape().mesh_size()

    def _same_dims(self, other: MeshCoordinate | MeshCoordinateRange) -> None:
        if other.dims() != self.dims():
            raise MeshnnValueError(f"Coordinate dimensions do not match: {other.dims()} != {self.dims()}")

    def contains(self, other: MeshCoordinate | MeshCoordinateRange) -> bool:
        self._same_dims(other)
        if isinstance(other, MeshCoordinateRange):
            return self.contains(other._start) and self.contains(other._end)
        return all(s <= c <= e for s, c, e in zip(self._start, other, self._end, strict=True))

    def __contains__(self, other: object) -> bool:
        return isinstance(other, MeshCoordinate | MeshCoordinateRange) and self.contains(other)

    def intersects(self, other: MeshCoordinateRange) -> bool:
        return self.intersection(other) is not None

    def intersection(self, other: MeshCoordinateRange) -> MeshCoordinateRange | None:
        """The box both ranges share, or None."""
        self._same_dims(other)
        lo = [max(a, b) for a, b in zip(self._start, other._start, strict=True)]
        hi = [min(a, b) for a, b in zip(self._end, other._end, strict=True)]
        if any(a > b for a, b in zip(lo, hi, strict=True)):
            return None
        return MeshCoordinateRange(MeshCoordinate(lo), MeshCoordinate(hi))

    def __iter__(self) -> Iterator[MeshCoordinate]:
        spans = (range(s, e + 1) for s, e in zip(self._start, self._end, strict=True))
        return (MeshCoordinate(c) for c in itertools.product(*spans))

    def __len__(self) -> int:
        return self.size()

    def _key(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return self._start.coords(), self._end.coords()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MeshCoordinateRange) and self._key() == other._key()

    def __lt__(self, other: MeshCoordinateRange) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(("MeshCoordinateRange", self._key()))

    def __repr__(self) -> str:
        return f"MeshCoordinateRange(start={self._start!r}, end={self._end!r})"
