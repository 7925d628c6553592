"""ttnn.zeros / ones / full / empty / *_like / arange, squeeze / unsqueeze and where, against numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import MeshnnError


def device_values(tensor: ttnn.Tensor) -> list[np.ndarray]:
    return [ttnn.to_torch(t).float().numpy() for t in ttnn.get_device_tensors(tensor)]


KINDS = [
    (d, lay) for d in (ttnn.bfloat16, ttnn.float32, ttnn.int32) for lay in (ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT)
]


@pytest.mark.parametrize(("dtype", "layout"), [*KINDS, (ttnn.bfloat8_b, ttnn.TILE_LAYOUT)])  # bfloat8_b: tiles only
def test_full_on_a_mesh_is_replicated_and_rounded(open_mesh, dtype, layout):
    mesh = open_mesh((2, 4))
    t = ttnn.full((3, 40), 1.1, dtype=dtype, layout=layout, device=mesh)
    want = {ttnn.bfloat16: float(np.float32(1.1).astype(ml_dtypes.bfloat16)), ttnn.float32: float(np.float32(1.1)),
            ttnn.int32: 1.0, ttnn.bfloat8_b: 1.09375}[dtype]  # fmt: skip
    values = device_values(t)
    assert len(values) == 8
    assert all(v.shape == (3, 40) and np.all(v == np.float32(want)) for v in values)


def test_zeros_ones_empty_and_like(open_mesh):
    mesh = open_mesh((1, 2))
    z = ttnn.zeros((2, 3), device=mesh)
    assert z.dtype is ttnn.bfloat16 and z.layout is ttnn.ROW_MAJOR_LAYOUT  # ttnn's defaults
    assert all(np.all(v == 0) for v in device_values(z))
    o = ttnn.ones_like(z, dtype=ttnn.float32)
    assert o.dtype is ttnn.float32 and all(np.all(v == 1) for v in device_values(o))
    assert o.storage_type() is ttnn.StorageType.DEVICE  # on z's device
    host = ttnn.ones((4,))
    assert host.storage_type() is ttnn.StorageType.HOST and ttnn.to_torch(host).tolist() == [1, 1, 1, 1]
    e = ttnn.empty((64, 64), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)
    assert e.shape == ttnn.Shape([64, 64]) and e.is_allocated()
    f = ttnn.full_like(e, 7.0)
    assert all(np.all(v == 7) for v in device_values(f))
    assert tuple(ttnn.empty_like(f).shape) == (64, 64)


@pytest.mark.parametrize(
    ("args", "want"), [((5,), [0, 1, 2, 3, 4]), ((2, 11, 3), [2, 5, 8]), ((1, -2, -1), [1, 0, -1])]
)
def test_arange(args, want):
    assert ttnn.to_torch(ttnn.arange(*args, dtype=ttnn.float32)).tolist() == want


def test_squeeze_and_unsqueeze(open_mesh):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(torch.randn(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    u = ttnn.unsqueeze(x, 0)
    assert tuple(u.shape) == (1, 32, 64)
    assert tuple(ttnn.unsqueeze(x, -1).shape) == (32, 64, 1)
    assert tuple(ttnn.squeeze(u, 0).shape) == (32, 64)
    assert ttnn.squeeze(x, 0) is x  # a dim that is not 1 stays, as torch does
    assert torch.equal(ttnn.to_torch(ttnn.squeeze(u, 0)), ttnn.to_torch(x))


def test_where_against_numpy(open_mesh, rng):
    mesh = open_mesh((2, 4))
    cond = (rng.random((64, 96)) > 0.5).astype(np.float32)
    a = rng.standard_normal((64, 96)).astype(np.float32)
    b = rng.standard_normal((1, 96)).astype(np.float32)  # broadcast
    kw = {"dtype": ttnn.float32, "layout": ttnn.TILE_LAYOUT, "device": mesh}
    tc, ta, tb = (ttnn.from_torch(torch.from_numpy(v), **kw) for v in (cond, a, b))
    for got, want in [
        (ttnn.where(tc, ta, tb), np.where(cond != 0, a, b)),
        (ttnn.where(tc, ta, -3.0), np.where(cond != 0, a, -3.0)),
        (ttnn.where(tc, 2.0, tb), np.where(cond != 0, 2.0, b)),
    ]:
        assert all(np.array_equal(v, want.astype(np.float32)) for v in device_values(got))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ttnn.zeros((2, -1)), "shape must hold non-negative ints"),
        (lambda: ttnn.zeros(5), "shape must be a sequence of ints"),
        (lambda: ttnn.full((2,), "x"), "fill_value must be a number"),
        (lambda: ttnn.zeros((2,), dtype="bfloat16"), "dtype must be a ttnn DataType"),
        (lambda: ttnn.zeros((1 << 20, 1 << 20)), "absurdly large"),
        (lambda: ttnn.arange(0, 5, 0), "step must not be 0"),
        (lambda: ttnn.zeros((32,), dtype=ttnn.bfloat8_b, layout=ttnn.ROW_MAJOR_LAYOUT), "TILE"),
        (lambda: ttnn.where("x", 1.0, 2.0), "predicate must be a ttnn.Tensor"),
        (lambda: ttnn.squeeze(np.zeros(3), 0), "input_tensor must be a ttnn.Tensor"),
    ],
)
def test_bad_creation_arguments(call, message):
    with pytest.raises(MeshnnError, match=message):
        call()
