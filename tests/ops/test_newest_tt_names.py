"""Names the newest tt_transformers (tt-metal 2026-06) reaches for and ttnn 0.81.1 lacked (issue 30).

``ttnn.cluster.ClusterType`` numbered as tt-metal's ``cluster.hpp`` of 2026 numbers it (P300_X2,
CUSTOM: ModelArgs' ``ccl_topology`` names P300_X2), and ``ttnn.div``'s newer keywords
(``rounding_mode`` for 0.81's ``round_mode``, ``fast_and_approximate_mode``), which tt-metal's
sampling code (``tt_log_probs.py``) calls.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn


def test_cluster_types_of_newer_tt_metal_keep_its_numbers():
    types = ttnn.cluster.ClusterType
    assert types.P300_X2.value == 17 and types.CUSTOM.value == 18
    assert types.BLACKHOLE_GALAXY.value == 16  # the older numbers unchanged
    assert len({t.value for t in types}) == len(list(types))


@pytest.fixture
def single():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    yield mesh
    ttnn.close_mesh_device(mesh)


def _on(mesh, values, dtype):
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_div_rounding_mode_is_round_mode_under_its_newer_name(single, mode):
    values = np.array([[7.0, -7.0, 9.5, -0.5, 5.0, 1e3, -1e3, 3.0]] * 32, dtype=np.float32)
    x = _on(single, values, ttnn.float32)
    new = ttnn.to_torch(ttnn.div(x, 2.0, rounding_mode=mode)).numpy()
    old = ttnn.to_torch(ttnn.div(x, 2.0, round_mode=mode)).numpy()
    expect = (np.floor if mode == "floor" else np.trunc)(values / np.float32(2.0))
    np.testing.assert_array_equal(new, expect)  # float32: exact
    np.testing.assert_array_equal(new, old)
    same = ttnn.to_torch(ttnn.div(x, 2.0, round_mode=mode, rounding_mode=mode)).numpy()
    np.testing.assert_array_equal(same, expect)


def test_div_rounding_mode_gives_int32_quotients_as_round_mode_does(single):
    ids = np.arange(-64, 64, dtype=np.int32).reshape(4, 32)
    x = _on(single, ids, ttnn.int32)
    floored = ttnn.div(x, 7, rounding_mode="floor")
    assert floored.dtype == ttnn.int32  # without a mode an int32 quotient is float32
    np.testing.assert_array_equal(ttnn.to_torch(floored).numpy(), np.floor_divide(ids, 7))
    assert ttnn.div(x, 7).dtype == ttnn.float32


def test_div_fast_and_approximate_mode_is_accepted_and_exact_here(single):
    rng = np.random.default_rng(30)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = (rng.random((32, 64)) + 0.5).astype(np.float32)
    got = ttnn.to_torch(
        ttnn.div(_on(single, a, ttnn.float32), _on(single, b, ttnn.float32), fast_and_approximate_mode=True)
    ).numpy()
    np.testing.assert_array_equal(got, a / b)  # meshnn divides exactly in float32 either way


def _rm(mesh, values, dtype):
    return ttnn.from_torch(torch.from_numpy(values), dtype=dtype, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)


def test_scatter_add_counts_repeated_indices_as_torch_does(single):
    """tt-metal's penalties count tokens so: ``scatter_add(zeros, 1, tokens, ones)``."""
    rng = np.random.default_rng(7)
    tokens = rng.integers(0, 64, (4, 40)).astype(np.int32)  # many repeats per row
    zeros = np.zeros((4, 64), np.int32)
    ones = np.ones((4, 40), np.int32)
    got = ttnn.to_torch(
        ttnn.scatter_add(
            _rm(single, zeros, ttnn.int32), 1, _rm(single, tokens, ttnn.int32), _rm(single, ones, ttnn.int32)
        )
    )
    expect = torch.zeros(4, 64, dtype=torch.int32).scatter_add_(
        1, torch.from_numpy(tokens).long(), torch.ones(4, 40, dtype=torch.int32)
    )
    assert torch.equal(got, expect)  # integers: exact
    again = ttnn.scatter(
        _rm(single, zeros, ttnn.int32), 1, _rm(single, tokens, ttnn.int32), _rm(single, ones, ttnn.int32), reduce="add"
    )
    assert torch.equal(ttnn.to_torch(again), expect)


