"""ttnn's Layout and DataType convert to their numbers as its pybind11 enums do (tt-metal's conv2d
sweeps store ``int(ttnn.TILE_LAYOUT)`` in their parameter tables and read ``ttnn.Layout(n)`` back)."""

from __future__ import annotations

import meshnn as ttnn


def test_layout_and_dtype_convert_to_ttnns_numbers_and_back():
    assert int(ttnn.ROW_MAJOR_LAYOUT) == 0 and int(ttnn.TILE_LAYOUT) == 1
    numbers = {ttnn.bfloat16: 0, ttnn.float32: 1, ttnn.uint32: 2, ttnn.bfloat8_b: 3, ttnn.bfloat4_b: 4}
    numbers |= {ttnn.uint8: 5, ttnn.uint16: 6, ttnn.int32: 7}
    for dtype, number in numbers.items():
        assert int(dtype) == number and ttnn.DataType(int(dtype)) is dtype
    assert ttnn.Layout(int(ttnn.TILE_LAYOUT)) is ttnn.TILE_LAYOUT
    assert [10, 11][ttnn.TILE_LAYOUT] == 11  # __index__, as pybind11's enums have
