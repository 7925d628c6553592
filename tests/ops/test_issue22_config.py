"""The config vocabulary of issue 22: compute-kernel configs, matmul / norm / SDPA program configs,
the cluster queries, num_cores_to_corerangeset and global semaphores; each config is checked as
ttnn checks it, changes no value, and reaches the observers by ttnn's argument names.

Matmul products are compared exactly against the same product without a config (a config changes
nothing a CPU computes); the derived shard specs against ttnn's rules written out by hand.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.perf.fidelity import MathFidelity as PerfFidelity

from .reference import MESHES, mesh_fixtures

SHAPES = [(1, 8), (2, 4), (8, 4)]
CC = ttnn.CoreCoord


meshes, mesh = mesh_fixtures(SHAPES)


def put(mesh, values, dtype=ttnn.bfloat16, memory_config=None, shard=False):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0) if shard else ttnn.ReplicateTensorToMesh(mesh)
    return ttnn.from_torch(
        torch.from_numpy(values), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper,
        memory_config=memory_config,
    )  # fmt: skip


def first(tensor):
    return ttnn.to_torch(ttnn.get_device_tensors(tensor)[0]).float().numpy()


# ---------------------------------------------------------------------------- compute kernel


def test_compute_kernel_configs_have_ttnns_fields_and_defaults():
    config = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2, packer_l1_acc=True)
    assert ttnn.MathFidelity is PerfFidelity  # the performance model's own enum
    assert (config.math_approx_mode, config.fp32_dest_acc_en, config.dst_full_sync_en) == (True, False, False)
    assert config.throttle_level is ttnn.ThrottleLevel.NO_THROTTLE
    assert ttnn.WormholeComputeKernelConfig().math_fidelity is None  # ttnn's MathFidelity::Invalid: unset
    assert config != ttnn.BlackholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2, packer_l1_acc=True)
    with pytest.raises(TypeError):
        ttnn.WormholeComputeKernelConfig(ttnn.MathFidelity.HiFi2)  # keyword arguments only, as ttnn's


def test_dest_register_count_follows_sync_and_accumulation():
    wh = ttnn.WormholeComputeKernelConfig
    assert wh().dest_register_count() == 8
    assert wh(fp32_dest_acc_en=True).dest_register_count() == 4
    assert wh(dst_full_sync_en=True).dest_register_count() == 16
    assert wh(dst_full_sync_en=True, fp32_dest_acc_en=True).dest_register_count() == 8


def test_init_device_compute_kernel_config_picks_the_arch_and_keeps_a_given_config():
    made = ttnn.init_device_compute_kernel_config(ttnn.Arch.WORMHOLE_B0, math_fidelity=ttnn.MathFidelity.HiFi4)
    assert isinstance(made, ttnn.WormholeComputeKernelConfig) and made.math_fidelity is ttnn.MathFidelity.HiFi4
    bh = ttnn.init_device_compute_kernel_config(ttnn.Arch.BLACKHOLE, fp32_dest_acc_en=True)
    assert isinstance(bh, ttnn.BlackholeComputeKernelConfig) and bh.math_fidelity is ttnn.MathFidelity.LoFi
    assert ttnn.init_device_compute_kernel_config(ttnn.Arch.BLACKHOLE, made) is made
    with pytest.raises(ttnn.MeshnnTypeError, match="compute_kernel_config"):
        ttnn.init_device_compute_kernel_config(ttnn.Arch.BLACKHOLE, "HiFi4")


# -------------------------------------------------------------------------- program configs


def mcast_2d(**changes):
    fields = dict(
        compute_with_storage_grid_size=(4, 2), in0_block_w=2, out_subblock_h=1, out_subblock_w=2, per_core_M=1,
        per_core_N=2, transpose_mcast=False,
    )  # fmt: skip
    return ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(**{**fields, **changes})


def test_program_configs_default_their_blocks_and_check_them():
    config = mcast_2d()
    assert (config.out_block_h, config.out_block_w, config.fuse_batch) == (1, 2, True)
    assert config.compute_with_storage_grid_size == CC(4, 2)  # an (x, y) pair becomes a CoreCoord
    one_d = ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=CC(8, 1), in0_block_w=1, out_subblock_h=1, out_subblock_w=1,
        per_core_M=1, per_core_N=1, fuse_batch=True, mcast_in0=True,
    )  # fmt: skip
    assert (one_d.gather_in0, one_d.num_global_cb_receivers, one_d.untilize_out) == (False, 1, False)
    with pytest.raises(ttnn.MeshnnValueError, match="out_block_w"):
        mcast_2d(out_block_w=3)
    with pytest.raises(ttnn.MeshnnTypeError, match="fused_activation"):
        mcast_2d(fused_activation="silu")
    sdpa = ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 8), q_chunk_size=0, k_chunk_size=0)
    assert sdpa.is_decode_form and sdpa.compute_with_storage_grid_size == CC(8, 8)
    with pytest.raises(ttnn.MeshnnValueError, match="q_chunk_size"):
        ttnn.SDPAProgramConfig(q_chunk_size=-32)


def test_matmul_with_configs_gives_the_same_bytes_and_records_them(mesh, recorder, rng):
    a = put(mesh, rng.standard_normal((1, 1, 64, 128)).astype(np.float32))
    b = put(mesh, rng.standard_normal((1, 1, 128, 64)).astype(np.float32), ttnn.bfloat8_b)
    kernel = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2, fp32_dest_acc_en=True)
    config = mcast_2d()
    plain = ttnn.matmul(a, b)
    configured = ttnn.linear(a, b, program_config=config, compute_kernel_config=kernel, sub_device_id=None)
    np.testing.assert_array_equal(first(configured), first(plain))
    event = recorder.ops[-1]
    assert event.op == "linear" and event.attrs["program_config"] is config
    assert event.attrs["compute_kernel_config"].math_fidelity is ttnn.MathFidelity.HiFi2
    assert event.attrs["memory_config"] == ttnn.DRAM_MEMORY_CONFIG and event.attrs["global_cb"] is None


def test_matmul_refuses_what_ttnn_refuses(mesh, rng):
    a = put(mesh, rng.standard_normal((1, 1, 32, 96)).astype(np.float32))
    b = put(mesh, rng.standard_normal((1, 1, 96, 64)).astype(np.float32))
    grid = mesh.compute_with_storage_grid_size()
    with pytest.raises(ttnn.MeshnnValueError, match=r"must fit within the device's compute grid"):
        ttnn.matmul(a, b, program_config=mcast_2d(compute_with_storage_grid_size=(grid.x, grid.y + 1), in0_block_w=1))
    with pytest.raises(ttnn.MeshnnValueError, match="in0_block_w"):
        ttnn.matmul(a, b, program_config=mcast_2d(in0_block_w=2))  # K = 3 tiles
    wide = mcast_2d(in0_block_w=1, out_subblock_w=8, per_core_N=8)
    ttnn.matmul(a, b, program_config=wide, compute_kernel_config=ttnn.WormholeComputeKernelConfig())  # 8 fit
    with pytest.raises(ttnn.MeshnnValueError, match="to fit in hardware"):
        fp32 = ttnn.WormholeComputeKernelConfig(fp32_dest_acc_en=True)  # 4 registers
        ttnn.matmul(a, b, program_config=wide, compute_kernel_config=fp32)


def test_fused_activation_of_a_program_config_is_applied(mesh, rng):
    a = put(mesh, rng.standard_normal((1, 1, 32, 64)).astype(np.float32), ttnn.float32)
    b = put(mesh, rng.standard_normal((1, 1, 64, 64)).astype(np.float32), ttnn.float32)
    relu = ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU)
    fused = ttnn.matmul(a, b, program_config=mcast_2d(in0_block_w=1, fused_activation=relu))
    np.testing.assert_array_equal(first(fused), np.maximum(first(ttnn.matmul(a, b)), 0))
    bare = mcast_2d(in0_block_w=1, fused_activation=ttnn.UnaryOpType.RELU)  # ttnn converts a bare op type
    assert bare.fused_activation == relu
    np.testing.assert_array_equal(first(ttnn.matmul(a, b, program_config=bare)), first(fused))


# ---------------------------------------------------------------- spec-less sharded outputs


def width_sharded(mesh, values, cores):
    config = ttnn.create_sharded_memory_config(values.shape, cores, ttnn.ShardStrategy.WIDTH)
    return put(mesh, values, memory_config=config)


def test_dram_sharded_linear_takes_the_inputs_grid(mesh, rng):
    cores = ttnn.CoreGrid(x=4, y=1)
    x = width_sharded(mesh, rng.standard_normal((1, 1, 32, 256)).astype(np.float32), cores)
    w = put(mesh, rng.standard_normal((1, 1, 256, 512)).astype(np.float32), ttnn.bfloat8_b)
    config = ttnn.MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig(in0_block_w=2, per_core_M=1, per_core_N=4)
    out = ttnn.linear(x, w, program_config=config, memory_config=ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG)
    spec = out.memory_config().shard_spec
    assert spec.grid == x.memory_config().shard_spec.grid and spec.shape == (32, 128)
    np.testing.assert_array_equal(first(out), first(ttnn.linear(x, w)))


def test_derived_matmul_shard_specs_follow_ttnns_rules(mesh, rng):
    a = put(mesh, rng.standard_normal((1, 1, 64, 64)).astype(np.float32))
    b = put(mesh, rng.standard_normal((1, 1, 64, 320)).astype(np.float32))
    one_d = ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=(4, 4), in0_block_w=1, out_subblock_h=1, out_subblock_w=1,
        per_core_M=2, per_core_N=2, fuse_batch=True, mcast_in0=True,
    )  # fmt: skip
    out = ttnn.matmul(a, b, program_config=one_d, memory_config=ttnn.L1_BLOCK_SHARDED_MEMORY_CONFIG)
    spec = out.memory_config().shard_spec  # 1 x 5 blocks: five cores row-wise over the 4x4 grid
    assert spec.grid == ttnn.num_cores_to_corerangeset(5, CC(4, 4), True) and spec.shape == (64, 64)
    two_d = mcast_2d(compute_with_storage_grid_size=(5, 2), in0_block_w=1, per_core_M=1, per_core_N=2)
    out = ttnn.matmul(a, b, program_config=two_d, memory_config=ttnn.L1_BLOCK_SHARDED_MEMORY_CONFIG)
    rect = ttnn.CoreRangeSet([ttnn.CoreRange(CC(0, 0), CC(4, 1))])  # x: 5 column blocks, y: 2 row blocks
    assert out.memory_config().shard_spec == ttnn.ShardSpec(rect, (32, 64))
    transposed = mcast_2d(compute_with_storage_grid_size=(2, 5), in0_block_w=1, per_core_N=2, transpose_mcast=True)
    out = ttnn.matmul(a, b, program_config=transposed, memory_config=ttnn.L1_BLOCK_SHARDED_MEMORY_CONFIG)
    expected = ttnn.ShardSpec(
        ttnn.CoreRangeSet([ttnn.CoreRange(CC(0, 0), CC(1, 4))]), (32, 64), ttnn.ShardOrientation.COL_MAJOR
    )
    assert out.memory_config().shard_spec == expected
    np.testing.assert_array_equal(first(out), first(ttnn.matmul(a, b)))


def test_binary_and_to_memory_config_derive_a_spec(mesh, rng):
    values = rng.standard_normal((1, 1, 64, 256)).astype(np.float32)
    x = width_sharded(mesh, values, ttnn.CoreGrid(x=8, y=1))
    y = ttnn.add(x, x, memory_config=ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG)
    assert y.memory_config() == x.memory_config()  # the input's own spec
    plain = put(mesh, values)
    z = ttnn.to_memory_config(plain, ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG)
    assert z.memory_config().shard_spec.shape == (32, 256)  # one tile row per core, row-wise from (0, 0)
    assert z.memory_config().shard_spec.grid == ttnn.num_cores_to_corerangeset(
        2, mesh.compute_with_storage_grid_size(), True
    )
    np.testing.assert_array_equal(first(z), first(plain))


# ------------------------------------------------------------------ cores, cluster, semaphores


def test_num_cores_to_corerangeset_takes_whole_rows_or_columns():
    rows = ttnn.num_cores_to_corerangeset(11, CC(4, 4), True)
    assert rows.ranges() == (ttnn.CoreRange(CC(0, 0), CC(3, 1)), ttnn.CoreRange(CC(0, 2), CC(2, 2)))
    cols = ttnn.num_cores_to_corerangeset(6, CC(4, 4), False)
    assert cols.ranges() == (ttnn.CoreRange(CC(0, 0), CC(0, 3)), ttnn.CoreRange(CC(1, 0), CC(1, 1)))
    assert ttnn.num_cores_to_corerangeset(3, CC(4, 4), True).ranges() == (ttnn.CoreRange(CC(0, 0), CC(2, 0)),)
    assert rows.num_cores() == 11 and cols.num_cores() == 6


@pytest.mark.parametrize(
    "system, cluster, arch",
    [("n150", "N150", "wormhole_b0"), ("t3k", "T3K", "wormhole_b0"), ("galaxy", "GALAXY", "wormhole_b0"),
     ("p150", "P150", "blackhole"), ("p300", "P300", "blackhole")],
)  # fmt: skip
def test_cluster_type_and_arch_name_are_the_simulated_systems(monkeypatch, system, cluster, arch):
    monkeypatch.setenv("MESHNN_SYSTEM", system)
    assert ttnn.cluster.get_cluster_type() is ttnn.cluster.ClusterType[cluster]
    assert ttnn.get_arch_name() == arch
    assert ttnn.cluster.is_galaxy_cluster() is (system == "galaxy")
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 1)) as single:
        assert isinstance(single, ttnn._ttnn.multi_device.MeshDevice)
    with pytest.raises(ttnn.NotImplementedByMeshnn, match=r"cluster\.no_such_name"):  # any name meshnn lacks
        ttnn.cluster.no_such_name()
    assert ttnn.cluster.serialize_cluster_descriptor().endswith("cluster_descriptor.yaml")  # (since stop 56)


def test_global_semaphores_are_l1_buffers_at_one_address(mesh):
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(CC(0, 0), CC(grid.x - 1, grid.y - 1))])
    before = mesh.get_memory_view(ttnn.BufferType.L1).total_bytes_allocated_per_bank
    sems = [ttnn.create_global_semaphore(mesh, cores, 5) for _ in range(3)]
    view = mesh.get_memory_view(ttnn.BufferType.L1)
    assert view.total_bytes_allocated_per_bank > before  # real allocations, seen by the allocator
    assert len({ttnn.get_global_semaphore_address(s) for s in sems}) == 3  # three distinct addresses
    assert (sems[0].values() == 5).all() and sems[0].values().shape == (mesh.get_num_devices(), grid.x * grid.y)
    ttnn.reset_global_semaphore_value(sems[0], 0)
    assert (sems[0].values() == 0).all() and (sems[1].values() == 5).all()
    del sems
    gc.collect()
    assert mesh.get_memory_view(ttnn.BufferType.L1).total_bytes_allocated_per_bank == before


def test_layer_norm_configs_are_checked_and_recorded(mesh, recorder, rng):
    values = rng.standard_normal((1, 1, 32, 256)).astype(np.float32)
    x = width_sharded(mesh, values, ttnn.CoreGrid(x=8, y=1))
    config = ttnn.LayerNormShardedMultiCoreProgramConfig(
        compute_with_storage_grid_size=[8, 1], subblock_w=1, block_h=1, block_w=1, inplace=False
    )
    out = ttnn.rms_norm(x, epsilon=1e-5, program_config=config, memory_config=x.memory_config())
    plain = ttnn.rms_norm(put(mesh, values), epsilon=1e-5, program_config=ttnn.LayerNormDefaultProgramConfig())
    np.testing.assert_array_equal(first(out), first(plain))
    assert recorder.ops[-2].attrs["program_config"] is config and out.memory_config() == x.memory_config()
    too_wide = ttnn.LayerNormShardedMultiCoreProgramConfig(
        compute_with_storage_grid_size=(16, 1), subblock_w=1, block_h=1, block_w=1, inplace=False
    )
    with pytest.raises(ttnn.MeshnnValueError, match="compute grid"):
        ttnn.rms_norm(x, program_config=too_wide)


def test_prefill_attention_refuses_the_decode_form(meshes):
    mesh = meshes[(1, 8)]
    q = put(mesh, np.ones((1, 1, 32, 32), np.float32))
    decode = ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 8), q_chunk_size=0, k_chunk_size=0)
    with pytest.raises(ttnn.MeshnnValueError, match="decode form"):
        ttnn.transformer.scaled_dot_product_attention(q, q, q, program_config=decode)
    too_big = ttnn.SDPAProgramConfig(compute_with_storage_grid_size=(8, 9), q_chunk_size=32, k_chunk_size=32)
    with pytest.raises(ttnn.MeshnnValueError, match="compute grid"):  # t3k's grid is 8x8
        ttnn.transformer.scaled_dot_product_attention(q, q, q, program_config=too_big)


assert set(MESHES) >= set(SHAPES)
