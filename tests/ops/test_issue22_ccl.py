"""Issue 22's asynchronous collectives and their kin, on 1x8, 2x4 and 8x4 meshes: each gives the
synchronous op's exact bytes (all_gather_async = all_gather, reduce_scatter_minimal_async =
reduce_scatter, all_reduce_async = all_reduce, all_gather_matmul_async = all_gather then matmul,
minimal_matmul = matmul), a persistent output buffer is written in place (same object, same
address, no new allocation), and their semaphore / link arguments are checked.  fast_reduce_nc and
the distributed norms are compared with float64 numpy within the bound of their output format.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import mesh_fixtures

SHAPES = [(1, 8), (2, 4), (8, 4)]
AXES = [None, 0, 1]


meshes, mesh = mesh_fixtures(SHAPES)


@pytest.fixture
def rng():
    return np.random.default_rng(2022)


def sems(mesh, count):
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))])
    return [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(count)]


def put(mesh, values, dtype=ttnn.bfloat16):
    return ttnn.from_torch(
        torch.from_numpy(values), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )  # fmt: skip


def raw(tensor):
    """Every device's bytes, as the queue reads them."""
    return [ttnn.to_torch(t).float().numpy() for t in ttnn.get_device_tensors(tensor)]


def same(a, b):
    for x, y in zip(raw(a), raw(b), strict=True):
        np.testing.assert_array_equal(x, y)


def usable_axes(mesh):
    return [axis for axis in AXES if axis is None or mesh.shape[axis] > 1]


def test_all_gather_async_is_all_gather(mesh, rng):
    n = mesh.get_num_devices()
    x = put(mesh, rng.standard_normal((n, 1, 32, 64)).astype(np.float32))
    gather_sems, barrier = sems(mesh, 2), sems(mesh, 1)[0]
    for axis in usable_axes(mesh):
        expected = ttnn.all_gather(x, 3, cluster_axis=axis)
        got = ttnn.experimental.all_gather_async(
            x, persistent_output_buffer=None, dim=3, multi_device_global_semaphore=gather_sems, num_links=1,
            cluster_axis=axis, topology=ttnn.Topology.Linear, barrier_semaphore=barrier, chunks_per_sync=10,
            num_workers_per_link=2, num_buffers_per_channel=2,
        )  # fmt: skip
        same(got, expected)
    same(ttnn.experimental.all_gather_async(x, 2, gather_sems), ttnn.all_gather(x, 2))  # (input, dim, semaphores)
    if mesh.shape[1] > 1:
        axis_form = ttnn.experimental.all_gather_async(x, 3, 1, mesh, ttnn.Topology.Linear, gather_sems)
        same(axis_form, ttnn.all_gather(x, 3, cluster_axis=1))


def test_a_persistent_buffer_is_written_in_place(mesh, rng):
    n = mesh.get_num_devices()
    x = put(mesh, rng.standard_normal((n, 1, 32, 64)).astype(np.float32))
    expected = ttnn.all_gather(x, 3)
    buffer = ttnn.allocate_tensor_on_device(expected.spec, mesh)
    address, view = buffer.buffer_address(), mesh.get_memory_view(ttnn.BufferType.DRAM)
    out = ttnn.experimental.all_gather_async(x, buffer, 3, sems(mesh, 2))
    assert out is buffer and out.buffer_address() == address
    assert (
        mesh.get_memory_view(ttnn.BufferType.DRAM).total_bytes_allocated_per_bank == view.total_bytes_allocated_per_bank
    )
    same(out, expected)
    wide = put(mesh, rng.standard_normal((n, 1, 32, 32 * n)).astype(np.float32))
    scattered = ttnn.reduce_scatter(wide, 3)
    rs_out = ttnn.allocate_tensor_on_device(scattered.spec, mesh)
    middle = ttnn.allocate_tensor_on_device(wide.spec, mesh)
    got = ttnn.experimental.reduce_scatter_minimal_async(wide, [middle, rs_out], 3, sems(mesh, 3))
    assert got is rs_out
    same(got, scattered)
    # tt-metal takes an output narrower along the gathered dim (its leading part: test_all_gather_concat.py),
    # not one that differs along another dim
    tall = put(mesh, rng.standard_normal((n, 1, 64, 64)).astype(np.float32))
    with pytest.raises(ttnn.MeshnnValueError, match=r"shape at dimension 2 should be 32"):
        ttnn.experimental.all_gather_async(x, tall, 3, sems(mesh, 2))


