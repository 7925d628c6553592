"""Bad calls of ``ttnn.reshape_on_device``: a dim of the wrong kind, another volume, two -1s, a host
or deallocated input, a block-float input whose rows would move, a sharded output, a memory config
of the wrong kind."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, L1_MC, TYPE, VALUE, Case

_HEIGHT = ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG


def rows() -> list[Case]:
    r = ttnn.reshape_on_device
    return [
        Case("reshape_on_device", "X is a float", lambda e: r(e.a, 1, 1, 3, 40.0), TYPE, "X"),
        Case("reshape_on_device", "another volume", lambda e: r(e.a, 1, 1, 4, 40), VALUE, "W, Z, Y, X"),
        Case("reshape_on_device", "two -1s", lambda e: r(e.a, 1, -1, -1, 40), VALUE, "-1"),
        Case("reshape_on_device", "a zero dim", lambda e: r(e.a, 0, 1, 3, 40), VALUE, "W"),
        Case("reshape_on_device", "input on the host", lambda e: r(e.host, 1, 1, 64, 15), VALUE, "input_tensor"),
        Case("reshape_on_device", "input deallocated", lambda e: r(e.freed, 1, 1, 3, 40), DEAD, "input_tensor"),
        Case("reshape_on_device", "bfloat8_b rows moved", lambda e: r(e.bfp8, 1, 1, 16, 64), VALUE, "dtype"),
        Case(
            "reshape_on_device",
            "sharded output",
            lambda e: r(e.a, 1, 1, 1, 120, memory_config=_HEIGHT),
            VALUE,
            "output memory config",
        ),
        Case(
            "reshape_on_device",
            "memory_config a string",
            lambda e: r(e.a, 1, 1, 3, 40, memory_config="L1"),
            TYPE,
            "memory_config",
        ),
        Case(
            "reshape_on_device",
            "ROW_MAJOR width 15 in float32",
            lambda e: r(e.rm, 1, 1, 8, 15, memory_config=L1_MC),
            VALUE,
            "BFLOAT16",
        ),
    ]
