"""meshnn's settings from the environment, each read and checked here: a value that is not what
the setting takes (``MESHNN_WAIT_TIMEOUT=abc``, ``nan``, ``0``; ``MESHNN_SLAB_POOL_BYTES=1e3``)
is refused with a :class:`~meshnn.errors.MeshnnValueError` naming the variable, its value and
what it takes, instead of a raw ``ValueError`` deep inside (or, worse, a timeout of NaN seconds
that never expires).  A value is parsed once per distinct text (reading a setting is cheap: the
command queues read the wait timeout at every wait).

Part of the ``host`` layer; imports only ``meshnn.errors``.
"""

from __future__ import annotations

import functools
import math
import os

from meshnn.errors import MeshnnValueError

WAIT_TIMEOUT_ENV = "MESHNN_WAIT_TIMEOUT"
DEFAULT_WAIT_TIMEOUT = 120.0  # seconds
MAX_WAIT_TIMEOUT = 1e9  # seconds (about 31 years): beyond what threading's waits accept on every platform


def seconds(name: str, default: float) -> float:
    """A positive, finite number of seconds from ``$name`` (``default`` when unset or empty)."""
    return _seconds(name, os.environ.get(name) or "", default)


@functools.lru_cache(maxsize=64)
def _seconds(name: str, text: str, default: float) -> float:
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value <= MAX_WAIT_TIMEOUT):  # also refuses nan and inf
        raise MeshnnValueError(
            f"{name} must be a positive number of seconds (at most {MAX_WAIT_TIMEOUT:g}), got {text!r}"
        )
    return value


def count(name: str, default: int, *, minimum: int = 0, what: str = "a whole number") -> int:
    """A whole number of at least ``minimum`` from ``$name`` (``default`` when unset or empty);
    digits only, so ``1e3`` or ``1.5`` are refused rather than read some other way."""
    return _count(name, os.environ.get(name) or "", default, minimum, what)


@functools.lru_cache(maxsize=64)
def _count(name: str, text: str, default: int, minimum: int, what: str) -> int:
    if not text:
        return default
    stripped = text.strip().replace("_", "")
    if not (stripped.isascii() and stripped.isdigit()) or int(stripped) < minimum:  # ("²".isdigit() holds)
        raise MeshnnValueError(f"{name} must be {what} (an integer of at least {minimum}), got {text!r}")
    return int(stripped)


def wait_timeout() -> float:
    """Seconds one wait of meshnn's threads may last (``MESHNN_WAIT_TIMEOUT``, default 120)."""
    return seconds(WAIT_TIMEOUT_ENV, DEFAULT_WAIT_TIMEOUT)
