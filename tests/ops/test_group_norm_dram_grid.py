"""``ttnn.determine_expected_group_norm_dram_grid_size``: the grid a DRAM group norm runs on, by
tt-metal's rule (the widest grid, then the tallest, whose virtual columns divide the groups into
whole tiles of channels and whose virtual rows divide the input's tile rows and the batches).
Expected grids worked out by hand from the rule."""

from __future__ import annotations

import pytest

import meshnn as ttnn


@pytest.fixture
def n150(open_mesh):
    return open_mesh((1, 1))  # an 8x8 compute grid


def _grid(device, channels, groups, nhw, batches=1):
    return ttnn.determine_expected_group_norm_dram_grid_size(
        device=device, num_channels=channels, num_groups=groups, input_nhw=nhw, num_batches=batches
    )


def test_the_whole_grid_when_every_column_and_row_works(n150):
    # 8 columns: 320 / 8 = 40 channels (not whole tiles) ... 2 virtual columns of 160; 4 virtual rows a
    # grid row, 32 over 8 rows: 128 tile rows divide.
    assert _grid(n150, 320, 32, 64 * 64) == ttnn.CoreGrid(y=8, x=8)


def test_rows_follow_the_tile_rows_and_the_batches(n150):
    # 256 channels, 32 groups: 8 virtual columns of 32 channels, one virtual row a grid row;
    # 12 tile rows: the tallest grid whose rows divide 12 is 6.
    assert _grid(n150, 256, 32, 12 * 32) == ttnn.CoreGrid(y=6, x=8)
    # 4 batches: 6 rows is not a multiple of 4; 4 rows is, and divides 12.
    assert _grid(n150, 256, 32, 12 * 32, batches=4) == ttnn.CoreGrid(y=4, x=8)


def test_columns_that_leave_some_unused_are_the_fallback(n150):
    # 96 channels in 3 groups: 3 virtual columns (32 each) only where the grid has 3 or more columns;
    # 8 % 3, 7 % 3 leave columns unused, 6 uses all of them: 2 virtual rows a grid row, 4 tile rows.
    assert _grid(n150, 96, 3, 4 * 32) == ttnn.CoreGrid(y=2, x=6)


def test_a_narrow_input_gets_a_narrow_grid_and_bad_counts_are_refused(n150):
    # 32 channels in 2 groups: 16 channels a group never make whole tiles on 2 columns; one column
    # (nvc 1) then needs the tile row count (1) to hold 8 virtual rows of a grid row: it cannot
    # for x = 8 ... 2; x = 1 gives 1 row.
    assert _grid(n150, 32, 2, 32) == ttnn.CoreGrid(y=1, x=1)
    with pytest.raises(ttnn.MeshnnValueError, match="num_groups"):
        _grid(n150, 100, 3, 32)
    with pytest.raises(ttnn.MeshnnValueError, match="positive"):
        _grid(n150, 64, 2, 32, batches=0)
