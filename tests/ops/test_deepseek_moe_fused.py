"""DeepSeek-V3's MoE decode ops of tt-metal 2026 against numpy:
``experimental.deepseek_moe_post_combine_tilize`` (values exactly, one 32-row shard a core) and
``experimental.deepseek_moe_fast_reduce_nc_fused`` (the score-weighted sum over the top-k slots with
on-axis gating and shared experts, on a 4x8 Galaxy along both cluster axes, a 2x4 mesh with a
mapping row per device, and the fallback without scores).  The reference computes the kernel's
float32 multiply-accumulate slot by slot from the bfloat16 inputs; the output is that sum rounded to
bfloat16, so it must lie within half a bfloat16 ulp of it (a wrong gate, score or slot moves a value
by far more)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

RM, TILE = ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT


def bf16(a: np.ndarray) -> np.ndarray:
    return torch.tensor(np.ascontiguousarray(a, np.float32)).bfloat16().float().numpy()


def half_ulp(values: np.ndarray) -> np.ndarray:
    """Half a bfloat16 ulp at each value (the rounding of a float32 sum into bfloat16)."""
    exponent = np.floor(np.log2(np.maximum(np.abs(values), 2.0**-126)))
    return 2.0 ** (exponent - 8) * 1.0001


@pytest.fixture(scope="module")
def galaxy():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(4, 8), system="galaxy")
    yield mesh
    ttnn.close_mesh_device(mesh)


def test_post_combine_tilize_moves_rows_into_one_tile_row_a_core(galaxy):
    sub = galaxy.create_submesh(ttnn.MeshShape(1, 1))
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 1))})
    config = ttnn.MemoryConfig(buffer_type=ttnn.BufferType.L1, nd_shard_spec=ttnn.NdShardSpec([32, 128], grid))
    x = bf16(np.random.default_rng(3).standard_normal((2, 1, 32, 512)))
    t = ttnn.from_torch(torch.tensor(x).bfloat16(), layout=RM, device=sub, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    out = ttnn.experimental.deepseek_moe_post_combine_tilize(t, output_memory_config=config)
    assert out.layout == TILE and out.dtype == ttnn.bfloat16
    assert out.memory_config().nd_shard_spec == config.nd_shard_spec  # the 2-D form filled in beside it
    assert tuple(out.shape) == (2, 1, 32, 512)
    np.testing.assert_array_equal(ttnn.to_torch(out).float().numpy(), x)  # moved, not computed
    with pytest.raises(ttnn.MeshnnValueError, match="one output shard per core"):
        small = ttnn.NdShardSpec([32, 256], grid)
        ttnn.experimental.deepseek_moe_post_combine_tilize(
            t, output_memory_config=ttnn.MemoryConfig(ttnn.BufferType.L1, small)
        )
    with pytest.raises(ttnn.MeshnnValueError, match="one tile"):
        tall = ttnn.NdShardSpec([64, 128], grid)
        ttnn.experimental.deepseek_moe_post_combine_tilize(
            t, output_memory_config=ttnn.MemoryConfig(ttnn.BufferType.L1, tall)
        )
    tiled = ttnn.to_layout(t, TILE)
    with pytest.raises(ttnn.MeshnnValueError, match="ROW_MAJOR"):
        ttnn.experimental.deepseek_moe_post_combine_tilize(tiled, output_memory_config=config)


def reference(act, scores, ids, mapping, coord, columns, axis, shared, scale):
    """One device's fused reduce: ``act`` (K, 1, T, H), ``scores`` (tokens, 1, 1, routed), ``ids``
    (tokens, 1, 1, routed), ``mapping`` (rows, experts); the float32 sum over K, slot by slot."""
    tokens, routed = scores.shape[0], scores.shape[-1]
    w = np.zeros((routed + shared, 32), np.float32)
    table = mapping[0 if mapping.shape[0] == 1 else coord[0] * columns + coord[1]]
    owner = table[ids.reshape(tokens, routed)]
    on = owner % columns == coord[1] if axis == 0 else owner // columns == coord[0]
    w[:routed, :tokens] = np.where(on, scores.reshape(tokens, routed), 0).T
    w[routed:, :tokens] = scale
    rows = w[:, np.arange(act.shape[2]) % 32]  # (K, T)
    total = np.zeros(act.shape[1:], np.float32)
    for k in range(act.shape[0]):
        total += act[k] * rows[k][None, :, None]
    return total[None]


def run_fused(mesh, axis, per_device, shared, scale, *, mapping_per_device=False, seed=0):
    rows, cols = tuple(mesh.shape)
    rng = np.random.default_rng(seed)
    routed, hidden, replicas = 4, 256, (cols if axis == 0 else rows)
    dispatch = rows if axis == 0 else cols
    batch, experts = per_device * dispatch, 2 * rows * cols
    act = bf16(rng.random((routed + shared, 1, batch, hidden)) - 0.5)
    scores = bf16(rng.random((batch, 1, 1, routed)))
    ids = np.stack([rng.permutation(experts)[:routed] for _ in range(batch)]).reshape(batch, 1, 1, routed)
    owner = np.arange(experts) // 2  # device d owns experts 2d, 2d + 1
    mapping = np.tile(owner, (rows * cols, 1)) if mapping_per_device else owner[None]
    dims = (2, None) if axis == 0 else (None, 2)
    shard = ttnn.ShardTensor2dMesh(mesh, (rows, cols), dims=dims)
    put = dict(device=mesh, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    t_act = ttnn.from_torch(torch.tensor(act).bfloat16(), layout=TILE, mesh_mapper=shard, **put)
    score_dims = (0, None) if axis == 0 else (None, 0)
    score_shard = ttnn.ShardTensor2dMesh(mesh, (rows, cols), dims=score_dims)
    t_scores = ttnn.from_torch(torch.tensor(scores).bfloat16(), layout=RM, mesh_mapper=score_shard, **put)
    t_ids = ttnn.from_torch(torch.tensor(ids, dtype=torch.int32), dtype=ttnn.uint16, layout=RM,
                            mesh_mapper=score_shard, **put)  # fmt: skip
    t_map = ttnn.from_torch(torch.tensor(mapping, dtype=torch.int32), dtype=ttnn.uint16, layout=RM,
                            mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **put)  # fmt: skip
    outs = ttnn.experimental.deepseek_moe_fast_reduce_nc_fused(
        t_act, t_ids, t_map, 0, split_size=hidden // replicas, cluster_axis=axis, scores_tensor=t_scores,
        num_shared_experts=shared, shared_expert_scale=scale,
    )  # fmt: skip
    assert len(outs) == replicas
    truncated = float((np.array([scale], np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)[0])
    width = hidden // replicas
    for d, coord in enumerate((r, c) for r in range(rows) for c in range(cols)):
        line = coord[0] if axis == 0 else coord[1]
        cut = slice(line * per_device, (line + 1) * per_device)
        ref = reference(act[:, :, cut], scores[cut], ids[cut], mapping, coord, cols, axis, shared, truncated)
        for i, out in enumerate(outs):
            got = ttnn.to_torch(ttnn.get_device_tensors(out)[d]).float().numpy()
            want = ref[..., i * width : (i + 1) * width]
            assert got.shape == (1, 1, per_device, width)
            assert (np.abs(got - want) <= half_ulp(want)).all(), f"device {coord} split {i}"
    return outs


@pytest.mark.parametrize("axis", [0, 1])
def test_fused_reduce_gates_routed_scores_by_the_owners_axis(galaxy, axis):
    run_fused(galaxy, axis, per_device=8, shared=1, scale=0.5, seed=axis)


def test_fused_reduce_short_token_slice_and_two_shared(galaxy):
    run_fused(galaxy, 1, per_device=3, shared=2, scale=0.3, seed=5)  # 0.3 truncated to bfloat16, not rounded


def test_fused_reduce_mapping_row_per_device():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
    try:
        run_fused(mesh, 0, per_device=32, shared=0, scale=1.0, mapping_per_device=True, seed=9)
    finally:
        ttnn.close_mesh_device(mesh)


def test_fused_reduce_without_scores_is_the_plain_reduce(galaxy):
    sub = galaxy.create_submesh(ttnn.MeshShape(1, 1))
    x = bf16(np.random.default_rng(1).standard_normal((8, 1, 32, 128)))
    t = ttnn.from_torch(torch.tensor(x).bfloat16(), layout=TILE, device=sub)
    outs = ttnn.experimental.deepseek_moe_fast_reduce_nc_fused(t, t, t, 0, split_size=64, cluster_axis=7)
    plain = ttnn.experimental.deepseek_moe_fast_reduce_nc(t, 0, split_size=64)
    for a, b in zip(outs, plain, strict=True):
        np.testing.assert_array_equal(ttnn.to_torch(a).float().numpy(), ttnn.to_torch(b).float().numpy())


def test_fused_reduce_refusals(galaxy):
    sub = galaxy.create_submesh(ttnn.MeshShape(1, 1))
    act = ttnn.from_torch(torch.zeros(5, 1, 32, 128).bfloat16(), layout=TILE, device=sub)
    scores = ttnn.from_torch(torch.zeros(32, 1, 1, 4).bfloat16(), layout=RM, device=sub)
    ids = ttnn.from_torch(torch.zeros(32, 1, 1, 4, dtype=torch.int32), dtype=ttnn.uint16, layout=RM, device=sub)
    ids32 = ttnn.from_torch(torch.zeros(32, 1, 1, 4, dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=sub)
    mapping = ttnn.from_torch(torch.zeros(1, 8, dtype=torch.int32), dtype=ttnn.uint16, layout=RM, device=sub)
    fused = ttnn.experimental.deepseek_moe_fast_reduce_nc_fused
    for kwargs, message in (
        (dict(ids=ids, dim=0, split=64, cluster_axis=2, shared=0), "cluster_axis"),
        (dict(ids=ids, dim=0, split=64, cluster_axis=0, shared=0), "num_routed"),
        (dict(ids=ids, dim=2, split=64, cluster_axis=0, shared=1), "reduction dim"),
        (dict(ids=ids32, dim=0, split=64, cluster_axis=0, shared=1), "uint16"),
        (dict(ids=ids, dim=0, split=16, cluster_axis=0, shared=1), "divisible by"),
    ):
        with pytest.raises(ttnn.MeshnnValueError, match=message):
            fused(act, kwargs["ids"], mapping, kwargs["dim"], split_size=kwargs["split"],
                  cluster_axis=kwargs["cluster_axis"], scores_tensor=scores,
                  num_shared_experts=kwargs["shared"])  # fmt: skip
    bad = ttnn.from_torch(torch.full((32, 1, 1, 4), 9, dtype=torch.int32), dtype=ttnn.uint16, layout=RM, device=sub)
    # an expert id past the mapping is device data: met in the kernel
    with pytest.raises((ttnn.QueueError, ttnn.MeshnnValueError), match="past the mapping"):
        fused(act, bad, mapping, 0, split_size=64, cluster_axis=0, scores_tensor=scores, num_shared_experts=1)
        ttnn.synchronize_device(sub)
