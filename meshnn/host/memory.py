"""The host's memory: how much is available, and the check made before a conversion that would
need more (so that it fails with a meshnn error naming the sizes, before any device memory is
taken, not with numpy's MemoryError from deep inside an encoding, or the kernel's OOM killer).

``available_bytes`` reads ``MemAvailable`` from /proc/meminfo (Linux), else the free physical
pages; None when neither is known (then nothing is checked).  Sizes are bytes.

Part of the ``host`` layer; imports only ``meshnn.errors``.
"""

from __future__ import annotations

import os

from meshnn.errors import HostMemoryError


def available_bytes() -> int | None:
    """Bytes of host memory a process may still take without swapping (None: unknown)."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


CHECK_MIN_BYTES = 1 << 20
"""Conversions needing fewer bytes are not checked: reading the host's available memory costs
about 50 us (a file read), more than converting a decode step's small inputs."""


def check_host_memory(op: str, needed: int, what: str) -> None:
    """Raise HostMemoryError when ``needed`` bytes (``what`` says for what) exceed the host's
    available memory (not asked under :data:`CHECK_MIN_BYTES`)."""
    if needed < CHECK_MIN_BYTES:
        return
    available = available_bytes()
    if available is not None and needed > available:
        raise HostMemoryError(op=op, needed=needed, available=available, what=what)
