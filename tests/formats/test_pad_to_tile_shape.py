"""``ttnn.pad_to_tile_shape``: the last two of four dims rounded up to the 32 x 32 tile, the outer
two kept; ttnn.Shape accepted as a list is; anything but 4 non-negative ints refused."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.mark.parametrize(
    ("shape", "padded"),
    [
        ([1, 384, 49, 96], [1, 384, 64, 96]),
        ([1, 2, 2, 2], [1, 2, 32, 32]),
        ([3, 5, 32, 33], [3, 5, 32, 64]),
        ([1, 1, 0, 0], [1, 1, 0, 0]),
        ([7, 9, 65, 1], [7, 9, 96, 32]),
    ],
)
def test_last_two_dims_round_up_to_the_tile(shape: list[int], padded: list[int]) -> None:
    assert ttnn.pad_to_tile_shape(shape) == padded
    assert ttnn.pad_to_tile_shape(unpadded_shape=ttnn.Shape(shape)) == padded


def test_result_is_a_list_comparable_with_a_shape() -> None:
    t = ttnn.from_torch(torch.zeros(1, 1, 5, 40), layout=ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.pad_to_tile_shape(t.padded_shape)
    assert isinstance(out, list) and out == [1, 1, 32, 64]
    assert t.padded_shape != out


@pytest.mark.parametrize("bad", [[1, 2, 3], [1, 2, 3, 4, 5], [1, 2, -1, 3], [1, 2, 3.0, 4], "abcd", 4])
def test_anything_but_four_non_negative_ints_is_refused(bad: object) -> None:
    with pytest.raises(ttnn.MeshnnTypeError, match="unpadded_shape"):
        ttnn.pad_to_tile_shape(bad)
