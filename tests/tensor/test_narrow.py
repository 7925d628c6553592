"""``ttnn.narrow``: a view of part of its input's buffer at the address ttnn gives it (tt-metal's
``narrow.cpp``: DRAM interleaved along the first dim that is not 1, L1 sharded by whole shards or
one part of each), whose reads see the input's current bytes, whose writes (one run of bytes a
device) land in the input's, and whose strided writes are refused before any byte changes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

BF16_TILE = 2048  # bytes of a bfloat16 32x32 tile: its aligned page in DRAM (32 B) and L1 (16 B)


def bf16(values: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).bfloat16()


def height_sharded(grid_end: tuple[int, int], shard: tuple[int, int], orientation=None) -> ttnn.MemoryConfig:
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(*grid_end))})
    spec = ttnn.ShardSpec(grid, shard, orientation or ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)


def test_a_dram_narrow_views_the_input_at_its_banks_offset_and_writes_through(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = bf16(rng.standard_normal((48, 2, 32, 32)))  # 2 tiles per index: index 12 is page 24, bank 0 of 12
    t = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT, device=mesh)
    v = ttnn.narrow(t, 0, 12, 12)
    assert tuple(v.shape) == (12, 2, 32, 32) and v.memory_config() == t.memory_config()
    assert v.buffer_address() == t.buffer_address() + 2 * BF16_TILE  # page 24 is the 3rd page of each bank
    assert torch.equal(ttnn.to_torch(v), x[12:24])
    inner = ttnn.narrow(v, 0, -6, 6)  # a narrow of a narrow: page 12 of the view
    assert inner.buffer_address() == v.buffer_address() + BF16_TILE and torch.equal(ttnn.to_torch(inner), x[18:24])
    with pytest.raises(ttnn.MeshnnValueError, match="aligned with number of banks"):
        ttnn.narrow(v, 0, 3, 3)  # page 6: bank 6
    before = ttnn.to_torch(ttnn.multiply(t, 1.0))  # the input's decoded values are now kept (a memo)
    new = bf16(rng.standard_normal((12, 2, 32, 32)))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(new, layout=ttnn.TILE_LAYOUT), v)
    after = ttnn.to_torch(ttnn.multiply(t, 1.0))
    assert torch.equal(after[12:24], new) and torch.equal(after[:12], before[:12]) and torch.equal(after[24:], x[24:])
    assert torch.equal(ttnn.to_torch(inner), new[6:])


def test_the_whole_dim_is_the_input_itself(open_mesh):
    mesh = open_mesh((1, 1))
    t = ttnn.from_torch(torch.zeros(2, 17, 32), layout=ttnn.TILE_LAYOUT, device=mesh)
    assert ttnn.narrow(t, 1, 0, 32) is t  # the padded dim, as ttnn compares it
    assert ttnn.narrow(t, -3, -2, 2) is t


def test_a_sharded_narrow_inside_each_shard_reads_the_inputs_current_bytes_and_refuses_writes(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = bf16(rng.standard_normal((1, 8, 64, 128)))
    t = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=height_sharded((3, 3), (32, 128)))
    v = ttnn.narrow(t, 3, 32, 32)  # tile column 1 of every [32, 128] shard: 16 cores, one page each
    config = v.memory_config()
    assert config.memory_layout == ttnn.TensorMemoryLayout.HEIGHT_SHARDED and config.buffer_type == ttnn.BufferType.L1
    assert tuple(config.shard_spec.shape) == (32, 32) and config.shard_spec.num_cores() == 16
    assert v.buffer_address() == t.buffer_address() + BF16_TILE
    assert torch.equal(ttnn.to_torch(v), x[..., 32:64])
    assert torch.equal(ttnn.to_torch(ttnn.add(v, v)), (x[..., 32:64].float() * 2).bfloat16())
    new = bf16(rng.standard_normal((1, 8, 64, 128)))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(new, layout=ttnn.TILE_LAYOUT), t)
    assert torch.equal(ttnn.to_torch(v), new[..., 32:64])  # no stale copy of the old bytes
    with pytest.raises(ttnn.MeshnnValueError, match="can be read but not written"):
        ttnn.copy_host_to_device_tensor(ttnn.from_torch(x[..., 32:64], layout=ttnn.TILE_LAYOUT), v)
    assert torch.equal(ttnn.to_torch(t), new)


def test_sharded_narrows_keep_ttnns_cores_and_whole_shards(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = bf16(rng.standard_normal((1, 8, 128, 128)))
    rm = ttnn.from_torch(
        x, device=mesh, memory_config=height_sharded((3, 3), (64, 128), ttnn.ShardOrientation.COL_MAJOR)
    )
    v = ttnn.narrow(rm, 2, 96, 32)  # the second half of every other shard
    assert v.memory_config().shard_spec.num_cores() == 8 and tuple(v.memory_config().shard_spec.shape) == (32, 128)
    assert v.buffer_address() == rm.buffer_address() + 32 * 256  # 32 row pages of 256 B (16 B aligned) up
    assert torch.equal(ttnn.to_torch(v), x[:, :, 96:128])
    tile = ttnn.from_torch(
        x[:, :, :64], layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=height_sharded((3, 3), (32, 128))
    )
    whole = ttnn.narrow(tile, 1, 4, 4)  # shards 8 to 15, one run of bytes
    cores = whole.memory_config().shard_spec.grid.cores()
    assert cores == [ttnn.CoreCoord(x_, y) for y in (2, 3) for x_ in range(4)]
    assert whole.buffer_address() == tile.buffer_address()
    assert torch.equal(ttnn.to_torch(whole), x[:, 4:8, :64])
    with pytest.raises(ttnn.MeshnnValueError, match="full shards or splitting within single shard"):
        ttnn.narrow(rm, 2, 32, 64)  # across two [64, 128] shards
    interleaved_l1 = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG)
    with pytest.raises(ttnn.MeshnnValueError, match="not yet implemented"):
        ttnn.narrow(interleaved_l1, 3, 0, 32)


def test_narrow_on_a_2x4_mesh_views_every_devices_shard(open_mesh, rng):
    mesh = open_mesh((2, 4))
    x = bf16(rng.standard_normal((8, 4, 64, 64)))
    t = ttnn.from_torch(
        x,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        memory_config=height_sharded((3, 1), (32, 64)),
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, dims=(0, 1), mesh_shape=(2, 4)),
    )
    v = ttnn.narrow(t, 3, 32, 32)
    got = ttnn.to_torch(v, mesh_composer=ttnn.ConcatMesh2dToTensor(mesh, dims=(0, 1), mesh_shape=(2, 4)))
    assert torch.equal(got, x[..., 32:64])


def test_a_narrowed_view_keeps_its_input_and_dies_with_it(open_mesh):
    mesh = open_mesh((1, 1))
    t = ttnn.from_torch(torch.ones(24, 32, 32), layout=ttnn.TILE_LAYOUT, device=mesh)
    v = ttnn.narrow(t, 0, 12, 12)
    ttnn.deallocate(t, force=False)  # the view still reads the buffer
    assert t.is_allocated() and torch.equal(ttnn.to_torch(v), torch.ones(12, 32, 32))
    ttnn.deallocate(v)
    assert t.is_allocated()
    ttnn.deallocate(t, force=False)
    assert not t.is_allocated()
    u = ttnn.from_torch(torch.ones(24, 32, 32), layout=ttnn.TILE_LAYOUT, device=mesh)
    w = ttnn.narrow(u, 0, 12, 12)
    ttnn.deallocate(u)
    with pytest.raises(ttnn.DeallocatedError):
        ttnn.to_torch(w)


def test_a_replay_reads_a_narrowed_inputs_bytes_as_they_are_then(open_mesh, rng):
    mesh = open_mesh((1, 1), trace_region_size=1 << 20)
    x = bf16(rng.standard_normal((1, 2, 64, 128)))
    t = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=height_sharded((3, 0), (32, 128)))
    v = ttnn.narrow(t, 3, 64, 32)
    ttnn.multiply(v, 2.0)  # compiled before the capture, as ttnn's traces need
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = ttnn.multiply(v, 2.0)
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    new = bf16(rng.standard_normal((1, 2, 64, 128)))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(new, layout=ttnn.TILE_LAYOUT), t)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    assert torch.equal(ttnn.to_torch(out), (new[..., 64:96].float() * 2).bfloat16())
    ttnn.release_trace(mesh, trace)


def test_an_op_refuses_a_strided_narrow_as_its_output_tensor(open_mesh):
    mesh = open_mesh((1, 1))
    t = ttnn.from_torch(
        torch.ones(1, 2, 32, 128), layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=height_sharded((1, 0), (32, 128))
    )
    v = ttnn.narrow(t, 3, 32, 32)
    with pytest.raises(ttnn.MeshnnValueError, match="output_tensor is a narrowed tensor"):
        ttnn.add(v, v, output_tensor=v)
    assert torch.equal(ttnn.to_torch(t), torch.ones(1, 2, 32, 128))