def test_reduce_scatter_and_all_reduce_async_are_the_synchronous_sums(mesh, rng):
    n = mesh.get_num_devices()
    x = put(mesh, rng.standard_normal((n, 1, 64, 32 * n)).astype(np.float32))
    three, barrier = sems(mesh, 3), sems(mesh, 1)[0]
    for axis in usable_axes(mesh):
        got = ttnn.experimental.reduce_scatter_minimal_async(
            x, persistent_output_buffers=None, dim=3, multi_device_global_semaphore=three, barrier_semaphore=barrier,
            num_links=1, memory_config=ttnn.DRAM_MEMORY_CONFIG, intermediate_memory_config=ttnn.DRAM_MEMORY_CONFIG,
            topology=ttnn.Topology.Ring, cluster_axis=axis, chunks_per_sync=10, num_workers_per_link=2,
        )  # fmt: skip
        same(got, ttnn.reduce_scatter(x, 3, cluster_axis=axis))
        if axis is not None:
            reduced = ttnn.experimental.all_reduce_async(
                x, axis, mesh, math_op=ttnn.ReduceType.Sum, topology=ttnn.Topology.Linear
            )
            same(reduced, ttnn.all_reduce(x, cluster_axis=axis))
    whole = ttnn.experimental.all_reduce_async(x, n, three[:1], three[1:2], three[2:], ttnn.ReduceType.Sum)
    same(whole, ttnn.all_reduce(x))
    axis = usable_axes(mesh)[-1]
    x32 = ttnn.typecast(x, ttnn.float32)  # the float32 sum, rounded once into bfloat8_b either way
    scratch = ttnn.allocate_tensor_on_device(x32.spec, mesh)
    llama = ttnn.experimental.all_reduce_async(x32, scratch, axis, mesh, three[0], dtype=ttnn.bfloat8_b)
    assert llama.dtype == ttnn.bfloat8_b
    same(llama, ttnn.typecast(ttnn.all_reduce(x32, cluster_axis=axis), ttnn.bfloat8_b))
    if 1 in tuple(mesh.shape):  # a group of one device along that axis
        with pytest.raises(ttnn.MeshnnValueError, match="more than one device"):
            ttnn.experimental.all_reduce_async(x32, scratch, tuple(mesh.shape).index(1), mesh, three[0])
    with pytest.raises(ttnn.MeshnnValueError, match="num_links"):
        ttnn.experimental.all_gather_async(x, None, 3, three[:2], num_links=0)


def test_all_gather_matmul_async_returns_both(mesh, rng):
    n = mesh.get_num_devices()
    x = put(mesh, rng.standard_normal((n, 1, 32, 32)).astype(np.float32))
    w = ttnn.from_torch(
        torch.from_numpy(rng.standard_normal((32 * n, 64)).astype(np.float32)), dtype=ttnn.bfloat8_b,
        layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )  # fmt: skip
    kernel = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2)
    gathered, product = ttnn.experimental.all_gather_matmul_async(
        x, w, None, 3, sems(mesh, 2), ttnn.CoreCoord(0, 4), num_links=1, memory_config_ag=ttnn.DRAM_MEMORY_CONFIG,
        memory_config_mm=ttnn.L1_MEMORY_CONFIG, compute_kernel_config=kernel, chunks_per_sync=10,
    )  # fmt: skip
    expected = ttnn.all_gather(x, 3)
    same(gathered, expected)
    same(product, ttnn.matmul(expected, w, memory_config=ttnn.L1_MEMORY_CONFIG))
    assert product.memory_config() == ttnn.L1_MEMORY_CONFIG


