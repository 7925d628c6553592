"""``ttnn.OverlappedTensor``: one part of a fused device buffer, as tt-metal 2026 binds it: plain
data whose fields read back as given ((rows, columns) pairs as tuples), can be set (each set checked,
a refused one leaving the field as it was), and whose ``get_tile()`` is the part's tile."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.fixture
def fused():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield ttnn.from_torch(torch.zeros(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    ttnn.close_mesh_device(mesh)


CORES = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))])


def test_the_view_holds_its_fields_and_the_fused_tensor(fused):
    view = ttnn.OverlappedTensor(fused, [64, 32], (32, 32), CORES, ttnn.bfloat8_b, [16, 32], byte_offset=1088)
    assert view.fused_tensor is fused
    assert (view.tensor_shape, view.shard_shape, view.tile_shape) == ((64, 32), (32, 32), (16, 32))
    assert (view.dtype, view.byte_offset, view.total_size) == (ttnn.bfloat8_b, 1088, 0)
    assert view.core_range_set == CORES
    assert view.get_tile().tile_shape == (16, 32)
    view.byte_offset, view.tensor_shape = 2176, [32, 32]
    assert (view.byte_offset, view.tensor_shape) == (2176, (32, 32))


@pytest.mark.parametrize(
    "field, value",
    [
        ("dtype", "bfloat16"),
        ("tensor_shape", [32]),
        ("byte_offset", -1),
        ("core_range_set", [(0, 0)]),
        ("fused_tensor", None),
    ],
)
def test_a_bad_field_is_refused_and_left_as_it_was(fused, field, value):
    view = ttnn.OverlappedTensor(fused, [64, 32], [32, 32], CORES, ttnn.bfloat16, [32, 32])
    before = getattr(view, field)
    with pytest.raises(ttnn.MeshnnTypeError, match=field):
        setattr(view, field, value)
    assert getattr(view, field) is before
    with pytest.raises(AttributeError):
        view.shape = (1, 2)
