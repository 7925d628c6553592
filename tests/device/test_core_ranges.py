"""Core-range arithmetic tt-metal's tests use: ``CoreRangeSet.subtract``."""

from __future__ import annotations

import pytest

import meshnn as ttnn


def _set(*boxes):
    return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(a, b), ttnn.CoreCoord(c, d)) for a, b, c, d in boxes])


def test_subtract_leaves_exactly_the_cores_outside():
    whole = _set((0, 0, 7, 7))
    cut = _set((2, 2, 3, 4), (6, 0, 7, 0))
    left = whole.subtract(cut)
    outside = {(c.x, c.y) for c in whole.cores()} - {(c.x, c.y) for c in cut.cores()}
    assert {(c.x, c.y) for c in left.cores()} == outside
    assert left.num_cores() == 64 - 6 - 2  # no core twice (the set refuses overlapping ranges)


def test_subtract_of_a_disjoint_set_and_of_itself():
    a = _set((0, 0, 3, 3))
    assert a.subtract(_set((5, 5, 6, 6))).num_cores() == 16
    assert a.subtract(a).num_cores() == 0
    with pytest.raises(ttnn.MeshnnTypeError, match="CoreRangeSet"):
        a.subtract((0, 0))


def test_corerange_to_cores_walks_columns_unless_row_wise():
    crs = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 2))])
    by_column = [(c.x, c.y) for c in ttnn.corerange_to_cores(crs)]
    assert by_column == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert [(c.x, c.y) for c in ttnn.corerange_to_cores(crs, 4, True)] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert ttnn.CoreCoord((3, 4)) == ttnn.CoreCoord(3, 4)  # ttnn's CoreCoord takes an (x, y) pair too
    with pytest.raises(ttnn.MeshnnTypeError, match="CoreRangeSet"):
        ttnn.corerange_to_cores([ttnn.CoreCoord(0, 0)])


def test_contains_takes_a_core_a_range_or_a_set():
    """ttnn's ``contains`` overloads: a range or set holds another when it holds every core of it."""
    from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet

    box = CoreRange(CoreCoord(0, 0), CoreCoord(10, 9))
    ragged = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(10, 7)), CoreRange(CoreCoord(0, 8), CoreCoord(8, 9))])
    assert box.contains(ragged) and box.contains(CoreRange(CoreCoord(2, 2), CoreCoord(10, 9)))
    assert not ragged.contains(box) and ragged.contains(CoreRange(CoreCoord(0, 8), CoreCoord(8, 9)))
    assert not box.contains(CoreRange(CoreCoord(0, 0), CoreCoord(11, 0)))
