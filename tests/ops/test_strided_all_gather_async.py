"""``ttnn.experimental.strided_all_gather_async`` (issue 30; ``models/tt_dit``'s column-parallel
linears): the stride only orders the blocks, so the result is the width of the group's shards
concatenated, exactly (bit for bit ``all_gather_async``'s, bfloat8_b included); a persistent
buffer is the output; tt-metal's program's limits refused before anything runs; the perf model
times it as an all-gather (link bytes through a link, positive time)."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.ops.costs import ESTIMATED

OP = ttnn.experimental.strided_all_gather_async
BF16, BFP8, TILE = ttnn.bfloat16, ttnn.bfloat8_b, ttnn.TILE_LAYOUT
CASES = [((1, 2), 1), ((1, 8), 1), ((2, 4), 1), ((2, 4), 0), ((8, 4), 0)]
IDS = ["1x2", "1x8", "2x4-rows", "2x4-cols", "8x4-cols"]


def sems(mesh, count=2):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(6, 6))})
    return [ttnn.create_global_semaphore(mesh, grid, 0) for _ in range(count)]


def shard(mesh, full, axis, dtype=BF16, layout=TILE):
    """``full`` [1, 1, M, K] split along K over ``axis`` (and along M over the other axis)."""
    dims = [None, None]
    dims[axis], dims[1 - axis] = 3, 2
    mapper = ttnn.ShardTensor2dMesh(mesh, dims=dims, mesh_shape=tuple(mesh.shape))
    return ttnn.from_torch(full, dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)


def expected(mesh, full, axis):
    """Each device's gathered tensor: its own rows of ``full`` (split over the other axis), every column."""
    rows = torch.chunk(full, mesh.shape[1 - axis], dim=2)
    out = []
    for r in range(mesh.shape[0]):
        for c in range(mesh.shape[1]):
            out.append(rows[c if axis == 0 else r])
    return out


def _values(t):
    return [ttnn.to_torch(d).float() for d in ttnn.get_device_tensors(t)]


def _bytes(t):
    return [ttnn.to_torch(d).view(torch.int16) for d in ttnn.get_device_tensors(t)]


@pytest.mark.parametrize(("shape", "axis"), CASES, ids=IDS)
def test_the_gather_is_the_shards_concatenated_exactly(open_mesh, shape, axis):
    mesh = open_mesh(shape)
    full = torch.randn(1, 1, 64 * mesh.shape[1 - axis], 64 * mesh.shape[axis]).bfloat16()
    out = OP(shard(mesh, full, axis), None, 3, sems(mesh), cluster_axis=axis, mm_block_ht=2, mm_block_wt=1)
    assert list(out.shape) == [1, 1, 64, full.shape[3]]
    for got, want in zip(_values(out), expected(mesh, full, axis), strict=True):
        assert torch.equal(got, want.float())


@pytest.mark.parametrize(("shape", "axis"), CASES[:3], ids=IDS[:3])
def test_bfloat8_b_is_all_gather_async_bit_for_bit(open_mesh, shape, axis):
    mesh = open_mesh(shape)
    x = shard(mesh, torch.randn(1, 1, 64 * mesh.shape[1 - axis], 96 * mesh.shape[axis]), axis, BFP8)
    strided = OP(x, None, 3, sems(mesh), cluster_axis=axis, mm_cores_y=2, mm_block_ht=1, mm_block_wt=2)
    plain = ttnn.experimental.all_gather_async(x, None, 3, sems(mesh), cluster_axis=axis)
    assert strided.dtype == BFP8
    for a, b in zip(ttnn.get_device_tensors(strided), ttnn.get_device_tensors(plain), strict=True):
        assert torch.equal(ttnn.to_torch(a), ttnn.to_torch(b))


def test_rows_of_part_of_a_tile_keep_the_logical_shape(open_mesh):
    mesh = open_mesh((1, 2))
    full = torch.randn(1, 1, 48, 128).bfloat16()  # 48 rows: a tile and a half
    out = OP(shard(mesh, full, 1), None, 3, sems(mesh), cluster_axis=1, mm_block_ht=1, mm_block_wt=1)
    assert list(out.shape) == [1, 1, 48, 128]
    assert all(torch.equal(v, full.float()) for v in _values(out))


def test_a_persistent_buffer_is_the_output(open_mesh):
    mesh = open_mesh((1, 8))
    full = torch.randn(1, 1, 32, 256).bfloat16()
    buffer = ttnn.from_torch(torch.zeros(1, 1, 32, 256), dtype=BF16, layout=TILE, device=mesh)
    out = OP(shard(mesh, full, 1), buffer, 3, sems(mesh), cluster_axis=1, mm_block_ht=1, mm_block_wt=1)
    assert out.buffer_address() == buffer.buffer_address()
    assert all(torch.equal(v, full.float()) for v in _values(buffer))


def test_tt_metals_program_limits_are_refused_before_anything_runs(open_mesh):
    mesh = open_mesh((1, 8))
    full = torch.randn(1, 1, 32, 256)
    x, s = shard(mesh, full, 1), sems(mesh)
    buffer = ttnn.from_torch(torch.zeros(1, 1, 32, 256), dtype=BF16, layout=TILE, device=mesh)
    before = _bytes(buffer)
    blocks = dict(mm_block_ht=1, mm_block_wt=1)
    with pytest.raises(ValueError, match="dim must be 3"):
        OP(x, buffer, 2, s, cluster_axis=1, **blocks)
    with pytest.raises(TypeError, match="mm_block_wt must be an int"):
        OP(x, buffer, 3, s, cluster_axis=1, mm_block_ht=1)
    with pytest.raises(ValueError, match="mm_cores_y must be > 0"):
        OP(x, buffer, 3, s, cluster_axis=1, mm_cores_y=0, **blocks)
    with pytest.raises(ValueError, match="whole tiles"):
        OP(shard(mesh, torch.randn(1, 1, 32, 8 * 40), 1), None, 3, s, cluster_axis=1, **blocks)
    with pytest.raises(ValueError, match="TILE"):
        OP(shard(mesh, full, 1, layout=ttnn.ROW_MAJOR_LAYOUT), buffer, 3, s, cluster_axis=1, **blocks)
    with pytest.raises(ValueError, match="2 semaphores"):
        OP(x, buffer, 3, s[:1], cluster_axis=1, **blocks)
    with pytest.raises(ValueError, match="more than one device"):
        OP(x, buffer, 3, s, cluster_axis=0, **blocks)
    assert all(torch.equal(a, b) for a, b in zip(_bytes(buffer), before, strict=True))


def test_the_perf_model_times_it_as_an_all_gather(open_mesh):
    mesh = open_mesh((1, 8))
    x = shard(mesh, torch.randn(1, 1, 64, 512), 1)
    with ttnn.perf_capture() as capture:
        OP(x, None, 3, sems(mesh), cluster_axis=1, mm_block_ht=2, mm_block_wt=1)
    (entry, *_) = [e for r in capture.recorders for e in r.records]
    assert entry.desc.family is ttnn.perf.OpFamily.ALL_GATHER
    assert entry.prediction.link_bytes > 0 and entry.prediction.total_ns > 0
    assert entry.desc.op_code == "StridedAllGatherAsync" and ESTIMATED not in entry.desc.attributes
