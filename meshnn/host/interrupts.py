"""A Ctrl-C that lands in a finalizer or a weak-reference callback is not lost.

Python ignores what ``__del__`` and a weakref callback raise (it prints "Exception ignored in ..."
and goes on), so a KeyboardInterrupt arriving while meshnn frees a dropped buffer or forgets a
dropped memo would vanish and the user's loop would run on.  :func:`passes_interrupts` wraps such
a function: an interrupt caught there is raised again in the main thread once the function has
returned (:func:`interrupt_main_soon`).

Part of the ``host`` layer; imports only the standard library.
"""

from __future__ import annotations

import _thread
import functools
import signal
import threading
import time
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., None])

REDELIVERY_DELAY = 0.01
"""Seconds between catching an interrupt and raising it again: raised at once, it would land in the
finalizer that caught it (Python looks for a pending signal after each call) and be lost again."""


def interrupt_main_soon(delay: float = REDELIVERY_DELAY) -> None:
    """Raise KeyboardInterrupt in the main thread (by its SIGINT handler) ``delay`` seconds from
    now, from a daemon thread of its own."""

    def deliver() -> None:
        time.sleep(delay)
        _thread.interrupt_main(signal.SIGINT)

    threading.Thread(target=deliver, name="meshnn-interrupt", daemon=True).start()


def passes_interrupts(function: F) -> F:
    """``function`` (a finalizer or weakref callback, returning None), with a KeyboardInterrupt
    raised inside it passed on to the main thread instead of being ignored by Python."""

    @functools.wraps(function)
    def guarded(*args: object, **kwargs: object) -> None:
        try:
            function(*args, **kwargs)
        except KeyboardInterrupt:
            interrupt_main_soon()

    return guarded  # type: ignore[return-value]
