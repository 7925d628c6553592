"""A mesh device's program cache, as ttnn counts it: the distinct programs run while the cache
was on, each keyed by what ttnn hashes a program by (the op, its tensors' specs and its
attributes; never buffer addresses).  Nothing is compiled in a simulation, so the cache is only
counted: ``num_program_cache_entries`` is what a test of ttnn's cache reads.  What a cached
program owns on the device (the global semaphores a collective makes for itself on a cache miss,
:func:`meshnn.mesh.global_semaphore.program_semaphores`) is held with its entry and freed when the
cache is cleared, as ttnn frees a cached program's shared variables.

May import: nothing of meshnn (a mixin of :class:`meshnn.mesh.mesh_device.MeshDevice`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence


class ProgramCache:
    """The program-cache methods of a mesh device (on by default, as in ttnn)."""

    program_cache_enabled: bool = True

    def _start_program_cache(self) -> None:
        self.program_cache_enabled = True
        self._programs: set[object] = set()
        self._last_recorded: object = None  # the key recorded last, in the set since (see record_program)
        self._held: dict[object, Sequence] = {}  # key -> what a cached program owns (each item has a .buffer)

    def enable_program_cache(self) -> None:
        self.program_cache_enabled = True

    def disable_and_clear_program_cache(self) -> None:
        self.program_cache_enabled = False
        self.clear_program_cache()

    def clear_program_cache(self) -> None:
        self._programs.clear()
        self._last_recorded = None
        held, self._held = self._held, {}
        for items in held.values():
            for item in items:
                item.buffer.deallocate()

    def forget_program(self, key: object) -> None:
        """Drop the entry ``key`` (a program whose making failed after it was noted)."""
        self._programs.discard(key)
        self._last_recorded = None

    def held_by_program(self, key: object, make: Callable[[], Sequence]) -> Sequence:
        """What the cached program ``key`` owns on the device: ``make()``'s items (each with a
        ``buffer``, a MeshBuffer) made on the first call while the cache is on and held until the
        cache is cleared; while it is off, made afresh (the caller's to drop)."""
        if not self.program_cache_enabled:
            return make()
        items = self._held.get(key)
        if items is None:
            items = self._held[key] = make()
        return items

    def program_cache_buffers(self) -> list:
        """The device buffers the cached programs hold (:meth:`held_by_program`), still allocated."""
        return [i.buffer for items in self._held.values() for i in items if i.buffer.is_allocated()]

    def record_program(self, key: object) -> None:
        """Note a program in the cache (while enabled): ``key`` is what ttnn hashes a program by.
        The very key noted last (an op launched again and again with the key its plan made once)
        is in the set already, unless the cache was cleared or the key dropped since: its specs'
        hashes are not taken again."""
        if self.program_cache_enabled and key is not self._last_recorded:
            self._programs.add(key)
            self._last_recorded = key

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