def test_scatter_multiply_and_add_along_dim_0_of_bfloat16(single):
    rng = np.random.default_rng(8)
    base = rng.uniform(0.5, 2.0, (6, 32)).astype(np.float32)
    index = rng.integers(0, 6, (10, 32)).astype(np.int32)
    src = rng.uniform(0.5, 2.0, (10, 32)).astype(np.float32)
    as_bf16 = torch.from_numpy(base).bfloat16()
    src_bf16 = torch.from_numpy(src).bfloat16()
    for reduce, torch_reduce in (("add", "sum"), ("multiply", "prod")):
        got = ttnn.to_torch(
            ttnn.scatter(
                _rm(single, base, ttnn.bfloat16),
                0,
                _rm(single, index, ttnn.int32),
                _rm(single, src, ttnn.bfloat16),
                reduce=reduce,
            )
        ).double()
        exact = as_bf16.double().scatter_reduce(0, torch.from_numpy(index).long(), src_bf16.double(), torch_reduce)
        # one rounding into bfloat16: relative 2^-8
        assert torch.all((got - exact).abs() <= exact.abs() * 2.0**-8), (reduce, (got - exact).abs().max())
        assert not torch.equal(got, as_bf16.double())  # something was combined


def test_slice_writes_into_output_tensor_and_returns_it():
    """tt-metal's penalties slice a count table into a kept buffer: ``slice(..., output_tensor=)``."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    try:
        values = np.arange(32 * 128, dtype=np.int32).reshape(32, 128)
        shard = ttnn.ShardTensorToMesh(mesh, dim=1)
        x = ttnn.from_torch(
            torch.from_numpy(values), ttnn.int32, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=shard
        )
        zeros = torch.zeros(32, 64, dtype=torch.int32)
        out = ttnn.from_torch(zeros, ttnn.int32, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=shard)
        address = out.buffer_address()
        got = ttnn.slice(x, [0, 0], [32, 32], output_tensor=out)
        assert got is out and out.buffer_address() == address  # written in place
        joined = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=1)).numpy()
        expect = np.concatenate([values[:, :32], values[:, 64:96]], axis=1)  # each device's first 32 columns
        np.testing.assert_array_equal(joined, expect)
        whole = ttnn.slice(x, [0, 0], [32, 64], output_tensor=ttnn.from_torch(
            torch.zeros(32, 128, dtype=torch.int32), ttnn.int32, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=shard
        ))  # fmt: skip
        np.testing.assert_array_equal(
            ttnn.to_torch(whole, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=1)).numpy(), values
        )
        assert x.is_allocated()  # a slice of everything copies; the input stays
    finally:
        ttnn.close_mesh_device(mesh)


def test_tensor_deallocate_method_keeps_a_buffer_another_view_holds(single):
    """``Tensor.deallocate`` binds ``force=False`` (``ttnn.deallocate`` ``force=True``): tt-metal's
    penalties reshape the sampled tokens (a view) and deallocate the view, the tokens stay."""
    tokens = _rm(single, np.arange(32, dtype=np.int32).reshape(1, 1, 1, 32), ttnn.int32)
    view = ttnn.reshape(tokens, [32, 1])
    assert view.buffer_address() == tokens.buffer_address()  # a view of the same buffer
    view.deallocate()
    assert tokens.is_allocated()
    np.testing.assert_array_equal(ttnn.to_torch(tokens).numpy().ravel(), np.arange(32))
    view.deallocate(force=True)
    assert not tokens.is_allocated()
    alone = _rm(single, np.zeros((1, 32), np.int32), ttnn.int32)
    alone.deallocate()  # no other view: freed
    assert not alone.is_allocated()
    again = _rm(single, np.zeros((1, 32), np.int32), ttnn.int32)
    other = ttnn.reshape(again, [32, 1])
    ttnn.deallocate(other)  # ttnn.deallocate forces
    assert not again.is_allocated()


def test_topk_indices_tensor_shape_matters_only_where_ttnn_reads_it(single):
    """tt-metal's single-device sampling (multi-step reduction) passes index halves half as wide as
    its logits halves: ttnn's multi-core topk would read past their end (refused, saying so); the
    single-core program (a dim under 8192) never reads indices_tensor, so its shape is free there."""
    rng = np.random.default_rng(3)
    small = rng.standard_normal((1, 1, 32, 1024)).astype(np.float32)
    x = _on(single, small, ttnn.bfloat16)
    narrow = _on(single, np.zeros((1, 1, 32, 512), np.int32), ttnn.uint16)
    _, indices = ttnn.topk(x, 32, indices_tensor=narrow)
    _, plain = ttnn.topk(x, 32)
    assert torch.equal(ttnn.to_torch(indices), ttnn.to_torch(plain))  # its own positions
    wide = _on(single, rng.standard_normal((1, 1, 32, 16384)).astype(np.float32), ttnn.bfloat16)
    half = _on(single, np.zeros((1, 1, 32, 8192), np.int32), ttnn.uint16)
    with pytest.raises(ttnn.MeshnnValueError, match="past the end"):
        ttnn.topk(wide, 32, indices_tensor=half)


def _rotate_half_reference(x, cos, sin):
    """HuggingFace's apply_rotary_pos_emb, in float64."""
    half = x.shape[-1] // 2
    turned = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + turned * sin, (x * cos).abs() + (turned * sin).abs()


