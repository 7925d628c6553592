"""ttnn.get_fallback_function: an op's torch reference run on ttnn tensors (ttnn's tutorials call
it for reshape, its usage examples for silu)."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.compat import ttnn_modules


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def test_a_reshape_fallback_gives_the_reshaped_values_on_the_inputs_device_dtype_and_layout(device):
    values = torch.randn(1, 32, 64).to(torch.bfloat16)
    tensor = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn.get_fallback_function(ttnn.reshape)(tensor, (1, 32, 2, 32))
    assert isinstance(out, ttnn.Tensor) and out.storage_type() == ttnn.StorageType.DEVICE
    assert (tuple(out.shape), out.dtype, out.layout) == ((1, 32, 2, 32), ttnn.bfloat16, ttnn.TILE_LAYOUT)
    assert torch.equal(ttnn.to_torch(out), values.reshape(1, 32, 2, 32))  # bfloat16 in, bfloat16 out: exact


def test_a_host_tensor_stays_on_the_host_and_an_elementwise_fallback_is_torchs(device):
    values = torch.randn(2, 4).to(torch.bfloat16)
    tensor = ttnn.from_torch(values, dtype=ttnn.bfloat16)
    out = ttnn.get_fallback_function(ttnn.silu)(tensor)
    assert out.storage_type() == ttnn.StorageType.HOST
    expected = torch.nn.functional.silu(values.float()).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out), expected)


def test_an_op_without_a_golden_or_a_non_op_is_refused_when_asked():
    with pytest.raises(ttnn.MeshnnTypeError, match="not a ttnn operation"):
        ttnn.get_fallback_function(42)


def test_ttnn_decorators_names_the_fallback_and_its_default_steps():
    decorators = ttnn_modules.make("decorators")
    assert decorators.get_fallback_function is ttnn.get_fallback_function
    args, kwargs = decorators.default_preprocess_golden_function_inputs((ttnn.from_torch(torch.ones(2)), 3), {})
    assert torch.equal(args[0], torch.ones(2)) and args[1] == 3 and kwargs == {}
