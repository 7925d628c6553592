"""tt-metal of 2026's slice arguments of conv1d (``slice_config``) and conv_transpose2d
(``dram_slice_config``): a DRAM slice config puts the output in DRAM (the values are the unsliced conv's),
None keeps it in L1 for an L1 input; conv1d refuses DRAM height slices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.errors import MeshnnValueError

BF16 = ttnn.bfloat16
RNG = np.random.default_rng(7)
WIDTH = ttnn.Conv2dSliceConfig(slice_type=ttnn.Conv2dDRAMSliceWidth, num_slices=2)


def _ints(shape) -> np.ndarray:
    return RNG.integers(-3, 4, shape).astype(np.float32)


@pytest.fixture(scope="module")
def device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    yield mesh
    mesh.close()


def _conv1d(device, x, weight, **extra):
    return ttnn.conv1d(
        input_tensor=ttnn.from_torch(torch.from_numpy(x), BF16, device=device, memory_config=ttnn.L1_MEMORY_CONFIG),
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight), BF16),
        device=device, in_channels=4, out_channels=8, batch_size=1, input_length=16, kernel_size=3, padding=1,
        **extra,
    )  # fmt: skip


def test_conv1d_runs_in_dram_width_slices(device):
    x, weight = _ints((1, 16, 4)), _ints((8, 4, 3))
    sliced, plain = _conv1d(device, x, weight, slice_config=WIDTH), _conv1d(device, x, weight)
    assert sliced.memory_config().buffer_type == ttnn.BufferType.DRAM
    assert plain.memory_config().buffer_type == ttnn.BufferType.L1
    np.testing.assert_array_equal(ttnn.to_numpy(sliced), ttnn.to_numpy(plain))


def test_conv1d_refuses_dram_height_slices(device):
    height = ttnn.Conv2dSliceConfig(slice_type=ttnn.Conv2dDRAMSliceHeight, num_slices=2)
    with pytest.raises(MeshnnValueError, match="DRAM_HEIGHT"):
        _conv1d(device, _ints((1, 16, 4)), _ints((8, 4, 3)), slice_config=height)


def test_conv_transpose2d_takes_a_dram_slice_config(device):
    x, weight = _ints((1, 4, 5, 4)), _ints((4, 8, 3, 3))
    args = dict(
        input_tensor=ttnn.from_torch(torch.from_numpy(x), BF16, device=device, memory_config=ttnn.L1_MEMORY_CONFIG),
        weight_tensor=ttnn.from_torch(torch.from_numpy(weight), BF16),
        device=device, in_channels=4, out_channels=8, batch_size=1, input_height=4, input_width=5,
        kernel_size=(3, 3), stride=(2, 2), padding=(1, 1),
    )  # fmt: skip
    sliced, plain = ttnn.conv_transpose2d(**args, dram_slice_config=WIDTH), ttnn.conv_transpose2d(**args)
    assert sliced.memory_config().buffer_type == ttnn.BufferType.DRAM
    np.testing.assert_array_equal(ttnn.to_numpy(sliced), ttnn.to_numpy(plain))
