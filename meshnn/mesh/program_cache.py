"""A mesh device's program cache, as ttnn counts it: the distinct programs run while the cache
was on, each keyed by what ttnn hashes a program by (the op, its tensors' specs and its
attributes; never buffer addresses).  Nothing is compiled in a simulation, so the cache is only
counted: ``num_program_cache_entries`` is what a test of ttnn's cache reads.

May import: nothing of meshnn (a mixin of :class:`meshnn.mesh.mesh_device.MeshDevice`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class ProgramCache:
    """The program-cache methods of a mesh device (on by default, as in ttnn)."""

    program_cache_enabled: bool = True

    def _start_program_cache(self) -> None:
        self.program_cache_enabled = True
        self._programs: set[object] = set()

    def enable_program_cache(self) -> None:
        self.program_cache_enabled = True

    def disable_and_clear_program_cache(self) -> None:
        self.program_cache_enabled = False
        self._programs.clear()

    def clear_program_cache(self) -> None:
        self._programs.clear()

    def record_program(self, key: object) -> None:
        """Note a program in the cache (while enabled): ``key`` is what ttnn hashes a program by."""
        if self.program_cache_enabled:
            self._programs.add(key)

    @contextlib.contextmanager
    def parts_of_one_program(self) -> Iterator[None]:
        """The launches inside are parts of one ttnn program already recorded (a fused device
        operation that the simulation runs as several launches, e.g. a gather then a matmul): they
        add no entry of their own.  The cache's state is restored after."""
        saved = self.program_cache_enabled
        self.program_cache_enabled = False
        try:
            yield
        finally:
            self.program_cache_enabled = saved

    def num_program_cache_entries(self) -> int:
        """The distinct programs run while the cache was on (cleared by the two clearing calls)."""
        return len(self._programs)
