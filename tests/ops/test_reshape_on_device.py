"""``ttnn.reshape_on_device(t, W, Z, Y, X)``: values equal torch's reshape exactly (a reshape moves
bytes, never rounds them), a reshape that keeps the last padded dim (and the tiles' rows) is a view
at the input's address, one that changes it writes a new buffer in ``memory_config``, a shape whose
padded shape is the input's own returns the input, and ttnn's dispatch refusals hold."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

SHAPES = [(1, 1, 128, 96), (2, 1, 64, 96), (1, 1, 64, 192), (1, 4, 48, 64), (-1, 1, 32, 96), (1, 2, 96, 64)]


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield m
    m.close()


def _first(t):
    return ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(t.device(), dim=0))[:1]


def _address(t):
    return t.storage.mesh_buffer.address()


@pytest.mark.parametrize("layout", [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT], ids=["tile", "rm"])
@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32], ids=["bf16", "f32"])
@pytest.mark.parametrize("shape", SHAPES, ids=[str(s) for s in SHAPES])
def test_values_and_buffers(mesh, layout, dtype, shape):
    x = torch.randn(2, 2, 64, 96)
    t = ttnn.from_torch(x, dtype=dtype, layout=layout, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    host = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    out = ttnn.reshape_on_device(t, *shape)
    per_device = [d if d != -1 else 4 for d in shape]
    expected = host.reshape(2, 2 * 64 * 96).reshape(2 * per_device[0], *per_device[1:])
    assert torch.equal(ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)), expected)
    assert list(out.shape) == per_device
    keeps_rows = per_device[-1] == 96 and (layout == ttnn.ROW_MAJOR_LAYOUT or per_device[-2] % 32 == 0)
    assert (_address(out) == _address(t)) == keeps_rows
    assert out.layout == layout and out.dtype == dtype


def test_memory_config_of_a_moved_reshape(mesh):
    t = ttnn.from_torch(torch.randn(1, 1, 64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    out = ttnn.reshape_on_device(t, 1, 1, 32, 128, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert out.memory_config().buffer_type == ttnn.BufferType.L1
    assert torch.equal(_first(out), _first(t).reshape(1, 1, 32, 128))


def test_the_same_padded_shape_is_the_input(mesh):
    t = ttnn.from_torch(torch.randn(1, 1, 32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    out = ttnn.reshape_on_device(t, 1, 1, 32, 64)
    assert _address(out) == _address(t) and list(out.shape) == [1, 1, 32, 64]


def test_narrow_row_major_bfloat16_goes_through(mesh):
    x = torch.randn(1, 1, 6, 10).bfloat16()
    t = ttnn.from_torch(x, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    out = ttnn.reshape_on_device(t, 1, 1, 4, 15)
    assert torch.equal(_first(out), x.reshape(1, 1, 4, 15))


def test_refusals_leave_the_allocator(mesh):
    t = ttnn.from_torch(torch.randn(1, 1, 32, 64), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh)
    before = ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank
    with pytest.raises(ttnn.MeshnnValueError, match="dtype"):
        ttnn.reshape_on_device(t, 1, 1, 64, 32)
    assert ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank == before
