"""``Tensor.unpad(start, end)``: a ROW_MAJOR host tensor's values from ``start`` up to ``end``
(exclusive) in every dim, as ttnn's host unpad computes them (shape ``end - start``), bit for bit;
device, TILE and out-of-range calls refused; ``pad`` then ``unpad`` gives the tensor back."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32, ttnn.int32])
def test_unpad_is_the_exclusive_window(dtype):
    x = torch.arange(3 * 3 * 64 * 64).reshape(3, 3, 64, 64)
    x = x.float() / 7 if dtype != ttnn.int32 else x.int()
    t = ttnn.Tensor(x.reshape(-1).tolist(), [3, 3, 64, 64], dtype, ttnn.ROW_MAJOR_LAYOUT)
    out = t.unpad((0, 1, 32, 2), (1, 3, 62, 62))
    assert tuple(out.shape) == (1, 2, 30, 60) and tuple(out.padded_shape) == (1, 2, 30, 60)
    assert torch.equal(out.to_torch(), t.to_torch()[0:1, 1:3, 32:62, 2:62])
    assert tuple(t.unpad((0, 0, 5, 5), (3, 3, 5, 5)).shape) == (3, 3, 0, 0)  # an empty window


def test_pad_then_unpad_gives_the_tensor_back():
    x = torch.randn(1, 1, 5, 7).bfloat16()
    t = ttnn.from_torch(x)
    padded = t.pad((1, 1, 32, 32), (0, 0, 3, 4), 0.0)  # stored 32 x 32, the values at (3, 4)
    assert torch.equal(padded.unpad((0, 0, 3, 4), (1, 1, 8, 11)).to_torch(), x)


def test_bad_unpads_are_refused(open_mesh):
    t = ttnn.from_torch(torch.ones(2, 4, 8))
    with pytest.raises(ttnn.MeshnnValueError, match="must fit"):
        t.unpad((0, 0, 0), (2, 5, 8))  # past the end
    with pytest.raises(ttnn.MeshnnValueError, match="must fit"):
        t.unpad((0, 3, 0), (2, 2, 8))  # start after end
    with pytest.raises(ttnn.MeshnnValueError, match="rank"):
        t.unpad((0, 0), (2, 4))
    with pytest.raises(ttnn.MeshnnValueError, match="ROW_MAJOR host"):
        ttnn.from_torch(torch.ones(32, 32), layout=ttnn.TILE_LAYOUT).unpad((0, 0), (8, 8))
    on_device = ttnn.from_torch(torch.ones(2, 4, 8), device=open_mesh((1, 1)))
    with pytest.raises(ttnn.MeshnnValueError, match="ROW_MAJOR host"):
        on_device.unpad((0, 0, 0), (1, 1, 1))
