"""``ttnn.interleaved_to_sharded_partial`` / ``sharded_to_interleaved_partial`` against torch: band
``i`` of ``num_slices`` of the rows comes out sharded as ``[1, 1, h, w]`` on the cores the shard
spec needs (bytes moved, so bfloat16 is exact; bfloat8_b equals the host's own conversion), and is
written back into exactly its band of the cache (the cache keeps its address; the other bands keep
their bytes); ttnn's checks refuse before anything changes."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

BLOCK, HEIGHT = ttnn.TensorMemoryLayout.BLOCK_SHARDED, ttnn.TensorMemoryLayout.HEIGHT_SHARDED
ROW = ttnn.ShardOrientation.ROW_MAJOR


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield m
    m.close()


def _host(t):
    return ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(t.device(), dim=0))[: t.shape[0]]


@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.bfloat8_b], ids=["bf16", "bfp8"])
@pytest.mark.parametrize("scheme,grid,shard", [(BLOCK, (2, 2), [32, 64]), (HEIGHT, (2, 1), [32, 128])])
def test_bands_out_and_back(mesh, dtype, scheme, grid, shard):
    x = torch.randn(2, 1, 128, 128)
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
    exact = _host(t)  # what the device holds (bfloat8_b already rounded)
    cache = ttnn.from_torch(torch.full((2, 1, 128, 128), 7.0), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
    address = cache.buffer_address()
    rows = exact.reshape(256, 128)
    for i in range(4):
        band = ttnn.interleaved_to_sharded_partial(t, grid, shard, 4, i, scheme, ROW)
        assert list(band.shape) == [1, 1, 64, 128] and band.memory_config().memory_layout == scheme
        assert band.memory_config().buffer_type == ttnn.BufferType.L1
        assert torch.equal(_host(band).reshape(64, 128), rows[64 * i : 64 * (i + 1)])
        if i % 2 == 0:  # only the even bands go back: the odd ones must keep the cache's 7s
            assert ttnn.sharded_to_interleaved_partial(band, cache, 4, i) is cache
    assert cache.buffer_address() == address
    back = _host(cache).reshape(4, 64, 128)
    for i in range(4):
        want = rows[64 * i : 64 * (i + 1)] if i % 2 == 0 else torch.full((64, 128), 7.0)
        assert torch.equal(back[i], want), i


def test_output_dtype_rounds_the_band(mesh):
    x = torch.randn(1, 1, 64, 64)
    t = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)
    band = ttnn.interleaved_to_sharded_partial(t, (1, 1), [32, 64], 2, 1, HEIGHT, ROW, output_dtype=ttnn.bfloat16)
    assert band.dtype == ttnn.bfloat16
    assert torch.equal(_host(band).reshape(32, 64), x[0, 0, 32:].bfloat16().float())
    listed = ttnn.interleaved_to_sharded_partial(t, [1, 1], [32, 64], 2, 1, HEIGHT, ROW, output_dtype=ttnn.bfloat16)
    assert listed.memory_config() == band.memory_config()  # a grid [x, y] as a list is the same CoreCoord
    assert torch.equal(_host(listed), _host(band))


def test_refusals(mesh):
    t = ttnn.from_torch(torch.randn(1, 1, 96, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    rm = ttnn.from_torch(torch.randn(1, 1, 64, 64), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    with pytest.raises(ttnn.MeshnnValueError, match="slice_index"):
        ttnn.interleaved_to_sharded_partial(t, (1, 1), [32, 64], 3, 3, HEIGHT, ROW)
    with pytest.raises(ttnn.MeshnnValueError, match="divisible by num_slices"):
        ttnn.interleaved_to_sharded_partial(t, (1, 1), [32, 64], 5, 0, HEIGHT, ROW)
    with pytest.raises(ttnn.MeshnnValueError, match="TILE"):
        ttnn.interleaved_to_sharded_partial(rm, (1, 1), [32, 64], 2, 0, HEIGHT, ROW)
    with pytest.raises(ttnn.MeshnnValueError, match="compute grid"):
        ttnn.interleaved_to_sharded_partial(t, (20, 1), [32, 64], 3, 0, HEIGHT, ROW)
    with pytest.raises(ttnn.MeshnnValueError, match="shard spec"):
        ttnn.sharded_to_interleaved_partial(t, t, 3, 0)
    band = ttnn.interleaved_to_sharded_partial(t, (1, 1), [32, 64], 3, 0, HEIGHT, ROW)
    with pytest.raises(ttnn.MeshnnValueError, match="not a band"):
        ttnn.sharded_to_interleaved_partial(band, t, 1, 0)
