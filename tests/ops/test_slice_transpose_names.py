"""``ttnn.transpose`` takes ttnn's keyword names (``dim1``, ``dim2``: DeepSeek-V3's MoE gate passes
them by name), and ``ttnn.slice`` of a sharded TILE tensor into a smaller sharded output honours
the output's memory config (it fits the slice, not the input: DeepSeek-V3's gate slices its
64-core bias down to the batch's cores)."""

from __future__ import annotations

import torch

import meshnn as ttnn


def _sharded(cores, shard=(32, 32)):
    grid = ttnn.num_cores_to_corerangeset(cores, ttnn.CoreCoord(8, 8), row_wise=True)
    spec = ttnn.ShardSpec(grid, shard, ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)


def test_transpose_by_ttnns_keyword_names():
    dev = ttnn.open_device(device_id=0)
    try:
        values = torch.arange(2 * 32 * 64, dtype=torch.float32).reshape(2, 32, 64)
        t = ttnn.from_torch(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=dev)
        got = ttnn.to_torch(ttnn.transpose(t, dim1=-2, dim2=-1))
        assert torch.equal(got, values.transpose(-2, -1))
    finally:
        ttnn.close_device(dev)


def test_slice_of_a_sharded_tensor_into_a_smaller_sharded_output():
    dev = ttnn.open_device(device_id=0)
    try:
        values = torch.randn(8, 32, 32).bfloat16()
        t = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev,
                            memory_config=_sharded(8))  # fmt: skip
        out = ttnn.slice(t, [0, 0, 0], [3, 16, 16], memory_config=_sharded(3))
        assert out.memory_config() == _sharded(3) and tuple(out.shape) == (3, 16, 16)
        assert torch.equal(ttnn.to_torch(out), values[:3, :16, :16])
    finally:
        ttnn.close_device(dev)
