"""``ttnn.experimental.rotate_half`` of a ROW_MAJOR input: ttnn's composite tilizes it first (zeros to
whole tiles), so the result is the exact rotation in TILE layout, of the input's logical shape; a
width that is not whole pairs of tiles is refused before anything is allocated."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.mark.parametrize("shape", [(1, 1, 64, 64), (2, 3, 17, 128)])
def test_row_major_input_is_tilized_then_rotated(open_mesh, shape):
    mesh = open_mesh((1, 2))
    x = torch.randn(shape).bfloat16().float()
    t = ttnn.from_torch(
        x, ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )
    out = ttnn.experimental.rotate_half(t)
    assert out.layout == ttnn.TILE_LAYOUT and tuple(out.shape) == shape
    half = shape[-1] // 2
    want = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    for shard in ttnn.get_device_tensors(out):
        assert torch.equal(ttnn.to_torch(shard), want)


def test_row_major_width_not_pairs_of_tiles_is_refused(open_mesh):
    mesh = open_mesh((1, 1))
    t = ttnn.from_torch(torch.ones(1, 1, 32, 96), ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    before = mesh.num_program_cache_entries()
    with pytest.raises(ttnn.MeshnnValueError, match="multiple of 64"):
        ttnn.experimental.rotate_half(t)
    assert mesh.num_program_cache_entries() == before
