"""Reductions (issue 35) against float64 references: ttnn.sum / mean / max / min / std / var over
any dims, prod, argmax, topk, moe, cumsum / cumprod / ema, fast_reduce_nc, and the program cache.

Every reference starts from the input as the device holds it (``quantized``), is computed in
float64, and a device result may differ from it by the float32 evaluation (a few u relative) plus
one rounding into the output dtype (``output_bound``): meshnn reduces in float64 and rounds once.
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

REFERENCE = {
    "sum": lambda x, axes: x.sum(axis=axes, keepdims=True),
    "mean": lambda x, axes: x.mean(axis=axes, keepdims=True),
    "max": lambda x, axes: x.max(axis=axes, keepdims=True),
    "min": lambda x, axes: x.min(axis=axes, keepdims=True),
}


def ttnn_variance(x: np.ndarray, axes: tuple[int, ...], correction: bool) -> np.ndarray:
    """ttnn's variance (tt-metal 2026's Welford kernels): torch's, N - 1 with correction."""
    n = int(np.prod([x.shape[a] for a in axes])) - int(correction)
    return np.square(x - x.mean(axis=axes, keepdims=True)).sum(axis=axes, keepdims=True) / n


def face_row_has(mask: np.ndarray) -> np.ndarray:
    """True across each 16-value face row (along the last dim) where ``mask`` is true somewhere."""
    width = mask.shape[-1]
    padded = np.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, -width % 16)])
    rows = padded.reshape(*mask.shape[:-1], -1, 16).any(axis=-1, keepdims=True)
    return np.broadcast_to(rows, (*mask.shape[:-1], padded.shape[-1] // 16, 16)).reshape(padded.shape)[..., :width]


def reduced(ref: np.ndarray, axes: tuple[int, ...], keepdim: bool) -> np.ndarray:
    return ref if keepdim else ref.reshape([d for i, d in enumerate(ref.shape) if i not in axes])


@pytest.mark.parametrize("dtype, layout", [(F32, TILE), (BF16, TILE), (BF16, RM), (BFP8, TILE)])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "std", "var"])
def test_generic_reductions_match_float64(mesh, op, dtype, layout):
    """Every dim form (None, [], one, several, negative) with and without keepdim; the result
    keeps the input's dtype and layout and the padding of a TILE input never shows."""
    rng = np.random.default_rng(7)
    n = mesh.get_num_devices()
    x = rng.normal(1.0, 2.0, (n, 5, 37, 45)).astype(np.float32)
    xq = quantized(x, dtype, layout)
    t = to_mesh(mesh, x, dtype, layout, SHARD)
    forms = ((None, (0, 1, 2, 3)), ([], (0, 1, 2, 3)), (-1, (3,)), (-2, (2,)), (1, (1,)), ([1, 3], (1, 3)))
    for dim, axes in forms:
        for keepdim in (True, False) if len(axes) < 4 else (True,):  # (all dims without keepdim: rank 0)
            out = getattr(ttnn, op)(t, dim=dim, keepdim=keepdim)
            assert out.dtype is dtype and out.layout is layout
            per = [xq[i : i + 1] for i in range(n)]
            if op in ("std", "var"):
                refs = [ttnn_variance(p, axes, True) for p in per]
                refs = [np.sqrt(r) if op == "std" else r for r in refs]
            else:
                refs = [REFERENCE[op](p, axes) for p in per]
            ref = reduced(np.concatenate(refs), axes, keepdim)
            if len(axes) == 4:  # each device reduces its own [1, 5, 37, 45]
                ref = np.concatenate(refs)
            got = results(mesh, out, SHARD)[0]
            nan = np.isnan(ref)
            if dtype is BFP8 and nan.any():  # a NaN takes its block's shared exponent: its face row is lost
                nan = np.broadcast_to(face_row_has(nan), ref.shape)
            exact_equal(np.isnan(got) & ~nan, np.zeros_like(nan), f"{op} dim={dim}: NaN only where the reference has")
            got, ref = np.where(nan, 0, got), np.where(nan, 0, ref)
            bound = output_bound(ref, float32_error(ref, 4), dtype)
            assert_within(got, ref, bound, f"{op} dim={dim} keepdim={keepdim} {dtype} {layout}")


