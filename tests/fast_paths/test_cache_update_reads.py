"""A KV cache update reads the rows it writes from its input's logical values when they hold them
(issue 34, stop 47: the memo its producer left, not the padded bytes decoded again): the cache's
bytes are those of memos off."""

from __future__ import annotations

import numpy as np
import torch

import meshnn as ttnn
from meshnn.ops.memo import VALUES_MEMO


def _update(mesh, memos: bool) -> tuple[bytes, int]:
    limit = VALUES_MEMO.limit
    VALUES_MEMO.limit = (256 << 20) if memos else 0
    VALUES_MEMO.clear()
    try:
        gen = torch.Generator().manual_seed(7)
        fmt = dict(layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
        qkv = ttnn.from_torch(torch.randn(8, 1, 32, 4 * 64, generator=gen), dtype=ttnn.bfloat16, **fmt)
        _, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(
            qkv, num_heads=2, num_kv_heads=1, overlap_qk_coregrid=False
        )
        assert tuple(k.shape) == (1, 32, 1, 64) and tuple(k.padded_shape) == (1, 32, 32, 64)
        cache = ttnn.from_torch(torch.randn(8 * 32, 1, 64, 64, generator=gen), dtype=ttnn.bfloat8_b, **fmt)
        positions = torch.arange(8 * 32, dtype=torch.int32) % 64
        pos = ttnn.from_torch(positions, dtype=ttnn.int32, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
        hits = VALUES_MEMO.hits
        ttnn.experimental.paged_update_cache(cache, k, update_idxs_tensor=pos)
        ttnn.experimental.paged_update_cache(cache, v, update_idxs_tensor=pos)
        read = VALUES_MEMO.hits - hits
        return b"".join(np.asarray(ttnn.to_numpy(t)).tobytes() for t in ttnn.get_device_tensors(cache)), read
    finally:
        VALUES_MEMO.clear()
        VALUES_MEMO.limit = limit


def test_a_cache_update_reads_its_inputs_memo_and_writes_the_bytes_of_memos_off(open_mesh):
    mesh = open_mesh((1, 8))
    with_memos, hits = _update(mesh, memos=True)
    without, _ = _update(mesh, memos=False)
    assert hits >= 2, "the heads' values were read from their memos"
    assert with_memos == without
