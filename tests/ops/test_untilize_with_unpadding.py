"""``ttnn.untilize_with_unpadding`` (TILE -> ROW_MAJOR cut to inclusive end indices) with ttnn
0.81.1's output specs and checks, and the small 2026 names beside it: ``TileReshapeMapMode``,
``DumpTensorMode`` (one process; across ranks: tests/distributed/scripts/caches.py),
``experimental.view``, and a
``ShardTensor2dMesh`` given trailing ``None`` dims (ttnn reads the first two).

Values only move, so every comparison is exact (a bfloat8_b input becomes bfloat16, which holds its
values exactly)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

from .reference import mesh_fixtures

meshes, mesh = mesh_fixtures([(1, 1), (2, 4)])


def values(shape, seed=7):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32)).bfloat16()


def put(mesh, x, **kwargs):
    kwargs.setdefault("layout", ttnn.TILE_LAYOUT)
    return ttnn.from_torch(x, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **kwargs)


def first(mesh, t):
    return ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[: t.shape[0]]


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32, ttnn.int32, ttnn.bfloat8_b])
def test_cuts_the_logical_values_to_the_ends(mesh, dtype):
    x = values((2, 3, 70, 100))
    if dtype is ttnn.int32:
        x = (x * 100).to(torch.int32)
    t = put(mesh, x, dtype=dtype)
    out = ttnn.untilize_with_unpadding(t, [1, 2, 40, 63])
    expected = first(mesh, t)[:, :, :41, :64]  # the device's values (bfloat8_b rounded), cut
    assert out.layout == ttnn.ROW_MAJOR_LAYOUT and list(out.shape) == [2, 3, 41, 64]
    assert out.dtype == (ttnn.bfloat16 if dtype is ttnn.bfloat8_b else dtype)
    assert out.memory_config() == t.memory_config()
    assert torch.equal(first(mesh, out), expected.to(first(mesh, out).dtype))


def test_ends_past_the_logical_shape_read_the_tile_padding(mesh):
    x = values((30, 62))
    out = ttnn.untilize_with_unpadding(put(mesh, x, dtype=ttnn.bfloat16), [31, 63])
    got = first(mesh, out)
    assert list(out.shape) == [32, 64]
    assert torch.equal(got[:30, :62], x) and not got[30:].any() and not got[:, 62:].any()


def test_ends_past_the_padded_shape_are_refused_before_anything_is_allocated(mesh):
    t = put(mesh, values((1, 1, 64, 64)), dtype=ttnn.bfloat16)
    before = len(mesh.live_buffers()), ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM).block_table
    with pytest.raises(ttnn.MeshnnValueError, match="padded shape"):
        ttnn.untilize_with_unpadding(t, (1, 1, 64, 32))  # ttnn's doc example asks for a 2x2x65x33 output
    with pytest.raises(ttnn.MeshnnValueError, match="output_tensor_end"):
        ttnn.untilize_with_unpadding(t, (63, 63))
    assert (len(mesh.live_buffers()), ttnn.get_memory_view(mesh, ttnn.BufferType.DRAM).block_table) == before


def test_above_rank_4_the_ends_are_ignored_as_in_ttnn(mesh):
    x = values((2, 1, 3, 40, 50))
    out = ttnn.untilize_with_unpadding(put(mesh, x, dtype=ttnn.bfloat16), [0, 0, 0, 0, 0])
    assert list(out.shape) == [2, 1, 3, 40, 50] and torch.equal(first(mesh, out), x)


def test_integers_need_pack_untilize(mesh):
    t = put(mesh, torch.arange(64 * 64, dtype=torch.int32).reshape(64, 64), dtype=ttnn.int32)
    with pytest.raises(ttnn.MeshnnValueError, match="use_pack_untilize"):
        ttnn.untilize_with_unpadding(t, [31, 31], use_pack_untilize=False)
    out = ttnn.untilize_with_unpadding(t, [31, 31], use_multicore=False)
    assert torch.equal(first(mesh, out), torch.arange(64 * 64, dtype=torch.int32).reshape(64, 64)[:32, :32])


def sharded(layout, grid, shard, orientation=ttnn.ShardOrientation.ROW_MAJOR):
    (x0, y0), (x1, y1) = grid
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(x0, y0), ttnn.CoreCoord(x1, y1))})
    return ttnn.MemoryConfig(layout, ttnn.BufferType.L1, ttnn.ShardSpec(cores, shard, orientation))


def test_sharded_outputs_get_the_shard_shapes_ttnn_computes(mesh):
    x = values((1, 1, 256, 128))
    height = sharded(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ((0, 0), (0, 3)), (64, 128))
    t = put(mesh, x, dtype=ttnn.bfloat16, memory_config=height)
    out = ttnn.untilize_with_unpadding(t, [0, 0, 200, 100], memory_config=height)
    # 201 rows over 4 cores: ceil(201 / 4) = 51, rounded up to a tile's 64 rows; the output's width
    assert out.memory_config().shard_spec.shape == (64, 101)
    assert torch.equal(first(mesh, out), x[:, :, :201, :101])
    width = sharded(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ((0, 0), (0, 3)), (64, 64))
    t = put(mesh, values((1, 1, 64, 256)), dtype=ttnn.bfloat16, memory_config=width)
    out = ttnn.untilize_with_unpadding(t, [0, 0, 63, 200])  # the input's config: every row, the shard's width
    assert out.memory_config().memory_layout == ttnn.TensorMemoryLayout.WIDTH_SHARDED
    assert out.memory_config().shard_spec.shape == (64, 64)
    assert torch.equal(first(mesh, out), first(mesh, t)[:, :, :, :201])


def test_sharded_inputs_refuse_the_outputs_ttnn_refuses(mesh):
    block = sharded(ttnn.TensorMemoryLayout.BLOCK_SHARDED, ((0, 0), (1, 1)), (64, 64))
    t = put(mesh, values((1, 1, 128, 128)), dtype=ttnn.bfloat16, memory_config=block)
    with pytest.raises(ttnn.MeshnnValueError, match="block-sharded input_tensor writes an interleaved"):
        ttnn.untilize_with_unpadding(t, [0, 0, 100, 100])  # the input's (sharded) config
    out = ttnn.untilize_with_unpadding(t, [0, 0, 100, 100], memory_config=ttnn.L1_MEMORY_CONFIG)
    assert torch.equal(first(mesh, out), first(mesh, t)[:, :, :101, :101])
    height = sharded(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ((0, 0), (0, 3)), (32, 64))
    batched = put(mesh, values((2, 1, 64, 64)), dtype=ttnn.bfloat16, memory_config=height)
    with pytest.raises(ttnn.MeshnnValueError, match="only unbatched"):
        ttnn.untilize_with_unpadding(batched, [1, 0, 29, 63], memory_config=ttnn.L1_MEMORY_CONFIG)
    interleaved = put(mesh, values((1, 1, 64, 64)), dtype=ttnn.bfloat16)
    with pytest.raises(ttnn.MeshnnValueError, match="interleaved input_tensor writes an interleaved"):
        ttnn.untilize_with_unpadding(interleaved, [0, 0, 63, 63], memory_config=height)


def test_an_nd_sharded_input_untilizes_to_an_interleaved_output(mesh):
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(2, 2))})
    config = ttnn.MemoryConfig(ttnn.BufferType.L1, ttnn.NdShardSpec(ttnn.Shape([2, 64, 64]), cores))
    x = values((3, 128, 128))
    t = put(mesh, x, dtype=ttnn.bfloat16, memory_config=config)
    out = ttnn.untilize_with_unpadding(t, [2, 100, 90], memory_config=ttnn.L1_MEMORY_CONFIG)
    assert torch.equal(first(mesh, out), x[:, :101, :91])


def test_tile_reshape_map_mode_is_taken_and_checked(mesh):
    x = values((1, 8, 8))
    t = put(mesh, x, dtype=ttnn.bfloat16)
    for mode in ttnn.TileReshapeMapMode:
        assert torch.equal(first(mesh, ttnn.reshape(t, (1, 16, 4), reshape_tile_mode=mode)), x.reshape(1, 16, 4))
    with pytest.raises(ttnn.MeshnnTypeError, match="TileReshapeMapMode"):
        ttnn.reshape(t, (1, 16, 4), reshape_tile_mode="CACHE")


def test_dump_tensor_modes_in_one_process_write_the_same_file(tmp_path, mesh):
    t = put(mesh, values((1, 64, 64)), dtype=ttnn.bfloat16)
    ttnn.dump_tensor(tmp_path / "g.tensorbin", t)
    ttnn.dump_tensor(tmp_path / "l.tensorbin", t, mode=ttnn.DumpTensorMode.LOCAL)  # every shard is this one's
    assert (tmp_path / "g.tensorbin").read_bytes() == (tmp_path / "l.tensorbin").read_bytes()
    with pytest.raises(ttnn.MeshnnTypeError, match="DumpTensorMode"):
        ttnn.dump_tensor(tmp_path / "x.tensorbin", t, mode="LOCAL")
    assert not (tmp_path / "x.tensorbin").exists()


def test_shard_tensor_2d_mesh_takes_trailing_none_dims(meshes):
    mesh = meshes[(2, 4)]
    x = values((1, 64, 96))
    t = ttnn.from_torch(x, device=mesh, mesh_mapper=ttnn.ShardTensor2dMesh(mesh, (2, 4), [None, None, None]))
    assert torch.equal(ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)), x.expand(8, 64, 96))
    with pytest.raises(ttnn.MeshnnValueError, match="two dims"):
        ttnn.ShardTensor2dMesh(mesh, (2, 4), [None, None, 0])


def test_experimental_view_takes_a_shape_or_four_dims(mesh):
    x = values((16, 4, 64, 64))
    t = put(mesh, x, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    a, b = ttnn.experimental.view(t, 16, 4, 128, 32), ttnn.experimental.view(t, (16, 4, -1, 32))
    assert a.buffer_address() == b.buffer_address() == t.buffer_address()  # views: no data moves
    assert torch.equal(first(mesh, a), x.reshape(16, 4, 128, 32)) and list(b.shape) == [16, 4, 128, 32]
    empty = put(mesh, values((0, 32, 32)), dtype=ttnn.bfloat16)
    assert list(ttnn.experimental.view(empty, (32, 0, 32)).shape) == [32, 0, 32]
    with pytest.raises(ttnn.MeshnnTypeError, match="N, C, H, W"):
        ttnn.experimental.view(t, 16, 4)
    with pytest.raises(ttnn.MeshnnValueError, match=r"use ttnn\.reshape"):
        ttnn.experimental.view(put(mesh, x, dtype=ttnn.bfloat16), (16, 4, 128, 32))  # TILE rows change across tiles