def test_minimal_matmul_is_matmul_with_its_config(mesh, rng):
    n = mesh.get_num_devices()
    x = put(mesh, rng.standard_normal((n, 1, 64, 128)).astype(np.float32))
    w = ttnn.from_torch(
        torch.from_numpy(rng.standard_normal((1, 1, 128, 96)).astype(np.float32)), dtype=ttnn.bfloat8_b,
        layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )  # fmt: skip
    config = ttnn.MinimalMatmulConfig(M_block_size=2, K_block_size=2, N_block_size=3, subblock_h=2, subblock_w=1,
                                      compute_with_storage_grid_size=(4, 4))  # fmt: skip
    silu = ttnn.UnaryWithParam(ttnn.UnaryOpType.SILU)
    got = ttnn.experimental.minimal_matmul(x, w, config=config, fused_activation=silu)
    same(got, ttnn.matmul(x, w, activation="silu"))
    with pytest.raises(ttnn.MeshnnValueError, match="subblock"):
        ttnn.experimental.minimal_matmul(x, w, config=ttnn.MinimalMatmulConfig(M_block_size=3, subblock_h=2))


def test_fast_reduce_nc_sums_outer_dims(mesh, rng):
    n = mesh.get_num_devices()
    values = rng.standard_normal((n * 4, 2, 32, 64)).astype(np.float32)
    x = put(mesh, values, ttnn.float32)
    got = ttnn.experimental.fast_reduce_nc(x, dims=[0, 1], output=None, compute_kernel_config=None)
    assert tuple(got.shape) == (1, 1, 32, 64)
    expected = values.reshape(n, 4, 2, 32, 64).astype(np.float64).sum(axis=(1, 2))
    result = np.stack(raw(got))[:, 0, 0]
    bound = 8 * 2.0**-24 * np.abs(values).reshape(n, 8, 32, 64).sum(axis=1)  # gamma_7 * sum|x| (float32 sums)
    assert (np.abs(result - expected) <= bound + 1e-30).all()
    assert not (np.abs(result - values.reshape(n, 8, 32, 64)[:, 1:].sum(axis=1)) <= bound).all()  # can fail
    into = ttnn.allocate_tensor_on_device(got.spec, mesh)
    assert ttnn.experimental.fast_reduce_nc(x, dims=[0, 1], output=into) is into


@pytest.mark.parametrize("layer", [False, True], ids=["rms", "layer"])
def test_distributed_norm_halves_make_the_norm(meshes, rng, layer):
    mesh = meshes[(8, 4)]  # the TG split: rows hold the hidden dim in 4 parts along cluster axis 1
    x = rng.standard_normal((1, 1, 64, 512)).astype(np.float32) * 3 + 1
    gamma = rng.standard_normal(512).astype(np.float32)
    mapper = ttnn.ShardTensor2dMesh(mesh, dims=(None, 3), mesh_shape=(8, 4))
    t = ttnn.from_torch(
        torch.from_numpy(x), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper
    )
    w = ttnn.from_torch(torch.from_numpy(gamma.reshape(1, 1, 16, 32)), dtype=ttnn.float32, device=mesh,
                        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, dims=(None, 2), mesh_shape=(8, 4)))  # fmt: skip
    pre = ttnn.layer_norm_pre_all_gather if layer else ttnn.rms_norm_pre_all_gather
    post = ttnn.layer_norm_post_all_gather if layer else ttnn.rms_norm_post_all_gather
    stats = pre(t, dtype=ttnn.float32)
    first = raw(stats)[0][0, 0]  # device (0, 0): columns 0..127 of x
    part = x[0, 0, :, :128].astype(np.float64)
    assert stats.shape[-1] == (64 if layer else 32) and not first[:, 1:32].any()
    np.testing.assert_allclose(first[:, 0], (part**2).sum(-1), rtol=2e-6)
    if layer:
        np.testing.assert_allclose(first[:, 32], part.sum(-1), rtol=1e-5, atol=1e-4)
    gathered = ttnn.experimental.all_gather_async(
        stats, None, 3, sems(mesh, 2), cluster_axis=1, topology=ttnn.Topology.Linear
    )
    out = post(t, gathered, epsilon=1e-5, weight=w)
    full = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMesh2dToTensor(mesh, dims=(0, 3), mesh_shape=(8, 4)))[:1].numpy()
    xd = x.astype(np.float64)
    centred = xd - xd.mean(-1, keepdims=True) if layer else xd
    scale = (centred**2).mean(-1, keepdims=True) if layer else (xd**2).mean(-1, keepdims=True)
    expected = centred / np.sqrt(scale + 1e-5) * gamma
    assert np.abs(full - expected).max() < 1e-4 * np.abs(expected).max()