def test_std_var_are_torchs_of_the_scaled_input(mesh):
    """tt-metal 2026 (Welford, #41838): var([1, 2, 3, 4]) is torch's 5/3 with Bessel's correction, 1.25
    without; ``scalar`` scales the input first (var * s**2, std * |s|), not the two sums (0.81.1's
    formula gave 2 * 7.5 - 2.5**2 * 4 = -10 for s = 2); a reduced volume of 1 gives NaN / 0."""
    n = mesh.get_num_devices()
    x = np.tile(np.array([1.0, 2.0, 3.0, 4.0], np.float32), (n, 1, 1))
    t = to_mesh(mesh, x, F32, TILE, SHARD)
    var = results(mesh, ttnn.var(t, dim=-1, keepdim=True), SHARD)[0]
    assert_within(var, np.full(var.shape, 5.0 / 3), float32_error(np.full(var.shape, 2.0), 4))
    plain = results(mesh, ttnn.var(t, dim=-1, keepdim=True, correction=False), SHARD)[0]
    exact_equal(plain, np.full(plain.shape, 1.25), "var without correction is the biased variance")
    scaled = results(mesh, ttnn.var(t, dim=-1, scalar=2.0, correction=False), SHARD)[0]
    exact_equal(scaled, np.full(scaled.shape, 5.0), "var(2 x) = 4 var(x)")
    std = results(mesh, ttnn.std(t, dim=-1, scalar=-2.0, correction=False), SHARD)[0]
    exact_equal(std, np.full(std.shape, np.float32(np.sqrt(5.0))), "std(-2 x) = 2 std(x)")
    assert np.isnan(results(mesh, ttnn.var(t, dim=1), SHARD)[0]).all()  # (dim 1 has one element)
    exact_equal(results(mesh, ttnn.std(t, dim=1, correction=False), SHARD)[0], np.zeros((n, 4), np.float32))


def test_scalar_scales_every_reduction(mesh):
    x = np.ones((mesh.get_num_devices(), 3, 4, 5), np.float32)
    t = to_mesh(mesh, x, F32, TILE, SHARD)
    exact_equal(
        results(mesh, ttnn.sum(t, dim=[1, 2], scalar=2.0), SHARD)[0], np.full((mesh.get_num_devices(), 5), 24.0)
    )
    exact_equal(results(mesh, ttnn.mean(t, dim=3, scalar=2.0), SHARD)[0], np.full((mesh.get_num_devices(), 3, 4), 2.0))


def test_rank0_and_zero_volume_inputs(meshes):
    mesh = meshes[(1, 1)]
    scalar = ttnn.from_torch(torch.tensor(2.5), layout=TILE, device=mesh)
    assert tuple(ttnn.sum(scalar).shape) == () and float(ttnn.to_torch(ttnn.sum(scalar))) == 2.5
    assert torch.isnan(ttnn.to_torch(ttnn.std(scalar)))
    assert float(ttnn.to_torch(ttnn.var(scalar, correction=False))) == 0.0
    empty = ttnn.from_torch(torch.zeros(32, 0), layout=TILE, device=mesh)
    exact_equal(ttnn.to_torch(ttnn.sum(empty, dim=1)).numpy(), np.zeros(32, np.float32))
    assert torch.isnan(ttnn.to_torch(ttnn.mean(empty, dim=1))).all()
    assert tuple(ttnn.max(empty, dim=0, keepdim=True).shape) == (1, 0)
    with pytest.raises(ttnn.MeshnnValueError, match="non-zero size"):
        ttnn.max(empty, dim=1)
    with pytest.raises(ttnn.MeshnnTypeError, match="UINT32"):
        ttnn.sum(ttnn.from_torch(torch.ones(2, 3, dtype=torch.int32), layout=TILE, device=mesh))


@pytest.mark.parametrize("dtype, layout", [(F32, TILE), (BF16, TILE), (BFP8, TILE)])
def test_prod_along_a_dim_and_over_all(meshes, dtype, layout):
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(3)
    x = rng.uniform(0.8, 1.25, (2, 3, 37, 40)).astype(np.float32)
    xq = quantized(x, dtype, layout)
    t = ttnn.from_torch(torch.from_numpy(x), dtype=dtype, layout=layout, device=mesh)
    for dim in (0, 1, -2, 3):
        for keepdim in (True, False):
            ref = np.prod(xq, axis=dim, keepdims=keepdim)
            got = ttnn.to_numpy(ttnn.prod(t, dim, keepdim=keepdim)).astype(np.float64)
            assert_within(got, ref, output_bound(ref, float32_error(ref, 4), dtype), f"prod dim={dim}")
    if dtype is BF16:  # over every value (of a few: the product stays finite)
        small = ttnn.from_torch(torch.from_numpy(x[:, :, :3, :5].copy()), dtype=dtype, layout=layout, device=mesh)
        total, ref = ttnn.prod(small), np.prod(xq[:, :, :3, :5])
        assert tuple(total.shape) == ()
        assert_within(ttnn.to_numpy(total).astype(np.float64), ref, output_bound(ref, float32_error(ref, 4), BF16))


