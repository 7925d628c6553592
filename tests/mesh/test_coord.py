"""Mesh shapes, coordinates, ranges and range sets: tt-metal's test_mesh_coord.cpp cases."""

from __future__ import annotations

import pytest

from meshnn.errors import MeshnnError
from meshnn.mesh.coord import (
    MeshCoordinate as C,
)
from meshnn.mesh.coord import (
    MeshCoordinateRange as R,
)
from meshnn.mesh.coord import (
    MeshShape,
    to_linear_index,
)
from meshnn.mesh.range_set import MeshCoordinateRangeSet, subtract


def test_mesh_shape_construction_strides_equality():
    """MeshShapeTest.Construction / Strides / Equality / ZeroShape."""
    assert (MeshShape(3).dims(), MeshShape(3).mesh_size()) == (1, 3)
    assert (MeshShape(3, 4)[1], MeshShape(3, 4).mesh_size()) == (4, 12)
    assert MeshShape(2, 3, 4).mesh_size() == 24 and MeshShape([2, 3, 4, 5, 6]).mesh_size() == 720
    assert [MeshShape(2, 3, 4).get_stride(d) for d in range(3)] == [12, 4, 1]
    assert MeshShape(2, 3) == MeshShape([2, 3]) and MeshShape(2, 3) != MeshShape(3, 2)
    assert MeshShape(2, 3) != MeshShape(1, 2, 3)
    assert repr(MeshShape(2, 4)) == "MeshShape([2, 4])" and list(MeshShape(2, 4)) == [2, 4]
    assert MeshShape(0, 2).mesh_size() == 0  # accepted, as in ttnn
    with pytest.raises(MeshnnError, match="0 dimension"):
        MeshShape([])
    assert len({MeshShape(2, 4), MeshShape([2, 4])}) == 1


@pytest.mark.parametrize(
    ("shape", "line"),
    [
        ((1,), True),
        ((3,), True),
        ((1, 1), True),
        ((1, 3), True),
        ((3, 1), True),
        ((3, 3), False),
        ((1, 1, 3), True),
        ((1, 3, 3), False),
        ((3, 1, 3), False),
        ((3, 3, 3), False),
    ],
)
def test_line_topology(shape, line):
    """MeshShapeTest.LinearTopology."""
    assert MeshShape(shape).is_line_topology() is line


def test_mesh_coordinate():
    """MeshCoordinateTest.Construction / Equality / Comparison / UnorderedSet / ZeroCoordinate."""
    assert C(1, 2).coords() == (1, 2) and C([1, 2, 3, 4, 5])[4] == 5 and C(1).dims() == 1
    assert C(1, 2) == C([1, 2]) and C(1, 2) != C(2, 1) and C(1, 2) != C(1, 2, 1)
    assert C(1) < C(2) and not C(2) < C(1) and C(2, 0, 3) < C(2, 1, 3)
    with pytest.raises(MeshnnError, match="different dimensions"):
        _ = C(1) < C(1, 2)
    assert len({C(0, 0, 0), C(0, 0, 1), C(0, 0, 2), C(0, 0, 2)}) == 3
    assert C.zero_coordinate(3) == C(0, 0, 0)
    assert repr(C(1, 2)) == "MeshCoordinate([1, 2])"


def test_linear_index():
    """ToLinearIndexTest.Basic / MismatchedDimensions / OutOfBounds."""
    shape = MeshShape(2, 2, 3)
    assert [to_linear_index(shape, c) for c in R(shape)] == list(range(12))
    for bad_shape, coord in [
        (MeshShape(1, 2, 3), C(0, 0)),
        (MeshShape(2, 3), C(2, 0)),
        (MeshShape(2, 3), C(0, 3)),
    ]:
        with pytest.raises(MeshnnError):
            to_linear_index(bad_shape, coord)


def test_range_iteration_is_row_major_and_yields_fresh_coordinates():
    """MeshCoordinateRangeTest.FromShape / Subrange / SubrangeOneElement."""
    assert list(R(MeshShape(2, 3))) == [C(0, 0), C(0, 1), C(0, 2), C(1, 0), C(1, 1), C(1, 2)]
    assert list(R(C(1, 1, 1), C(2, 1, 4))) == [C(a, 1, c) for a in (1, 2) for c in (1, 2, 3, 4)]
    assert list(R(C(1, 1, 1), C(1, 1, 1))) == [C(1, 1, 1)]
    first, second = iter(R(MeshShape(1, 2)))
    assert first is not second and first == C(0, 0)
    assert repr(R(C(0, 0), C(1, 2))) == "MeshCoordinateRange(start=MeshCoordinate([0, 0]), end=MeshCoordinate([1, 2]))"


