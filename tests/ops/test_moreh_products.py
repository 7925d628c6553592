"""moreh's products (``ttnn.operations.moreh``: matmul, bmm, linear, dot and their gradients)
against float64 torch.

Bounds: the operands are bfloat16 values, so the float64 product is exact but for rounding.  With
``fp32_dest_acc_en`` the only rounding is the output's (2^-8 relative, plus float32's K-term sums);
without it the destination register rounds the running sum to bfloat16 after each 32-wide K block,
so the error is at most (blocks + 1) * 2^-8 of the sum of |terms|.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops.loading import moreh

from .reference import mesh_fixtures

meshes, mesh = mesh_fixtures([(1, 1), (1, 8)])
EPS = 2.0**-8


def put(mesh, values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT):
    return ttnn.from_torch(
        torch.as_tensor(values), dtype=dtype, layout=layout, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )


def got(tensor) -> list[np.ndarray]:
    return [ttnn.to_torch(s).double().numpy() for s in ttnn.get_device_tensors(tensor)]


def bf16_values(rng, *shape) -> torch.Tensor:
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).bfloat16()


def config(fp32: bool):
    return ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, fp32_dest_acc_en=fp32)


def within(values: np.ndarray, want: np.ndarray, scale: np.ndarray, blocks: int) -> None:
    bound = (blocks + 1) * EPS * scale + 1e-6
    assert np.all(np.abs(values - want) <= bound), float(np.max(np.abs(values - want) / bound))


@pytest.mark.parametrize("fp32", [False, True], ids=["bf16_dest", "fp32_dest"])
def test_matmul_broadcasts_transposes_and_adds_a_bias(mesh, rng, fp32):
    a, b, bias = bf16_values(rng, 2, 1, 70, 40), bf16_values(rng, 3, 50, 70), bf16_values(rng, 1, 50)
    out = moreh.matmul(
        put(mesh, a), put(mesh, b), transpose_input=True, transpose_other=True, bias=put(mesh, bias),
        compute_kernel_config=config(fp32),
    )  # fmt: skip
    assert tuple(out.shape) == (2, 3, 40, 50)
    x, w = a.double().transpose(-1, -2), b.double().transpose(-1, -2)
    want = (x @ w + bias.double().reshape(-1)).numpy()
    scale = (x.abs() @ w.abs() + bias.double().abs().reshape(-1)).numpy()
    for values in got(out):
        within(values, want, scale, 0 if fp32 else 3)


def test_matmul_fp32_destination_is_the_more_accurate(mesh, rng):
    a = torch.from_numpy(rng.random((32, 640), np.float32)).bfloat16()
    b = torch.from_numpy(rng.random((640, 32), np.float32)).bfloat16()
    want = (a.double() @ b.double()).numpy()
    errors = [np.abs(got(moreh.matmul(put(mesh, a), put(mesh, b), compute_kernel_config=config(f)))[0] - want).mean()
              for f in (False, True)]  # fmt: skip
    assert errors[1] < errors[0]  # a bfloat16 running sum loses more than one final rounding


def test_matmul_writes_into_the_given_output(mesh, rng):
    a, b = bf16_values(rng, 64, 32), bf16_values(rng, 32, 64)
    target = put(mesh, torch.full((64, 64), float("nan")))
    address = target.buffer_address()
    assert moreh.matmul(put(mesh, a), put(mesh, b), output=target) is target
    assert target.buffer_address() == address
    within(got(target)[0], (a.double() @ b.double()).numpy(), (a.double().abs() @ b.double().abs()).numpy(), 1)


def test_bmm_and_linear(mesh, rng):
    a, b = bf16_values(rng, 3, 40, 33), bf16_values(rng, 3, 33, 20)
    within(got(moreh.bmm(put(mesh, a), put(mesh, b)))[0], (a.double() @ b.double()).numpy(),
           (a.double().abs() @ b.double().abs()).numpy(), 2)  # fmt: skip
    x, w, bias = bf16_values(rng, 2, 5, 64), bf16_values(rng, 30, 64), bf16_values(rng, 1, 1)
    out = moreh.linear(put(mesh, x), put(mesh, w), bias=put(mesh, bias))
    want = (x.double() @ w.double().T + bias.double().reshape(())).numpy()
    scale = (x.double().abs() @ w.double().abs().T + bias.double().abs().reshape(())).numpy()
    within(got(out)[0], want, scale, 2)


def test_matmul_backward_sums_the_broadcast_batches(mesh, rng):
    a, b, og = bf16_values(rng, 3, 1, 40, 36), bf16_values(rng, 2, 36, 24), bf16_values(rng, 3, 2, 40, 24)
    grads = moreh.matmul_backward(put(mesh, og), put(mesh, a), put(mesh, b), compute_kernel_config=config(True))
    ta, tb = a.double().requires_grad_(), b.double().requires_grad_()
    (ta @ tb).backward(og.double())
    scale_a = (og.double().abs() @ b.double().abs().transpose(-1, -2)).sum(1, keepdim=True).numpy()
    scale_b = (a.double().abs().transpose(-1, -2) @ og.double().abs()).sum(0).numpy()
    within(got(grads[0])[0], ta.grad.numpy(), scale_a, 1)
    within(got(grads[1])[0], tb.grad.numpy(), scale_b, 1)
    only = moreh.matmul_backward(put(mesh, og), put(mesh, a), put(mesh, b), are_required_outputs=(False, True))
    assert only[0] is None and tuple(only[1].shape) == (2, 36, 24)


def test_bmm_backward_into_the_given_gradients(mesh, rng):
    a, b, og = bf16_values(rng, 2, 40, 36), bf16_values(rng, 2, 36, 24), bf16_values(rng, 2, 40, 24)
    ga, gb = put(mesh, torch.zeros(2, 40, 36)), put(mesh, torch.zeros(2, 36, 24))
    out = moreh.bmm_backward(put(mesh, og), put(mesh, a), put(mesh, b), input_grad=ga, mat2_grad=gb)
    assert out[0] is ga and out[1] is gb
    within(got(ga)[0], (og.double() @ b.double().transpose(-1, -2)).numpy(),
           (og.double().abs() @ b.double().abs().transpose(-1, -2)).numpy(), 1)  # fmt: skip


def test_linear_backward_gives_every_gradient(mesh, rng):
    x, w, og = bf16_values(rng, 2, 40, 64), bf16_values(rng, 30, 64), bf16_values(rng, 2, 40, 30)
    bias = bf16_values(rng, 1, 30)
    gi, gw, gb = moreh.linear_backward(
        put(mesh, og), put(mesh, x), put(mesh, w), bias=put(mesh, bias), compute_kernel_config=config(True)
    )
    ox, ow = og.double(), w.double()
    within(got(gi)[0], (ox @ ow).numpy(), (ox.abs() @ ow.abs()).numpy(), 1)
    want_w = (ox.reshape(-1, 30).T @ x.double().reshape(-1, 64)).numpy()
    within(got(gw)[0], want_w, (ox.abs().reshape(-1, 30).T @ x.double().abs().reshape(-1, 64)).numpy(), 1)
    within(got(gb)[0], ox.sum((0, 1)).reshape(1, 30).numpy(), ox.abs().sum((0, 1)).reshape(1, 30).numpy(), 1)
    assert tuple(gb.shape) == (1, 30)


def test_dot_and_its_gradients_in_place(mesh, rng):
    a, b = bf16_values(rng, 1, 1, 1, 100), bf16_values(rng, 1, 1, 1, 100)
    out = moreh.dot(put(mesh, a), put(mesh, b))
    assert tuple(out.shape) == (1, 1, 1, 1)
    within(got(out)[0].reshape(()), float(a.double().flatten() @ b.double().flatten()),
           float(a.double().abs().flatten() @ b.double().abs().flatten()), 4)  # fmt: skip
    og = torch.tensor([[[[2.5]]]])
    ga, gb = put(mesh, torch.zeros(1, 1, 1, 100)), put(mesh, torch.zeros(1, 1, 1, 100))
    assert moreh.dot_backward(put(mesh, og), put(mesh, a), put(mesh, b), input_grad=ga, other_grad=gb) == [ga, gb]
    np.testing.assert_array_equal(got(ga)[0], (2.5 * b.double()).bfloat16().double().numpy())  # one rounding
    np.testing.assert_array_equal(got(gb)[0], (2.5 * a.double()).bfloat16().double().numpy())


def test_the_perf_model_times_every_product_and_gradient(mesh, rng):
    a, b = bf16_values(rng, 2, 64, 96), bf16_values(rng, 2, 96, 64)
    with ttnn.perf_capture() as capture:
        moreh.matmul(put(mesh, a), put(mesh, b))
        moreh.matmul_backward(put(mesh, bf16_values(rng, 2, 64, 64)), put(mesh, a), put(mesh, b))
        moreh.linear_backward(
            put(mesh, bf16_values(rng, 2, 64, 96)), put(mesh, a), put(mesh, bf16_values(rng, 96, 96)),
            bias=put(mesh, bf16_values(rng, 1, 96)),
        )  # fmt: skip
        moreh.dot(put(mesh, bf16_values(rng, 1, 1, 1, 64)), put(mesh, bf16_values(rng, 1, 1, 1, 64)))
    assert capture.skipped == [] and len(capture) >= 6 and capture.total_ns() > 0