def test_prod_nc_form_writes_its_output(meshes):
    mesh = meshes[(1, 1)]
    x = np.arange(1, 1 + 2 * 3 * 32 * 32, dtype=np.float32).reshape(2, 3, 32, 32) % 5 + 1
    t = ttnn.from_torch(torch.from_numpy(x), dtype=F32, layout=TILE, device=mesh)
    out = ttnn.from_torch(torch.zeros(1, 3, 32, 32), dtype=F32, layout=TILE, device=mesh)
    result = ttnn.prod(t, out, dims=[0])
    assert result.buffer_address() == out.buffer_address()
    exact_equal(ttnn.to_numpy(out).astype(np.float64), np.prod(x, axis=0, keepdims=True))


def test_argmax_follows_ttnn(meshes):
    """The last dim only (ties: the first index); all values for ROW_MAJOR; UINT32 ROW_MAJOR out."""
    mesh = meshes[(1, 1)]
    x = np.array([[[3, 1, 3, 2], [0, 5, 5, 1]]], np.float32)
    for dtype, layout in ((F32, RM), (BF16, TILE), (ttnn.int32, RM)):
        t = ttnn.from_torch(torch.from_numpy(x).to(torch.int32 if dtype is ttnn.int32 else torch.float32),
                            dtype=dtype, layout=layout, device=mesh)  # fmt: skip
        out = ttnn.argmax(t, dim=-1, keepdim=True)
        assert out.dtype is ttnn.uint32 and out.layout is RM and tuple(out.shape) == (1, 2, 1)
        exact_equal(ttnn.to_numpy(out), np.array([[[0], [1]]], np.uint32))
    everywhere = ttnn.argmax(ttnn.from_torch(torch.from_numpy(x), device=mesh))
    assert tuple(everywhere.shape) == () and int(ttnn.to_numpy(everywhere)) == 5
    with pytest.raises(ttnn.MeshnnValueError, match="last dim"):
        ttnn.argmax(ttnn.from_torch(torch.from_numpy(x), device=mesh), dim=1)
    preallocated = ttnn.from_torch(torch.zeros(1, 2, dtype=torch.int32), dtype=ttnn.uint32, device=mesh)
    written = ttnn.argmax(ttnn.from_torch(torch.from_numpy(x), device=mesh), dim=-1, output_tensor=preallocated)
    assert written.buffer_address() == preallocated.buffer_address()
    exact_equal(ttnn.to_numpy(preallocated), np.array([[0, 1]], np.uint32))


@pytest.mark.parametrize("dtype", [BF16, BFP8])
def test_topk_values_and_indices(meshes, dtype):
    """The k largest / smallest along any dim, in order, values exactly the input's; UINT16 indices
    below 65536 values."""
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(11)
    x = (rng.permutation(64 * 96).reshape(1, 2, 32, 96) / 64).astype(np.float32)  # distinct in bfloat16
    xq = quantized(x, dtype)
    t = ttnn.from_torch(torch.from_numpy(x), dtype=dtype, layout=TILE, device=mesh)
    for dim, k, largest in ((-1, 5, True), (-1, 40, False), (2, 3, True)):
        values, indices = ttnn.topk(t, k, dim=dim, largest=largest)
        assert indices.dtype is ttnn.uint16 and values.dtype is dtype
        got_i = ttnn.to_numpy(indices).astype(np.int64)
        expected = np.take_along_axis(xq, got_i, axis=dim)
        exact_equal(ttnn.to_numpy(values).astype(np.float64), expected, "values are the input's at the indices")
        key = -xq if largest else xq
        ref_order = np.argsort(key, axis=dim, kind="stable")
        ref = np.take_along_axis(xq, np.take(ref_order, range(k), axis=dim), axis=dim)
        exact_equal(expected, ref, f"topk dim={dim} k={k} largest={largest}")


