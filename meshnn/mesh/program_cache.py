"""A mesh device's program cache, as ttnn counts it: the distinct programs run while the cache
was on, each keyed by what ttnn hashes a program by (the op, its tensors' specs and its
attributes; never buffer addresses).  Nothing is compiled in a simulation, so the cache is only
counted: ``num_program_cache_entries`` is what a test of ttnn's cache reads.

May import: nothing of meshnn (a mixin of :class:`meshnn.mesh.mesh_device.MeshDevice`).
"""

from __future__ import annotations


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

    def num_program_cache_entries(self) -> int:
        """The distinct programs run while the cache was on (cleared by the two clearing calls)."""
        return len(self._programs)
