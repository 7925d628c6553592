"""The mesh's side of lock-step allocation: one address on every device for each MeshBuffer, the
registry of the owning buffers still alive, and the memory view every device shares.

A mesh owns ONE device allocator (the chip model of :mod:`meshnn.device.bank`) and every
MeshBuffer of the mesh is allocated through it, so every device holds the same allocations at the
same addresses by construction; each device's memory view *is* the mesh's.  In a multi-process run
``$MESHNN_DEBUG_LOCKSTEP=1`` checks that every rank got the same address.

:class:`LockstepAllocation` is a base of :class:`~meshnn.mesh.mesh_device.MeshDevice`, which sets
the attributes it declares.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.distributed` and the
mesh layer's coordinates.
"""

from __future__ import annotations

import itertools
import os
import weakref

from meshnn.device.bank import DeviceAllocator, MemoryView
from meshnn.device.buffer import BufferLayout, BufferType
from meshnn.distributed.context import DistributedContext
from meshnn.errors import DistributedError
from meshnn.mesh.coord import MeshCoordinate, MeshShape, as_coord, to_linear_index

DEBUG_LOCKSTEP_ENV = "MESHNN_DEBUG_LOCKSTEP"


class LockstepAllocation:
    """Allocation and the buffer registry of a mesh (a base of MeshDevice: it reads the state
    declared here, which MeshDevice sets, and calls MeshDevice's ``check_open``)."""

    allocator: DeviceAllocator
    context: DistributedContext
    _shape: MeshShape
    _owners: dict[int, weakref.ref]  # key -> weak ref of each owning MeshBuffer not yet freed
    _buffer_keys: itertools.count
    _submeshes: list[weakref.ref]

    def allocate_lockstep(self, layout: BufferLayout, *, bottom_up: bool | None = None) -> int:
        """One address for ``layout`` on every device, or an error with nothing allocated."""
        self.check_open()
        address = self.allocator.allocate(layout, bottom_up=bottom_up)
        if self.context.world_size > 1 and os.environ.get(DEBUG_LOCKSTEP_ENV) == "1":
            self._check_lockstep(layout, address)
        return address

    def _check_lockstep(self, layout: BufferLayout, address: int) -> None:
        seen = self.context.allgather_object(address, op="lock-step check")
        if len(set(seen)) > 1:
            self.allocator.deallocate(layout.buffer_type, address)
            pairs = ", ".join(f"rank {r}: {a}" for r, a in enumerate(seen))
            raise DistributedError(
                f"lock-step broken: a {layout.size} B {layout.buffer_type.name} allocation got different "
                f"addresses on different ranks ({pairs})",
                rank=self.context.rank,
            )

    def register_buffer(self, buffer: object) -> int:
        """Record an owning MeshBuffer (weakly) until :meth:`forget_buffer` of the key returned.
        Single dict operations, atomic under the GIL: any thread may register and forget."""
        key = next(self._buffer_keys)
        self._owners[key] = weakref.ref(buffer)
        return key

    def forget_buffer(self, key: int) -> None:
        """Drop the record of a freed buffer (safe to repeat)."""
        self._owners.pop(key, None)

    def _registered(self) -> list:
        """The owning MeshBuffers registered on this mesh and still referenced (a snapshot: the
        registry may change while it is used)."""
        refs = list(self._owners.values())
        return [b for b in (r() for r in refs) if b is not None]

    def live_buffers(self) -> list:
        """Every allocated MeshBuffer that owns its memory, by address (safe to call while other
        threads create and free buffers)."""
        found = [b for b in self._registered() if b.owns_data and b.is_allocated()]  # type: ignore[attr-defined]
        for ref in self._submeshes:
            sub = ref()
            if sub is not None:
                found += sub.live_buffers()
        return sorted(found, key=lambda b: (b.buffer_type().value, b.address()))

    def buffer_at(self, buffer_type: BufferType, address: int):
        for buffer in self.live_buffers():
            if buffer.buffer_type() is buffer_type and buffer.address() == address:
                return buffer
        return None

    def get_memory_view(self, buffer_type: BufferType, coord: MeshCoordinate | None = None) -> MemoryView:
        """The memory view of one device (every device's view is the same: lock-step)."""
        self.check_open()
        if coord is not None:
            to_linear_index(self._shape, as_coord(coord))
        return self.allocator.memory_view(buffer_type)
