"""``Tensor.item()``: a one-element tensor's value as a Python number, per dtype (tt-metal's
test_item.py cases), and a tensor of more elements refused."""

from __future__ import annotations

import math

import pytest
import torch

import meshnn as ttnn
from meshnn.errors import MeshnnValueError


@pytest.mark.parametrize(
    ("values", "dtype", "expected"),
    [
        (torch.tensor([200], dtype=torch.uint8), ttnn.uint8, 200),
        (torch.tensor([-2147483648], dtype=torch.int32), ttnn.int32, -2147483648),
        (torch.tensor([4294967295], dtype=torch.int64), ttnn.uint32, 4294967295),
        (torch.tensor([[[30000]]], dtype=torch.int16), ttnn.uint16, 30000),
        (torch.tensor([3.14], dtype=torch.float32), ttnn.float32, float(torch.tensor(3.14, dtype=torch.float32))),
        (torch.tensor([[0.123456789]]), ttnn.bfloat16, 0.12353515625),  # rounded to bfloat16
        (torch.tensor([[[[3.14]]]]), ttnn.bfloat8_b, 3.125),  # a lone value: its block's exponent, 7 bits
        (torch.tensor([2.71]), ttnn.bfloat4_b, 2.5),  # 3 bits of mantissa
        (torch.tensor([float("-inf")]), ttnn.float32, -math.inf),
    ],
)
def test_item_gives_a_python_number_of_the_dtypes_kind(open_mesh, values, dtype, expected):
    mesh = open_mesh((1, 1))
    tensor = ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
    value = tensor.item()
    assert value == expected and type(value) is type(expected), (value, expected)
    assert ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT).item() == expected  # on the host too


def test_item_of_nan_and_of_more_than_one_element(open_mesh):
    mesh = open_mesh((1, 1))
    assert math.isnan(ttnn.from_torch(torch.tensor([[float("nan")]]), dtype=ttnn.float32, device=mesh).item())
    two = ttnn.from_torch(torch.ones(1, 2), dtype=ttnn.bfloat16, device=mesh)
    with pytest.raises(MeshnnValueError, match="exactly one element, but got 2 elements"):
        two.item()
