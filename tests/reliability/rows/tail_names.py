"""Bad calls of the tail of ttnn names tt-metal's tree calls (stop 49): ``pad_to_tile_shape``."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, Case


def rows() -> list[Case]:
    pad = ttnn.pad_to_tile_shape
    return [
        Case("pad_to_tile_shape", "three dims", lambda e: pad([1, 2, 3]), TYPE, "unpadded_shape"),
        Case("pad_to_tile_shape", "a negative dim", lambda e: pad([1, 2, -3, 4]), TYPE, "unpadded_shape"),
    ]