def test_topk_indices_tensor_and_outputs(meshes):
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(2)
    x = rng.normal(size=(1, 1, 32, 8192)).astype(np.float32)
    t = ttnn.from_torch(torch.from_numpy(x), dtype=BF16, layout=TILE, device=mesh)
    ids = np.broadcast_to(np.arange(8192)[::-1] % 7000, x.shape).astype(np.int32)
    given = ttnn.from_torch(torch.from_numpy(ids.copy()), dtype=ttnn.uint16, layout=TILE, device=mesh)
    _, plain = ttnn.topk(t, 32)
    _, mapped = ttnn.topk(t, 32, indices_tensor=given)  # the multi-core program reads indices_tensor
    exact_equal(ttnn.to_numpy(mapped), np.take_along_axis(ids, ttnn.to_numpy(plain).astype(np.int64), -1))
    values = ttnn.from_torch(torch.zeros(1, 1, 32, 32), dtype=BF16, layout=TILE, device=mesh)
    indices = ttnn.from_torch(torch.zeros(1, 1, 32, 32, dtype=torch.int32), dtype=ttnn.uint32, layout=TILE, device=mesh)
    got_v, got_i = ttnn.topk(t, 32, out=(values, indices))
    assert got_v.buffer_address() == values.buffer_address() and got_i.dtype is ttnn.uint32
    with pytest.raises(ttnn.MeshnnTypeError, match="Input tensor"):
        ttnn.topk(ttnn.from_torch(torch.from_numpy(x), dtype=F32, layout=TILE, device=mesh), 2)


def test_moe_weight_of_expert_zero(meshes):
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(5)
    n, c, h, w, experts, used = 1, 1, 32, 64, 8, 2
    gate = rng.normal(size=(n, c, h, w)).astype(np.float32)
    gate[..., experts:] = 0
    expert_mask = np.zeros((n, c, 1, w), np.float32)
    expert_mask[..., experts:] = -np.inf
    top_mask = np.zeros((n, c, 1, 32), np.float32)
    top_mask[..., used:] = -np.inf
    on = lambda a: ttnn.from_torch(torch.from_numpy(a), dtype=BF16, layout=TILE, device=mesh)  # noqa: E731
    out = ttnn.moe(on(gate + expert_mask), on(expert_mask), on(top_mask), 32)
    assert tuple(out.shape) == (n, c, h, 1) and list(out.padded_shape) == [n, c, h, 32]
    scores = quantized(gate + expert_mask, BF16) + expert_mask
    order = np.argsort(-scores, axis=-1, kind="stable")[..., :32]
    best = np.take_along_axis(scores, order, -1) + top_mask
    p = np.exp(best - best.max(-1, keepdims=True))
    ref = (np.where(order == 0, p / p.sum(-1, keepdims=True), 0)).sum(-1, keepdims=True)
    assert_within(ttnn.to_numpy(out).astype(np.float64), ref, output_bound(ref, float32_error(ref, 64), BF16))


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_accumulations(mesh, op):
    """Exact on small integers, forwards and reversed, cast first with dtype, written into out."""
    rng = np.random.default_rng(1)
    n = mesh.get_num_devices()
    x = rng.integers(-2, 3, (n, 3, 33, 35)).astype(np.float32)
    if op == "cumprod":
        x = np.sign(np.where(x == 0, 1, x)).astype(np.float32)  # +-1: products stay exact
    t = to_mesh(mesh, x, BF16, TILE, SHARD)
    function = np.cumsum if op == "cumsum" else np.cumprod
    for dim in (1, 2, -1):
        out = getattr(ttnn, op)(t, dim)
        exact_equal(results(mesh, out, SHARD)[0], function(x, axis=dim), f"{op} dim={dim}")
        back = getattr(ttnn, op)(t, dim, reverse_order=True, dtype=F32)
        assert back.dtype is F32
        exact_equal(results(mesh, back, SHARD)[0], np.flip(function(np.flip(x, dim), axis=dim), dim))
    target = ttnn.zeros_like(t)
    assert getattr(ttnn, op)(t, 1, out=target).buffer_address() == target.buffer_address()
    exact_equal(results(mesh, target, SHARD)[0], function(x, axis=1))


