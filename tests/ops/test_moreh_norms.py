"""moreh's norms and gradient clipping (``ttnn.operations.moreh.layer_norm`` /
``group_norm`` and their backward forms, ``clip_grad_norm``) against float64 torch on the
bfloat16 inputs as the device holds them.

Bound: as in ``test_moreh_train``: one rounding into bfloat16 (through float32),
``(2**-8 + 2**-23) |ref|``, plus float64's own rounding where a result cancels to near zero.  The
backward forms start from the mean and rstd as their bfloat16 tensors hold them, so the
references do too.  clip_grad_norm scales by the total as its bfloat16 tensor holds it.
"""

from __future__ import annotations

import math

import pytest
import torch

import meshnn as ttnn
from meshnn.ops.loading import moreh

from .test_moreh_train import bf, close, dev, host


@pytest.fixture(scope="module", params=[(1, 1), (2, 4)], ids=["1x1", "2x4"])
def mesh(request):
    opened = ttnn.open_mesh_device(ttnn.MeshShape(*request.param), system="n150" if request.param == (1, 1) else "t3k")
    yield opened
    opened.close()


def _layer_stats(x: torch.Tensor, nd: int, eps: float):
    dims = list(range(-nd, 0))
    xd = x.double()
    return xd.mean(dims), (xd.var(dims, unbiased=False) + eps).rsqrt()


@pytest.mark.parametrize(("shape", "nd"), [((4, 40), 1), ((3, 20, 33), 2), ((2, 3, 5, 7), 4)])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_against_torch(mesh, shape, nd, affine):
    x = bf(*shape)
    norm_shape = shape[len(shape) - nd :]
    gamma, beta = (bf(*norm_shape), bf(*norm_shape)) if affine else (None, None)
    ref = torch.nn.functional.layer_norm(x.double(), norm_shape, None if gamma is None else gamma.double(),
                                         None if beta is None else beta.double(), 1e-5)  # fmt: skip
    mean_shape = list(shape[: len(shape) - nd]) or [1, 1]
    mean, rstd = dev(mesh, torch.zeros(mean_shape)), dev(mesh, torch.zeros(mean_shape))
    output = dev(mesh, torch.zeros(shape))
    got = moreh.layer_norm(dev(mesh, x), nd, 1e-5, None if gamma is None else dev(mesh, gamma),
                           None if beta is None else dev(mesh, beta), output=output, mean=mean, rstd=rstd)  # fmt: skip
    assert got[0] is output and got[1] is mean and got[2] is rstd
    want_mean, want_rstd = _layer_stats(x, nd, 1e-5)
    close(host(mesh, output), ref)
    close(host(mesh, mean), want_mean)
    close(host(mesh, rstd), want_rstd)
    assert moreh.layer_norm(dev(mesh, x), nd)[1:] == [None, None]  # mean / rstd only where given


@pytest.mark.parametrize(("shape", "nd"), [((20, 30), 2), ((2, 20, 30), 1), ((2, 3, 33, 40), 2)])
def test_layer_norm_backward_against_autograd(mesh, shape, nd):
    x, dy = bf(*shape), bf(*shape)
    norm_shape = shape[len(shape) - nd :]
    gamma = bf(*norm_shape)
    mean, rstd = (s.bfloat16() for s in _layer_stats(x, nd, 1e-5))
    # the reference: autograd's formula from the stats as the device's tensors hold them
    xhat = (x.double() - mean.double().reshape(*mean.shape, *[1] * nd)) * rstd.double().reshape(*rstd.shape, *[1] * nd)
    dims = list(range(-nd, 0))
    g = dy.double() * gamma.double()
    r = rstd.double().reshape(*rstd.shape, *[1] * nd)
    ref_dx = r * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True))
    lead = list(range(len(shape) - nd))
    ref_dg, ref_db = ((t.sum(lead) if lead else t) for t in (dy.double() * xhat, dy.double()))
    grads = [dev(mesh, torch.zeros(shape)), dev(mesh, torch.zeros(norm_shape)), dev(mesh, torch.zeros(norm_shape))]
    got = moreh.layer_norm_backward(dev(mesh, dy), dev(mesh, x), dev(mesh, mean), dev(mesh, rstd), nd,
                                    gamma=dev(mesh, gamma), input_grad=grads[0], gamma_grad=grads[1],
                                    beta_grad=grads[2])  # fmt: skip
    assert all(a is b for a, b in zip(got, grads, strict=True))
    for result, ref in zip(got, (ref_dx, ref_dg, ref_db), strict=True):
        close(host(mesh, result), ref)
    # and autograd agrees with that formula, within the bfloat16 rounding of the stats
    xa = x.double().requires_grad_(True)
    torch.nn.functional.layer_norm(xa, norm_shape, gamma.double(), None, 1e-5).backward(dy.double())
    assert torch.allclose(host(mesh, got[0]), xa.grad, atol=0.1, rtol=0.05)


