"""The MPI tests' leftovers: MPICH keeps each job's shared-memory segment as a file under /dev/shm,
and a job whose ranks are killed or aborted (the fault tests do that on purpose) leaves it behind,
about 2 MiB of memory each until the machine restarts.  After the tests of this folder, the
segments that appeared while they ran and that no live process has open or mapped are removed;
another job's segments (older, or in use) are left alone."""

from __future__ import annotations

import os
import pathlib

import pytest

SHM = pathlib.Path("/dev/shm")
PATTERN = "mpich_shm_*"


def _segments() -> set[pathlib.Path]:
    return set(SHM.glob(PATTERN)) if SHM.is_dir() else set()


def _in_use() -> set[str]:
    """Paths under /dev/shm that a live process has open or mapped (those this user may read)."""
    used: set[str] = set()
    for proc in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            used.update(line.split(None, 5)[-1].strip() for line in (proc / "maps").read_text().splitlines()
                        if "/dev/shm/" in line)  # fmt: skip
            used.update(os.readlink(fd) for fd in (proc / "fd").iterdir())
        except OSError:  # a process that ended, or one of another user
            continue
    return used


@pytest.fixture(scope="session", autouse=True)
def no_shared_memory_left_behind():
    before = _segments()
    yield
    new = _segments() - before
    if not new:
        return
    used = _in_use()
    for segment in new:
        if str(segment) not in used:
            segment.unlink(missing_ok=True)
