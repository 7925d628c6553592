"""Bad calls of ``ttnn.narrow`` (``e.a`` is ``[1, 3, 40]`` a device, TILE float32 in DRAM: padded
``[1, 32, 64]``): ttnn's bounds, tile and bank checks, and what is not a device tensor."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, Case


def rows() -> list[Case]:
    return [
        Case("narrow", "dim out of range", lambda e: ttnn.narrow(e.a, 3, 0, 1), VALUE, "dim 3"),
        Case("narrow", "start past the dim", lambda e: ttnn.narrow(e.a, 1, 40, 1), VALUE, "start index 40"),
        Case("narrow", "length past the dim", lambda e: ttnn.narrow(e.a, 1, 30, 3), VALUE, "length 3"),
        Case("narrow", "length zero", lambda e: ttnn.narrow(e.a, 1, 0, 0), VALUE, "length 0"),
        Case("narrow", "TILE width by 16", lambda e: ttnn.narrow(e.a, 2, 0, 16), VALUE, "TILE_WIDTH"),
        Case("narrow", "DRAM past a dim of 32", lambda e: ttnn.narrow(e.a, 2, 32, 32), VALUE, "preceding"),
        Case("narrow", "input on the host", lambda e: ttnn.narrow(e.host, 0, 0, 1), VALUE, "DEVICE"),
        Case("narrow", "dim is a float", lambda e: ttnn.narrow(e.a, 1.0, 0, 1), TYPE, "dim"),
        Case("narrow", "start is a bool", lambda e: ttnn.narrow(e.a, 1, True, 1), TYPE, "start"),
        Case("narrow", "input was deallocated", lambda e: ttnn.narrow(e.freed, 1, 0, 1), DEAD, "input_tensor"),
        Case(
            "narrow", "input is numpy", lambda e: ttnn.narrow(e.host.to_torch().numpy(), 0, 0, 1), TYPE, "input_tensor"
        ),
    ]
