"""ttnn's Tracy markers (``ttnn.start_tracy_zone``, ``stop_tracy_zone``, ``tracy_message``,
``tracy_frame``): a profiled build of ttnn sends them to the Tracy profiler; meshnn has no Tracy
client, so each checks its arguments and keeps them in :data:`MARKS` (the latest 1024), in call
order, for a caller that wants to see them.

May import: :mod:`meshnn.errors`.
"""

from __future__ import annotations

from collections import deque

from meshnn.errors import MeshnnTypeError

MARKS: deque[tuple[str, tuple[object, ...]]] = deque(maxlen=1024)
"""(marker, its arguments) of the latest calls."""


def _check(marker: str, **named: tuple[object, type]) -> None:
    for name, (value, kind) in named.items():
        if isinstance(value, bool) or not isinstance(value, kind):
            raise MeshnnTypeError(f"ttnn.{marker}: {name} must be a {kind.__name__}, got {value!r}")


def start_tracy_zone(source: str, functName: str, lineNum: int, color: int = 0) -> None:
    """Open a Tracy zone named by ``source``, ``functName`` and ``lineNum``."""
    _check("start_tracy_zone", source=(source, str), functName=(functName, str), lineNum=(lineNum, int))
    _check("start_tracy_zone", color=(color, int))
    MARKS.append(("start_tracy_zone", (source, functName, lineNum, color)))


def stop_tracy_zone(name: str = "", color: int = 0) -> None:
    """Close the latest Tracy zone."""
    _check("stop_tracy_zone", name=(name, str), color=(color, int))
    MARKS.append(("stop_tracy_zone", (name, color)))


def tracy_message(source: str, color: int = 0xF0F8FF) -> None:
    """A message on the Tracy timeline."""
    _check("tracy_message", source=(source, str), color=(color, int))
    MARKS.append(("tracy_message", (source, color)))


def tracy_frame() -> None:
    """A frame mark on the Tracy timeline."""
    MARKS.append(("tracy_frame", ()))
