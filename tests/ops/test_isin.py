"""``ttnn.experimental.isin``: torch.isin's answer as uint32 0xFFFFFFFF / 0 (inverted with
``invert``), in the elements' shape, layout and memory config, per device; a preallocated ``out``
written in place; inputs of two dtypes refused."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    yield m
    m.close()


@pytest.mark.parametrize("layout", [ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT])
@pytest.mark.parametrize("invert", [False, True])
def test_matches_torch_isin_bit_for_bit(mesh, layout, invert):
    elements, tests = torch.randint(-50, 50, (2, 3, 40)), torch.randint(-50, 50, (2, 17))
    put = ttnn.ShardTensorToMesh(mesh, dim=0)
    x = ttnn.from_torch(elements, dtype=ttnn.int32, layout=layout, device=mesh, mesh_mapper=put)
    t = ttnn.from_torch(tests, dtype=ttnn.int32, layout=layout, device=mesh, mesh_mapper=put)
    got = ttnn.experimental.isin(x, t, invert=invert)
    assert got.dtype == ttnn.uint32 and got.layout == layout and list(got.shape) == [1, 3, 40]
    values = ttnn.to_torch(got, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).to(torch.int64) & 0xFFFFFFFF
    want = torch.stack([torch.isin(elements[i], tests[i], invert=invert) for i in range(2)])
    assert torch.equal(values, torch.where(want, 0xFFFFFFFF, 0))


def test_out_is_written_in_place(mesh):
    x = ttnn.from_torch(torch.arange(64, dtype=torch.int32), device=mesh, dtype=ttnn.int32)
    t = ttnn.from_torch(torch.tensor([3, 5], dtype=torch.int32), device=mesh, dtype=ttnn.int32)
    first = ttnn.experimental.isin(x, t)
    again = ttnn.experimental.isin(x, t, invert=True, out=first)
    assert again.buffer_address() == first.buffer_address()
    assert int(ttnn.to_torch(first, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[3]) == 0


def test_two_dtypes_are_refused(mesh):
    x = ttnn.from_torch(torch.arange(8, dtype=torch.int32), device=mesh, dtype=ttnn.int32)
    t = ttnn.from_torch(torch.arange(8.0), device=mesh, dtype=ttnn.float32)
    with pytest.raises(ttnn.MeshnnTypeError, match="test_elements"):
        ttnn.experimental.isin(x, t)
