"""``ttnn.experimental.all_to_all_async`` (persistent buffers, one global semaphore) against torch:
an input sharded along ``in_dim`` comes back sharded along ``out_dim`` (bfloat16 moved, never
rounded: exact equality), written into the caller's output buffer at its address on the native
path, a new tensor on ttnn's composite path; the native device operation's checks refuse before
any byte of the buffers changes."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

OP = ttnn.experimental.all_to_all_async


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), system="t3k")
    yield m
    m.close()


def _sem(mesh):
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))})
    return ttnn.create_global_semaphore(mesh, cores, 0)


def _buffers(mesh, shape, layout=ttnn.TILE_LAYOUT, mc=ttnn.DRAM_MEMORY_CONFIG, dtype=ttnn.bfloat16):
    make = lambda: ttnn.from_torch(  # noqa: E731
        torch.zeros(shape),
        dtype=dtype,
        layout=layout,
        device=mesh,
        memory_config=mc,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )
    return make(), make()


@pytest.mark.parametrize("in_dim,out_dim", [(2, 3), (3, 2), (-2, -1)])
def test_native_writes_the_output_buffer(mesh, in_dim, out_dim):
    n = 8
    full = torch.randn(1, 2, 8 * 32, 8 * 64).bfloat16()
    i, o = in_dim % 4, out_dim % 4
    x = ttnn.from_torch(
        full, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=i)
    )
    out_shape = list(full.shape)
    out_shape[o] //= n
    inter, out = _buffers(mesh, out_shape)
    before = out.storage.mesh_buffer.address()
    result = OP(
        x,
        persistent_intermediate_buffer=inter,
        persistent_output_buffer=out,
        in_dim=in_dim,
        out_dim=out_dim,
        multi_device_global_semaphore=_sem(mesh),
        num_links=1,
    )
    assert result.storage.mesh_buffer.address() == before
    back = ttnn.to_torch(result, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=o))
    assert torch.equal(back, full)


@pytest.mark.parametrize(
    "rows,layout,dtype",
    [
        (36, ttnn.TILE_LAYOUT, ttnn.bfloat16),
        (32, ttnn.ROW_MAJOR_LAYOUT, ttnn.bfloat16),
        (36, ttnn.TILE_LAYOUT, ttnn.float32),
    ],
    ids=["unaligned-tile", "row-major", "unaligned-f32"],
)
def test_composite_path_returns_a_new_tensor(mesh, rows, layout, dtype):
    full = torch.randn(1, 1, 8 * rows, 8 * 48).to(torch.bfloat16 if dtype == ttnn.bfloat16 else torch.float32)
    x = ttnn.from_torch(full, dtype=dtype, layout=layout, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=2))
    inter, out = _buffers(mesh, [1, 1, 8 * rows, 48], layout=layout, dtype=dtype)
    old = out.storage.mesh_buffer
    result = OP(x, inter, out, 2, 3, _sem(mesh))
    assert result.storage.mesh_buffer is not old  # a new tensor ...
    assert out.storage.mesh_buffer is result.storage.mesh_buffer  # ... that the caller's handle now refers to
    assert result.layout == layout and list(result.shape) == [1, 1, 8 * rows, 48]
    assert torch.equal(ttnn.to_torch(result, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=3)), full)


def test_native_checks_refuse_first(mesh):
    full = torch.randn(1, 1, 8 * 32, 8 * 64).bfloat16()
    x = ttnn.from_torch(full, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=2))
    inter, out = _buffers(mesh, [1, 1, 256, 64])
    _, wrong = _buffers(mesh, [1, 1, 256, 64], mc=ttnn.L1_MEMORY_CONFIG)
    _, rm = _buffers(mesh, [1, 1, 256, 64], layout=ttnn.ROW_MAJOR_LAYOUT)
    keep = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    with pytest.raises(ttnn.MeshnnValueError, match="num_links must be 1"):
        OP(x, inter, out, 2, 3, _sem(mesh), num_links=2)
    with pytest.raises(ttnn.MeshnnValueError, match="persistent_output_buffer must be in DRAM"):
        OP(x, inter, wrong, 2, 3, _sem(mesh))
    with pytest.raises(ttnn.MeshnnValueError, match="persistent_output_buffer: unsupported layout"):
        OP(x, inter, rm, 2, 3, _sem(mesh))
    with pytest.raises(ttnn.MeshnnValueError, match="expected shape"):
        OP(x, inter, _buffers(mesh, [1, 1, 256, 32])[1], 2, 3, _sem(mesh))
    with pytest.raises(ttnn.MeshnnTypeError, match="multi_device_global_semaphore"):
        OP(x, inter, out, 2, 3, None)
    with pytest.raises(ttnn.MeshnnValueError, match="in_dim"):
        OP(x, inter, out, 4, 3, _sem(mesh))
    assert torch.equal(ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)), keep)
