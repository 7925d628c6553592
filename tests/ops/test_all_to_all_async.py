"""``ttnn.experimental.all_to_all_async_generic`` against numpy: member i of each group gets chunk i
(along ``out_dim``) of every member's shard, concatenated along ``in_dim`` in member order, on 1x8,
2x4 (both axes), 8x4 and the whole mesh; a tensor on the first row of a 4x8 mesh (DeepSeek's MLA
tests map to a 1x8 row so) exchanges along that row; a persistent DRAM output is written in place;
tt-metal's checks refuse before anything is allocated.  bfloat16 in and out: exact equality."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

OP = ttnn.experimental.all_to_all_async_generic


def per_device(mesh, x: torch.Tensor) -> ttnn.Tensor:
    """``x`` of shape ``(rows, cols, a, b, h, w)`` put shard by shard: device (r, c) holds ``x[r, c]``."""
    rows, cols, a, b = x.shape[:4]
    flat = x.permute(0, 2, 1, 3, 4, 5).reshape(rows * a, cols * b, *x.shape[4:])
    config = ttnn.MeshMapperConfig([ttnn.PlacementShard(0), ttnn.PlacementShard(1)], mesh.shape)
    return ttnn.from_torch(flat, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                           mesh_mapper=ttnn.create_mesh_mapper(mesh, config))  # fmt: skip


def shards(t: ttnn.Tensor) -> list[np.ndarray]:
    return [ttnn.to_torch(d).float().numpy() for d in ttnn.get_device_tensors(t)]


def expected(x: np.ndarray, axis: int | None, in_dim: int, out_dim: int) -> list[np.ndarray]:
    """Each device's output, row-major: numpy's all-to-all over the groups of ``axis``."""
    rows, cols = x.shape[:2]
    out = []
    for r in range(rows):
        for c in range(cols):
            if axis is None:
                group, me = [x[i // cols, i % cols] for i in range(rows * cols)], r * cols + c
            elif axis == 1:
                group, me = [x[r, j] for j in range(cols)], c
            else:
                group, me = [x[i, c] for i in range(rows)], r
            n = len(group)
            out.append(np.concatenate([np.split(g, n, axis=out_dim)[me] for g in group], axis=in_dim))
    return out


@pytest.mark.parametrize(
    "shape, axis, dims",
    [((1, 8), 1, (1, 2)), ((2, 4), 1, (2, 3)), ((2, 4), 0, (3, 2)), ((8, 4), 0, (1, 3)), ((2, 4), None, (0, 2))],
)
def test_each_member_gets_its_chunk_of_every_members_shard(open_mesh, shape, axis, dims):
    mesh = open_mesh(shape)
    x = torch.randn(*shape, 1, 2, 128, 256, generator=torch.Generator().manual_seed(7)).bfloat16()
    out = OP(per_device(mesh, x), dims[0], dims[1], cluster_axis=axis, num_links=1, topology=ttnn.Topology.Linear)
    for got, want in zip(shards(out), expected(x.float().numpy(), axis, *dims), strict=True):
        assert np.array_equal(got, want)


def test_a_tensor_on_the_first_row_of_a_larger_mesh_exchanges_along_that_row(open_mesh):
    """tt-metal's ring along ``cluster_axis`` is the populated coordinates' extent there: DeepSeek's
    MLA test maps ``[1, 32, 128, 576]`` by ``MeshShape(1, 8)`` onto a 4x8 Galaxy."""
    mesh = open_mesh((4, 8))
    x = torch.randn(1, 32, 128, 64, generator=torch.Generator().manual_seed(3)).bfloat16()
    config = ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementShard(2)], ttnn.MeshShape(1, 8))
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.create_mesh_mapper(mesh, config))  # fmt: skip
    out = OP(t, 2, 1, cluster_axis=1)
    assert len(ttnn.get_device_tensors(out)) == 8 and list(out.shape) == [1, 4, 128, 64]
    got = shards(out)
    for i in range(8):  # device i: users 4i..4i+3, every head
        assert np.array_equal(got[i], x[:, 4 * i : 4 * i + 4].float().numpy())


def test_a_persistent_output_is_written_in_place_and_checked(open_mesh):
    mesh = open_mesh((1, 8))
    x = torch.randn(1, 8, 1, 2, 32, 256, generator=torch.Generator().manual_seed(5)).bfloat16()
    t = per_device(mesh, x)
    buffer = ttnn.from_torch(torch.zeros(1, 16, 32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                             device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))  # fmt: skip
    out = OP(t, 1, 3, persistent_output_buffer=buffer, cluster_axis=1)
    assert out.storage.mesh_buffer.address() == buffer.storage.mesh_buffer.address()
    for got, want in zip(shards(out), expected(x.float().numpy(), 1, 1, 3), strict=True):
        assert np.array_equal(got, want)
    in_l1 = ttnn.to_memory_config(buffer, ttnn.L1_MEMORY_CONFIG)
    before = ttnn.get_memory_view(mesh, ttnn.BufferType.L1)
    with pytest.raises(ttnn.MeshnnValueError, match="memory config"):
        OP(t, 1, 3, persistent_output_buffer=in_l1, cluster_axis=1)
    with pytest.raises(ttnn.MeshnnValueError, match="must be in DRAM, but is in"):
        OP(t, 1, 3, persistent_output_buffer=in_l1, cluster_axis=1, memory_config=ttnn.L1_MEMORY_CONFIG)
    with pytest.raises(ttnn.MeshnnValueError, match="only works for more than one device"):
        OP(t, 1, 3, cluster_axis=0)
    with pytest.raises(ttnn.MeshnnValueError, match="3 dimension must be divisible by 32"):
        OP(per_device(mesh, x[..., :128]), 1, 3, cluster_axis=1)
    assert ttnn.get_memory_view(mesh, ttnn.BufferType.L1) == before
