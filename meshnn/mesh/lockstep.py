"""The mesh's side of lock-step allocation: one address on every device for each MeshBuffer, the
registry of the owning buffers still alive, and the memory view every device shares.

A mesh owns ONE device allocator (the chip model of :mod:`meshnn.device.bank`) and every
MeshBuffer of the mesh is allocated through it, so every device holds the same allocations at the
same addresses by construction; each device's memory view *is* the mesh's.  In a multi-process run
``$MESHNN_DEBUG_LOCKSTEP=1`` checks that every rank got the same address.

:class:`LockstepAllocation` is a base of :class:`~meshnn.mesh.mesh_device.MeshDevice`, which sets
the attributes it declares.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.distributed` and the
mesh layer's coordinates and op_keywords (the public function an error names).
"""

from __future__ import annotations

import collections
import itertools
import os
import sys
import warnings
import weakref

from meshnn.device.bank import DeviceAllocator, MemoryView
from meshnn.device.buffer import BufferLayout, BufferType
from meshnn.distributed.context import DistributedContext
from meshnn.errors import DistributedError, OutOfMemoryError, format_bytes
from meshnn.mesh import op_hooks
from meshnn.mesh.call_sites import compiled_op, is_meshnns
from meshnn.mesh.coord import MeshCoordinate, MeshShape, as_coord, to_linear_index
from meshnn.mesh.op_keywords import public_name

DEBUG_LOCKSTEP_ENV = "MESHNN_DEBUG_LOCKSTEP"


def called_from() -> tuple[str, str]:
    """``(ttnn function, file:line)`` of the call the user made: the outermost meshnn frame (the
    public function, ``from_torch``, ``matmul``...) and the first frame outside meshnn."""
    frame, name = sys._getframe(1), "?"
    while frame is not None and is_meshnns(frame.f_code.co_filename):  # (ops compiled as <ttnn.NAME> too)
        code = frame.f_code
        if not op_hooks.is_wrapper(code):  # (the hooks' wrapper around a public op: its op names it)
            name = public_name(frame) or compiled_op(code.co_filename) or code.co_qualname.removesuffix(".__init__")
        frame = frame.f_back
    return name, "<unknown>" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def out_of_memory_where(error: OutOfMemoryError, mesh: LockstepAllocation) -> OutOfMemoryError:
    """``error`` (the chip allocator's, sizes per bank) with where it happened: the ttnn call and
    its call site, and the devices (every device of the mesh at once: lock-step), sizes in MiB."""
    name, site = called_from()
    ids, coords = mesh.get_device_ids(), list(mesh.shape.coords())  # type: ignore[attr-defined]
    devices = f"device {ids[0]} at {coords[0]}" + (f" .. device {ids[-1]} at {coords[-1]}" if len(ids) > 1 else "")
    where = (
        f" In ttnn.{name} (called at {site}), on every device of the {mesh.shape} mesh at once (lock-step: "  # type: ignore[attr-defined]
        f"{devices}): each {error.buffer_type} bank needs {format_bytes(error.size_per_bank)} of a "
        f"{format_bytes(error.bank_size)} bank with {format_bytes(error.free)} free, the largest free block "
        f"{format_bytes(error.largest_free)}; the whole buffer is {format_bytes(error.size)} per device."
    )
    fields = ("buffer_type", "size", "num_banks", "size_per_bank", "bank_size", "allocated", "free", "largest_free")
    return OutOfMemoryError(**{k: getattr(error, k) for k in fields}, where=error.where + where)


