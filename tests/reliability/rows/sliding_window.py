"""Bad calls of ``ttnn.SlidingWindowParallelConfig``: each refused, naming the field."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    make = ttnn.SlidingWindowParallelConfig
    height, row = ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.ShardOrientation.ROW_MAJOR
    name = "SlidingWindowParallelConfig"
    return [
        Case(name, "grid a CoreGrid", lambda e: make(grid=ttnn.CoreGrid(x=2, y=2), shard_scheme=height,
                                                        shard_orientation=row), TYPE, "grid"),
        Case(name, "interleaved scheme", lambda e: make(grid=e.grid, shard_scheme=ttnn.TensorMemoryLayout.INTERLEAVED,
                                                           shard_orientation=row), VALUE, "shard_scheme"),
        Case(name, "orientation a string", lambda e: make(grid=e.grid, shard_scheme=height, shard_orientation="ROW"),
             TYPE, "shard_orientation"),
    ]  # fmt: skip
