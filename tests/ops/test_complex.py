"""ttnn's complex numbers: ``ttnn.ComplexTensor`` and ``ttnn.complex_tensor``, the complex ops
(``real``, ``imag``, ``angle``, ``conj``, ``polar``, ``is_real``, ``is_imag``, the ComplexTensor
forms of ``abs`` and ``reciprocal``) and the complex gradients, against torch's complex128.

Parts are stored as float32 (bound: a few u of the magnitudes involved) or bfloat16 (plus one
rounding per part, 2**-8 relative).  The gradients are compared as ttnn's tests read them: each
ComplexTensor gradient's parts side by side against the golden function's.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, F32, TILE, assert_within, float32_error, output_bound, quantized

SHAPE = (1, 2, 32, 64)
DRAM = ttnn.DRAM_MEMORY_CONFIG


@pytest.fixture(scope="module")
def device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    mesh.close()


def draw(rng, dtype=F32, low=-3.0, high=3.0) -> np.ndarray:
    return quantized(rng.uniform(low, high, SHAPE).astype(np.float32), dtype)


def on(device, values: np.ndarray, dtype=F32) -> ttnn.Tensor:
    return ttnn.from_torch(torch.from_numpy(values.astype(np.float32)), dtype=dtype, layout=TILE, device=device)


def complex_on(device, re: np.ndarray, im: np.ndarray, dtype=F32) -> ttnn.ComplexTensor:
    return ttnn.complex_tensor(on(device, re, dtype), on(device, im, dtype))


def parts(value) -> np.ndarray:
    """A ComplexTensor's parts side by side (as ttnn's tests read them), or a real tensor's values."""
    if isinstance(value, ttnn.ComplexTensor):
        return np.concatenate([ttnn.to_numpy(value.real), ttnn.to_numpy(value.imag)], axis=-1).astype(np.float64)
    return ttnn.to_numpy(value).astype(np.float64)


def test_complex_tensor_holds_its_parts(device, rng):
    re, im = draw(rng), draw(rng)
    z = complex_on(device, re, im)
    assert isinstance(z, ttnn.ComplexTensor) and z[0] is z.real and z[1] is z.imag
    np.testing.assert_array_equal(ttnn.to_numpy(z.real), re)
    assert ttnn.real(z, memory_config=DRAM) is z.real and ttnn.imag(z, memory_config=DRAM) is z.imag
    with pytest.raises(ttnn.MeshnnValueError, match="shape"):
        ttnn.complex_tensor(on(device, re), on(device, re[..., :32]))
    with pytest.raises(ttnn.MeshnnTypeError, match="memory_config"):
        ttnn.conj(z)  # ttnn's ComplexTensor overloads require it


@pytest.mark.parametrize("dtype", [F32, BF16], ids=["f32", "bf16"])
@pytest.mark.parametrize("name", ["angle", "abs", "conj", "polar", "reciprocal", "is_real", "is_imag"])
def test_complex_ops_match_torch(device, rng, name, dtype):
    re, im = draw(rng, dtype), draw(rng, dtype)
    re[..., :3] = 0.0
    im[..., 3:6] = 0.0
    out = getattr(ttnn, name)(complex_on(device, re, im, dtype), memory_config=DRAM)
    z = torch.complex(torch.from_numpy(re), torch.from_numpy(im))
    ref = {
        "angle": lambda: torch.angle(z),
        "abs": lambda: torch.abs(z),
        "conj": lambda: torch.conj(z),
        "polar": lambda: torch.polar(z.real, z.imag),
        "reciprocal": lambda: torch.reciprocal(torch.where(z == 0, 1, z)),
        "is_real": lambda: (z.imag == 0).double(),
        "is_imag": lambda: (z.real == 0).double(),
    }[name]()
    ref = torch.cat([ref.real, ref.imag], -1).numpy() if ref.is_complex() else ref.numpy()
    got = parts(out)
    if name == "reciprocal":
        keep = np.concatenate([(re != 0) | (im != 0)] * 2, axis=-1)
        got, ref = np.where(keep, got, 0), np.where(keep, ref, 0)
    assert_within(got, ref, output_bound(ref, float32_error(np.abs(ref) + 1, 16), dtype), name)


GRADS = {  # op: (grad is complex, number of complex inputs, extra arguments)
    "polar_bw": (True, 1, ()),
    "conj_bw": (True, 1, ()),
    "real_bw": (False, 1, ()),
    "imag_bw": (False, 1, ()),
    "angle_bw": (False, 1, ()),
    "abs_bw": (False, 1, ()),
    "reciprocal_bw": (True, 1, ()),
    "add_bw": (True, 2, (0.5,)),
    "sub_bw": (True, 2, (0.5,)),
    "mul_bw": (True, 2, ()),
    "div_bw": (True, 2, ()),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_complex_gradients_match_autograd(device, rng, name):
    complex_grad, n, extra = GRADS[name]
    inputs = [(draw(rng, low=0.5), draw(rng, low=0.5)) for _ in range(n)]
    g = (draw(rng), draw(rng)) if complex_grad else (draw(rng), None)
    grad = complex_on(device, *g) if complex_grad else on(device, g[0])
    outs = getattr(ttnn, name)(grad, *(complex_on(device, *z) for z in inputs), *extra, memory_config=DRAM)
    tg = torch.complex(*(torch.from_numpy(p) for p in g)) if complex_grad else torch.from_numpy(g[0])
    tz = [torch.complex(torch.from_numpy(r), torch.from_numpy(i)).requires_grad_(True) for r, i in inputs]
    kwargs = {"alpha": extra[0]} if extra else {}
    refs = ttnn.get_golden_function(getattr(ttnn, name))(tg, *tz, **kwargs)
    assert len(outs) == len(refs)
    for out, ref in zip(outs, refs, strict=True):
        ref = ref.detach().numpy()
        assert_within(parts(out), ref, float32_error(np.abs(ref) + 8, 64), name)


def test_add_bw_returns_the_incoming_gradient_itself(device, rng):
    g = complex_on(device, draw(rng), draw(rng))
    a, b = complex_on(device, draw(rng), draw(rng)), complex_on(device, draw(rng), draw(rng))
    da, db = ttnn.add_bw(g, a, b, 2.0, memory_config=DRAM)
    assert da is g
    np.testing.assert_array_equal(parts(db), 2 * parts(g))


def test_complex_division_by_zero_is_nan(device, rng):
    g, a = complex_on(device, draw(rng), draw(rng)), complex_on(device, draw(rng), draw(rng))
    zero = complex_on(device, np.zeros(SHAPE), np.zeros(SHAPE))
    for out in ttnn.div_bw(g, a, zero, memory_config=DRAM):
        assert np.isnan(parts(out)).all()
    assert np.isnan(parts(ttnn.reciprocal_bw(g, zero, memory_config=DRAM)[0])).all()
    np.testing.assert_array_equal(parts(ttnn.abs_bw(on(device, draw(rng)), zero, memory_config=DRAM)[0]), 0)