def test_range_contains_and_intersection():
    """MeshCoordinateRangeTest.Contains / ContainsRange / Intersection / *InvalidDimensions."""
    one = R(C(1, 1, 3), C(1, 1, 3))
    assert one.contains(C(1, 1, 3)) and one.contains(one)
    assert not one.contains(R(C(1, 1, 2), C(1, 1, 3))) and not one.contains(R(C(1, 1, 3), C(1, 1, 4)))
    with pytest.raises(MeshnnError):
        one.contains(C(1, 1))
    with pytest.raises(MeshnnError):
        one.contains(R(C(1, 1), C(1, 1)))
    col = R(C(0, 2), C(1, 2))
    assert col.contains(C(0, 2)) and col.contains(C(1, 2))
    assert not any(col.contains(c) for c in (C(0, 1), C(2, 1), C(2, 2)))
    box = R(C(1, 1), C(2, 2))
    assert box.contains(R(C(1, 1), C(1, 2)))
    assert not any(
        box.contains(R(a, b))
        for a, b in [(C(0, 0), C(0, 0)), (C(0, 3), C(0, 3)), (C(0, 0), C(0, 1)), (C(0, 2), C(1, 2))]
    )
    r = R(C(1, 1), C(3, 3))
    assert r.intersection(R(C(2, 2), C(4, 4))) == R(C(2, 2), C(3, 3))
    assert r.intersection(R(C(1, 1), C(1, 1))) == R(C(1, 1), C(1, 1))
    assert r.intersection(R(C(3, 3), C(3, 3))) == R(C(3, 3), C(3, 3))
    assert r.intersection(R(C(0, 0), C(5, 5))) == r
    assert r.intersection(R(C(5, 5), C(6, 6))) is None
    assert R(C(0, 1, 2), C(5, 1, 2)).dims() == 3


def test_invalid_ranges():
    """MeshCoordinateRangeTest.MismatchedDimensions / InvalidRange."""
    with pytest.raises(MeshnnError, match="do not match"):
        R(C(1, 0), C(2, 3, 1))
    with pytest.raises(MeshnnError, match="greater than end"):
        R(C(1, 2, 0), C(1, 1, 1))


def merged(*steps):
    rs = MeshCoordinateRangeSet()
    for a, b in steps:
        rs.merge(R(C(*a), C(*b)))
    return rs.ranges()


def test_merge_1d():
    """MeshCoordinateRangeSetTest.Merge1D."""
    assert merged(((0,), (3,)), ((4,), (6,))) == [R(C(0), C(6))]
    assert merged(((0,), (3,)), ((4,), (6,)), ((8,), (10,))) == [R(C(0), C(6)), R(C(8), C(10))]
    assert merged(((0,), (3,)), ((4,), (6,)), ((8,), (10,)), ((7,), (7,))) == [R(C(0), C(10))]


def test_merge_order():
    """MeshCoordinateRangeSetTest.MergeOrder: every intermediate state."""
    steps = [
        ((5, 5), (6, 6)),
        ((0, 0), (1, 1)),
        ((0, 2), (1, 3)),
        ((2, 0), (3, 1)),
        ((2, 2), (3, 3)),
        ((4, 0), (4, 6)),
        ((5, 0), (6, 4)),
        ((0, 4), (3, 6)),
    ]
    expected = [
        [((5, 5), (6, 6))],
        [((0, 0), (1, 1)), ((5, 5), (6, 6))],
        [((0, 0), (1, 3)), ((5, 5), (6, 6))],
        [((0, 0), (1, 3)), ((2, 0), (3, 1)), ((5, 5), (6, 6))],
        [((0, 0), (3, 3)), ((5, 5), (6, 6))],
        [((0, 0), (3, 3)), ((4, 0), (4, 6)), ((5, 5), (6, 6))],
        [((0, 0), (3, 3)), ((4, 0), (6, 6))],
        [((0, 0), (6, 6))],
    ]
    for n in range(1, len(steps) + 1):
        assert merged(*steps[:n]) == [R(C(*a), C(*b)) for a, b in expected[n - 1]], n


