"""Data movement ops of meshnn/ops/movement against numpy (moves are exact: equality), with ttnn's
rules where they differ from torch's: stack, grouped concat, slice and tensor[...], slice_write,
pad's checks, fill_implicit_tile_padding, repeat's rank matching, repeat_interleave's bfloat16
round trip, sort, gather / scatter and their TOSA forms, index_fill, nonzero."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import mesh_fixtures

meshes, mesh = mesh_fixtures([(1, 1), (1, 8)])
TILE, RM = ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT


def put(mesh, values, dtype=ttnn.float32, layout=TILE, **kw):
    """``values`` replicated on every device of ``mesh``."""
    return ttnn.from_torch(
        torch.from_numpy(np.ascontiguousarray(values)), dtype=dtype, layout=layout, device=mesh,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **kw,
    )  # fmt: skip


def each(tensor) -> list[np.ndarray]:
    """Every device's values (float64 for floats, int64 for integers)."""
    out = []
    for shard in ttnn.get_device_tensors(tensor):
        v = ttnn.to_numpy(shard)
        out.append(v.astype(np.float64) if v.dtype.kind == "f" or v.dtype == ml_dtypes.bfloat16 else v.astype(np.int64))
    return out


def same(tensor, want) -> None:
    for got in each(tensor):
        assert got.shape == np.shape(want)
        np.testing.assert_array_equal(got, want)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.mark.parametrize("layout", [TILE, RM])
def test_stack_adds_a_dim(mesh, rng, layout):
    xs = [rng.standard_normal((5, 37)).astype(np.float32) for _ in range(3)]
    tensors = [put(mesh, x, layout=layout) for x in xs]
    for dim in (0, 1, 2, -1, -3):
        same(ttnn.stack(tensors, dim), np.stack(xs, dim))
    with pytest.raises(ttnn.MeshnnValueError, match="input_tensors\\[1\\]"):
        ttnn.stack([tensors[0], put(mesh, xs[0][:, :5], layout=layout)], 0)


def test_grouped_concat_interleaves_channel_groups(mesh, rng):
    a = rng.standard_normal((1, 1, 32, 64)).astype(np.float32)
    b = rng.standard_normal((1, 1, 32, 32)).astype(np.float32)
    out = ttnn.concat([put(mesh, a), put(mesh, b)], dim=3, groups=2)
    want = np.concatenate([a.reshape(1, 1, 32, 2, 32), b.reshape(1, 1, 32, 2, 16)], -1).reshape(1, 1, 32, 96)
    same(out, want)
    golden = ttnn.get_golden_function(ttnn.concat)([torch.from_numpy(a), torch.from_numpy(b)], 3, 2)
    np.testing.assert_array_equal(golden.numpy(), want)
    with pytest.raises(ttnn.MeshnnValueError, match="groups"):
        ttnn.concat([put(mesh, a), put(mesh, a)], dim=2, groups=2)


def test_slice_overloads_and_getitem(mesh, rng):
    x = rng.standard_normal((4, 6, 40, 50)).astype(np.float32)
    t = put(mesh, x)
    same(ttnn.slice(t, [0, 1, 3, 5], [4, 6, 33, 50], [2, 1, 3, 1]), x[0:4:2, 1:6, 3:33:3, 5:50])
    same(ttnn.slice(t, starts=[0, 0, 0, 0], ends=[1, 2, 32, 32], steps=[1, 1, 1, 1]), x[:1, :2, :32, :32])
    same(t[..., ::2, 1::2], x[..., ::2, 1::2])
    same(t[1, -1], x[1, -1])  # ints remove their dims, as ttnn's __getitem__
    same(t[0:-1, 2], x[0:-1, 2])
    whole = ttnn.slice(t, [0, 0, 0, 0], [4, 6, 40, 50])  # a slice of everything: the tensor's own memory
    assert whole.buffer_address() == t.buffer_address() and whole.spec == t.spec
    starts = ttnn.from_torch(torch.tensor([1, 0, 8, 0]), dtype=ttnn.int32)
    ends = ttnn.from_torch(torch.tensor([3, 6, 40, 20]), dtype=ttnn.int32)
    same(ttnn.slice(t, starts, ends), x[1:3, :, 8:40, :20])
    with pytest.raises(ttnn.MeshnnValueError, match="End 1 must be greater than or equal to start 3"):
        ttnn.slice(t, [3, 0, 0, 0], [1, 6, 40, 50])
    u16 = put(mesh, rng.integers(0, 100, (2, 64)).astype(np.uint16), dtype=ttnn.uint16)
    with pytest.raises(ttnn.MeshnnValueError, match="uint16"):
        ttnn.slice(u16, [0, 1], [2, 64], [1, 2])  # a TILE slice with steps goes through ROW_MAJOR


