"""Fabric collectives on a tensor that populates some of the mesh's devices: ttnn counts the ring
as the coordinates the tensor's storage holds (``get_topological_dimension`` without a cluster axis;
with one, their extent along it), runs on those devices only, and the output populates the same
ones.  A 1x8 T3000 mesh holding a tensor mapped over a 1x4 sub-shape gathers over those 4 devices;
the values are the float64 concatenation of the host shards, exact in bfloat16 and float32.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import mesh_fixtures

meshes, mesh = mesh_fixtures([(1, 8)])


def sems(mesh, count):
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))])
    return [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(count)]


def put_on_four(mesh, values, dim, dtype, layout):
    mapper = ttnn.create_mesh_mapper(
        mesh, ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementShard(dim)], ttnn.MeshShape(1, 4))
    )
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)


@pytest.mark.parametrize(
    "dim, dtype, layout",
    [
        (3, ttnn.bfloat16, ttnn.TILE_LAYOUT),
        (1, ttnn.bfloat16, ttnn.TILE_LAYOUT),
        (3, ttnn.float32, ttnn.ROW_MAJOR_LAYOUT),
    ],
)
def test_all_gather_async_gathers_over_the_populated_devices(mesh, dim, dtype, layout):
    rng = np.random.default_rng(35)
    full = rng.standard_normal((1, 8, 32, 128)).astype(np.float32)
    if dtype == ttnn.bfloat16:  # values bfloat16 holds exactly: the gather moves them unchanged
        full = torch.from_numpy(full).bfloat16().float().numpy()
    x = put_on_four(mesh, full, dim, dtype, layout)
    assert len(ttnn.get_device_tensors(x)) == 4
    out = ttnn.experimental.all_gather_async(
        x, dim, multi_device_global_semaphore=sems(mesh, 2), num_links=1, topology=ttnn.Topology.Linear
    )
    shards = ttnn.get_device_tensors(out)
    assert len(shards) == 4
    assert [tuple(s.shape) for s in shards] == [full.shape] * 4
    for shard in shards:
        got = ttnn.to_torch(shard.cpu().to(ttnn.ROW_MAJOR_LAYOUT)).float().numpy().astype(np.float64)
        np.testing.assert_array_equal(got, full.astype(np.float64))


def test_a_partial_tensor_with_a_cluster_axis_runs_over_its_box_from_the_origin(mesh):
    """With a cluster_axis ttnn's ring is the populated coordinates' extent along it (the largest
    index plus one): the first four devices of the row gather as a ring of four; four devices that
    do not start at the row's origin would make a ring with holes, refused."""
    full = torch.randn(1, 1, 32, 128, generator=torch.Generator().manual_seed(2)).bfloat16().float().numpy()
    x = put_on_four(mesh, full, 3, ttnn.bfloat16, ttnn.TILE_LAYOUT)
    out = ttnn.experimental.all_gather_async(
        x, persistent_output_buffer=None, dim=3, multi_device_global_semaphore=sems(mesh, 2), cluster_axis=1
    )
    shards = ttnn.get_device_tensors(out)
    assert len(shards) == 4 and all(np.array_equal(ttnn.to_torch(s).float().numpy(), full) for s in shards)
    whole = ttnn.from_torch(torch.zeros(8, 1, 32, 128), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
    last_four = ttnn.combine_device_tensors(ttnn.get_device_tensors(whole)[4:])
    with pytest.raises(ttnn.MeshnnValueError, match=r"populates 4 of 8 devices; a collective with a cluster_axis"):
        ttnn.experimental.all_gather_async(
            last_four, persistent_output_buffer=None, dim=3, multi_device_global_semaphore=sems(mesh, 2), cluster_axis=1
        )
    with pytest.raises(ttnn.MeshnnValueError, match=r"populates 4 of 8 devices"):
        ttnn.all_gather(x, 3)  # the synchronous op keeps its rule: a shard on every device


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32])
def test_all_reduce_async_sums_over_the_populated_devices(mesh, dtype):
    """``experimental.all_reduce_async``'s whole-mesh form on a tensor mapped over 4 of a 1x8 mesh's
    devices (tt-metal's nightly T3000 test does this): ttnn's composite takes its devices from the
    tensor's storage (``get_active_physical_devices``), so the 4 shards are summed and each of the 4
    devices gets the sum; ``num_devices`` must name those 4.  Small integers: every sum exact."""
    rng = np.random.default_rng(36)
    full = rng.integers(-8, 8, size=(4, 1, 32, 64)).astype(np.float32)
    x = put_on_four(mesh, full, 0, dtype, ttnn.TILE_LAYOUT)
    semaphores = dict(
        barrier_semaphores=sems(mesh, 2), rs_global_semaphores=sems(mesh, 3), ag_global_semaphores=sems(mesh, 2)
    )
    out = ttnn.experimental.all_reduce_async(x, num_devices=4, math_op=ttnn.ReduceType.Sum, **semaphores)
    shards = ttnn.get_device_tensors(out)
    assert len(shards) == 4
    for shard in shards:
        np.testing.assert_array_equal(ttnn.to_torch(shard).float().numpy(), full.sum(axis=0, keepdims=True))
    with pytest.raises(ttnn.MeshnnValueError, match=r"num_devices 8 is not the 4 devices input_tensor populates"):
        ttnn.experimental.all_reduce_async(x, num_devices=8, math_op=ttnn.ReduceType.Sum, **semaphores)