def test_ema_recurrence(meshes):
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(1, 2, 32, 70)).astype(np.float32)
    xq = quantized(x, BF16)
    ref, previous = np.empty_like(xq), np.zeros(xq.shape[:-1])
    for i in range(xq.shape[-1]):
        previous = 0.25 * previous + 0.75 * xq[..., i]
        ref[..., i] = previous
    out = ttnn.ema(ttnn.from_torch(torch.from_numpy(x), dtype=BF16, layout=TILE, device=mesh), 0.25)
    bound = output_bound(ref, float32_error(ref, 8), BF16)
    got = ttnn.to_numpy(out).astype(np.float64)
    assert_within(got, ref, bound, "ema")
    assert exceeds(np.roll(got, 1, axis=-1), ref, bound), "the bound catches a shifted recurrence"


def test_fast_reduce_nc_runs_one_program_per_dim(meshes):
    mesh = meshes[(1, 1)]
    mesh.enable_program_cache()
    mesh.clear_program_cache()
    x = np.ones((2, 3, 32, 32), np.float32)
    t = ttnn.from_torch(torch.from_numpy(x), dtype=BF16, layout=TILE, device=mesh)
    out = ttnn.experimental.fast_reduce_nc(t, dims=[0, 1])
    exact_equal(ttnn.to_numpy(out).astype(np.float64), np.full((1, 1, 32, 32), 6.0))
    assert mesh.num_program_cache_entries() == 2
    ttnn.experimental.fast_reduce_nc(t, dims=[0, 1])  # the same programs again: no new entry
    assert mesh.num_program_cache_entries() == 2
    ttnn.sum(t, dim=-1)
    assert mesh.num_program_cache_entries() == 3
    mesh.disable_and_clear_program_cache()
    assert mesh.num_program_cache_entries() == 0
    mesh.enable_program_cache()


@pytest.mark.parametrize("dtype", [BF16, BFP8])
def test_deepseek_moe_fast_reduce_nc_sums_then_splits(meshes, dtype):
    """DeepSeek's MoE reduce: the sum over dim 0 (8 top-k slots, kept as 1) in float32, rounded
    into the input's dtype, cut into 4 outputs of 64 columns; one program; a split that leaves a
    part narrower than a tile and a reduction over a tile dim are refused."""
    mesh = meshes[(1, 1)]
    x = np.random.default_rng(21).standard_normal((8, 1, 32, 256)).astype(np.float32)
    t = ttnn.from_torch(torch.from_numpy(x), dtype=dtype, layout=TILE, device=mesh)
    with ttnn.perf_capture() as capture:
        outs = ttnn.experimental.deepseek_moe_fast_reduce_nc(t, 0, split_size=64)
    assert len(capture.recorder(mesh).records) == 1 and len(outs) == 4
    held = quantized(x, dtype)
    ref = held.sum(axis=0, keepdims=True)
    bound = output_bound(ref, gamma(8) * np.abs(held).sum(axis=0, keepdims=True), dtype)
    for i, out in enumerate(outs):
        assert tuple(out.shape) == (1, 1, 32, 64) and out.dtype == dtype
        part = slice(64 * i, 64 * (i + 1))
        assert_within(ttnn.to_numpy(out), ref[..., part], bound[..., part], f"split {i}")
    with pytest.raises(ValueError, match="divisible by"):
        ttnn.experimental.deepseek_moe_fast_reduce_nc(t, 0, split_size=16)
    with pytest.raises(ValueError, match="reduction dim"):
        ttnn.experimental.deepseek_moe_fast_reduce_nc(t, 2, split_size=64)


@pytest.mark.parametrize("dtype", [F32, BF16, BFP8])
def test_fill_implicit_tile_padding(meshes, dtype):
    """The copy holds fill_value in every padding position and the input's values elsewhere; a
    tensor with no padding comes back as it is."""
    from meshnn.ops.values import logical_mask, stored_elements

    mesh = meshes[(1, 1)]
    x = np.random.default_rng(9).uniform(1, 2, (2, 3, 37)).astype(np.float32)
    t = ttnn.from_torch(torch.from_numpy(x), dtype=dtype, layout=TILE, device=mesh)
    filled = ttnn.fill_implicit_tile_padding(t, 42)
    kept = ttnn.to_numpy(filled).astype(np.float64)
    if dtype is BFP8:  # 42 joins the face rows it pads: their shared exponent grows, one step is 42 / 64
        assert_within(kept, quantized(x, dtype), np.full(x.shape, 42 / 64), "the logical values, re-packed")
    else:
        exact_equal(kept, quantized(x, dtype), "the logical values are kept")
    mesh.mesh_command_queue(0).finish()
    elements = stored_elements(filled.storage.mesh_buffer.slab()[:1], filled.spec)[0]
    padding = ~logical_mask(filled.spec)
    assert padding.any() and np.all(elements[padding] == 42)
    whole = ttnn.from_torch(torch.ones(32, 64), dtype=dtype, layout=TILE, device=mesh)
    assert ttnn.fill_implicit_tile_padding(whole, 1.0) is whole
    with pytest.raises(ttnn.MeshnnValueError, match="tile layout"):
        ttnn.fill_implicit_tile_padding(ttnn.from_torch(torch.ones(2, 3), device=mesh), 0.0)


