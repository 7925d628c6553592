"""conv2d with ``groups=0``: ttnn's conv checks only ``groups > 1``, so 0 is an ungrouped conv (ttnn's
basic conv tutorial passes it); a negative count is still refused."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def _conv(device, groups):
    torch.manual_seed(0)
    x = ttnn.from_torch(torch.randn(1, 8, 8, 32).to(torch.bfloat16), dtype=ttnn.bfloat16)
    w = ttnn.from_torch(torch.randn(32, 32, 3, 3).to(torch.bfloat16), dtype=ttnn.bfloat16)
    out = ttnn.conv2d(
        input_tensor=x, weight_tensor=w, device=device, in_channels=32, out_channels=32, batch_size=1,
        input_height=8, input_width=8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=groups,
    )  # fmt: skip
    return ttnn.to_torch(out)


def test_groups_zero_is_the_ungrouped_conv(device):
    assert torch.equal(_conv(device, 0), _conv(device, 1))


def test_a_negative_group_count_is_refused(device):
    with pytest.raises(ttnn.MeshnnValueError, match="groups must be >= 0"):
        _conv(device, -1)
