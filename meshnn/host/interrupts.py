"""A Ctrl-C that lands in a finalizer or a weak-reference callback is not lost.

Python ignores what ``__del__`` and a weakref callback raise (it prints "Exception ignored in ..."
and goes on), so a KeyboardInterrupt arriving while meshnn frees a dropped buffer or forgets a
dropped memo would vanish and the user's loop would run on.  Two guards:

- :func:`arm` (at ``import meshnn``, in the main thread, when SIGINT has Python's default handler)
  puts in its place a handler that does what Python's does, raise KeyboardInterrupt, except while
  one of meshnn's finalizers is running: then the interrupt is raised again once it has returned
  (:func:`interrupt_main_soon`).  A handler of the program's own is left alone.
- :func:`passes_interrupts` wraps such a finalizer: an interrupt raised inside it anyway (by a
  handler of the program's own) is passed on the same way.

Part of the ``host`` layer; imports only the standard library.
"""

from __future__ import annotations

import _thread
import functools
import signal
import threading
import time
import types
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., None])

REDELIVERY_DELAY = 0.01
"""Seconds between deferring an interrupt and raising it again: raised at once, it would land in
the finalizer that deferred it (Python looks for a pending signal after each call)."""

_FINALIZERS: set[types.CodeType] = set()  # the code of passes_interrupts' wrapper (one object, shared)


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

    _FINALIZERS.add(guarded.__code__)
    return guarded  # type: ignore[return-value]


def in_finalizer(frame: types.FrameType | None) -> bool:
    """Whether ``frame`` or a frame that called it is one of :func:`passes_interrupts`' wrappers."""
    while frame is not None:
        if frame.f_code in _FINALIZERS:
            return True
        frame = frame.f_back
    return False


def on_sigint(signum: int, frame: types.FrameType | None) -> None:
    """Python's default SIGINT handler (raise KeyboardInterrupt), deferred while a finalizer of
    meshnn's runs (where Python would ignore it)."""
    if in_finalizer(frame):
        interrupt_main_soon()
        return
    raise KeyboardInterrupt


def arm() -> None:
    """Install :func:`on_sigint` if SIGINT still has Python's default handler (and this is the main
    thread, the only one that may set a handler); otherwise leave the program's handler alone."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, on_sigint)