class LockstepAllocation:
    """Allocation and the buffer registry of a mesh (a base of MeshDevice: it reads the state
    declared here, which MeshDevice sets, and calls MeshDevice's ``check_open``)."""

    allocator: DeviceAllocator
    context: DistributedContext
    _shape: MeshShape
    _owners: dict[int, tuple[int, int, weakref.ref]]  # key -> (buffer type, address, weak ref) of each owning buffer
    _buffer_keys: itertools.count
    _submeshes: list[weakref.ref]
    allocations_unsafe: bool
    _warned_unsafe = False

    def allocate_lockstep(self, layout: BufferLayout, *, bottom_up: bool | None = None) -> int:
        """One address for ``layout`` on every device, or an error with nothing allocated."""
        self.check_open()
        if self.allocations_unsafe and layout.buffer_type is not BufferType.TRACE:
            self._warn_unsafe_allocation()
        try:
            address = self.allocator.allocate(layout, bottom_up=bottom_up)
        except OutOfMemoryError as error:
            raise out_of_memory_where(error, self) from None
        if self.context.world_size > 1 and os.environ.get(DEBUG_LOCKSTEP_ENV) == "1":
            self._check_lockstep(layout, address)
        return address

    def _warn_unsafe_allocation(self) -> None:
        """tt-metal's warning (once per mesh) for an allocation while a trace exists: a replay may
        write the addresses the trace's own intermediates had, which new buffers may now hold."""
        if not self._warned_unsafe:
            self._warned_unsafe = True
            warnings.warn(
                "Allocating device buffers is unsafe due to the existence of an active trace. These buffers may be "
                "corrupted once a trace is executed.",
                RuntimeWarning,
                stacklevel=4,
            )

    def _check_lockstep(self, layout: BufferLayout, address: int) -> None:
        name = called_from()[0]
        what = f"lock-step check of ttnn.{name}'s {layout.size} B {layout.buffer_type.name} allocation"
        seen = self.context.allgather_object(address, op=what)
        if len(set(seen)) > 1:
            self.allocator.deallocate(layout.buffer_type, address)
            pairs = ", ".join(f"rank {r}: {a}" for r, a in enumerate(seen))
            raise DistributedError(
                f"lock-step broken: a {layout.size} B {layout.buffer_type.name} allocation got different "
                f"addresses on different ranks ({pairs})",
                rank=self.context.rank,
            )

    def register_buffer(self, buffer: object, buffer_type: BufferType, address: int) -> int:
        """Record an owning MeshBuffer (weakly, with its buffer type and address) until
        :meth:`forget_buffer` of the key returned.  Single dict operations, atomic under the
        interpreter lock: any thread may register and forget."""
        key = next(self._buffer_keys)
        self._owners[key] = (buffer_type._value_, address, weakref.ref(buffer))  # (_value_: no descriptor call)
        return key

    def forget_buffer(self, key: int) -> None:
        """Drop the record of a freed buffer (safe to repeat)."""
        self._owners.pop(key, None)

    def _snapshot(self) -> list[tuple[int, int, weakref.ref]]:
        """The registry's entries, copied in one step (a C-level copy under the interpreter lock:
        a reporter never holds the registry while it works through the entries)."""
        return list(self._owners.values())

    def _registered(self) -> list:
        """The owning MeshBuffers registered on this mesh and still referenced (a snapshot: the
        registry may change while it is used)."""
        return [b for b in (entry[2]() for entry in self._snapshot()) if b is not None]

    def live_buffers(self) -> list:
        """Every allocated MeshBuffer that owns its memory, by buffer type and address (safe to
        call while other threads create and free buffers: it works on a snapshot)."""
        entries = self._snapshot()
        for ref in self._submeshes:
            sub = ref()
            if sub is not None:
                entries += sub._snapshot()
        entries.sort(key=lambda entry: entry[:2])
        return [b for b in (entry[2]() for entry in entries) if b is not None and b.is_allocated()]

    def buffer_counts(self) -> dict[BufferType, int]:
        """How many owning MeshBuffers of each buffer type are live (submeshes' included), from
        one snapshot of the registry, without visiting the buffers."""
        counts = dict.fromkeys(BufferType, 0)
        values = {t.value: t for t in BufferType}
        entries = self._snapshot()
        for ref in self._submeshes:
            sub = ref()
            if sub is not None:
                entries += sub._snapshot()
        for value, count in collections.Counter(entry[0] for entry in entries).items():
            counts[values[value]] += count
        return counts

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
