"""What the Llama-70B Galaxy whole ``TtTransformer`` (tt-metal's ``models/demos/llama3_70b_galaxy``)
needed beyond its decoder layer (issue 30): the device embedding's ``reshape`` of a width-sharded
``[1, 32, dim]`` to ``[1, 1, 32, dim]`` is a view keeping the shard spec (the decoder asserts its
input's memory config), and prefill's ``paged_fill_cache`` takes the model's UINT32 user-id tensor
as ``batch_idx_tensor``."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

GRID = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(1, 0), ttnn.CoreCoord(2, 7))])  # 16 cores


@pytest.fixture(scope="module")
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    yield m
    m.close()


def width_sharded(width: int = 128) -> ttnn.MemoryConfig:
    spec = ttnn.ShardSpec(GRID, (32, width), ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)


@pytest.mark.parametrize("layout", [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT])
def test_reshape_of_a_sharded_tensor_keeping_its_last_dim_is_a_view(mesh, layout):
    """ttnn's view keeps a sharded tensor's memory config when the last dim stays: same buffer,
    same address, same shard spec, the values unchanged (exact: no data moves)."""
    x = torch.randn(1, 32, 2048)
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=layout, device=mesh, memory_config=width_sharded())
    before = ttnn.get_memory_view(mesh, ttnn.BufferType.L1).total_bytes_allocated_per_bank
    v = ttnn.reshape(t, ttnn.Shape((1, 1, 32, 2048)))
    assert list(v.shape) == [1, 1, 32, 2048]
    assert v.memory_config() == t.memory_config() == width_sharded()
    assert v.storage.mesh_buffer.address() == t.storage.mesh_buffer.address()
    assert ttnn.get_memory_view(mesh, ttnn.BufferType.L1).total_bytes_allocated_per_bank == before
    assert torch.equal(
        ttnn.to_torch(ttnn.get_device_tensors(v)[0]).float(), x.bfloat16().float().reshape(1, 1, 32, 2048)
    )


def test_the_embedding_then_reshape_keeps_the_decode_residual_config(mesh):
    """TtLlamaEmbedding.forward: ids [1, 1, 1, 32] -> embedding into DECODE_RESIDUAL_MEMCFG ->
    reshape to [1, 1, 32, dim]: the result is in that config, holding the picked rows."""
    table = torch.randn(1, 1, 256, 2048)
    w = ttnn.from_torch(table, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    ids = torch.randint(0, 256, (32,))
    x = ttnn.unsqueeze_to_4D(ttnn.from_torch(ids, dtype=ttnn.uint32, device=mesh))
    x = ttnn.embedding(
        ttnn.reshape(x, ttnn.Shape((1, 1, 1, 32))), w, layout=ttnn.TILE_LAYOUT, memory_config=width_sharded()
    )
    x = ttnn.reshape(x, ttnn.Shape((1, 1, x.shape[-2], x.shape[-1])))
    assert x.memory_config() == width_sharded()
    got = ttnn.to_torch(ttnn.get_device_tensors(x)[0]).float()
    assert torch.equal(got, table[0, 0][ids].bfloat16().float().reshape(1, 1, 32, 2048))


def test_reshape_of_a_sharded_tensor_changing_its_last_dim_still_moves_data(mesh):
    x = torch.randn(1, 1, 32, 2048)
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=width_sharded())
    r = ttnn.reshape(t, ttnn.Shape((1, 1, 64, 1024)))
    assert r.storage.mesh_buffer is not t.storage.mesh_buffer
    assert torch.equal(
        ttnn.to_torch(ttnn.get_device_tensors(r)[0]).float(), x.bfloat16().float().reshape(1, 1, 64, 1024)
    )


@pytest.mark.parametrize("dtype", [ttnn.uint32, ttnn.int32])
def test_paged_fill_cache_takes_the_user_as_a_uint32_or_int32_tensor(mesh, dtype):
    """The model's prepare_prefill_inputs_host makes the user id a UINT32 [1] tensor: the fill lands
    in that user's blocks, bytes equal to the same fill by ``batch_idx``."""
    block, blocks, heads, d = 32, 8, 2, 64
    table = ttnn.from_torch(torch.randperm(blocks).reshape(2, 4).int(), dtype=ttnn.int32, device=mesh)
    fill = ttnn.from_torch(torch.randn(1, heads, 64, d), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    by_tensor, by_int = (
        ttnn.from_torch(
            torch.zeros(blocks, heads, block, d), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=mesh
        )
        for _ in range(2)
    )
    user = ttnn.from_torch(torch.tensor([1]), dtype=dtype, device=mesh)
    ttnn.experimental.paged_fill_cache(by_tensor, fill, table, batch_idx_tensor=user)
    ttnn.experimental.paged_fill_cache(by_int, fill, table, batch_idx=1)
    a, b = (ttnn.to_torch(ttnn.get_device_tensors(c)[0]).float() for c in (by_tensor, by_int))
    assert torch.equal(a, b) and a.abs().sum() > 0


def test_sharded_to_interleaved_gives_an_interleaved_input_back(mesh):
    """ttnn's sharded_to_interleaved returns an input without a shard spec as it is (the 70B LM
    head's prefill path calls it on its DRAM-interleaved all-reduce result)."""
    x = ttnn.from_torch(torch.randn(1, 1, 32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    assert ttnn.sharded_to_interleaved(x, memory_config=ttnn.L1_MEMORY_CONFIG, output_dtype=ttnn.float32) is x
    with pytest.raises(TypeError, match="memory_config"):
        ttnn.sharded_to_interleaved(x, "DRAM")
