"""Normalisations (issue 35) against float64 references: the softmax family (dims, stability, scale
and masks, in place, the sharded program config), group_norm (ttnn's weight layouts, in place),
batch_norm (evaluation, training with running statistics updated in place, the fp32 destination
precision) and ttnn's group norm helpers.

meshnn computes each in float64 and rounds once, so a result lies within the float32 evaluation
(a few u relative) plus one rounding into the output dtype of the float64 reference.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import (
    BF16,
    BFP8,
    F32,
    RM,
    SHARD,
    TILE,
    assert_within,
    exact_equal,
    exceeds,
    float32_error,
    gamma,
    mesh_fixtures,
    output_bound,
    quantized,
    results,
    to_mesh,
)

meshes, mesh = mesh_fixtures([(1, 1), (2, 4)])


def softmax64(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def on(mesh, values, dtype=BF16, layout=TILE, **kwargs) -> ttnn.Tensor:
    return ttnn.from_torch(torch.from_numpy(np.ascontiguousarray(values, np.float32)), dtype=dtype, layout=layout,
                           device=mesh, **kwargs)  # fmt: skip


@pytest.mark.parametrize("dtype", [F32, BF16, BFP8])
def test_softmax_along_every_dim(mesh, dtype):
    rng = np.random.default_rng(0)
    n = mesh.get_num_devices()
    x = rng.uniform(-4, 4, (n, 3, 37, 45)).astype(np.float32)
    xq = quantized(x, dtype)
    t = to_mesh(mesh, x, dtype, TILE, SHARD)
    for dim in (-1, -2, 1, 3):
        ref = softmax64(xq, dim)
        got = results(mesh, ttnn.softmax(t, dim), SHARD)[0]
        bound = output_bound(ref, float32_error(ref, 8), dtype)
        assert_within(got, ref, bound, f"softmax dim={dim} {dtype}")
    assert exceeds(softmax64(xq, 2), softmax64(xq, 3), output_bound(softmax64(xq, 3), 0, dtype))


def test_softmax_without_the_max_overflows_as_the_device(meshes):
    """numeric_stable=False computes exp(x) first: values past float32's exp range give NaN, as on the
    device; numeric_stable=True subtracts the max first."""
    mesh = meshes[(1, 1)]
    t = on(mesh, np.array([[[100.0, 1000.0]]]))
    assert np.isnan(ttnn.to_numpy(ttnn.softmax(t, numeric_stable=False)).astype(np.float64)).all()
    exact_equal(ttnn.to_numpy(ttnn.softmax(t)).astype(np.float64), np.array([[[0.0, 1.0]]]))


def test_scale_mask_softmax_and_in_place_forms(meshes):
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(1)
    x = rng.uniform(-3, 3, (2, 4, 64, 96)).astype(np.float32)
    mask = np.where(rng.uniform(size=(2, 1, 1, 96)) > 0.5, 0.0, -np.inf).astype(np.float32)
    xq, mq = quantized(x, BF16), quantized(mask, BF16)
    ref = softmax64(xq * 0.5 + mq)
    got = ttnn.to_numpy(ttnn.scale_mask_softmax(on(mesh, x), 0.5, on(mesh, mask))).astype(np.float64)
    assert_within(got, ref, output_bound(ref, float32_error(ref, 8), BF16), "scale_mask_softmax")
    causal = np.triu(np.full((64, 96), -np.inf, np.float32), 1)[None, None].repeat(2, 0)
    t = on(mesh, x)
    address = t.buffer_address()
    out = ttnn.scale_mask_softmax_in_place(t, 0.5, on(mesh, causal), is_causal_mask=True, numeric_stable=True)
    assert out.buffer_address() == address, "in place: the input's own buffer"
    ref = softmax64(xq * 0.5 + quantized(causal, BF16))
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, float32_error(ref, 8), BF16))
    with pytest.raises(ttnn.MeshnnValueError, match="Scale value"):
        ttnn.scale_mask_softmax(on(mesh, x), 0.5)


def test_sharded_softmax_in_place(meshes):
    mesh = meshes[(1, 1)]
    x = np.random.default_rng(2).normal(size=(1, 4, 64, 64)).astype(np.float32)
    config = ttnn.create_sharded_memory_config(
        (1, 4, 64, 64), core_grid=ttnn.CoreGrid(y=1, x=4), strategy=ttnn.ShardStrategy.HEIGHT
    )
    t = on(mesh, x, memory_config=config)
    program = ttnn.SoftmaxShardedMultiCoreProgramConfig(
        compute_with_storage_grid_size=(4, 1), subblock_w=2, block_h=2, block_w=2
    )
    out = ttnn.softmax_in_place(t, program_config=program)
    ref = softmax64(quantized(x, BF16))
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, float32_error(ref, 8), BF16))
    program.block_w = 1  # (ttnn's binding lets block_w change after creation)
    with pytest.raises(ttnn.MeshnnValueError, match="block_w"):
        ttnn.softmax_in_place(on(mesh, x, memory_config=config), program_config=program)


def group_norm64(x: np.ndarray, groups: int, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """[N, 1, HW, C] channels-last group norm in float64 (biased variance)."""
    n, _, hw, c = x.shape
    g = x.reshape(n, hw, groups, c // groups)
    mean = g.mean(axis=(1, 3), keepdims=True)
    var = ((g - mean) ** 2).mean(axis=(1, 3), keepdims=True)
    return ((g - mean) / np.sqrt(var + eps)).reshape(x.shape) * weight + bias


@pytest.mark.parametrize("sharded", [False, True])
def test_group_norm_with_ttnn_layouts(meshes, sharded):
    """Weights laid out by create_group_norm_weight_bias_rm for the cores across the channels
    (chunks padded to 32: here 96 / 2 = 48 per core); in place on a sharded ROW_MAJOR input."""
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(3)
    n, hw, c, groups = 1, 64, 96, 8
    x = rng.uniform(size=(n, 1, hw, c)).astype(np.float32)
    weight, bias = rng.uniform(size=c).astype(np.float32), rng.uniform(size=c).astype(np.float32)
    cores = 2 if sharded else 1
    laid = [ttnn.create_group_norm_weight_bias_rm(torch.from_numpy(v), c, cores) for v in (weight, bias)]
    assert tuple(laid[0].shape) == ((1, 1, 4, 32) if sharded else (1, 1, 3, 32))
    gamma, beta = (ttnn.from_torch(v, dtype=BF16, layout=RM, device=mesh) for v in laid)
    mask = on(mesh, ttnn.create_group_norm_input_mask(c, groups, cores).float().numpy(), BFP8)
    grid = ttnn.CoreGrid(y=cores, x=2)
    t = on(mesh, x, layout=RM)
    if sharded:
        spec = ttnn.ShardSpec(ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1))}),
                              (hw // 2, c // 2), ttnn.ShardOrientation.COL_MAJOR)  # fmt: skip
        config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.BLOCK_SHARDED, ttnn.BufferType.L1, spec)
        t = ttnn.to_memory_config(t, config)
    kwargs = dict(num_groups=groups, input_mask=mask, weight=gamma, bias=beta, core_grid=grid, epsilon=1e-5)
    out = ttnn.group_norm(t, inplace=sharded, **kwargs)
    assert (out.buffer_address() == t.buffer_address()) == sharded
    ref = group_norm64(quantized(x, BF16, RM), groups, quantized(weight, BF16, RM), quantized(bias, BF16, RM), 1e-5)
    got = ttnn.to_numpy(ttnn.to_memory_config(out, ttnn.DRAM_MEMORY_CONFIG)).astype(np.float64)
    assert_within(got, ref, output_bound(ref, float32_error(ref, 16), BF16), f"group_norm sharded={sharded}")
    golden = ttnn.get_golden_function(ttnn.group_norm)
    memory = t.memory_config()
    expected = golden(torch.from_numpy(x), num_groups=groups, weight=laid[0], bias=laid[1], memory_config=memory,
                      core_grid=grid, epsilon=1e-5)  # fmt: skip
    assert np.corrcoef(expected.numpy().ravel(), got.ravel())[0, 1] > 0.999


def test_group_norm_helpers():
    """The mask marks each group's columns within its tiles, restarting on every core."""
    mask = ttnn.create_group_norm_input_mask(96, 4, 2).float().numpy()
    assert mask.shape == (1, 4, 32, 64)  # a group of 24 spans at most two tiles
    exact_equal(mask[0, 0, 0], np.r_[np.ones(24), np.zeros(40)])
    exact_equal(mask[0, 1, 0], np.r_[np.zeros(24), np.ones(24), np.zeros(16)])
    exact_equal(mask[0, 2, 0], np.r_[np.ones(24), np.zeros(40)])  # the second core starts over
    negative = ttnn.create_group_norm_input_negative_mask(96, 4, 2).float().numpy()
    exact_equal(negative, 1 - mask)
    # tt-metal 2026's count: the columns divide the groups too (5 columns of 96 channels do not divide 8)
    assert ttnn.dram_group_norm_virtual_columns(ttnn.CoreGrid(y=8, x=8), 480, 8) == 1
    assert ttnn.dram_group_norm_virtual_columns(ttnn.CoreGrid(y=8, x=8), 1920, 32) == 4  # (not 6: 32 % 6)
    recips = ttnn.create_group_norm_reciprocals(1, 64, 8, 8, 8, ttnn.CoreGrid(y=1, x=2))
    exact_equal(recips[0, :4].numpy(), np.float32([1, 1 / 2, 1 / 3, 1 / 4]))


