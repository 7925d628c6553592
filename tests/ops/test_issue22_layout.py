"""Issue 22's sharding and layout helpers and fixed semantics, on 1x8, 2x4 and 8x4 meshes:
interleaved_to_sharded / sharded_to_interleaved (bytes unchanged, buffer where the config says),
tilize / untilize / tilize_with_val_padding (values exact: they move, never compute), split /
chunk (torch's rules), unsqueeze_to_4D and reshape(t, logical, padded) (views: the same address),
embedding's output rank, and to_layout of a block float to ROW_MAJOR (bfloat16, as ttnn).

Every comparison is exact: these ops move values without arithmetic (a bfloat8_b tensor untilized
to bfloat16 keeps its values, which bfloat16 holds exactly).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import mesh_fixtures

SHAPES = [(1, 8), (2, 4), (8, 4)]


meshes, mesh = mesh_fixtures(SHAPES)


@pytest.fixture
def rng():
    return np.random.default_rng(22)


def put(mesh, values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=None):
    """Device i holds values[i] (dim 0 sharded over the mesh)."""
    return ttnn.from_torch(
        torch.from_numpy(np.ascontiguousarray(values)), dtype=dtype, layout=layout, device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0), memory_config=memory_config,
    )  # fmt: skip


def back(mesh, tensor):
    return ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).float().numpy()


def bf16(values):
    return torch.from_numpy(values).bfloat16().float().numpy()


def test_interleaved_to_sharded_and_back_keeps_every_value(mesh, rng):
    n = mesh.get_num_devices()
    values = bf16(rng.standard_normal((n, 1, 64, 256)).astype(np.float32))
    x = put(mesh, values)
    config = ttnn.create_sharded_memory_config((64, 256), ttnn.CoreGrid(x=8, y=1), ttnn.ShardStrategy.WIDTH)
    sharded = ttnn.interleaved_to_sharded(x, config)
    assert sharded.memory_config() == config and sharded.memory_config().buffer_type == ttnn.BufferType.L1
    grid_form = ttnn.interleaved_to_sharded(
        x, ttnn.CoreGrid(x=2, y=1), [64, 128], ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.ShardOrientation.ROW_MAJOR
    )
    assert grid_form.memory_config().shard_spec.shape == (64, 128)
    listed = ttnn.interleaved_to_sharded(  # a grid [x, y] as a list (tt-metal's test_layernorm_sharded passes one)
        x, [2, 1], [64, 128], ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.ShardOrientation.ROW_MAJOR
    )
    assert listed.memory_config() == grid_form.memory_config()
    np.testing.assert_array_equal(back(mesh, listed), values)
    derived = ttnn.interleaved_to_sharded(x, ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG)  # the spec ttnn derives
    assert derived.memory_config().shard_spec.shape == (32, 256)
    back_l1 = ttnn.sharded_to_interleaved(sharded, ttnn.L1_MEMORY_CONFIG, ttnn.float32)  # output_dtype positional
    assert back_l1.dtype == ttnn.float32 and back_l1.memory_config() == ttnn.L1_MEMORY_CONFIG
    for t in (sharded, grid_form, derived, back_l1, ttnn.sharded_to_interleaved(derived)):
        np.testing.assert_array_equal(back(mesh, t), values)
    assert ttnn.sharded_to_interleaved(derived).memory_config() == ttnn.DRAM_MEMORY_CONFIG


def test_tilize_untilize_and_padding(mesh, rng):
    n = mesh.get_num_devices()
    values = bf16(rng.standard_normal((n, 1, 64, 96)).astype(np.float32))
    rm = put(mesh, values, layout=ttnn.ROW_MAJOR_LAYOUT)
    tiled = ttnn.tilize(rm, dtype=ttnn.bfloat16)
    assert tiled.layout == ttnn.TILE_LAYOUT
    np.testing.assert_array_equal(back(mesh, tiled), values)
    untiled = ttnn.untilize(tiled)
    assert untiled.layout == ttnn.ROW_MAJOR_LAYOUT and untiled.dtype == ttnn.bfloat16
    np.testing.assert_array_equal(back(mesh, untiled), values)
    odd = put(mesh, values[:, :, :40, :50], layout=ttnn.ROW_MAJOR_LAYOUT)
    padded = ttnn.tilize_with_val_padding(odd, [1, 1, 64, 96], -7.0)
    assert tuple(padded.shape) == (1, 1, 40, 50) and tuple(padded.padded_shape) == (1, 1, 64, 96)
    np.testing.assert_array_equal(back(mesh, padded), values[:, :, :40, :50])
    whole = ttnn.reshape(padded, (1, 1, 64, 96), (1, 1, 64, 96))  # the padding is stored data
    expected = np.full((n, 1, 64, 96), -7.0, np.float32)
    expected[:, :, :40, :50] = values[:, :, :40, :50]
    np.testing.assert_array_equal(back(mesh, whole), expected)
    assert tuple(ttnn.tilize_with_zero_padding(odd).padded_shape) == (1, 1, 64, 64)
    bfp8 = put(mesh, values, dtype=ttnn.bfloat8_b)
    for untilized in (ttnn.untilize(bfp8), ttnn.to_layout(bfp8, ttnn.ROW_MAJOR_LAYOUT)):
        assert untilized.dtype == ttnn.bfloat16 and untilized.layout == ttnn.ROW_MAJOR_LAYOUT
        np.testing.assert_array_equal(back(mesh, untilized), back(mesh, bfp8))


def test_split_and_chunk_follow_torch(mesh, rng):
    n = mesh.get_num_devices()
    values = bf16(rng.standard_normal((n, 2, 64, 160)).astype(np.float32))
    x = put(mesh, values)
    for pieces, expected in (
        (ttnn.split(x, 64, 3), torch.split(torch.from_numpy(values), 64, 3)),
        (ttnn.split(x, [32, 128], -1), torch.split(torch.from_numpy(values), [32, 128], -1)),
        (ttnn.chunk(x, 3, 3), torch.chunk(torch.from_numpy(values), 3, 3)),
        (ttnn.split(x, 1, 1), torch.split(torch.from_numpy(values), 1, 1)),
        # sizes as one-element torch integer tensors (model code's ``H_ * W_`` of a shapes tensor)
        (
            ttnn.split(x, [torch.tensor(32), torch.tensor([128])], 3),
            torch.split(torch.from_numpy(values), [32, 128], -1),
        ),
    ):
        assert len(pieces) == len(expected)
        for piece, want in zip(pieces, expected, strict=True):
            np.testing.assert_array_equal(back(mesh, piece), want.numpy())
    for bad in (torch.tensor(32.0), torch.tensor(True), torch.tensor([32, 128])):
        with pytest.raises(ttnn.MeshnnTypeError, match="must be an int"):
            ttnn.split(x, [bad, 128], 3)


def test_unsqueeze_to_4d_and_padded_reshape_are_views(mesh, rng):
    n = mesh.get_num_devices()
    values = bf16(rng.standard_normal((n, 32, 192)).astype(np.float32))
    x = put(mesh, values)  # [1, 32, 192] per device
    four = ttnn.unsqueeze_to_4D(x)
    assert tuple(four.shape) == (1, 1, 32, 192) and four.buffer_address() == x.buffer_address()
    host = ttnn.from_torch(torch.ones(5, 7))
    assert tuple(ttnn.unsqueeze_to_4D(host).shape) == (1, 1, 5, 7)
    vector = ttnn.from_torch(torch.arange(64.0), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)
    assert tuple(vector.padded_shape) == (32, 64)  # a rank-1 TILE tensor: a padded shape of rank 2
    four_of_one = ttnn.unsqueeze_to_4D(vector)  # (tt_dit's Timesteps: each shape brought to rank 4 on its own)
    assert tuple(four_of_one.shape) == (1, 1, 1, 64) and tuple(four_of_one.padded_shape) == (1, 1, 32, 64)
    assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(four_of_one)[0]).flatten(), torch.arange(64.0))
    one_row = ttnn.reshape(four, (1, 1, 1, 192), (1, 1, 32, 192))
    assert tuple(one_row.shape) == (1, 1, 1, 192) and tuple(one_row.padded_shape) == (1, 1, 32, 192)
    assert one_row.buffer_address() == x.buffer_address()
    np.testing.assert_array_equal(back(mesh, one_row), values[:, None, :1])
    again = ttnn.reshape(one_row, (1, 1, 32, 192), (1, 1, 32, 192))  # the other rows are still there
    np.testing.assert_array_equal(back(mesh, again), values[:, None])
    with pytest.raises(ttnn.MeshnnValueError, match="padded_shape"):
        ttnn.reshape(four, (1, 1, 1, 192), (1, 1, 64, 96))  # not a view of the same 2-D pages
    # ttnn.reshape(t, t.padded_shape), as conv tests write it: the tile padding rows become values
    rows = ttnn.reshape(four, (1, 1, 20, 192), (1, 1, 32, 192))
    whole = ttnn.reshape(rows, rows.padded_shape)
    assert tuple(whole.shape) == (1, 1, 32, 192) and whole.buffer_address() == x.buffer_address()
    np.testing.assert_array_equal(back(mesh, whole), values[:, None])
    with pytest.raises(ttnn.MeshnnValueError, match="does not hold"):
        ttnn.reshape(rows, (1, 1, 32, 160))  # the padded width differs: not ttnn's padding view


def test_embedding_returns_ttnns_rank(mesh, rng):
    table = rng.standard_normal((64, 96)).astype(np.float32)
    weights = ttnn.from_torch(
        torch.from_numpy(table), dtype=ttnn.bfloat16, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )
    ids = rng.integers(0, 64, (1, 1, 1, 32)).astype(np.uint32)
    tokens = ttnn.from_torch(
        torch.from_numpy(ids), dtype=ttnn.uint32, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )
    out = ttnn.embedding(tokens, weights, layout=ttnn.TILE_LAYOUT)
    assert tuple(out.shape) == (1, 32, 96)  # [batch, sentence, hidden] for [1, 1, 1, S] ids
    np.testing.assert_array_equal(
        ttnn.to_torch(ttnn.get_device_tensors(out)[-1]).float().numpy()[0], bf16(table)[ids[0, 0, 0]]
    )
    flat = ttnn.from_torch(
        torch.from_numpy(ids[0, 0, 0]), dtype=ttnn.uint32, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )
    assert tuple(ttnn.embedding(flat, weights).shape) == (32, 96)
    wide = ttnn.from_torch(
        torch.from_numpy(ids.reshape(1, 2, 1, 16)),
        dtype=ttnn.uint32,
        device=mesh,
        mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
    )
    with pytest.raises(ttnn.MeshnnValueError, match="input_tensor"):
        ttnn.embedding(wide, weights)


@pytest.mark.parametrize(
    ("orientation", "strategy", "given", "shard"),
    [
        (ttnn.ShardOrientation.ROW_MAJOR, ttnn.ShardStrategy.HEIGHT, (128, 1024), (128, 1024)),
        (ttnn.ShardOrientation.COL_MAJOR, ttnn.ShardStrategy.HEIGHT, (1024, 128), (128, 1024)),
        (ttnn.ShardOrientation.COL_MAJOR, ttnn.ShardStrategy.WIDTH, (128, 1024), (1024, 128)),
    ],
)
def test_a_shard_shape_given_for_col_major_is_read_width_first_as_ttnn_reads_it(orientation, strategy, given, shard):
    """tt-metal's test_add_with_height_sharding passes (1024, 1024 // 8) for a COL_MAJOR height shard of
    a 1024 x 1024 tensor: ttnn's create_sharded_memory_config takes (width, height) then."""
    config = ttnn.create_sharded_memory_config(
        given, ttnn.CoreGrid(y=2, x=4), strategy, orientation, use_height_and_width_as_shard_shape=True
    )
    assert tuple(config.shard_spec.shape) == shard and config.shard_spec.orientation is orientation


