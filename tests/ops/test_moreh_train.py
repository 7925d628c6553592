"""moreh's training ops (``ttnn.operations.moreh``: the softmax family, nll_loss, adam / adamw /
sgd) against float64 torch on the bfloat16 inputs as the device holds them.

Bound: meshnn computes each output in float64 and rounds it once (through float32) into
bfloat16, so a correct result lies within ``2**-8 |ref|`` (half a bfloat16 ulp) plus ``2**-23 |ref|``
(the float32 step) of the float64 reference (plus float64's own rounding, 2**-40 of the largest
|ref|, where a result cancels to near zero); a wrong formula (softmin's sign, a missing bias
correction, the divisor left out) misses by far more.  Outputs given are written in place (the
same MeshBuffer comes back); every test runs on a 1x1 mesh and, replicated, on a 2x4 one.
"""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.ops.loading import moreh

BF16, I32, TILE = ttnn.bfloat16, ttnn.int32, ttnn.TILE_LAYOUT


@pytest.fixture(scope="module", params=[(1, 1), (2, 4)], ids=["1x1", "2x4"])
def mesh(request):
    opened = ttnn.open_mesh_device(ttnn.MeshShape(*request.param), system="n150" if request.param == (1, 1) else "t3k")
    yield opened
    opened.close()


def dev(mesh, t: torch.Tensor, dtype=BF16):
    return ttnn.from_torch(t, dtype=dtype, layout=TILE, device=mesh)


def host(mesh, t) -> torch.Tensor:
    """Every device's copy, checked equal, as float64."""
    n = mesh.get_num_devices()
    whole = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).double()
    copies = whole.reshape(n, *t.shape)
    assert all(torch.equal(copies[0], c) for c in copies)
    return copies[0]


def close(got: torch.Tensor, ref: torch.Tensor) -> None:
    ref = ref.double().reshape(got.shape)
    # plus float64's own rounding (a few 2**-53 of the operands' size: meshnn and torch order their
    # float64 operations differently), which matters only where the result cancels to near zero
    bound = (2.0**-8 + 2.0**-23) * ref.abs() + 2.0**-40 * float(ref.abs().max()) + 2.0**-126
    assert torch.all((got - ref).abs() <= bound), float(((got - ref).abs() - bound).max())


def bf(*shape, low=-2.0, high=2.0) -> torch.Tensor:
    return (torch.rand(*shape, dtype=torch.float64) * (high - low) + low).bfloat16()