def test_group_norm_masks_in_tt_metal_2026_form_are_host_tile_tensors():
    """With ``data_type`` (tt-metal of 2026) the masks are host ttnn tensors of it, TILE, the same values."""
    want = ttnn.create_group_norm_input_mask(96, 4, 2).float().numpy()
    mask = ttnn.create_group_norm_input_mask(96, 4, 2, ttnn.bfloat8_b)
    assert isinstance(mask, ttnn.Tensor) and mask.dtype == ttnn.bfloat8_b and mask.layout == ttnn.TILE_LAYOUT
    assert mask.storage_type() == ttnn.StorageType.HOST
    exact_equal(ttnn.to_torch(mask).float().numpy(), want)
    negative = ttnn.create_group_norm_input_negative_mask(96, 4, 2, data_type=ttnn.bfloat16)
    exact_equal(ttnn.to_torch(negative).float().numpy(), 1 - want)
    with pytest.raises(ttnn.NotImplementedByMeshnn, match="32x32"):
        ttnn.create_group_norm_input_mask(96, 4, 2, ttnn.bfloat16, 16, 32)
    with pytest.raises(ttnn.MeshnnTypeError, match="data_type"):
        ttnn.create_group_norm_input_mask(96, 4, 2, "bfloat16")


def batch_norm64(x, mean, var, weight, bias, eps):
    shape = (1, -1, 1, 1)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * weight.reshape(shape) + bias.reshape(shape)


