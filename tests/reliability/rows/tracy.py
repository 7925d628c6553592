"""Bad calls of ttnn's Tracy markers: a zone's line number as a string, a message that is not text."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, Case


def rows() -> list[Case]:
    return [
        Case(
            "start_tracy_zone",
            "line number is a string",
            lambda e: ttnn.start_tracy_zone("a.py", "f", "12"),
            TYPE,
            "lineNum",
        ),
        Case("stop_tracy_zone", "color is a float", lambda e: ttnn.stop_tracy_zone("zone", 1.5), TYPE, "color"),
        Case("tracy_message", "message is bytes", lambda e: ttnn.tracy_message(b"message"), TYPE, "source"),
    ]