@pytest.mark.parametrize("dtype, value", [(ttnn.float32, 1.5), (ttnn.int32, -7)])
def test_tilize_with_val_padding_of_a_scalar_and_a_row_pads_their_2d_view(open_mesh, dtype, value):
    mesh = open_mesh((1, 1))
    torch_dtype = torch.float32 if dtype == ttnn.float32 else torch.int32
    scalar = ttnn.from_torch(torch.tensor(value, dtype=torch_dtype), dtype=dtype, device=mesh)
    tiled = ttnn.tilize_with_val_padding(scalar, [32, 32], 42)
    assert tuple(tiled.shape) == () and tuple(tiled.padded_shape) == (32, 32)
    expected = torch.full((32, 32), 42, dtype=torch_dtype)
    expected[0, 0] = value
    assert torch.equal(tiled.cpu().to_torch_with_padded_shape(), expected)
    row = ttnn.from_torch(torch.arange(5, dtype=torch_dtype), dtype=dtype, device=mesh)
    padded = ttnn.tilize_with_val_padding(row, [32, 64], 3)
    assert tuple(padded.shape) == (5,) and tuple(padded.padded_shape) == (32, 64)
    expected = torch.full((32, 64), 3, dtype=torch_dtype)
    expected[0, :5] = torch.arange(5)
    assert torch.equal(padded.cpu().to_torch_with_padded_shape(), expected)
    with pytest.raises(ttnn.MeshnnError, match="hold its shape"):
        ttnn.tilize_with_val_padding(row, [32, 4], 3)


