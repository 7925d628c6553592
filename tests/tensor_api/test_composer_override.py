"""A mesh composer whose ``mesh_shape_override`` is smaller than the tensor's shards composes the
shards ttnn picks (tt-metal's ``MeshToTensor`` with its distribution mode): the override's range on
the same coordinates when it fits inside the mesh (DeepSeek-V3's prefill gate reads one row of a
2x2 mesh back with ``MeshShape(1, cols)``), else the mesh's first coordinates in row-major order."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
    yield m
    ttnn.close_mesh_device(m)


def sharded(mesh):
    """Device (r, c) holds the value 10 r + c in every element of its [2, 3] shard."""
    x = torch.tensor([[10.0 * r + c for c in range(4)] for r in range(2)]).reshape(2, 1, 4, 1).expand(2, 2, 4, 3)
    x = x.permute(0, 1, 2, 3).reshape(4, 12).contiguous()  # rows by mesh row, columns by mesh column
    mapper = ttnn.ShardTensor2dMesh(mesh, dims=(0, 1), mesh_shape=mesh.shape)
    return ttnn.from_torch(x, mesh_mapper=mapper, device=mesh)


def composed(mesh, tensor, dims, override):
    config = ttnn.MeshComposerConfig(dims=dims, mesh_shape_override=override)
    return ttnn.to_torch(tensor, mesh_composer=ttnn.create_mesh_composer(mesh, config))


def test_an_override_inside_the_mesh_takes_its_submesh(mesh):
    t = sharded(mesh)
    out = composed(mesh, t, (0, 1), ttnn.MeshShape(1, 4))  # the first row only
    assert out.shape == (2, 12) and set(out[:, 3 * 2].tolist()) == {2.0}
    assert [out[0, 3 * c].item() for c in range(4)] == [0.0, 1.0, 2.0, 3.0]
    out = composed(mesh, t, (0, 1), ttnn.MeshShape(2, 2))  # the first two columns of both rows
    assert [[out[2 * r, 3 * c].item() for c in range(2)] for r in range(2)] == [[0.0, 1.0], [10.0, 11.0]]


def test_an_override_of_another_rank_takes_the_first_devices_row_major(mesh):
    out = composed(mesh, sharded(mesh), (1,), ttnn.MeshShape(6))
    assert out.shape == (2, 18)
    assert [out[0, 3 * i].item() for i in range(6)] == [0.0, 1.0, 2.0, 3.0, 10.0, 11.0]


def test_without_an_override_every_shard_is_composed(mesh):
    out = ttnn.to_torch(sharded(mesh), mesh_composer=ttnn.ConcatMesh2dToTensor(mesh, mesh.shape, dims=(0, 1)))
    assert out.shape == (4, 12)