def test_intimg_is_the_running_sum_over_h_then_w(meshes):
    mesh = meshes[(1, 1)]
    x = np.random.default_rng(8).integers(0, 4, (1, 12, 40, 64)).astype(np.float32)
    out = ttnn.experimental.intimg(ttnn.from_torch(torch.from_numpy(x), dtype=F32, layout=TILE, device=mesh))
    exact_equal(ttnn.to_numpy(out).astype(np.float64), np.cumsum(np.cumsum(x, 1), 2), "small integers sum exactly")


def test_manual_seed_makes_sampling_reproducible(meshes):
    """manual_seed sets every user's stream: a sampling call after it draws the same tokens again;
    a second call without a new seed draws on; the seed 2**32 - 1 leaves the streams alone."""
    mesh = meshes[(1, 1)]
    rng = np.random.default_rng(10)
    values = ttnn.from_torch(torch.from_numpy(rng.normal(size=(1, 1, 32, 64)).astype(np.float32)), dtype=BF16,
                             layout=TILE, device=mesh)  # fmt: skip
    ids = ttnn.from_torch(torch.arange(64, dtype=torch.int32).expand(1, 1, 32, 64).contiguous(), dtype=ttnn.int32,
                          device=mesh)  # fmt: skip
    k = ttnn.from_torch(torch.full((32,), 20, dtype=torch.int32), dtype=ttnn.uint32, device=mesh)
    p = ttnn.from_torch(torch.full((32,), 0.9), dtype=BF16, device=mesh)
    temp = ttnn.from_torch(torch.ones(32), dtype=BF16, device=mesh)

    def draw():
        return ttnn.to_numpy(ttnn.sampling(values, ids, k, p, temp))

    ttnn.manual_seed(42, device=mesh)
    first, second = draw(), draw()
    assert not np.array_equal(first, second), "the streams advance"
    ttnn.manual_seed(42, device=mesh)
    ttnn.manual_seed(2**32 - 1, device=mesh, user_ids=3)
    exact_equal(draw(), first, "reseeded: the same tokens")
    with pytest.raises(ttnn.MeshnnValueError, match="Device must be provided"):
        ttnn.manual_seed(1)


def test_manual_seed_from_tensors_on_a_planning_mesh_checks_specs_and_reads_nothing():
    """A plan's seed tensors hold no bytes (the 70B Galaxy's TTSampling seeds from tensors at every
    decode step): the call is checked by the tensors' specs and sets no stream; the same call on an
    executing mesh seeds the streams."""

    def uint32(mesh, n):
        return ttnn.from_torch(torch.arange(n, dtype=torch.int32), dtype=ttnn.uint32, device=mesh)

    with ttnn.open_mesh_device(ttnn.MeshShape(1, 2), execute=False) as plan:
        ttnn.manual_seed(uint32(plan, 32), user_ids=uint32(plan, 32))
        ttnn.manual_seed(uint32(plan, 4))
        ttnn.manual_seed(7, device=plan, user_ids=uint32(plan, 3))
        with pytest.raises(ttnn.MeshnnValueError, match="same number of elements"):
            ttnn.manual_seed(uint32(plan, 4), user_ids=uint32(plan, 3))
        with pytest.raises(ttnn.MeshnnTypeError, match="UINT32 ROW_MAJOR"):
            ttnn.manual_seed(ttnn.from_torch(torch.zeros(4, dtype=torch.int32), dtype=ttnn.int32, device=plan))
    with ttnn.open_mesh_device(ttnn.MeshShape(1, 2)) as mesh:
        ttnn.manual_seed(uint32(mesh, 32), user_ids=uint32(mesh, 32))
        with pytest.raises(ttnn.MeshnnValueError, match="same number of elements"):
            ttnn.manual_seed(uint32(mesh, 4), user_ids=uint32(mesh, 3))
