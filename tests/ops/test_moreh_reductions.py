"""moreh's reductions and the rest of its ops (``ttnn.operations.moreh``: sum, mean, norm, their
gradients, cumsum, arange, getitem, fold, ``moreh_full``) against float64 torch.

Bounds: a reduction of bfloat16 values rounds each partial sum to bfloat16 as its destination
register holds it (one rounding per tile of 32 rows of a H / W dim, per batch tile of a batch dim)
and then rounds into the output, so the error is at most (steps + 1) * 2^-8 of the sum of |x|.
Moves (getitem, arange of integers) are exact.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops.loading import moreh

from .reference import mesh_fixtures
from .test_moreh_products import EPS, bf16_values, config, got, put, within

meshes, mesh = mesh_fixtures([(1, 1), (1, 8)])


@pytest.mark.parametrize(("dim", "keepdim", "shape"), [
    (None, True, (1, 1, 1, 1)), ([1, 3], False, (2, 37, 1)), (0, False, (3, 37, 70)), ([2, 3], True, (2, 3, 1, 1)),
])  # fmt: skip
def test_sum_shapes_and_values(mesh, rng, dim, keepdim, shape):
    x = bf16_values(rng, 2, 3, 37, 70)
    out = moreh.sum(put(mesh, x), dim, keepdim=keepdim, compute_kernel_config=config(False))
    assert tuple(out.shape) == shape  # moreh keeps a reduced H or W as 1 even without keepdim
    dims = tuple(range(4)) if dim is None else dim
    want = x.double().sum(dims, keepdim=True)
    scale = x.double().abs().sum(dims, keepdim=True)
    within(got(out)[0].reshape(want.shape), want.numpy(), scale.numpy(), 12)


def test_sum_of_int32_is_exact_and_writes_the_given_output(mesh, rng):
    x = torch.from_numpy(rng.integers(-1000, 1000, (4, 40, 33)).astype(np.int32))
    target = put(mesh, torch.zeros(4, 1, 33, dtype=torch.int32), dtype=ttnn.int32)
    assert moreh.sum(put(mesh, x, dtype=ttnn.int32), 1, keepdim=True, output=target) is target
    np.testing.assert_array_equal(got(target)[0], x.long().sum(1, keepdim=True).numpy())


def test_sum_and_mean_backward_spread_the_gradient(mesh, rng):
    x, og = bf16_values(rng, 2, 3, 40, 33), bf16_values(rng, 2, 40, 1)
    grad = moreh.sum_backward(put(mesh, og), input=put(mesh, x), dim=[1, 3], keepdim=False)
    np.testing.assert_array_equal(got(grad)[0], og.double().reshape(2, 1, 40, 1).expand(2, 3, 40, 33).numpy())
    mean_og = bf16_values(rng, 2, 40)  # torch's shape of the reduced output: moreh takes it too
    grad = moreh.mean_backward(put(mesh, mean_og), dim=[1, 3], input_grad_shape=[2, 3, 40, 33])
    want = (mean_og.double().reshape(2, 1, 40, 1) / 99).expand(2, 3, 40, 33).numpy()
    within(got(grad)[0], want, np.abs(want), 0)


def test_mean_over_dims(mesh, rng):
    x = bf16_values(rng, 3, 70, 45)
    out = moreh.mean(put(mesh, x), dim=[0, 2], keepdim=True, compute_kernel_config=config(True))
    want = x.double().mean((0, 2), keepdim=True).numpy()
    within(got(out)[0], want, x.double().abs().mean((0, 2), keepdim=True).numpy(), 2)


@pytest.mark.parametrize("p", [2.0, 3.0, float("inf"), 0.0])
def test_norm_and_its_gradient(mesh, rng, p):
    x = bf16_values(rng, 4, 40, 36)
    out = moreh.norm(put(mesh, x), p, dim=[0, 2], keepdim=True, compute_kernel_config=config(True))
    want = torch.linalg.vector_norm(x.double(), ord=p, dim=(0, 2), keepdim=True).numpy()
    tolerance = 0 if p == 0.0 else 4 * EPS  # |x|^p and its sum each a bfloat16, then the root and the output
    np.testing.assert_allclose(got(out)[0], want, rtol=tolerance, atol=1e-6)
    if p in (2.0, 3.0):
        og = bf16_values(rng, 1, 40, 1)
        grad = moreh.norm_backward(put(mesh, x), out, put(mesh, og), p, dim=[0, 2], keepdim=True)
        xd = x.double().requires_grad_()
        torch.linalg.vector_norm(xd, ord=p, dim=(0, 2), keepdim=True).backward(og.double())
        np.testing.assert_allclose(
            got(grad)[0], xd.grad.numpy(), rtol=8 * EPS, atol=8 * EPS * xd.grad.abs().max().item()
        )


def test_cumsum_and_its_gradient(mesh, rng):
    x = torch.from_numpy(rng.integers(-3, 4, (4, 5, 40)).astype(np.float32))
    np.testing.assert_array_equal(got(moreh.cumsum(put(mesh, x), 1))[0], x.double().cumsum(1).numpy())  # exact
    target = put(mesh, torch.zeros(4, 5, 40))
    assert moreh.cumsum_backward(put(mesh, x), 0, input_grad=target) is target
    np.testing.assert_array_equal(got(target)[0], x.double().flip(0).cumsum(0).flip(0).numpy())


def test_arange_counts_and_computes_in_float32(mesh):
    out = moreh.arange(2.3, 15.3, 0.5, mesh)
    assert tuple(out.shape) == (1, 26) and out.layout is ttnn.TILE_LAYOUT and out.dtype is ttnn.bfloat16
    want = (np.float32(2.3) + np.arange(26, dtype=np.float32) * np.float32(0.5)).astype(np.float64)
    within(got(out)[0].reshape(-1), want, np.abs(want), 0)
    ints = moreh.arange(-10, 300, 7, mesh, untilize_out=True, dtype=ttnn.int32)
    assert tuple(ints.shape) == (45,) and ints.layout is ttnn.ROW_MAJOR_LAYOUT
    np.testing.assert_array_equal(got(ints)[0], np.arange(-10, 300, 7))


@pytest.mark.parametrize("layout", [ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT], ids=["rm", "tile"])
def test_getitem_gathers_exactly(mesh, rng, layout):
    x = torch.from_numpy(rng.integers(0, 100, (4, 6, 7, 40)).astype(np.int32))
    i, j = torch.tensor([0, -1, 3, 5, -6]), torch.tensor([6, 0, -2, 1, 2])
    index = [put(mesh, t.int(), dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT) for t in (i, j)]
    out = moreh.getitem(put(mesh, x, dtype=ttnn.int32, layout=layout), index, [1, 2])
    want = x[:, i, j].numpy()
    shape = (4, 5, 40) if layout is ttnn.ROW_MAJOR_LAYOUT else (4, 1, 5, 40)
    assert tuple(out.shape) == shape
    np.testing.assert_array_equal(got(out)[0].reshape(want.shape), want)


def test_fold_is_torchs_col2im(mesh, rng):
    cols = torch.from_numpy(rng.standard_normal((2, 3 * 4, 50)).astype(np.float32))
    out = moreh.fold(put(mesh, cols, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT), None, [8, 16], [2, 2],
                     [1, 1], [1, 2], [2, 2])  # fmt: skip
    want = torch.nn.functional.fold(cols.double(), (8, 16), (2, 2), 1, (1, 2), (2, 2)).numpy()
    np.testing.assert_allclose(got(out)[0], want, rtol=0, atol=4 * 2.0**-24 * np.abs(cols.numpy()).max() * 4)


def test_moreh_full_takes_the_dtype_of_the_tensor_given(mesh):
    like = put(mesh, torch.zeros(3, 5), dtype=ttnn.float32)
    out = ttnn.moreh_full([3, 5], np.pi, like)
    assert out.dtype is ttnn.float32
    np.testing.assert_array_equal(got(out)[0], np.full((3, 5), np.float32(np.pi)))