def test_reshape_takes_torch_integer_dims(mesh, rng):
    """ttnn's bindings convert one-element torch integer tensors to ints (bevformer reshapes by a
    spatial-shapes tensor's values); float and bool ones stay refused."""
    n = mesh.get_num_devices()
    values = bf16(rng.standard_normal((n, 2, 64, 32)).astype(np.float32))
    x = put(mesh, values)
    h, w = torch.tensor([[8, 8]])[0]
    one = torch.tensor([1])
    for y, shape in (
        (ttnn.reshape(x, (one, 2, h, w, 32)), (1, 2, 8, 8, 32)),
        (x.reshape([1, torch.tensor(2), h * w, 32]), (1, 2, 64, 32)),
        (x.reshape(one, 2, h * w, 32), (1, 2, 64, 32)),
    ):
        assert tuple(y.shape) == shape
        np.testing.assert_array_equal(back(mesh, y).reshape(values.shape), values)
    for bad in (torch.tensor(8.0), torch.tensor(True)):
        with pytest.raises(ttnn.MeshnnTypeError, match="must hold ints"):
            ttnn.reshape(x, (1, 2, bad, 8, 32))
        with pytest.raises(ttnn.MeshnnTypeError, match="must hold ints"):
            x.reshape([1, 2, bad, 8, 32])