@pytest.mark.parametrize("kind", ["softmax", "softmin", "logsoftmax"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_softmax_family_against_torch(mesh, kind, dim):
    x = bf(3, 20, 40)
    ref = {"softmax": torch.softmax, "softmin": torch.nn.functional.softmin, "logsoftmax": torch.log_softmax}[kind](
        x.double(), dim
    )
    got = getattr(moreh, kind)(dev(mesh, x), dim)
    close(host(mesh, got), ref)


@pytest.mark.parametrize("kind", ["softmax", "softmin", "logsoftmax"])
def test_softmax_backward_against_autograd(mesh, kind):
    x = bf(2, 33, 20).double().requires_grad_(True)
    forward = {"softmax": torch.softmax, "softmin": torch.nn.functional.softmin, "logsoftmax": torch.log_softmax}[kind]
    y = forward(x, 1)
    y_bf = y.detach().bfloat16()
    dy = bf(2, 33, 20)
    # the reference starts from y as the device holds it (bfloat16), in float64
    yd = y_bf.double()
    if kind == "logsoftmax":
        ref = dy.double() - yd.exp() * dy.double().sum(1, keepdim=True)
    else:
        ref = yd * (dy.double() - (yd * dy.double()).sum(1, keepdim=True)) * (-1 if kind == "softmin" else 1)
    got = getattr(moreh, f"{kind}_backward")(dev(mesh, y_bf), dev(mesh, dy), 1)
    close(host(mesh, got), ref)
    y.backward(dy.double())  # the same formula autograd uses, within the bfloat16 input rounding
    assert torch.allclose(host(mesh, got), x.grad, atol=0.05)


def test_softmax_writes_output_tensor_in_place_and_checks_strategy(mesh):
    x = bf(32, 64)
    out = dev(mesh, torch.zeros(32, 64))
    got = moreh.softmax(dev(mesh, x), 1, output_tensor=out, strategy=moreh.SoftmaxOpParallelizationStrategy.LARGE_W)
    assert got is out
    close(host(mesh, out), torch.softmax(x.double(), 1))
    with pytest.raises(ttnn.MeshnnValueError, match="SMALL_H is not for dim W"):
        moreh.softmax(dev(mesh, x), 1, strategy=moreh.SoftmaxOpParallelizationStrategy.SMALL_H)
    with pytest.raises(ttnn.MeshnnValueError, match="large c is for dim 0"):
        moreh.softmax(dev(mesh, bf(2, 32, 32)), 0, strategy=moreh.SoftmaxOpParallelizationStrategy.SMALL_W)
    assert moreh.SoftmaxOp.SOFTMIN is moreh.MorehSoftmaxOp.SOFTMIN


def _nll_case(shape, weighted):
    x = bf(*shape)
    target = torch.randint(0, shape[1], (shape[0], *shape[2:]))
    target.view(-1)[0] = 1  # at least one ignored element (ignore_index 1 below)
    weight = torch.rand(shape[1]).bfloat16() if weighted else None
    return x, target, weight


@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_against_torch(mesh, reduction, weighted):
    x, target, weight = _nll_case((5, 7, 3), weighted)
    ref = torch.nn.functional.nll_loss(
        x.double(), target, None if weight is None else weight.double(), ignore_index=1, reduction=reduction
    )
    divisor = dev(mesh, torch.zeros(1)) if reduction == "mean" else None
    w = None if weight is None else dev(mesh, weight)
    got = moreh.nll_loss(dev(mesh, x), dev(mesh, target, I32), reduction, weight_tensor=w, divisor_tensor=divisor,
                         ignore_index=1)  # fmt: skip
    close(host(mesh, got), ref)
    assert list(got.shape) == ([1, 1] if reduction != "none" else [5, 3])
    if divisor is not None:
        counted = target != 1
        want = (weight.double()[target] * counted).sum() if weight is not None else counted.sum().double()
        close(host(mesh, divisor), want)


@pytest.mark.parametrize("mean", [False, True])
def test_nll_loss_backward_against_autograd(mesh, mean):
    x, target, weight = _nll_case((4, 6, 2), True)
    xd = x.double().requires_grad_(True)
    dy = torch.tensor([0.75])
    torch.nn.functional.nll_loss(xd, target, weight.double(), ignore_index=1, reduction="sum").backward(dy.double()[0])
    divisor = (weight.double()[target] * (target != 1)).sum().reshape(1).bfloat16() if mean else None
    grad = dev(mesh, torch.full((4, 6, 2), float("nan")))
    d = None if divisor is None else dev(mesh, divisor)
    got = moreh.nll_loss_backward(dev(mesh, target, I32), dev(mesh, dy), mean, weight_tensor=dev(mesh, weight),
                                  input_grad_tensor=grad, divisor_tensor=d, ignore_index=1)  # fmt: skip
    assert got is grad
    # the mean's gradient divides by the divisor as its bfloat16 tensor holds it
    close(host(mesh, got), xd.grad / divisor.double() if mean else xd.grad)


def test_nll_loss_unreduced_backward_against_autograd(mesh):
    x, target, _ = _nll_case((3, 5, 4), False)
    xd = x.double().requires_grad_(True)
    dy = bf(3, 4)
    torch.nn.functional.nll_loss(xd, target, ignore_index=1, reduction="none").backward(dy.double())
    grad = dev(mesh, torch.zeros(3, 5, 4))
    got = moreh.nll_loss_unreduced_backward(dev(mesh, target, I32), dev(mesh, dy), input_grad_tensor=grad,
                                            ignore_index=1)  # fmt: skip
    close(host(mesh, got), xd.grad)
    with pytest.raises(ttnn.MeshnnValueError, match="input_grad_tensor is required"):
        moreh.nll_loss_unreduced_backward(dev(mesh, target, I32), dev(mesh, dy))


def _torch_adam_step(param, grad, state, hyper, decoupled):
    """torch.optim's Adam / AdamW step in float64 from the given state (as the device holds it)."""
    p = torch.nn.Parameter(param.double().clone())
    p.grad = grad.double().clone()
    cls = torch.optim.AdamW if decoupled else torch.optim.Adam
    opt = cls([p], lr=hyper["lr"], betas=(hyper["beta1"], hyper["beta2"]), eps=hyper["eps"],
              weight_decay=hyper["weight_decay"], amsgrad=hyper["amsgrad"])  # fmt: skip
    opt.state[p] = {"step": torch.tensor(float(hyper["step"] - 1)), **{k: v.double().clone() for k, v in state.items()}}
    opt.step()
    out = opt.state[p]
    return [p.detach(), out["exp_avg"], out["exp_avg_sq"], out.get("max_exp_avg_sq")]


@pytest.mark.parametrize("decoupled", [False, True], ids=["adam", "adamw"])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_step_against_torch_optim(mesh, decoupled, amsgrad):
    shape = (2, 40, 33)
    param, grad = bf(*shape), bf(*shape)
    state = {"exp_avg": bf(*shape, low=-0.1, high=0.1), "exp_avg_sq": bf(*shape, low=0.0, high=0.1)}
    if amsgrad:
        state["max_exp_avg_sq"] = bf(*shape, low=0.0, high=0.1)
    hyper = {"lr": 0.1, "beta1": 0.8, "beta2": 0.9, "eps": 1e-6, "weight_decay": 0.3, "step": 3, "amsgrad": amsgrad}
    ref = _torch_adam_step(param, grad, state, hyper, decoupled)
    outs = {n: dev(mesh, torch.zeros(shape)) for n in ("param_out", "exp_avg_out")}
    op = moreh.adamw if decoupled else moreh.adam
    got = op(dev(mesh, param), dev(mesh, grad), dev(mesh, state["exp_avg"]), dev(mesh, state["exp_avg_sq"]),
             **hyper, max_exp_avg_sq_in=dev(mesh, state["max_exp_avg_sq"]) if amsgrad else None, **outs)  # fmt: skip
    assert got[0] is outs["param_out"] and got[1] is outs["exp_avg_out"]
    assert (got[3] is None) is (not amsgrad)
    for result, want in zip(got, ref, strict=True):
        if want is not None:
            close(host(mesh, result), want)


@pytest.mark.parametrize(("momentum", "dampening", "nesterov", "initialized"),
                         [(0.0, 0.0, False, False), (0.9, 0.1, False, True), (0.9, 0.0, True, True),
                          (0.5, 0.0, False, False)])  # fmt: skip
def test_sgd_step_against_torch_optim(mesh, momentum, dampening, nesterov, initialized):
    shape = (3, 32, 40)
    param, grad, buffer = bf(*shape), bf(*shape), bf(*shape)
    p = torch.nn.Parameter(param.double().clone())
    p.grad = grad.double().clone()
    opt = torch.optim.SGD([p], lr=0.5, momentum=momentum, dampening=dampening, weight_decay=0.2, nesterov=nesterov)
    if initialized:
        opt.state[p] = {"momentum_buffer": buffer.double().clone()}
    opt.step()
    param_out = dev(mesh, torch.zeros(shape))
    got_param, got_buffer = moreh.sgd(dev(mesh, param), dev(mesh, grad), dev(mesh, buffer) if initialized else None,
                                      param_out, None, 0.5, momentum, dampening, 0.2, nesterov,
                                      momentum_initialized=initialized)  # fmt: skip
    assert got_param is param_out
    close(host(mesh, got_param), p.detach())
    if momentum == 0.0:
        assert got_buffer is None
    else:
        close(host(mesh, got_buffer), opt.state[p]["momentum_buffer"])
