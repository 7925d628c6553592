"""MeshDevice: a grid of simulated chips that allocate in lock-step.

A mesh owns ONE device allocator (the chip model of :mod:`meshnn.device.bank`) and every
MeshBuffer of the mesh is allocated through it, so every device holds the same allocations at the
same addresses by construction; each device's memory view *is* the mesh's.  Submeshes share
their parent's allocator, so a parent and its submeshes never hand out the same memory.

Device queries (arch, grids, memory figures) are answered by the system's chip spec, as tt-metal
answers them from a reference device.  In a multi-process run every rank opens the same global
mesh; ``local_coords()`` are the coordinates whose slab rows this rank holds.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

from meshnn.device.arch import Arch, SystemSpec, system_spec
from meshnn.device.bank import DeviceAllocator, MemoryView
from meshnn.device.buffer import BufferLayout, BufferType
from meshnn.device.core import CoreCoord, CoreGrid
from meshnn.distributed.context import DistributedContext, get_context, rows_of_rank
from meshnn.errors import DeviceClosedError, DistributedError, MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange, MeshShape, as_coord, to_linear_index

_mesh_ids = itertools.count()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEBUG_LOCKSTEP_ENV = "MESHNN_DEBUG_LOCKSTEP"


@dataclass(frozen=True, slots=True)
class Device:
    """One chip of a mesh, as ``mesh_device.get_devices()`` lists it."""

    device_id: int
    coord: MeshCoordinate
    arch_: Arch
    compute_grid: tuple[int, int]
    num_dram_banks: int

    def id(self) -> int:
        return self.device_id

    def arch(self) -> Arch:
        return self.arch_

    def compute_with_storage_grid_size(self) -> CoreCoord:
        return CoreCoord(*self.compute_grid)

    def dram_grid_size(self) -> CoreCoord:
        return CoreCoord(self.num_dram_banks, 1)

    def __repr__(self) -> str:
        return f"Device(id={self.device_id}, coord={self.coord})"


class MeshDevice:
    """A mesh of devices.  Open one with :func:`open_mesh_device`; close it (or use ``with``)."""

    def __init__(
        self,
        mesh_shape: MeshShape,
        *,
        system: SystemSpec,
        allocator: DeviceAllocator,
        device_ids: tuple[int, ...],
        num_command_queues: int = 1,
        parent: MeshDevice | None = None,
        context: DistributedContext | None = None,
    ) -> None:
        if num_command_queues not in (1, 2):
            raise MeshnnValueError(f"num_command_queues must be 1 or 2, got {num_command_queues!r}")
        if mesh_shape.dims() > 2:
            raise MeshnnValueError(f"meshnn meshes are 1-D or 2-D, got {mesh_shape!r}")
        self._shape = mesh_shape
        self.system = system
        self.allocator = allocator
        self._device_ids = device_ids
        self._parent = parent
        self._submeshes: list[weakref.ref[MeshDevice]] = []
        self._open = True
        self.mesh_id = next(_mesh_ids)
        self.context = context if context is not None else get_context()
        self._local = tuple(self._local_coords_of(mesh_shape))
        self._rows = {coord: i for i, coord in enumerate(self._local)}
        self._full_range: MeshCoordinateRange | None = None
        self._full_range_of: MeshShape | None = None
        self._owners: dict[int, weakref.ref] = {}  # key -> weak ref of each owning MeshBuffer not yet freed
        self._buffer_keys = itertools.count()
        self._lock = threading.RLock()
        self._closed_at: str | None = None
        self.fabric_config: object = None
        from meshnn.mesh.command_queue import MeshCommandQueue  # the queue module needs MeshDevice

        self._queues = [MeshCommandQueue(self, cq_id) for cq_id in range(num_command_queues)]
        self.program_cache_enabled = True

    def _local_coords_of(self, shape: MeshShape) -> list[MeshCoordinate]:
        coords = list(shape.coords())
        if self.context.world_size == 1:
            return coords
        rows = rows_of_rank(shape[0], self.context.rank, self.context.world_size)
        return [c for c in coords if c[0] in rows]

    # ---------------------------------------------------------------------------- lifetime

    @property
    def full_range(self) -> MeshCoordinateRange:
        """The range of every coordinate of the mesh."""
        if self._full_range is None or self._full_range_of is not self._shape:
            self._full_range, self._full_range_of = MeshCoordinateRange(self._shape), self._shape
        return self._full_range

    @property
    def all_local(self) -> bool:
        """True when this process holds every device of the mesh."""
        return len(self._local) == self._shape.mesh_size()

    def is_open(self) -> bool:
        return self._open

    @property
    def closed_at(self) -> str | None:
        return self._closed_at

    def check_open(self) -> None:
        if not self._open:
            where = f" (closed at {self._closed_at})" if self._closed_at else ""
            raise DeviceClosedError(f"mesh device {self._shape} is closed{where}")

    def close(self) -> None:
        """Close submeshes first, drain the queues, then deallocate every live MeshBuffer."""
        if not self._open:
            return
        for ref in self._submeshes:
            sub = ref()
            if sub is not None:
                sub.close()
        for queue in self._queues:
            queue.shutdown()
        for buffer in self._registered():
            buffer.deallocate()  # type: ignore[attr-defined]
        self._open = False
        self._closed_at = _caller_outside_meshnn()

    def __enter__(self) -> MeshDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------- queries

    @property
    def shape(self) -> MeshShape:
        return self._shape

    @property
    def num_rows(self) -> int:
        return self._shape[0]

    @property
    def num_cols(self) -> int:
        return self._shape[1] if self._shape.dims() > 1 else 1

    def get_num_devices(self) -> int:
        return self._shape.mesh_size()

    num_devices = get_num_devices

    def get_device_ids(self) -> list[int]:
        return list(self._device_ids)

    def get_device_id(self, coord: MeshCoordinate | tuple[int, ...]) -> int:
        return self._device_ids[to_linear_index(self._shape, as_coord(coord))]

    def get_devices(self) -> list[Device]:
        arch = self.system.arch_spec
        return [
            Device(self._device_ids[i], coord, arch.arch, self.system.compute_grid, arch.num_dram_banks)
            for i, coord in enumerate(self._shape.coords())
        ]

    def get_device(self, coord: MeshCoordinate | tuple[int, ...]) -> Device:
        return self.get_devices()[to_linear_index(self._shape, as_coord(coord))]

    def id(self) -> int:
        return self.mesh_id

    def arch(self) -> Arch:
        return self.system.arch_spec.arch

    def compute_with_storage_grid_size(self) -> CoreCoord:
        return CoreCoord(*self.system.compute_grid)

    def dram_grid_size(self) -> CoreCoord:
        return CoreCoord(self.system.arch_spec.num_dram_banks, 1)

    @property
    def core_grid(self) -> CoreGrid:
        return CoreGrid(*self.system.compute_grid)

    def l1_size_per_core(self) -> int:
        return self.system.arch_spec.worker_l1_size

    def dram_size_per_channel(self) -> int:
        return self.system.arch_spec.dram_view_size

    def num_dram_channels(self) -> int:
        return self.system.arch_spec.num_dram_banks

    def is_local(self, coord: MeshCoordinate | tuple[int, ...]) -> bool:
        coord = as_coord(coord)
        to_linear_index(self._shape, coord)  # raises when out of bounds
        return coord in self._rows

    def local_coords(self) -> list[MeshCoordinate]:
        """Coordinates whose devices this process holds, row-major."""
        return list(self._local)

    @property
    def local(self) -> tuple[MeshCoordinate, ...]:
        """:meth:`local_coords` as a tuple (no copy); slab row ``i`` holds ``local[i]``."""
        return self._local

    def local_row(self, coord: MeshCoordinate) -> int:
        """Slab row of ``coord``; raises for coordinates outside the mesh or of another rank."""
        to_linear_index(self._shape, coord)
        try:
            return self._rows[coord]
        except KeyError:
            raise MeshnnValueError(
                f"device {coord} is owned by another rank (this is rank {self.context.rank})"
            ) from None

    def mesh_command_queue(self, cq_id: int = 0):
        self.check_open()
        if not isinstance(cq_id, int) or not 0 <= cq_id < len(self._queues):
            raise MeshnnValueError(f"cq_id {cq_id!r} is not a queue of this mesh (it has {len(self._queues)})")
        return self._queues[cq_id]

    @property
    def num_command_queues(self) -> int:
        return len(self._queues)

    # -------------------------------------------------------------------------- allocation

    def allocate_lockstep(self, layout: BufferLayout, *, bottom_up: bool | None = None) -> int:
        """One address for ``layout`` on every device, or an error with nothing allocated."""
        self.check_open()
        address = self.allocator.allocate(layout, bottom_up=bottom_up)
        if self.context.world_size > 1 and os.environ.get(DEBUG_LOCKSTEP_ENV) == "1":
            self._check_lockstep(layout, address)
        return address

    def _check_lockstep(self, layout: BufferLayout, address: int) -> None:
        seen = self.context.allgather_object(address)
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

    # ---------------------------------------------------------------------------- submeshes

    def create_submesh(self, submesh_shape: MeshShape, offset: MeshCoordinate | None = None) -> MeshDevice:
        """The devices of the box at ``offset`` (default origin) of ``submesh_shape``, as a mesh."""
        self.check_open()
        shape = submesh_shape if isinstance(submesh_shape, MeshShape) else MeshShape(submesh_shape)
        if shape.dims() != self._shape.dims():
            raise MeshnnValueError(f"submesh shape {shape!r} must have the rank of the mesh {self._shape!r}")
        start = MeshCoordinate.zero_coordinate(shape.dims()) if offset is None else as_coord(offset)
        end = [s + d - 1 for s, d in zip(start, shape, strict=True)]
        if any(e >= d for e, d in zip(end, self._shape, strict=True)) or 0 in shape:
            raise MeshnnValueError(f"submesh {shape!r} at offset {start!r} does not fit in mesh {self._shape!r}")
        box = MeshCoordinateRange(start, MeshCoordinate(end))
        ids = tuple(self.get_device_id(c) for c in box)
        sub = MeshDevice(
            shape,
            system=self.system,
            allocator=self.allocator,
            device_ids=ids,
            num_command_queues=len(self._queues),
            parent=self,
            context=self.context,
        )
        sub._local = tuple(
            MeshCoordinate([a - s for a, s in zip(c, start, strict=True)]) for c in box if c in self._rows
        )
        sub._rows = {coord: i for i, coord in enumerate(sub._local)}
        self._submeshes.append(weakref.ref(sub))
        return sub

    def create_submeshes(self, submesh_shape: MeshShape) -> list[MeshDevice]:
        shape = submesh_shape if isinstance(submesh_shape, MeshShape) else MeshShape(submesh_shape)
        if shape.dims() != self._shape.dims():
            raise MeshnnValueError(f"submesh shape {shape!r} must have the rank of the mesh {self._shape!r}")
        for dim, (whole, part) in enumerate(zip(self._shape, shape, strict=True)):
            if part == 0 or whole % part:
                raise MeshnnValueError(
                    f"Shape {self._shape!r} is not divisible by submesh shape {shape!r} along dimension {dim}"
                )
        steps = MeshShape([w // p for w, p in zip(self._shape, shape, strict=True)])
        return [
            self.create_submesh(shape, MeshCoordinate([c * p for c, p in zip(step, shape, strict=True)]))
            for step in steps.coords()
        ]

    def get_submeshes(self) -> list[MeshDevice]:
        return [s for s in (ref() for ref in self._submeshes) if s is not None and s.is_open()]

    def is_parent_mesh(self) -> bool:
        return self._parent is None

    def reshape(self, new_shape: MeshShape) -> None:
        """Give the same devices a new shape of equal size (row-major order kept)."""
        self.check_open()
        shape = new_shape if isinstance(new_shape, MeshShape) else MeshShape(new_shape)
        if shape.mesh_size() != self._shape.mesh_size():
            raise MeshnnValueError(f"cannot reshape a {self._shape!r} mesh to {shape!r}: sizes differ")
        if shape.dims() > 2:
            raise MeshnnValueError(f"meshnn meshes are 1-D or 2-D, got {shape!r}")
        if self.live_buffers() or self.get_submeshes():
            raise MeshnnValueError(
                "reshape needs a mesh with no live buffers and no submeshes: deallocate its tensors first"
            )
        self._shape = shape
        self._local = tuple(self._local_coords_of(shape))
        self._rows = {coord: i for i, coord in enumerate(self._local)}

    def quiesce_devices(self) -> None:
        for queue in self._queues:
            queue.finish()

    def enable_program_cache(self) -> None:
        self.program_cache_enabled = True

    def disable_and_clear_program_cache(self) -> None:
        self.program_cache_enabled = False

    clear_program_cache = disable_and_clear_program_cache

    def num_program_cache_entries(self) -> int:
        return 0

    def __iter__(self) -> Iterator[Device]:
        return iter(self.get_devices())

    def __repr__(self) -> str:
        state = "" if self._open else ", closed"
        return f"MeshDevice(shape={self._shape!r}, system={self.system.name}{state})"


def _caller_outside_meshnn() -> str:
    """``file:line`` of the first frame outside the meshnn package (where the user called)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return "<unknown>" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def open_mesh_device(
    mesh_shape: MeshShape | tuple[int, ...] | None = None,
    l1_small_size: int = 0,
    trace_region_size: int = 0,
    num_command_queues: int = 1,
    dispatch_core_config: object = None,
    offset: MeshCoordinate | None = None,
    physical_device_ids: list[int] | None = None,
    worker_l1_size: int = 0,
    *,
    system: str | None = None,
) -> MeshDevice:
    """Open a mesh of simulated devices (``ttnn.open_mesh_device``).

    ``mesh_shape`` None opens the whole system (``system=`` or ``$MESHNN_SYSTEM``, default t3k).
    The mesh may have any 1-D or 2-D shape whose size the system has devices for.
    """
    spec = system_spec(system)
    if mesh_shape is None:
        mesh_shape = MeshShape(spec.mesh_shape)
    elif not isinstance(mesh_shape, MeshShape):
        if isinstance(mesh_shape, int | str):
            raise MeshnnTypeError(f"mesh_shape must be a MeshShape, got {mesh_shape!r}")
        mesh_shape = MeshShape(mesh_shape)
    if mesh_shape.mesh_size() == 0:
        raise MeshnnValueError(f"mesh_shape {mesh_shape!r} has no devices")
    if mesh_shape.mesh_size() > spec.num_devices:
        rows, cols = spec.mesh_shape
        raise MeshnnValueError(
            f"a {mesh_shape} mesh needs {mesh_shape.mesh_size()} devices but the simulated system "
            f"{spec.name!r} ({spec.description}) has {spec.num_devices} ({rows}x{cols}); choose a larger "
            "system with system= or $MESHNN_SYSTEM (galaxy has 32)"
        )
    if worker_l1_size not in (0, spec.arch_spec.worker_l1_size):
        raise MeshnnValueError(f"worker_l1_size {worker_l1_size} is not supported; use 0 (the default)")
    context = get_context()
    if context.world_size > mesh_shape[0]:
        raise DistributedError(
            f"{context.world_size} ranks cannot share a mesh of {mesh_shape[0]} row(s): every rank owns at "
            f"least one mesh row; run with at most {mesh_shape[0]} ranks",
            rank=context.rank,
        )
    first = 0 if offset is None else to_linear_index(MeshShape(spec.mesh_shape), as_coord(offset))
    ids = tuple(physical_device_ids) if physical_device_ids else tuple(range(first, first + mesh_shape.mesh_size()))
    if len(ids) != mesh_shape.mesh_size() or max(ids) >= spec.num_devices:
        where = (
            f"offset {as_coord(offset)}" if offset is not None and not physical_device_ids else "physical_device_ids"
        )
        raise MeshnnValueError(
            f"{where}: devices {list(ids)} do not fit a {mesh_shape} mesh on {spec.name} ({spec.num_devices} devices)"
        )
    allocator = DeviceAllocator(spec, l1_small_size=l1_small_size, trace_region_size=trace_region_size)
    return MeshDevice(
        mesh_shape,
        system=spec,
        allocator=allocator,
        device_ids=ids,
        num_command_queues=num_command_queues,
        context=context,
    )


def close_mesh_device(mesh_device: MeshDevice) -> None:
    """Close ``mesh_device`` (``ttnn.close_mesh_device``); every live buffer is deallocated."""
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"close_mesh_device needs a MeshDevice, got {mesh_device!r}")
    mesh_device.close()


def synchronize_device(device: MeshDevice, cq_id: int | None = None, sub_device_ids: object = None) -> None:
    """``ttnn.synchronize_device``: wait until queue ``cq_id`` (None: every queue) has finished its
    work; an error a kernel raised surfaces here."""
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"synchronize_device needs a MeshDevice, got {device!r}")
    device.check_open()
    queues = range(device.num_command_queues) if cq_id is None else [cq_id]
    for queue in queues:
        device.mesh_command_queue(queue).finish()
