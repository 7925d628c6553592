"""``ttnn.bcast``: one row, column or element of ``input_b`` combined with all of ``input_a``,
bit-exact with torch's bfloat16 arithmetic (one rounding of the float32 result), and ttnn's checks."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

H, W, HW = ttnn.BcastOpDim.H, ttnn.BcastOpDim.W, ttnn.BcastOpDim.HW


def _put(mesh, t):
    return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)


@pytest.fixture
def mesh():
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150") as m:
        yield m


@pytest.mark.parametrize("dim", [H, W, HW])
@pytest.mark.parametrize("math_op", list(ttnn.BcastOpMath))
def test_bcast_is_torchs_bfloat16_arithmetic(mesh, dim, math_op):
    gen = torch.Generator().manual_seed(3)
    a = torch.randn((2, 3, 64, 96), generator=gen).bfloat16()
    b_shape = [2, 3, 1 if dim in (H, HW) else 64, 1 if dim in (W, HW) else 96]
    b = torch.randn(b_shape, generator=gen).bfloat16()
    out = ttnn.to_torch(ttnn.bcast(_put(mesh, a), _put(mesh, b), math_op, dim))
    want = ttnn.get_golden_function(ttnn.bcast)(a, b, math_op, dim)  # torch bfloat16: one rounding
    assert torch.equal(out, want)


def test_bcast_reads_only_the_first_row_of_a_taller_input_b(mesh):
    a = torch.zeros((1, 1, 32, 64)).bfloat16()
    b = torch.arange(5 * 64, dtype=torch.float32).reshape(1, 1, 5, 64).bfloat16()  # padded height 32
    out = ttnn.to_torch(ttnn.bcast(_put(mesh, a), _put(mesh, b), ttnn.BcastOpMath.ADD, H))
    assert torch.equal(out, b[:, :, :1].expand(1, 1, 32, 64))  # row 0 everywhere, not rows 1-4


@pytest.mark.parametrize(
    ("b_shape", "dim", "message"),
    [
        ((1, 1, 64, 64), H, "padded height and width must be"),
        ((1, 1, 32, 32), W, "padded height and width must be"),
        ((2, 1, 1, 64), H, "Broadcast with batch"),
    ],
)
def test_bcast_refuses_shapes_ttnn_refuses(mesh, b_shape, dim, message):
    a = _put(mesh, torch.ones((1, 1, 64, 64)).bfloat16())
    b = _put(mesh, torch.ones(b_shape).bfloat16())
    before = mesh.num_program_cache_entries()
    with pytest.raises(ttnn.MeshnnValueError, match=message):
        ttnn.bcast(a, b, ttnn.BcastOpMath.ADD, dim)
    assert mesh.num_program_cache_entries() == before