@pytest.mark.parametrize(("channels", "groups"), [(4, 1), (4, 2), (6, 3)])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm_against_torch(mesh, channels, groups, affine):
    x = bf(2, channels, 5, 7)
    gamma, beta = (bf(1, 1, 1, channels), bf(1, 1, 1, channels)) if affine else (None, None)
    ref = torch.nn.functional.group_norm(x.double(), groups, None if gamma is None else gamma.double().reshape(-1),
                                         None if beta is None else beta.double().reshape(-1), 1e-5)  # fmt: skip
    out, mean, rstd = moreh.group_norm(dev(mesh, x), groups, 1e-5, None if gamma is None else dev(mesh, gamma),
                                       None if beta is None else dev(mesh, beta),
                                       are_required_outputs=(True, True, True))  # fmt: skip
    rows = x.double().reshape(2, groups, -1)
    close(host(mesh, out), ref)
    assert list(mean.shape) == [1, 1, 2, groups]
    close(host(mesh, mean), rows.mean(-1))
    close(host(mesh, rstd), (rows.var(-1, unbiased=False) + 1e-5).rsqrt())
    assert moreh.group_norm(dev(mesh, x), groups)[1:] == [None, None]


@pytest.mark.parametrize("wanted", [(True, False, False), (True, True, True), (False, True, False)])
def test_group_norm_backward_against_formula(mesh, wanted):
    n, c, groups = 2, 4, 2
    x, dy, gamma = bf(n, c, 3, 5), bf(n, c, 3, 5), bf(1, 1, 1, c)
    rows = x.double().reshape(n, groups, -1)
    mean = rows.mean(-1).reshape(1, 1, n, groups).bfloat16()
    rstd = (rows.var(-1, unbiased=False) + 1e-5).rsqrt().reshape(1, 1, n, groups).bfloat16()
    m, r = mean.double().reshape(n, groups, 1), rstd.double().reshape(n, groups, 1)
    g = (dy.double() * gamma.double().reshape(1, c, 1, 1)).reshape(n, groups, -1)
    xhat = (rows - m) * r
    ref_dx = (r * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))).reshape(x.shape)
    ref_dg = (dy.double() * xhat.reshape(x.shape)).sum((0, 2, 3))
    ref_db = dy.double().sum((0, 2, 3))
    got = moreh.group_norm_backward(dev(mesh, dy), dev(mesh, x), dev(mesh, mean), dev(mesh, rstd), groups,
                                    are_required_outputs=wanted, gamma=dev(mesh, gamma))  # fmt: skip
    for want, result, ref in zip(wanted, got, (ref_dx, ref_dg, ref_db), strict=True):
        assert (result is None) is (not want)
        if want:
            close(host(mesh, result), ref)
    if wanted[0]:  # autograd from the exact stats agrees within their bfloat16 rounding
        xa = x.double().requires_grad_(True)
        torch.nn.functional.group_norm(xa, groups, gamma.double().reshape(-1), None, 1e-5).backward(dy.double())
        assert torch.allclose(host(mesh, got[0]), xa.grad, atol=0.1, rtol=0.05)


@pytest.mark.parametrize(("max_norm", "norm_type"), [(1.0, 2.0), (100.0, 2.0), (0.5, 1.5), (1.0, math.inf)])
def test_clip_grad_norm_against_torch(mesh, max_norm, norm_type):
    grads = [bf(2, 33, 20, low=0.0, high=2.5), bf(40, 7, low=-1.0, high=1.0)]
    device = [dev(mesh, g) for g in grads]
    total = moreh.clip_grad_norm(device, max_norm, norm_type)
    params = [torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64)) for g in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = g.double().clone()
    want = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
    close(host(mesh, total), want)
    stored = host(mesh, total).reshape(())  # the device scales by the total its tensor holds
    coef = torch.clamp(max_norm / (stored + 1e-6), max=1.0)
    for g, t in zip(grads, device, strict=True):
        close(host(mesh, t), g.double() * coef)


def test_clip_grad_norm_error_if_nonfinite_changes_nothing(mesh):
    grads = [bf(2, 32, 32)]
    grads[0][0, 0, 0] = float("inf")
    device = dev(mesh, grads[0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        moreh.clip_grad_norm([device], 1.0, 2.0, True)
    assert torch.equal(host(mesh, device), grads[0].double())  # nothing scaled
    with pytest.raises(RuntimeError, match="order nan"):
        moreh.clip_grad_norm([device], 1.0, float("nan"), True)
