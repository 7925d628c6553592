"""The DeepSeek prefill ops of stop 52 in the performance model: each run under ``ttnn.perf_capture``
is recorded with its family and tt-metal's device-operation name, and timed (a positive kernel time),
none skipped."""

from __future__ import annotations

import numpy as np
import torch

import meshnn as ttnn
from meshnn.perf.desc import OpFamily

DRAM, TILE, RM = ttnn.DRAM_MEMORY_CONFIG, ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT


def idx(mesh, values):
    return ttnn.from_torch(torch.tensor(values, dtype=torch.int32), dtype=ttnn.uint32, layout=RM, device=mesh,
                           memory_config=DRAM)  # fmt: skip


def tile(mesh, shape, dtype=ttnn.bfloat8_b):
    return ttnn.from_torch(torch.randn(shape), dtype=dtype, layout=TILE, device=mesh, memory_config=DRAM)


def test_each_op_is_recorded_and_timed():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="p150")
    ds = ttnn.experimental.deepseek_prefill
    try:
        g, s, c, ids = tile(mesh, (128, 64)), idx(mesh, [0, 64]), idx(mesh, [40, 64]), idx(mesh, [1])
        w = [tile(mesh, (64, 64)) for _ in range(3)]
        x = ttnn.from_torch(torch.randn(4, 256), dtype=ttnn.bfloat16, layout=RM, device=mesh, memory_config=DRAM)
        q, cos, t = tile(mesh, (1, 1, 32, 64), ttnn.bfloat16), tile(mesh, (1, 1, 64, 64), ttnn.bfloat16), None
        t = tile(mesh, (1, 1, 32, 32), ttnn.bfloat16)
        cache = tile(mesh, (2, 1, 64, 64), ttnn.bfloat16)
        with ttnn.perf_capture() as capture:
            out = ds.extract(g, s, c, ids, local_expert_id=0, max_dispatched_tokens_per_expert=64)
            ds.insert(g, out, s, c, ids, local_expert_id=0)
            e4m3, scale = ds.per_token_cast_to_fp8(x)
            ds.per_token_cast_back(e4m3, scale)
            ds.rotary_embedding_indexed(q, cos, cos, t, 0, 0)
            ds.update_padded_kv_cache(cache, q, 0, 0, 2, 0, 0)
            ds.zero_padded_kv_cache(cache, 0, 0, 2, 40, 32, 0, 32)
            ds.unified_routed_expert_ffn(out, *w, c, ids, 0)
        records = capture.recorder(mesh).records
        assert not capture.skipped
        got = [(r.desc.family, r.desc.op_code) for r in records]
        assert got == [
            (OpFamily.SLICE, "ExtractDeviceOperation"),
            (OpFamily.KV_FILL, "InsertDeviceOperation"),
            (OpFamily.TYPECAST, "PerTokenCastToFp8DeviceOperation"),
            (OpFamily.TYPECAST, "PerTokenCastBackDeviceOperation"),
            (OpFamily.BINARY, "RotaryEmbeddingIndexedDeviceOperation"),
            (OpFamily.KV_FILL, "UpdatePaddedKvCacheDeviceOperation"),
            (OpFamily.KV_FILL, "ZeroPaddedKvCacheDeviceOperation"),
            (OpFamily.MOE_COMPUTE, "UnifiedRoutedExpertFfnDeviceOperation"),
        ]
        assert all(np.isfinite(r.prediction.total_ns) and r.prediction.total_ns > 0 for r in records)
    finally:
        ttnn.close_mesh_device(mesh)