def normalised_bound(x, mean, var, eps, d, exact_stats: bool) -> np.ndarray:
    """How far (x - mean') * scale' may lie from (x - mean) / sqrt(var + eps) when the statistics
    and the scale are rounded in a destination register of relative precision ``d`` (0: float32,
    meshnn's float64 rounding once; 2**-8: bfloat16): first-order, each rounding d relative."""
    scale = 1 / np.sqrt(var + eps)
    d_mean = 0 if exact_stats else d * np.abs(mean)
    square = var + mean**2
    d_var = 0 if exact_stats else d * (square + 2 * mean**2 + np.abs(var)) + 2 * np.abs(mean) * d_mean
    d_scale = d_var / (2 * np.maximum(var - d_var + eps, 1e-30)) + d
    y = (x - mean) * scale
    return d_mean * scale * 1.01 + np.abs(y) * d_scale * 1.01 + float32_error(np.abs(y) + 1, 16)


@pytest.mark.parametrize("dtype", [F32, BF16])
def test_batch_norm_evaluation_and_training(meshes, dtype):
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(4)
    x = rng.uniform(5, 10, (3, 4, 23, 23)).astype(np.float32)
    stats = [rng.uniform(4, 10, (1, 4, 1, 1)).astype(np.float32) for _ in range(4)]
    xq, (mq, vq, wq, bq) = quantized(x, dtype), [quantized(s, dtype) for s in stats]
    d = 0.0 if dtype is F32 else 2.0**-8  # a bfloat16 input computes with a 16-bit destination by default
    mean, var, weight, bias = (on(mesh, s, dtype) for s in stats)
    out = ttnn.batch_norm(on(mesh, x, dtype), running_mean=mean, running_var=var, weight=weight, bias=bias, eps=1e-5)
    ref = batch_norm64(xq, mq, vq, wq, bq, 1e-5)
    inner = normalised_bound(xq, mq, vq, 1e-5, d, exact_stats=True) * np.abs(wq)
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, inner, dtype), "evaluation")
    trained = ttnn.batch_norm(on(mesh, x, dtype), running_mean=mean, running_var=var, training=True, momentum=0.25)
    batch_mean = xq.mean(axis=(0, 2, 3), keepdims=True)
    batch_var = (xq**2).mean(axis=(0, 2, 3), keepdims=True) - batch_mean**2
    ref = (xq - batch_mean) / np.sqrt(batch_var + 1e-5)
    bound = output_bound(ref, normalised_bound(xq, batch_mean, batch_var, 1e-5, d, exact_stats=False), dtype)
    assert_within(ttnn.to_numpy(trained).astype(np.float64), ref, bound, "training")
    updated = 0.75 * mq + 0.25 * batch_mean
    got = ttnn.to_numpy(mean).astype(np.float64)  # running_mean updated in place
    bound = output_bound(updated, float32_error(updated, 16) + 2 * d * np.abs(updated), dtype)
    assert_within(got, updated, bound, "running_mean")


