"""``ttnn.grid_to_cores`` and ``ttnn.split_work_to_cores``: tt-metal's orders worked by hand
(tt-metal's test_grid_to_cores.py scenarios and the cases its regression comment names)."""

from __future__ import annotations

import pytest

import meshnn as ttnn
from meshnn.errors import MeshnnTypeError, MeshnnValueError

C, R, S = ttnn.CoreCoord, ttnn.CoreRange, ttnn.CoreRangeSet


def test_grid_to_cores_walks_columns_unless_row_wise():
    assert ttnn.grid_to_cores(4, 8, 8) == [C(0, 0), C(0, 1), C(0, 2), C(0, 3)]
    assert ttnn.grid_to_cores(4, 2, 8, row_wise=True) == [C(0, 0), C(1, 0), C(0, 1), C(1, 1)]
    assert ttnn.grid_to_cores(C(1, 1), C(2, 2)) == [C(1, 1), C(1, 2), C(2, 1), C(2, 2)]
    assert ttnn.grid_to_cores(C(1, 1), C(2, 2), row_wise=True) == [C(1, 1), C(2, 1), C(1, 2), C(2, 2)]
    with pytest.raises(MeshnnValueError, match="Number of cores 65 exceeds grid size 8x8"):
        ttnn.grid_to_cores(65, 8, 8)
    with pytest.raises(MeshnnTypeError, match="num_cores"):
        ttnn.grid_to_cores("4", 8, 8)


def test_splitting_over_a_grid_gives_the_first_cores_one_unit_more():
    used, every, first, second, more, fewer = ttnn.split_work_to_cores(C(8, 8), 100)
    assert (used, more, fewer) == (64, 2, 1) and every.ranges() == (R(C(0, 0), C(7, 7)),)
    assert first.ranges() == (R(C(0, 0), C(3, 7)), R(C(4, 0), C(4, 3)))  # 36: four columns and half a fifth
    assert second.ranges() == (R(C(4, 4), C(4, 7)), R(C(5, 0), C(7, 7)))  # the 28 after them
    used, every, first, second, more, fewer = ttnn.split_work_to_cores(C(8, 8), 100, row_wise=True)
    assert first.ranges() == (R(C(0, 0), C(7, 3)), R(C(0, 4), C(3, 4)))
    assert second.ranges() == (R(C(4, 4), C(7, 4)), R(C(0, 5), C(7, 7)))


def test_fewer_units_than_cores_use_that_many_cores_one_unit_each():
    used, every, first, second, more, fewer = ttnn.split_work_to_cores(C(8, 8), 10)
    assert (used, more, fewer, second.num_cores()) == (10, 1, 0, 0)
    assert every.ranges() == first.ranges() == (R(C(0, 0), C(0, 7)), R(C(1, 0), C(1, 1)))
    assert ttnn.split_work_to_cores(C(8, 8), 0) == (0, S(), S(), S(), 0, 0)


def test_splitting_over_a_core_range_set_starts_group_two_at_the_next_columns_top():
    grid = S([R(C(0, 0), C(7, 7))])
    used, every, first, second, more, fewer = ttnn.split_work_to_cores(grid, 72)
    assert (used, first.num_cores(), second.num_cores(), more, fewer) == (64, 8, 56, 2, 1)
    assert first.ranges() == (R(C(0, 0), C(0, 7)),) and second.ranges()[0].start == C(1, 0)
    two = S([R(C(0, 0), C(1, 3)), R(C(4, 0), C(5, 3))])  # 8 + 8 cores; 20 units: 4 cores take 3
    used, every, first, second, more, fewer = ttnn.split_work_to_cores(two, 20)
    assert (used, first.num_cores(), second.num_cores(), more, fewer) == (16, 4, 12, 2, 1) and every is two
    assert first.ranges() == (R(C(0, 0), C(0, 3)),) and second.ranges()[0].start == C(1, 0)


def test_split_work_to_cores_refuses_bad_arguments():
    with pytest.raises(MeshnnTypeError, match="units_to_divide"):
        ttnn.split_work_to_cores(C(8, 8), -1)
    with pytest.raises(MeshnnTypeError, match="grid_size must be a CoreCoord or a CoreRangeSet"):
        ttnn.split_work_to_cores("8x8", 4)
    with pytest.raises(MeshnnTypeError, match="row_wise"):
        ttnn.split_work_to_cores(C(8, 8), 4, row_wise=1)
    with pytest.raises(MeshnnValueError, match="at least one core"):
        ttnn.split_work_to_cores(S(), 4)
