"""Bad calls of ``ttnn.experimental.all_to_all_async``: a deallocated input, a dim out of range, no
global semaphore, a deallocated output buffer, two links on the native path."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, Case


def _sem(e):
    return e.sems[0]


def rows() -> list[Case]:
    a2a = ttnn.experimental.all_to_all_async
    name = "experimental.all_to_all_async"
    return [
        Case(name, "input deallocated", lambda e: a2a(e.freed, e.a, e.a, 1, 2, _sem(e)), DEAD, "input_tensor"),
        Case(name, "in_dim out of range", lambda e: a2a(e.a, e.a, e.a, 3, 2, _sem(e)), VALUE, "in_dim"),
        Case(name, "no semaphore", lambda e: a2a(e.a, e.a, e.a, 1, 2, None), TYPE, "multi_device_global_semaphore"),
        Case(
            name,
            "output deallocated",
            lambda e: a2a(e.a, e.a, e.freed, 1, 2, _sem(e)),
            DEAD,
            "persistent_output_buffer",
        ),
        Case(
            name, "num_links is a string", lambda e: a2a(e.a, e.a, e.a, 1, 2, _sem(e), num_links="1"), TYPE, "num_links"
        ),
    ]
