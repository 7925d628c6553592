"""Bad calls of ``ttnn.view``: a shape of another volume, two -1s, a TILE view that would move data."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, Case


def rows() -> list[Case]:
    return [
        Case("view", "another volume", lambda e: ttnn.view(e.a, [1, 3, 41]), VALUE, "new_shape"),
        Case("view", "two -1s", lambda e: ttnn.view(e.a, [-1, -1]), VALUE, "new_shape"),
        Case("view", "shape is a string", lambda e: ttnn.view(e.a, "1,120"), TYPE, "new_shape"),
        Case("view", "a TILE view across tiles", lambda e: ttnn.view(e.a, [1, 120]), VALUE, "ttnn.reshape"),
        Case("view", "input was deallocated", lambda e: ttnn.view(e.freed, [1, 120]), DEAD, "input_tensor"),
        Case("view", "input is numpy", lambda e: ttnn.view(e.host.to_torch().numpy(), [1]), TYPE, "input_tensor"),
    ]
