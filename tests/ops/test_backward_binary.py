"""The binary, ternary and shaped backward ops against torch autograd in float64.

As in ``test_backward_unary.py``: inputs in a domain where the derivatives are finite, stored as
bfloat16, the reference the op's golden function on the stored values in float64, the bound the
float32 compute error (``ulps`` u of |reference| + |grad| scaled by the operands' magnitude) plus
one bfloat16 rounding.  Every gradient of every op is checked, each against its own reference.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, F32, TILE, assert_within, float32_error, output_bound, quantized

SHAPE = (1, 2, 32, 48)

# op: (domain of a, domain of b, positional parameters, keyword parameters, ulps)
BINARY = {
    "add_bw": ((-3, 3), (-3, 3), (), {}, 0),
    "sub_bw": ((-3, 3), (-3, 3), (), {}, 0),
    "mul_bw": ((-3, 3), (-3, 3), (), {}, 2),
    "div_bw": ((-3, 3), (0.5, 3), (), {}, 16),
    "remainder_bw": ((-3, 3), (0.7, 3), (), {}, 4),
    "fmod_bw": ((-3, 3), (0.7, 3), (), {}, 4),
    "assign_bw": ((-3, 3), (-3, 3), (), {}, 0),
    "atan2_bw": ((0.5, 3), (0.5, 3), (), {}, 16),
    "addalpha_bw": ((-3, 3), (-3, 3), (0.75,), {}, 2),
    "subalpha_bw": ((-3, 3), (-3, 3), (0.75,), {}, 2),
    "xlogy_bw": ((0.5, 3), (0.5, 3), (), {}, 16),
    "hypot_bw": ((0.5, 3), (0.5, 3), (), {}, 16),
    "ldexp_bw": ((-3, 3), (-3, 3), (), {}, 16),
    "logaddexp_bw": ((-3, 3), (-3, 3), (), {}, 16),
    "logaddexp2_bw": ((-3, 3), (-3, 3), (), {}, 16),
    "squared_difference_bw": ((-3, 3), (-3, 3), (), {}, 8),
    "rsub_bw": ((-3, 3), (-3, 3), (), {}, 0),
    "min_bw": ((-3, 3), (-3, 3), (), {}, 0),
    "max_bw": ((-3, 3), (-3, 3), (), {}, 0),
    "bias_gelu_bw": ((-2, 2), (-1, 1), (), {"approximate": "none"}, 32),
}


@pytest.fixture(scope="module")
def device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    mesh.close()


def draw(rng, low_high, dtype=BF16, shape=SHAPE) -> np.ndarray:
    return quantized(rng.uniform(*low_high, shape).astype(np.float32), dtype)


def on(device, values: np.ndarray, dtype=BF16) -> ttnn.Tensor:
    return ttnn.from_torch(torch.from_numpy(values.astype(np.float32)), dtype=dtype, layout=TILE, device=device)


def leaf(values: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(values).requires_grad_(True)


def check(outs, refs, g: np.ndarray, scale: np.ndarray, ulps: float, what: str, dtype=BF16) -> None:
    assert len(outs) == len(refs), f"{what}: {len(outs)} gradients, torch has {len(refs)}"
    for i, (out, ref) in enumerate(zip(outs, refs, strict=True)):
        ref = ref.detach().numpy()
        got = ttnn.to_numpy(out).astype(np.float64)
        bound = output_bound(ref, float32_error(np.abs(ref) + np.abs(g) * scale, ulps), dtype)
        assert_within(got, ref, bound, f"{what} gradient {i}")


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_backward_matches_autograd(device, rng, name):
    da, db, args, kwargs, ulps = BINARY[name]
    a, b, g = draw(rng, da), draw(rng, db), draw(rng, (-2, 2))
    if name in ("min_bw", "max_bw"):
        b[..., :4] = a[..., :4]  # ties: half the gradient to each operand
    outs = getattr(ttnn, name)(on(device, g), on(device, a), on(device, b), *args, **kwargs)
    refs = ttnn.get_golden_function(getattr(ttnn, name))(torch.from_numpy(g), leaf(a), leaf(b), *args, **kwargs)
    scale = 1 + np.abs(a) + np.abs(b)
    check(outs, refs, g, scale, ulps, name)


def test_every_binary_backward_op_is_tested():
    from meshnn.ops.backward import binary

    assert set(binary.OPS) <= set(BINARY), sorted(set(binary.OPS) - set(BINARY))


@pytest.mark.parametrize(
    ("name", "scalar", "kwargs"),
    [
        ("mul_bw", 2.5, {}),
        ("add_bw", 2.5, {}),
        ("sub_bw", 2.5, {}),
        ("div_bw", 2.5, {}),
        ("div_bw", 2.5, {"round_mode": "floor"}),
        ("remainder_bw", 2.5, {}),
        ("fmod_bw", 2.5, {}),
        ("bias_gelu_bw", 0.25, {"approximate": "tanh"}),
    ],
)
def test_binary_backward_with_a_number(device, rng, name, scalar, kwargs):
    a, g = draw(rng, (-3, 3)), draw(rng, (-2, 2))
    outs = getattr(ttnn, name)(on(device, g), on(device, a), scalar, **kwargs)
    value = kwargs.get("round_mode", kwargs.get("approximate"))
    extra = () if value is None else (value,)
    refs = ttnn.get_golden_function(getattr(ttnn, name))(torch.from_numpy(g), leaf(a), scalar, *extra)
    check(outs, refs, g, 1 + np.abs(a), 32, name)


def test_div_bw_with_a_rounding_mode_has_zero_gradients(device, rng):
    a, b, g = draw(rng, (-3, 3)), draw(rng, (0.5, 3)), draw(rng, (-2, 2))
    outs = ttnn.div_bw(on(device, g), on(device, a), on(device, b), round_mode="trunc")
    for out in outs:
        np.testing.assert_array_equal(ttnn.to_numpy(out), 0)


@pytest.mark.parametrize("name", ["addcmul_bw", "addcdiv_bw"])
def test_addc_backward_matches_autograd(device, rng, name):
    x, t1, t2, g = draw(rng, (-3, 3)), draw(rng, (-3, 3)), draw(rng, (0.5, 3)), draw(rng, (-2, 2))
    outs = getattr(ttnn, name)(on(device, g), on(device, x), on(device, t1), on(device, t2), 0.5)
    refs = ttnn.get_golden_function(getattr(ttnn, name))(torch.from_numpy(g), leaf(x), leaf(t1), leaf(t2), 0.5)
    check(outs, refs, g, 1 + np.abs(t1) + np.abs(t2), 16, name)


def test_where_bw_sends_the_gradient_to_the_chosen_operand(device, rng):
    c = (rng.uniform(0, 1, SHAPE) > 0.5).astype(np.float64)
    x, y, g = draw(rng, (-3, 3)), draw(rng, (-3, 3)), draw(rng, (-2, 2))
    outs = ttnn.where_bw(on(device, g), on(device, c), on(device, x), on(device, y))
    refs = ttnn.get_golden_function(ttnn.where_bw)(torch.from_numpy(g), torch.from_numpy(c).bool(), leaf(x), leaf(y))
    check(outs, refs, g, 1, 0, "where_bw")


def test_lerp_bw_with_a_tensor_and_a_number_weight(device, rng):
    x, e, w, g = draw(rng, (-3, 3)), draw(rng, (-3, 3)), draw(rng, (0, 1)), draw(rng, (-2, 2))
    golden = ttnn.get_golden_function(ttnn.lerp_bw)
    outs = ttnn.lerp_bw(on(device, g), on(device, x), on(device, e), on(device, w))
    check(outs, golden(torch.from_numpy(g), leaf(x), leaf(e), leaf(w)), g, 1 + np.abs(x) + np.abs(e), 8, "lerp")
    outs = ttnn.lerp_bw(on(device, g), on(device, x), on(device, e), 0.25)
    check(outs, golden(torch.from_numpy(g), leaf(x), leaf(e), 0.25), g, 1, 4, "lerp scalar")


@pytest.mark.parametrize("dim", [0, 1, 2, 3, -1])
def test_concat_bw_splits_the_gradient(device, rng, dim):
    a_shape, b_shape = [2, 2, 32, 64], [2, 2, 32, 64]
    b_shape[dim] = {0: 1, 1: 3, 2: 64, 3: 32, -1: 96}[dim]
    a, b = draw(rng, (-3, 3), shape=a_shape), draw(rng, (-3, 3), shape=b_shape)
    g = draw(rng, (-2, 2), shape=np.concatenate([a, b], axis=dim).shape)
    outs = ttnn.concat_bw(on(device, g), on(device, a), on(device, b), dim)
    refs = ttnn.get_golden_function(ttnn.concat_bw)(torch.from_numpy(g), leaf(a), leaf(b), dim)
    for out, ref in zip(outs, refs, strict=True):
        np.testing.assert_array_equal(ttnn.to_numpy(out), ref.numpy())  # a copy: exact


def test_repeat_bw_sums_over_the_repeats(device, rng):
    x = draw(rng, (-3, 3), shape=(1, 2, 32, 32))
    g = draw(rng, (-2, 2), shape=(2, 2, 64, 32), dtype=F32)
    out = ttnn.repeat_bw(on(device, g, F32), on(device, x), [2, 1, 2, 1])
    ref = ttnn.get_golden_function(ttnn.repeat_bw)(torch.from_numpy(g), leaf(x), [2, 1, 2, 1])[0].numpy()
    assert_within(ttnn.to_numpy(out[0]), ref, float32_error(np.abs(g).max() * 4, 4), "repeat_bw")


@pytest.mark.parametrize("dim", [None, 0, 1, 2, 3])
def test_prod_bw_is_the_product_over_the_input(device, rng, dim):
    x = draw(rng, (0.8, 1.25), shape=(2, 2, 32, 32), dtype=F32)
    reduced = [1, 1, 1, 1] if dim is None else [1 if i == dim else n for i, n in enumerate(x.shape)]
    g = draw(rng, (-2, 2), shape=tuple(reduced), dtype=F32)
    out = ttnn.prod_bw(on(device, g, F32), on(device, x, F32), dim=dim)[0]
    inp = leaf(x)
    product = torch.prod(inp) if dim is None else torch.prod(inp, dim=dim, keepdim=True)
    product.backward(gradient=torch.from_numpy(g).reshape(product.shape))
    ref = inp.grad.numpy()
    n = x.size if dim is None else x.shape[dim]
    assert_within(ttnn.to_numpy(out), ref, float32_error(np.abs(ref), 2 * n + 8), f"prod_bw dim {dim}")


def test_embedding_bw_sums_the_rows_of_each_index(device, rng):
    ids = rng.integers(0, 40, (2, 32))
    ids[0, :5] = 7  # a repeated index sums its rows
    weight = draw(rng, (-1, 1), shape=(40, 64))
    g = draw(rng, (-2, 2), shape=(1, 1, 64, 64))
    index = ttnn.from_torch(torch.from_numpy(ids.astype(np.int32)), dtype=ttnn.uint32, device=device)
    out = ttnn.embedding_bw(index, on(device, weight), on(device, g), dtype=BF16)
    table = leaf(weight)
    torch.nn.functional.embedding(torch.from_numpy(ids), table).reshape(g.shape).backward(torch.from_numpy(g))
    ref = table.grad.numpy().reshape(1, 1, 40, 64)
    assert tuple(out.shape) == (1, 1, 40, 64) and out.dtype == BF16
    assert_within(ttnn.to_numpy(out), ref, output_bound(ref, float32_error(np.abs(g).max() * 6, 6), BF16), "emb")
