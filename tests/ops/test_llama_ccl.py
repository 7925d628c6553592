"""The Llama-70B Galaxy fused collectives against float64 numpy: llama_reduce_scatter and
llama_rs_create_heads on the row groups (cluster_axis 1) of 2x4 and 8x4 meshes, with the bound
of their output format (the inputs as the device holds them, a float32 sum of 4 terms, one
rounding into the output dtype); their outputs' memory configs as ttnn places them; the program
cache counting one program however many semaphores and buffers a loop cycles through.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import BF16, BFP8, gamma, mesh_fixtures, output_bound, quantized

SHAPES = [(2, 4), (8, 4)]
meshes, mesh = mesh_fixtures(SHAPES)


def grid(x0, y0, x1, y1):
    return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(x0, y0), ttnn.CoreCoord(x1, y1))])


def width_sharded(cores, width, buffer=ttnn.BufferType.L1):
    spec = ttnn.ShardSpec(cores, [32, width], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, buffer, spec)


def on_mesh(mesh, values, dtype, layout, memory_config):
    """``values`` of shape (rows, cols, ...) placed one block per device of the mesh."""
    return ttnn.from_torch(
        torch.from_numpy(values), dtype=dtype, layout=layout, device=mesh, memory_config=memory_config,
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, dims=(0, 1), mesh_shape=tuple(mesh.shape)),
    )  # fmt: skip


def per_device(tensor):
    return [ttnn.to_torch(t).double().numpy() for t in ttnn.get_device_tensors(tensor)]


def setup(mesh, dtype, layout, width=512, cores=None):
    """A (rows, cols, 32, width) random input, width sharded over ``cores``, its float64 value as
    the device holds it, a packet buffer and a semaphore."""
    rows, cols = tuple(mesh.shape)
    cores = cores or grid(0, 0, 3, 1)
    rng = np.random.default_rng(7)
    values = rng.standard_normal((rows, cols, 32, width)).astype(np.float32)
    x = on_mesh(mesh, values, dtype, layout, width_sharded(cores, width // cores.num_cores()))
    held = quantized(values, dtype, layout).reshape(rows, cols, 32, width)
    scratch = np.zeros((rows, cols, 32, 512), np.float32)
    buffer = on_mesh(mesh, scratch, dtype, layout, width_sharded(grid(0, 0, 7, 0), 64))
    sems = ttnn.create_global_semaphore(mesh, grid(0, 0, 6, 6), 0)
    return x, held, buffer, sems


def sum_bound(held, dtype):
    total = held.sum(axis=1)
    return total, output_bound(total, gamma(4) * np.abs(held).sum(axis=1), dtype)


@pytest.mark.parametrize("dtype", [BF16, BFP8], ids=["bf16", "bfp8"])
def test_llama_reduce_scatter_slices_the_row_sum(mesh, dtype):
    x, held, buffer, sem = setup(mesh, dtype, ttnn.TILE_LAYOUT)
    out_config = width_sharded(grid(0, 0, 3, 0), 32)
    got = ttnn.experimental.llama_reduce_scatter(
        x, buffer, 3, sem, ttnn.SubDeviceId(0), cluster_axis=1, mesh_device=mesh, num_links=3,
        memory_config=out_config, topology=ttnn.Topology.Linear, use_noc1_only=True,
    )  # fmt: skip
    assert tuple(got.shape) == (1, 1, 32, 128) and got.memory_config() == out_config and got.dtype == dtype
    total, bound = sum_bound(held, dtype)
    cols = mesh.shape[1]
    for index, out in enumerate(per_device(got)):
        row, col = divmod(index, cols)
        part = np.s_[row, :, col * 128 : (col + 1) * 128]
        err = np.abs(out[0, 0] - total[part])
        assert (err <= bound[part]).all(), f"device {index}: {err.max()}"


def test_llama_reduce_scatter_default_output_is_one_tile_per_core(mesh):
    x, held, buffer, sem = setup(mesh, BF16, ttnn.TILE_LAYOUT)
    got = ttnn.experimental.llama_reduce_scatter(x, buffer, -1, sem, ttnn.SubDeviceId(0), 1, mesh)
    spec = got.memory_config().shard_spec
    assert got.memory_config().memory_layout == ttnn.TensorMemoryLayout.WIDTH_SHARDED
    assert tuple(spec.shape) == (32, 32) and spec.grid.num_cores() == 4  # 128 wide: 4 cores of one tile
    total, bound = sum_bound(held, BF16)
    assert (np.abs(per_device(got)[0][0, 0] - total[0, :, :128]) <= bound[0, :, :128]).all()


def test_llama_reduce_scatter_pads_a_width_its_shards_do_not_divide(open_mesh):
    mesh = open_mesh((2, 4))
    x, _, buffer, sem = setup(mesh, BF16, ttnn.TILE_LAYOUT, width=384, cores=grid(0, 0, 5, 0))
    got = ttnn.experimental.llama_reduce_scatter(x, buffer, 3, sem, ttnn.SubDeviceId(0), 1, mesh)
    assert tuple(got.shape) == (1, 1, 32, 96)  # 384 / 4: its 64-wide shards divide it
    ones = np.ones((2, 4, 32, 416), np.float32)
    x2 = on_mesh(mesh, ones, BF16, ttnn.TILE_LAYOUT, width_sharded(grid(0, 0, 3, 0), 128))
    padded = ttnn.experimental.llama_reduce_scatter(x2, buffer, 3, sem, ttnn.SubDeviceId(0), 1, mesh)
    assert tuple(padded.shape) == (1, 1, 32, 128)  # 416 = 13 tiles -> 4 cores x 4 tiles = 512
    last = per_device(padded)[3][0, 0]
    np.testing.assert_array_equal(last[:, :32], 4.0)  # columns 384..415: the sum of four ones
    np.testing.assert_array_equal(last[:, 32:], 0.0)  # the padding sums to zero


def test_llama_rs_create_heads_splits_each_devices_users_into_heads(mesh):
    rows, cols = tuple(mesh.shape)
    heads, kv, head_dim = 4, 1, 64  # a row of 6 heads x 64 = 384
    x, held, buffer, sem = setup(mesh, BF16, ttnn.ROW_MAJOR_LAYOUT, width=384, cores=grid(0, 0, 5, 0))
    qkv_cores = grid(1, 0, 3, 9)
    qkv_config = ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
        ttnn.ShardSpec(qkv_cores, [32, head_dim], ttnn.ShardOrientation.ROW_MAJOR),
    )  # fmt: skip
    q, k, v = ttnn.experimental.llama_rs_create_heads(
        x, buffer, 3, sem, ttnn.SubDeviceId(0), 1, mesh, ttnn.Topology.Linear, num_links=1, num_heads=heads,
        num_kv_heads=kv, qkv_memory_config=qkv_config,
    )  # fmt: skip
    users = 32 // cols
    for out in (q, k, v):
        assert tuple(out.shape) == (1, users, heads, head_dim)
        assert out.memory_config().shard_spec.grid.num_cores() == users
    starts = [t.memory_config().shard_spec.grid.ranges()[0].start_coord for t in (q, k, v)]
    ordered = qkv_cores.cores(row_wise=True)
    assert [ordered.index(c) for c in starts] == [0, users, 2 * users]  # q, then k, then v cores
    total, bound = sum_bound(held, BF16)
    for index in range(rows * cols):
        row, col = divmod(index, cols)
        mine = total[row, col * users : (col + 1) * users].reshape(users, heads + 2 * kv, head_dim)
        limit = bound[row, col * users : (col + 1) * users].reshape(users, heads + 2 * kv, head_dim)
        for out, lo, hi in ((q, 0, heads), (k, heads, heads + kv), (v, heads + kv, heads + 2 * kv)):
            got = per_device(out)[index][0]
            assert (np.abs(got[:, : hi - lo] - mine[:, lo:hi]) <= limit[:, lo:hi]).all()
        np.testing.assert_array_equal(per_device(k)[index][0][:, kv:], 0.0)  # rows no kv head fills


def test_a_loop_over_semaphores_and_buffers_is_one_program(mesh):
    x, _, buffer, _ = setup(mesh, BF16, ttnn.TILE_LAYOUT)
    buffers = [buffer, ttnn.clone(buffer)]
    sems = [ttnn.create_global_semaphore(mesh, grid(0, 0, 6, 6), 0) for _ in range(3)]
    mesh.clear_program_cache()
    for i in range(6):
        ttnn.experimental.llama_reduce_scatter(x, buffers[i % 2], 3, sems[i % 3], ttnn.SubDeviceId(0), 1, mesh)
    assert mesh.num_program_cache_entries() == 1
    ttnn.experimental.llama_reduce_scatter(x, buffer, 3, sems[0], ttnn.SubDeviceId(0), 1, mesh, num_links=2)
    assert mesh.num_program_cache_entries() == 2  # another link count is another program


@pytest.mark.parametrize("name", ["fused_rms_1_1_32_8192", "fused_rms_minimal"])  # tt-metal 2025's name, 2026's
@pytest.mark.parametrize("out_dtype", [BF16, BFP8], ids=["bf16", "bfp8"])
def test_fused_rms_normalises_the_rows_across_the_group(mesh, out_dtype, name):
    rows, cols = tuple(mesh.shape)
    width = 256  # per device: 2 cores of 128
    cores = grid(0, 0, 1, 0)
    config = width_sharded(cores, 128)
    rng = np.random.default_rng(11)
    x_np, r_np = (rng.standard_normal((rows, cols, 32, width)).astype(np.float32) for _ in range(2))
    g_np = rng.standard_normal((rows, cols, width // 32, 32)).astype(np.float32)
    x, r = (on_mesh(mesh, v, BF16, ttnn.TILE_LAYOUT, config) for v in (x_np, r_np))
    g = on_mesh(mesh, g_np, BF16, ttnn.ROW_MAJOR_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
    program = ttnn.LayerNormShardedMultiCoreProgramConfig(
        compute_with_storage_grid_size=(2, 1), subblock_w=1, block_h=1, block_w=4, inplace=False
    )
    out_config = width_sharded(grid(0, 0, 3, 0), 128)  # 4 x 128 = 512: padded past the 256 columns
    sem = ttnn.create_global_semaphore(mesh, cores, 0)
    got = getattr(ttnn, name)(
        x, program, 1, mesh, sem, residual_input_tensor=r, weight=g, epsilon=1e-5, dtype=out_dtype,
        memory_config=out_config, topology=ttnn.Topology.Linear, num_links=1,
    )  # fmt: skip
    assert tuple(got.shape) == (1, 1, 32, width) and tuple(got.padded_shape) == (1, 1, 32, 512)
    xs = quantized(x_np, BF16).reshape(rows, cols, 32, width) + quantized(r_np, BF16).reshape(rows, cols, 32, width)
    gamma_held = quantized(g_np, BF16, ttnn.ROW_MAJOR_LAYOUT).reshape(rows, cols, 1, width)
    mean = np.square(xs).sum(axis=(1, 3), keepdims=True) / (width * cols)
    ref = xs / np.sqrt(mean + 1e-5) * gamma_held
    compute = gamma(width * cols + 8) * np.abs(ref) * 4  # the sum of squares, the root, two products
    bound = output_bound(ref, compute, out_dtype)
    # the residual holds x + r in its own bfloat16
    residual = quantized(xs.astype(np.float32), BF16).reshape(rows, cols, 32, width)
    for index, out in enumerate(per_device(got)):
        row, col = divmod(index, cols)
        err = np.abs(out[0, 0] - ref[row, col])
        assert (err <= bound[row, col]).all(), f"device {index}: {err.max()}"
        np.testing.assert_array_equal(per_device(r)[index][0, 0], residual[row, col])


def test_a_trace_of_llama_reduce_scatters_fits_the_region_tt_metal_gives_it(open_mesh):
    mesh = open_mesh((2, 4), trace_region_size=241664)  # test_rs_create_heads_tg_trace's region
    x, _, buffer, sem = setup(mesh, BF16, ttnn.TILE_LAYOUT)
    ttnn.experimental.llama_reduce_scatter(x, buffer, 3, sem, ttnn.SubDeviceId(0), 1, mesh)
    ids = []
    for count in (10, 75):  # a warm-up trace and the measured one, both live
        ids.append(ttnn.begin_trace_capture(mesh, cq_id=0))
        for _ in range(count):
            out = ttnn.experimental.llama_reduce_scatter(x, buffer, 3, sem, ttnn.SubDeviceId(0), 1, mesh)
        ttnn.end_trace_capture(mesh, ids[-1], cq_id=0)
    ttnn.execute_trace(mesh, ids[-1], blocking=True)
    _, held, _, _ = setup(mesh, BF16, ttnn.TILE_LAYOUT)
    total, bound = sum_bound(held, BF16)
    assert (np.abs(per_device(out)[1][0, 0] - total[0, :, 128:256]) <= bound[0, :, 128:256]).all()
    for trace_id in ids:
        ttnn.release_trace(mesh, trace_id)


def test_all_reduce_create_qkv_heads_sums_then_splits_each_devices_users(mesh):
    rows, cols = tuple(mesh.shape)
    heads, kv, head_dim, users = 4, 1, 64, 8
    width = (heads + 2 * kv) * head_dim  # 384 over 6 cores of 64
    x, held, buffer, sem = setup(mesh, BFP8, ttnn.TILE_LAYOUT, width=width, cores=grid(0, 0, 5, 0))
    offsets = np.array([[(c * users) % 32] for _ in range(rows) for c in range(cols)], np.int32)
    offset_tensor = on_mesh(
        mesh, offsets.reshape(rows, cols, 1, 1), ttnn.int32, ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG
    )
    final = ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
        ttnn.ShardSpec(grid(1, 0, 3, 9), [32, head_dim], ttnn.ShardOrientation.ROW_MAJOR),
    )  # fmt: skip
    reduced, q, k, v = ttnn.experimental.all_reduce_create_qkv_heads(
        x, buffer, offset_tensor, 1, mesh, sem, heads, num_kv_heads=kv, slice_size=users,
        final_memory_config=final, dtype=BF16, num_links=1, subdevice_id=None,
    )  # fmt: skip
    assert reduced.dtype == BF16 and tuple(reduced.shape) == (1, 1, 32, width)
    shapes = [(1, users, heads, head_dim), (1, users, kv, head_dim), (1, users, kv, head_dim)]
    assert [tuple(t.shape) for t in (q, k, v)] == shapes
    total, bound = sum_bound(held, BF16)
    for index in range(rows * cols):
        row = index // cols
        assert (np.abs(per_device(reduced)[index][0, 0] - total[row]) <= bound[row]).all()
        first = offsets[index, 0]
        mine = total[row, first : first + users].reshape(users, heads + 2 * kv, head_dim)
        limit = bound[row, first : first + users].reshape(users, heads + 2 * kv, head_dim)
        for out, lo, hi in ((q, 0, heads), (k, heads, heads + kv), (v, heads + kv, heads + 2 * kv)):
            got = per_device(out)[index][0]
            assert (np.abs(got - mine[:, lo:hi]) <= limit[:, lo:hi]).all()
