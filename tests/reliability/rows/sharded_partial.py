"""Bad calls of ``ttnn.interleaved_to_sharded_partial`` and ``ttnn.sharded_to_interleaved_partial``:
a band index past the slices, rows that do not divide into the slices, a ROW_MAJOR input, a grid of
the wrong kind, a shard shape of one dim, an interleaved input to the write-back, a deallocated
cache."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, Case

_HEIGHT, _ROW = ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.ShardOrientation.ROW_MAJOR


def rows() -> list[Case]:
    i2s, s2i = ttnn.interleaved_to_sharded_partial, ttnn.sharded_to_interleaved_partial
    n1, n2 = "interleaved_to_sharded_partial", "sharded_to_interleaved_partial"
    return [
        Case(
            n1,
            "slice_index past the slices",
            lambda e: i2s(e.heads, (1, 1), [32, 32], 2, 2, _HEIGHT, _ROW),
            VALUE,
            "slice_index",
        ),
        Case(
            n1, "rows not divisible", lambda e: i2s(e.heads, (1, 1), [32, 32], 3, 0, _HEIGHT, _ROW), VALUE, "num_slices"
        ),
        Case(n1, "ROW_MAJOR input", lambda e: i2s(e.rm, (1, 1), [32, 32], 1, 0, _HEIGHT, _ROW), VALUE, "TILE"),
        Case(n1, "grid is a string", lambda e: i2s(e.heads, "1x1", [32, 32], 2, 0, _HEIGHT, _ROW), TYPE, "grid"),
        Case(
            n1,
            "shard_shape of one dim",
            lambda e: i2s(e.heads, (1, 1), [32], 2, 0, _HEIGHT, _ROW),
            VALUE,
            "shard_shape",
        ),
        Case(
            n1, "input deallocated", lambda e: i2s(e.freed, (1, 1), [32, 32], 2, 0, _HEIGHT, _ROW), DEAD, "input_tensor"
        ),
        Case(n2, "input not sharded", lambda e: s2i(e.heads, e.heads, 2, 0), VALUE, "shard spec"),
        Case(n2, "cache deallocated", lambda e: s2i(e.heads, e.freed, 2, 0), DEAD, "cache_tensor"),
        Case(n2, "num_slices a float", lambda e: s2i(e.heads, e.heads, 2.0, 0), TYPE, "num_slices"),
    ]
