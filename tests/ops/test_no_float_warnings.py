"""A device computes inf and NaN without a word: meshnn's kernels must not let numpy's
RuntimeWarnings (overflow, invalid value, divide by zero) reach the user for inf / NaN input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import meshnn as ttnn

VALUES = np.array([[np.inf, -np.inf, np.nan, 0.0, -1.0, 1e30, -1e30, 100.0] * 4] * 32, np.float32)
OPS = {
    "matmul": lambda x: ttnn.matmul(x, x),
    "linear": lambda x: ttnn.linear(x, x, bias=x),
    "sum": lambda x: ttnn.sum(x, dim=-1),
    "mean": lambda x: ttnn.mean(x, dim=-1),
    "rms_norm": lambda x: ttnn.rms_norm(x),
    "layer_norm": lambda x: ttnn.layer_norm(x),
    "softmax": lambda x: ttnn.softmax(x, dim=-1),
    "exp": ttnn.exp,
    "log": ttnn.log,
    "reciprocal": ttnn.reciprocal,
    "rsqrt": ttnn.rsqrt,
    "div": lambda x: ttnn.div(x, x),
    "subtract": lambda x: ttnn.subtract(x, x),  # inf - inf (the kernel quiets its own numpy work)
    "multiply": lambda x: ttnn.multiply(x, x),  # 1e30 * 1e30
    "add, broadcast": lambda x: ttnn.add(x, ttnn.sum(x, dim=-1, keepdim=True)),
    "pow": lambda x: ttnn.pow(x, ttnn.neg(x)),  # a tensor exponent may be negative (a number one may not)
    "all_reduce": ttnn.all_reduce,
    "typecast to int32": lambda x: ttnn.typecast(x, ttnn.int32),
}


@pytest.fixture(scope="module")
def mesh():
    opened = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield opened
    opened.close()


@pytest.mark.parametrize("dtype", [ttnn.float32, ttnn.bfloat16], ids=str)
def test_inf_and_nan_input_raise_no_numpy_warning(mesh, dtype):
    x = ttnn.from_torch(VALUES, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
    leaked = {}
    for name, op in OPS.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = op(x)
            ttnn.to_numpy(ttnn.get_device_tensors(result)[0])
        found = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        if found:
            leaked[name] = found
    assert not leaked, leaked
    assert np.isnan(ttnn.to_numpy(ttnn.get_device_tensors(ttnn.sum(x, dim=-1))[0])).all()  # NaN in, NaN out