def test_slice_of_a_host_tensor_and_an_empty_slice(mesh, rng):
    x = rng.standard_normal((3, 8)).astype(np.float32)
    host = ttnn.from_torch(torch.from_numpy(x))
    np.testing.assert_array_equal(ttnn.to_numpy(host[1:, 2:5]), x[1:, 2:5])
    with pytest.raises(ttnn.MeshnnValueError, match="non-unit stride"):
        host[::2]
    empty = put(mesh, x, layout=RM)[0:0]
    assert tuple(empty.shape) == (0, 8) and all(v.size == 0 for v in each(empty))


def test_slice_write_fills_a_strided_window_in_place(mesh, rng):
    base = np.zeros((4, 6, 40, 50), np.float32)
    src = rng.standard_normal((2, 3, 40, 25)).astype(np.float32)
    out = put(mesh, base, dtype=ttnn.bfloat16)
    address = out.buffer_address()
    ttnn.slice_write(put(mesh, src, dtype=ttnn.bfloat16), out, [0, 0, 0, 0], [4, 6, 40, 50], [2, 2, 1, 2])
    want = base.copy()
    want[::2, ::2, :, ::2] = src.astype(ml_dtypes.bfloat16).astype(np.float32)
    same(out, want)
    assert out.buffer_address() == address
    with pytest.raises(ttnn.MeshnnValueError, match="window"):
        ttnn.slice_write(put(mesh, src), out, [0, 0, 0, 0], [4, 6, 40, 50], [1, 1, 1, 1])


def test_pad_follows_ttnn_rules(mesh, rng):
    x = rng.standard_normal((2, 30, 20)).astype(np.float32)
    t = put(mesh, x)
    same(ttnn.pad(t, [(0, 2), (0, 5)], value=1.5), np.pad(x, [(0, 0), (0, 2), (0, 5)], constant_values=1.5))
    same(ttnn.pad(t, [2, 32, 32], [0, 0, 0], -1.0), np.pad(x, [(0, 0), (0, 2), (0, 12)], constant_values=-1.0))
    rows = put(mesh, x, layout=RM)
    same(ttnn.pad(rows, [(1, 0), (2, 1), (0, 3)], 0.5), np.pad(x, [(1, 0), (2, 1), (0, 3)], constant_values=0.5))
    with pytest.raises(ttnn.MeshnnValueError, match="does not support front padding"):
        ttnn.pad(t, [(0, 0), (2, 0), (0, 0)], 0.0)
    with pytest.raises(ttnn.MeshnnValueError, match="padding len can't be larger"):
        ttnn.pad(t, [(0, 1)] * 4, 0.0)