def test_merge_with_overlaps():
    """MeshCoordinateRangeSetTest.MergeWithOverlaps: every intermediate state."""
    steps = [
        ((0, 0), (1, 1)),
        ((1, 1), (2, 2)),
        ((0, 0), (3, 3)),
        ((0, 4), (2, 6)),
        ((2, 2), (4, 4)),
        ((0, 3), (1, 3)),
        ((3, 0), (4, 2)),
        ((1, 3), (4, 6)),
        ((0, 0), (5, 7)),
    ]
    expected = [
        [((0, 0), (1, 1))],
        [((0, 0), (0, 1)), ((1, 0), (1, 0)), ((1, 1), (2, 2))],
        [((0, 0), (3, 3))],
        [((0, 0), (3, 3)), ((0, 4), (2, 6))],
        [((0, 0), (1, 6)), ((2, 0), (3, 1)), ((2, 2), (4, 4)), ((2, 5), (2, 6))],
        [((0, 0), (1, 6)), ((2, 0), (3, 1)), ((2, 2), (4, 4)), ((2, 5), (2, 6))],
        [((0, 0), (1, 6)), ((2, 0), (4, 2)), ((2, 3), (2, 6)), ((3, 3), (4, 4))],
        [((0, 0), (4, 6))],
        [((0, 0), (5, 7))],
    ]
    for n in range(1, len(steps) + 1):
        assert merged(*steps[:n]) == [R(C(*a), C(*b)) for a, b in expected[n - 1]], n


def test_merge_rejects_other_dimensions():
    """MeshCoordinateRangeSetTest.MergeInvalidDimensions."""
    rs = MeshCoordinateRangeSet(R(C(0, 0), C(1, 1)))
    with pytest.raises(MeshnnError, match="different dimensions"):
        rs.merge(R(C(0, 0, 0), C(1, 1, 1)))


def test_subtract():
    """MeshCoordinateRangeSetTest.Subtract*."""
    with pytest.raises(MeshnnError):
        subtract(R(C(0, 0, 0), C(1, 1, 1)), R(C(0, 0), C(1, 1)))
    parent = R(C(0, 0), C(4, 10))
    assert subtract(parent, R(C(5, 5), C(12, 12))).ranges() == [parent]
    assert subtract(parent, parent).ranges() == []
    assert subtract(R(C(0), C(10)), R(C(3), C(7))).ranges() == [R(C(0), C(2)), R(C(8), C(10))]
    assert subtract(R(C(0, 0), C(2, 2)), R(C(1, 1), C(1, 1))).ranges() == [
        R(C(0, 0), C(0, 2)),
        R(C(1, 0), C(2, 0)),
        R(C(1, 2), C(2, 2)),
        R(C(2, 1), C(2, 1)),
    ]


def test_range_set_equality_hash_and_coords():
    """MeshCoordinateRangeSetTest.Equality / UnorderedSet / Coords."""
    a = MeshCoordinateRangeSet([R(C(0, 0), C(1, 1)), R(C(3, 3), C(4, 4))])
    b = MeshCoordinateRangeSet([R(C(3, 3), C(4, 4)), R(C(0, 0), C(1, 1))])
    c = MeshCoordinateRangeSet([R(C(0, 0), C(1, 1)), R(C(3, 3), C(5, 5))])
    d = MeshCoordinateRangeSet(R(C(0, 0), C(1, 1)))
    assert a == b and a != c and a != d and c != d
    assert len({a, b, MeshCoordinateRangeSet(R(C(0, 0), C(2, 2)))}) == 2
    rs = MeshCoordinateRangeSet()
    assert rs.coords() == []
    for a_, b_ in [((0, 0), (0, 1)), ((1, 1), (1, 1)), ((0, 3), (0, 3))]:
        rs.merge(R(C(*a_), C(*b_)))
    assert rs.coords() == [C(0, 0), C(0, 1), C(0, 3), C(1, 1)]
    rs.merge(R(C(0, 2), C(1, 2)))
    rs.merge(R(C(1, 3), C(1, 3)))
    assert rs.coords() == [C(0, 0), C(0, 1), C(0, 2), C(0, 3), C(1, 1), C(1, 2), C(1, 3)]
