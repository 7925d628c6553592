"""The Python operators of a device tensor are the ttnn ops, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import MeshnnError


def raw(tensor: ttnn.Tensor) -> list[np.ndarray]:
    return [b.data.copy() for b in ttnn.from_device(tensor).host_buffer().local_shards().values()]


@pytest.fixture
def operands(open_mesh, rng):
    mesh = open_mesh((2, 4))
    kw = {"dtype": ttnn.bfloat16, "layout": ttnn.TILE_LAYOUT, "device": mesh}
    a = ttnn.from_torch(torch.from_numpy(rng.standard_normal((64, 96)).astype(np.float32)), **kw)
    b = ttnn.from_torch(torch.from_numpy(rng.uniform(0.5, 2, (64, 96)).astype(np.float32)), **kw)
    w = ttnn.from_torch(torch.from_numpy(rng.standard_normal((96, 32)).astype(np.float32)), **kw)
    return a, b, w


CASES = {
    "a + b": (lambda a, b, w: a + b, lambda a, b, w: ttnn.add(a, b)),
    "a - b": (lambda a, b, w: a - b, lambda a, b, w: ttnn.subtract(a, b)),
    "a * b": (lambda a, b, w: a * b, lambda a, b, w: ttnn.multiply(a, b)),
    "a / b": (lambda a, b, w: a / b, lambda a, b, w: ttnn.divide(a, b)),
    "a + 2": (lambda a, b, w: a + 2.0, lambda a, b, w: ttnn.add(a, 2.0)),
    "2 + a": (lambda a, b, w: 2.0 + a, lambda a, b, w: ttnn.add(a, 2.0)),
    "3 * a": (lambda a, b, w: 3.0 * a, lambda a, b, w: ttnn.multiply(a, 3.0)),
    "1 - a": (lambda a, b, w: 1.0 - a, lambda a, b, w: ttnn.add(ttnn.neg(a), 1.0)),
    "2 / b": (lambda a, b, w: 2.0 / b, lambda a, b, w: ttnn.rdiv(b, 2.0)),
    "-a": (lambda a, b, w: -a, lambda a, b, w: ttnn.neg(a)),
    "b ** 2": (lambda a, b, w: b**2.0, lambda a, b, w: ttnn.pow(b, 2.0)),
    "a @ w": (lambda a, b, w: a @ w, lambda a, b, w: ttnn.matmul(a, w)),
    "a[0:32, 32:64]": (lambda a, b, w: a[0:32, 32:64], lambda a, b, w: ttnn.slice(a, [0, 32], [32, 64])),
    "a == b": (lambda a, b, w: a == b, lambda a, b, w: ttnn.eq(a, b)),
    "a != 0": (lambda a, b, w: a != 0.0, lambda a, b, w: ttnn.ne(a, 0.0)),
    "a > b": (lambda a, b, w: a > b, lambda a, b, w: ttnn.gt(a, b)),
    "a >= 0": (lambda a, b, w: a >= 0.0, lambda a, b, w: ttnn.ge(a, 0.0)),
    "a < b": (lambda a, b, w: a < b, lambda a, b, w: ttnn.lt(a, b)),
    "a <= 1": (lambda a, b, w: a <= 1.0, lambda a, b, w: ttnn.le(a, 1.0)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_operator_is_the_ttnn_op(operands, case):
    by_operator, by_op = CASES[case]
    got, want = by_operator(*operands), by_op(*operands)
    assert got.spec == want.spec
    assert all(np.array_equal(x, y) for x, y in zip(raw(got), raw(want), strict=True))


def test_a_tensor_is_not_iterable(operands):
    with pytest.raises(TypeError, match="not iterable"):
        list(operands[0])


def test_operators_refuse_what_the_ops_refuse(operands, open_mesh):
    a, _, _ = operands
    other = ttnn.from_torch(torch.ones(64, 96), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=open_mesh((1, 1)))
    with pytest.raises(MeshnnError, match="mesh"):
        _ = a + other
    ttnn.deallocate(a)
    with pytest.raises(MeshnnError, match="deallocated"):
        _ = -a


def test_a_tensor_compared_by_operators_keeps_its_identity_hash(operands):
    a, b, _ = operands
    assert {a: "a", b: "b"}[a] == "a" and a in [a] and a in {b, a}  # ttnn binds == after the class: hash kept
    assert ttnn.to_torch(ttnn.get_device_tensors(a == a)[0]).eq(1).all()