@pytest.mark.parametrize(("dtype", "fill"), [(ttnn.bfloat16, float("-inf")), (ttnn.float32, 1.5), (ttnn.int32, 7)])
def test_fill_implicit_tile_padding_writes_the_padding_only(mesh, rng, dtype, fill):
    x = rng.integers(-9, 9, (3, 17, 40)).astype(np.float32)
    t = put(mesh, x, dtype=dtype)
    out = ttnn.fill_implicit_tile_padding(t, fill, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert out.memory_config() == ttnn.L1_MEMORY_CONFIG and tuple(out.shape) == (3, 17, 40)
    padded = np.full((3, 32, 64), fill, np.float64)
    padded[:, :17, :40] = x
    for shard in ttnn.get_device_tensors(out):
        np.testing.assert_array_equal(shard.cpu().to_torch_with_padded_shape().double().numpy(), padded)
    same(out, x)
    aligned = put(mesh, np.zeros((32, 32), np.float32))
    assert ttnn.fill_implicit_tile_padding(aligned, 3.0) is aligned  # no padding: the tensor itself


@pytest.mark.parametrize(("dtype", "pad"), [(ttnn.float32, -2.5), (ttnn.bfloat16, 1.0), (ttnn.uint32, 7)])
def test_tiled_reshape_fills_its_padding_with_an_explicit_pad_value(mesh, dtype, pad):
    """tt-metal 2026's reshape_tiled (#22178): a device TILE reshape that moves data writes ``pad_value``
    into the output's tile padding when one is given, and leaves it alone without one or with
    ``skip_padding_fill``."""
    x = np.arange(1, 129 * 96 + 1, dtype=np.float32).reshape(129, 96) % 250
    t = put(mesh, x, dtype=dtype)
    padded = np.full((129, 3, 32), pad, np.float64)  # [129, 3, 32] pads its H (3) to 32
    padded = np.pad(padded, ((0, 0), (0, 29), (0, 0)), constant_values=pad)
    padded[:, :3, :] = x.reshape(129, 3, 32)
    out = ttnn.reshape(t, (129, 3, 32), pad_value=pad)
    for shard in ttnn.get_device_tensors(out):
        np.testing.assert_array_equal(shard.cpu().to_torch_with_padded_shape().double().numpy(), padded)
    same(out, x.reshape(129, 3, 32))
    for plain in (ttnn.reshape(t, (129, 3, 32)), ttnn.reshape(t, (129, 3, 32), pad_value=pad, skip_padding_fill=True)):
        for shard in ttnn.get_device_tensors(plain):
            assert (shard.cpu().to_torch_with_padded_shape().double().numpy()[:, 3:, :] == 0).all()


def test_repeat_matches_ranks_as_ttnn(mesh, rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    t = put(mesh, x, layout=RM)
    same(ttnn.repeat(t, [2, 1, 3]), np.tile(x, (2, 1, 3)))  # leading dims added
    same(ttnn.repeat(t, [2]), np.tile(x, (1, 2)))  # the trailing dims repeated
    same(ttnn.repeat(t, [0, 1]), np.zeros((0, 5)))


def test_expand_repeats_size_one_dims_matching_the_shape_from_the_left_as_ttnn(mesh, rng):
    x = rng.standard_normal((8, 1)).astype(np.float32)
    t = put(mesh, x, layout=RM)
    same(ttnn.expand(t, (8, 8)), np.broadcast_to(x, (8, 8)))
    same(ttnn.expand(t, (-1, 32)), np.broadcast_to(x, (8, 32)))  # -1 keeps the dim
    same(ttnn.expand(put(mesh, x.T.copy()), (32, -1)), np.broadcast_to(x.T, (32, 8)))
    same(ttnn.expand(t, (8, 1, 3)), np.tile(x, (1, 1, 3)))  # ttnn: a longer shape's extra dims are counts
    with pytest.raises(ttnn.MeshnnValueError, match=r"Only size 1 dimensions can be expanded .*dim 0: 8 to 4"):
        ttnn.expand(t, (4, 8))
    with pytest.raises(ttnn.MeshnnValueError, match="Only size 1 dimensions"):
        ttnn.expand(t, (8,))  # fewer dims than the input


def test_roll_shifts_and_wraps_as_torch_in_each_form(mesh, rng):
    x = rng.standard_normal((4, 3, 40)).astype(np.float32)
    t = put(mesh, x)
    same(ttnn.roll(t, [1, -2], [0, 2]), np.roll(x, [1, -2], [0, 2]))
    same(ttnn.roll(put(mesh, x, layout=RM), 5, -1), np.roll(x, 5, -1))
    same(ttnn.roll(t, 7), np.roll(x, 7))  # no dim: over the flattened tensor
    same(ttnn.roll(t, 4, 0), x)  # a whole turn
    with pytest.raises(ttnn.MeshnnValueError, match="same length"):
        ttnn.roll(t, [1, 2], [0])
    with pytest.raises(ttnn.MeshnnValueError, match="Invalid dimension index 3"):
        ttnn.roll(t, 1, 3)


def test_squeeze_drops_the_size_one_dims_asked_for_or_all_of_them(mesh):
    t = put(mesh, np.zeros((1, 3, 1, 32), np.float32), layout=RM)
    assert list(ttnn.squeeze(t).shape) == [3, 32] and list(ttnn.squeeze(t, [0, 2]).shape) == [3, 32]
    assert list(ttnn.squeeze(t, -2).shape) == [1, 3, 32] and ttnn.squeeze(t, 1) is t  # size 3: kept as it was
    with pytest.raises(ttnn.MeshnnValueError, match="multiple times"):
        ttnn.squeeze(t, [0, -4])


def test_repeat_interleave_rounds_through_bfloat16(mesh):
    x = (1 + 2.0**-12 * np.arange(64, dtype=np.float32)).reshape(2, 32)  # not bfloat16 values
    t = put(mesh, x)
    out = ttnn.repeat_interleave(t, 3, dim=1)
    assert out.dtype is ttnn.float32
    same(out, np.repeat(x.astype(ml_dtypes.bfloat16).astype(np.float32), 3, axis=1))  # ttnn typecasts to bf16
    same(ttnn.repeat_interleave(t, 1, dim=0), x)  # one repeat is a copy: exact
    same(ttnn.repeat_interleave(put(mesh, x, dtype=ttnn.bfloat16), 2, dim=0), np.repeat(
        x.astype(ml_dtypes.bfloat16).astype(np.float32), 2, axis=0))  # fmt: skip


@pytest.mark.parametrize("descending", [False, True])
def test_sort_values_and_indices(mesh, rng, descending):
    x = rng.permutation(3 * 40 * 50).reshape(3, 40, 50).astype(np.float32) / 8  # no ties
    t = put(mesh, x)
    for dim in (-1, 1, 0):
        values, indices = ttnn.sort(t, dim, descending)
        order = np.argsort(-x if descending else x, axis=dim, kind="stable")
        assert indices.dtype is ttnn.uint16 and values.dtype is ttnn.float32
        same(values, np.take_along_axis(x, order, axis=dim))
        same(indices, order)
    out = (ttnn.zeros_like(t), ttnn.zeros_like(t, dtype=ttnn.uint32))
    ttnn.sort(t, -1, descending, out=out)
    same(out[0], np.sort(x, -1)[..., ::-1] if descending else np.sort(x, -1))
    with pytest.raises(ttnn.MeshnnValueError, match="dtype must be the same"):
        # (not zeros_like(t, dtype=bfloat16): tt-metal fills a TILE float32 tensor on the device, keeping float32)
        wrong = ttnn.zeros(list(t.shape), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=t.device())
        ttnn.sort(t, out=(wrong, out[1]))


@pytest.mark.parametrize("dim", [-1, 0])
def test_sort_of_row_major_input_gives_row_major_outputs(mesh, rng, dim):
    """tt-metal of 2026 sorts ROW_MAJOR input, its outputs in the input's layout."""
    x = rng.permutation(2 * 5 * 37).reshape(2, 5, 37).astype(np.float32) / 4  # no ties; 37 wide: no tile
    values, indices = ttnn.sort(put(mesh, x, layout=RM), dim, True)
    assert values.layout == RM and indices.layout == RM and indices.dtype is ttnn.uint16
    order = np.argsort(-x, axis=dim, kind="stable")
    same(values, np.take_along_axis(x, order, axis=dim))
    same(indices, order)


def test_gather_and_tosa_gather(mesh, rng):
    x = rng.standard_normal((4, 6, 40)).astype(np.float32)
    index = rng.integers(0, 40, (4, 5, 24))
    got = ttnn.gather(put(mesh, x), -1, index=put(mesh, index.astype(np.uint16), dtype=ttnn.uint16))
    same(got, np.take_along_axis(x[:, :5], index, axis=-1))
    rows = rng.integers(0, 6, (4, 9))
    tosa = ttnn.tosa_gather(put(mesh, x), put(mesh, rows.astype(np.uint32), dtype=ttnn.uint32))
    same(tosa, np.stack([x[n, rows[n]] for n in range(4)]))
    with pytest.raises(ttnn.MeshnnTypeError, match="UINT32 or UINT16"):
        ttnn.gather(put(mesh, x), 1, index=put(mesh, index.astype(np.int32), dtype=ttnn.int32))


@pytest.mark.parametrize(("layout", "dim"), [(RM, -1), (RM, 0), (TILE, 1)])
def test_scatter_and_tosa_scatter(mesh, rng, layout, dim):
    x = rng.standard_normal((6, 8, 10)).astype(np.float32)
    index = np.argsort(rng.random((6, 8, 10)), axis=dim)  # a permutation: no two sources on one element
    src = rng.standard_normal((6, 8, 10)).astype(np.float32)
    got = ttnn.scatter(
        put(mesh, x, dtype=ttnn.bfloat16, layout=layout), dim,
        put(mesh, index.astype(np.int32), dtype=ttnn.int32, layout=layout),
        put(mesh, src, dtype=ttnn.bfloat16, layout=layout),
    )  # fmt: skip
    assert got.layout is layout
    want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.put_along_axis(want, index, src.astype(ml_dtypes.bfloat16).astype(np.float32), axis=dim)
    same(got, want)
    rows = np.stack([rng.permutation(8)[:3] for _ in range(6)])
    values = rng.standard_normal((6, 3, 10)).astype(np.float32)
    tosa = ttnn.tosa_scatter(put(mesh, x), put(mesh, rows.astype(np.uint32), dtype=ttnn.uint32), put(mesh, values))
    want = x.copy()
    for n in range(6):
        want[n, rows[n]] = values[n]
    same(tosa, want)
    with pytest.raises(ttnn.MeshnnValueError, match="fp32 tiled"):
        ttnn.scatter(put(mesh, x), 0, put(mesh, index.astype(np.int32), dtype=ttnn.int32), put(mesh, src))


def test_index_fill_and_nonzero(mesh, rng):
    x = rng.standard_normal((5, 6)).astype(np.float32)
    filled = ttnn.index_fill(put(mesh, x), 1, put(mesh, np.array([0, 4], np.uint32), dtype=ttnn.uint32, layout=RM), 2.5)
    want = x.copy()
    want[:, [0, 4]] = 2.5
    same(filled, want)
    row = np.array([[[[0, 4, 0, 2, 4, 0, 3]]]], np.float32)
    count, where = ttnn.nonzero(put(mesh, row, dtype=ttnn.bfloat16, layout=RM))
    assert count.dtype is ttnn.uint32 and tuple(count.shape) == (1, 1, 1, 8)
    for c, w in zip(each(count), each(where), strict=True):
        assert c[0, 0, 0, 0] == 4 and list(w[0, 0, 0, :4]) == [1, 3, 4, 6]


def test_permute_of_a_sharded_input_stays_sharded(open_mesh):
    """ttnn keeps a sharded input's sharding through permute when no memory_config is given (its
    CN case is a transpose that keeps the input's config; the others derive the shard spec):
    DeepSeek-V3's decode permutes a HEIGHT_SHARDED query slice into rotary_embedding_llama, which
    needs HEIGHT_SHARDED.  The values move exactly."""
    mesh = open_mesh((1, 1))
    x = torch.randn(32, 1, 16, 64)
    config = ttnn.create_sharded_memory_config(
        shape=(32, 64), core_grid=ttnn.CoreGrid(y=2, x=8), strategy=ttnn.ShardStrategy.HEIGHT,
        use_height_and_width_as_shard_shape=True,
    )  # fmt: skip
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, memory_config=config)
    cn = ttnn.permute(t, (1, 0, 2, 3))
    assert cn.memory_config() == config  # the same 2-D view: the same shards
    assert torch.equal(ttnn.to_torch(cn), x.bfloat16().permute(1, 0, 2, 3))
    wh = ttnn.permute(t, (0, 1, 3, 2))
    assert wh.memory_config().memory_layout == ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    assert torch.equal(ttnn.to_torch(wh), x.bfloat16().permute(0, 1, 3, 2))
    assert (
        ttnn.permute(t, (1, 0, 2, 3), memory_config=ttnn.DRAM_MEMORY_CONFIG).memory_config() == ttnn.DRAM_MEMORY_CONFIG
    )