def _within_one_bfloat16_rounding(got, exact, size):
    assert torch.all((got - exact).abs() <= exact.abs() * 2.0**-8 + size * 2.0**-20), (got - exact).abs().max()


@pytest.mark.parametrize("head_dim", [32, 64, 128])
def test_rotary_embedding_hf_prefill_is_huggingfaces_rotation(single, head_dim):
    """tt_transformers' use_hf_rope prefill path: q ``[1, heads, s, d]``, cos / sin ``[1, 1, s_cache, d]``."""
    gen = torch.Generator().manual_seed(head_dim)
    x = torch.randn(1, 4, 64, head_dim, generator=gen).bfloat16()
    angles = torch.rand(1, 1, 96, head_dim, generator=gen) * 6.0
    cos, sin = angles.cos().bfloat16(), angles.sin().bfloat16()
    on = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=single)  # noqa: E731
    out = ttnn.experimental.rotary_embedding_hf(on(x), on(cos), on(sin), is_decode_mode=False)
    assert out.dtype == ttnn.bfloat16 and tuple(out.shape) == (1, 4, 64, head_dim)
    exact, size = _rotate_half_reference(x.double(), cos[..., :64, :].double(), sin[..., :64, :].double())
    _within_one_bfloat16_rounding(ttnn.to_torch(out).double(), exact, size)


def test_rotary_embedding_hf_decode_rotates_each_user_at_its_own_position(single):
    users, heads, d = 8, 8, 64
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(1, users, heads, d, generator=gen).bfloat16()
    angles = torch.rand(1, users, 1, d, generator=gen) * 6.0
    cos, sin = angles.cos().bfloat16(), angles.sin().bfloat16()
    grid = ttnn.CoreGrid(y=1, x=users)

    def sharded(t, rows):
        config = ttnn.create_sharded_memory_config(
            shape=(rows, d),
            core_grid=grid,
            strategy=ttnn.ShardStrategy.HEIGHT,
            use_height_and_width_as_shard_shape=True,
        )
        return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=single, memory_config=config)

    out = ttnn.experimental.rotary_embedding_hf(sharded(x, 32), sharded(cos, 32), sharded(sin, 32), is_decode_mode=True)
    assert out.memory_config().memory_layout == ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    exact, size = _rotate_half_reference(x.double(), cos.double(), sin.double())
    _within_one_bfloat16_rounding(ttnn.to_torch(out).double(), exact, size)
    other = ttnn.experimental.rotary_embedding_hf(
        sharded(x, 32), sharded(cos.roll(1, 1), 32), sharded(sin.roll(1, 1), 32), is_decode_mode=True
    )
    assert not torch.equal(ttnn.to_torch(other), ttnn.to_torch(out))  # each user's own row


def test_argmax_writes_an_output_tensor_of_the_results_volume(single):
    """tt-metal's forced-argmax sampling: ``argmax([1, 1, 32, V], dim=-1, keepdim=False,
    output_tensor=<[1, 1, 1, 32] DRAM>)``; ttnn takes the output's spec as it is."""
    rng = np.random.default_rng(12)
    logits = rng.standard_normal((1, 1, 32, 256)).astype(np.float32)
    x = _rm(single, logits, ttnn.bfloat16)
    out = _rm(single, np.zeros((1, 1, 1, 32), np.uint32), ttnn.uint32)
    got = ttnn.argmax(x, dim=-1, keepdim=False, output_tensor=out)
    assert got is out and tuple(got.shape) == (1, 1, 1, 32)
    expect = torch.from_numpy(logits).bfloat16().float().argmax(-1).reshape(1, 1, 1, 32)
    assert torch.equal(ttnn.to_torch(got).long(), expect)  # indices: exact
    with pytest.raises(ttnn.MeshnnValueError, match="another volume"):
        ttnn.argmax(x, dim=-1, output_tensor=_rm(single, np.zeros((1, 1, 1, 64), np.uint32), ttnn.uint32))


def test_slice_write_is_also_bound_under_experimental_as_tt_metal_2026_binds_it(single):
    assert ttnn.experimental.slice_write is ttnn.slice_write
    out = ttnn.from_torch(torch.zeros(1, 1, 64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=single)
    part = ttnn.from_torch(torch.ones(1, 1, 32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=single)
    ttnn.experimental.slice_write(part, out, [0, 0, 32, 0], [1, 1, 64, 64], [1, 1, 1, 1])
    values = ttnn.to_torch(out)
    assert values[..., 32:, :].eq(1).all() and values[..., :32, :].eq(0).all()