def test_batch_norm_fp32_destination_precision(meshes):
    """A FLOAT32 input computes in float32 by default; fp32_dest_acc_en=False keeps 16-bit values in
    the destination register, so the result is bfloat16-coarse (as ttnn's tests expect)."""
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(5)
    x = rng.uniform(5, 10, (2, 3, 32, 32)).astype(np.float32)
    mean, var = (on(mesh, rng.uniform(4, 10, (1, 3, 1, 1)), F32) for _ in range(2))
    arch = mesh.arch()
    low = ttnn.init_device_compute_kernel_config(arch, math_fidelity=ttnn.MathFidelity.HiFi4, fp32_dest_acc_en=False)
    fine = ttnn.to_numpy(ttnn.batch_norm(on(mesh, x, F32), running_mean=mean, running_var=var)).astype(np.float64)
    coarse = ttnn.batch_norm(on(mesh, x, F32), running_mean=mean, running_var=var, compute_kernel_config=low)
    coarse = ttnn.to_numpy(coarse).astype(np.float64)
    exact_equal(coarse, quantized(coarse.astype(np.float32), BF16), "bfloat16 values in a float32 tensor")
    assert np.abs(coarse - fine).max() > 0 and np.abs(coarse - fine).max() <= 2**-7 * np.abs(fine).max()


def test_distributed_layer_norm_sharded_form(meshes):
    """A width-sharded input runs ttnn's sharded kernels: the stats are the part's means, E(x)
    first; the residual is added into the input's own shard; the post half averages the parts."""
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(6)
    parts = [rng.normal(size=(1, 1, 32, 256)).astype(np.float32) for _ in range(2)]
    residual = rng.normal(size=(1, 1, 32, 256)).astype(np.float32)
    config = ttnn.create_sharded_memory_config(
        (32, 64), core_grid=ttnn.CoreGrid(y=1, x=4), strategy=ttnn.ShardStrategy.WIDTH,
        use_height_and_width_as_shard_shape=True,
    )  # fmt: skip
    program = ttnn.LayerNormShardedMultiCoreProgramConfig(
        compute_with_storage_grid_size=(4, 1), subblock_w=2, block_h=1, block_w=2, inplace=False
    )
    x0 = on(mesh, parts[0], F32, memory_config=config)
    stats0 = ttnn.layer_norm_pre_all_gather(
        x0, residual_input_tensor=on(mesh, residual, F32, memory_config=config), program_config=program, dtype=F32
    )
    summed = parts[0].astype(np.float64) + residual
    exact_equal(ttnn.to_numpy(x0).astype(np.float64), summed.astype(np.float32).astype(np.float64), "x + residual")
    got = ttnn.to_numpy(stats0).astype(np.float64)
    for column, terms in ((0, summed), (32, summed**2)):  # float32 sums: gamma_n of the summed magnitudes
        ref = terms.mean(-1)
        assert_within(got[..., column], ref, 2 * gamma(256) * np.abs(terms).mean(-1), f"stats column {column}")
    stats1 = ttnn.layer_norm_pre_all_gather(on(mesh, parts[1], F32, memory_config=config), program_config=program,
                                            dtype=F32)  # fmt: skip
    gathered = ttnn.concat([ttnn.to_memory_config(s, ttnn.L1_MEMORY_CONFIG) for s in (stats0, stats1)], -1)
    out = ttnn.layer_norm_post_all_gather(on(mesh, parts[1], F32, memory_config=config), gathered,
                                          epsilon=1e-5, program_config=program)  # fmt: skip
    whole = np.concatenate([summed, parts[1]], -1)
    mean, var = whole.mean(-1, keepdims=True), whole.var(-1, keepdims=True)
    ref = (parts[1] - mean) / np.sqrt(var + 1e-5)
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, float32_error(np.abs(ref) + 10, 600))


def test_layer_norm_reciprocals_are_a_height_sharded_float32_table_one_row_a_core(open_mesh):
    mesh = open_mesh((1, 1))
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(2, 1))})
    table = ttnn.create_layer_norm_reciprocals(mesh, cores, 24)
    config = table.memory_config()
    assert config.memory_layout == ttnn.TensorMemoryLayout.HEIGHT_SHARDED and config.buffer_type == ttnn.BufferType.L1
    assert config.shard_spec.shape == (1, 24) and table.dtype == ttnn.float32 and table.layout == ttnn.ROW_MAJOR_LAYOUT
    expected = (1.0 / torch.arange(1, 25, dtype=torch.float32)).repeat(6, 1)
    assert torch.equal(ttnn.to_torch(table), expected)
    x = torch.randn(32, 24, dtype=torch.float32)
    device_x = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT, device=mesh)
    assert torch.equal(
        ttnn.to_torch(ttnn.layer_norm(device_x, recip_tensor=table)), ttnn.to_torch(ttnn.layer_norm(device_x))
    )
    with pytest.raises(ttnn.MeshnnError, match="width must be a positive int"):
        ttnn.create_layer_norm_reciprocals(mesh, cores, 0)
    with pytest.raises(ttnn.MeshnnError, match="must be a CoreRangeSet"):
        ttnn.create_layer_norm_reciprocals(mesh, ttnn.CoreCoord(0, 0), 24)
