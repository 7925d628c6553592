"""MeshDevice: a grid of simulated chips that allocate in lock-step, opened and closed.

This module holds MeshDevice's lifetime (open, close, the command queues), its device queries and
the local coordinates of this process, plus ``open_mesh_device`` / ``close_mesh_device`` /
``synchronize_device``.  Lock-step allocation and the buffer registry are its base
:class:`~meshnn.mesh.lockstep.LockstepAllocation`; submeshes and reshape its base
:class:`~meshnn.mesh.submesh.Submeshes`.

Device queries (arch, grids, memory figures) are answered by the system's chip spec, as tt-metal
answers them from a reference device.  In a multi-process run every rank opens the same global
mesh; ``local_coords()`` are the coordinates whose slab rows this rank holds.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.distributed` and the mesh
layer (the command queue module only when a mesh is made: it imports this one).
"""

from __future__ import annotations

import itertools
import sys
import threading
import weakref
from collections.abc import Iterator

from meshnn.device.arch import Arch, SystemSpec, system_spec
from meshnn.device.bank import DeviceAllocator
from meshnn.device.core import CoreCoord, CoreGrid
from meshnn.device.dram_workers import optimal_dram_bank_workers
from meshnn.device.virtual_coords import worker_core_from_logical_core
from meshnn.distributed.binding import rank_binding
from meshnn.distributed.context import DistributedContext, check_ranks_agree, get_context, mesh_context, rows_of_rank
from meshnn.distributed.world import mark_initialized
from meshnn.errors import DeviceClosedError, MeshnnTypeError, MeshnnValueError
from meshnn.mesh.call_sites import is_meshnns
from meshnn.mesh.chip import Device
from meshnn.mesh.compute_grid import system_for
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange, MeshShape, as_coord, to_linear_index
from meshnn.mesh.device_config import (
    DeviceSettings,
    MeshType,
    check_worker_l1_size,
    checked_mesh_type,
    dispatch_core_config_for,
)
from meshnn.mesh.lockstep import LockstepAllocation
from meshnn.mesh.planning import resolve_execute
from meshnn.mesh.program_cache import ProgramCache
from meshnn.mesh.sub_device import SubDevices
from meshnn.mesh.submesh import Submeshes
from meshnn.mesh.system import fabric_options, get_fabric_config
from meshnn.mesh.system_devices import bound_shape, device_ids_on, shape_on

_mesh_ids = itertools.count()


class MeshDevice(LockstepAllocation, Submeshes, SubDevices, ProgramCache):
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
        execute: bool = True,
    ) -> None:
        if isinstance(num_command_queues, bool) or num_command_queues not in (1, 2):
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
        self.executes = execute  # False: a planning mesh (meshnn.mesh.planning): no bytes, no compute
        self.last_repeat: tuple | None = None  # the last program run, when it may repeat (run_programs)
        self.mesh_id = next(_mesh_ids)
        self.context = context if context is not None else get_context()
        mark_initialized()  # tt-metal creates its distributed context when a device opens
        self._local = tuple(self._local_coords_of(mesh_shape))
        self._rows = {coord: i for i, coord in enumerate(self._local)}
        self._full_range: MeshCoordinateRange | None = None
        self._full_range_of: MeshShape | None = None
        self._owners: dict[int, tuple[int, int, weakref.ref]] = {}  # key -> (type, address, ref) of owning buffers
        self._buffer_keys = itertools.count()
        self._lock = threading.RLock()
        self.allocation_lock = self._lock  # held from the closing check to the registration of a MeshBuffer
        self._closed_at: str | None = None
        self._closing = False  # from the start of close(): a freed buffer then reads as closed
        self.fabric_config: object = None
        self.traces: dict[int, object] = {}  # trace id -> MeshTrace (meshnn.mesh.trace), captured and not released
        self.allocations_unsafe = False  # a trace exists and none is being captured (allocations warn once)
        self.settings: DeviceSettings | None = None  # what open_mesh_device was given (a submesh: its parent's)
        self.async_enabled = False
        from meshnn.mesh.command_queue import MeshCommandQueue  # the queue module needs MeshDevice

        self._queues = [MeshCommandQueue(self, cq_id) for cq_id in range(num_command_queues)]
        self._start_program_cache()

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

    @property
    def closing(self) -> bool:
        """True from the start of :meth:`close` (while its queues drain) on."""
        return self._closing or not self._open

    def close(self) -> None:
        """Close submeshes first, drain the queues (they take no new work: DeviceClosedError),
        then deallocate every live MeshBuffer."""
        if not self._open:
            return
        with self.allocation_lock:  # after this, no new MeshBuffer is allocated on this mesh
            self._closing = True
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
        arch, system = self.system.arch_spec, self.system
        return [
            Device(self._device_ids[i], coord, arch.arch, system.compute_grid, arch.num_dram_banks, system.worker_grid)
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

    def worker_core_from_logical_core(self, logical_core: CoreCoord) -> CoreCoord:
        """The translated NoC coordinate of a logical worker core, the same on every chip."""
        return worker_core_from_logical_core(self.arch(), self.system.worker_grid, logical_core)

    def get_optimal_dram_bank_to_logical_worker_assignment(self, noc: object) -> list[CoreCoord]:
        """The logical worker next to each DRAM bank, bank id order (:mod:`meshnn.device.dram_workers`)."""
        return optimal_dram_bank_workers(self.system, noc)

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
        if coord in self._rows:
            return True  # (a local device's coordinate lies inside the mesh)
        to_linear_index(self._shape, coord)  # raises when out of bounds
        return False

    def local_coords(self) -> list[MeshCoordinate]:
        """Coordinates whose devices this process holds, row-major."""
        return list(self._local)

    @property
    def local(self) -> tuple[MeshCoordinate, ...]:
        """:meth:`local_coords` as a tuple (no copy); slab row ``i`` holds ``local[i]``."""
        return self._local

    def local_row(self, coord: MeshCoordinate) -> int:
        """Slab row of ``coord``; raises for coordinates outside the mesh or of another rank."""
        row = self._rows.get(coord)
        if row is not None:
            return row
        to_linear_index(self._shape, coord)  # raises when out of bounds
        raise MeshnnValueError(f"device {coord} is owned by another rank (this is rank {self.context.rank})")

    def idle_queue(self, devices: int):
        """Command queue 0 when an op over ``devices`` devices may run at once on the calling thread
        by its plan (:mod:`meshnn.ops.planned`): the mesh open and executing, all of it held here and
        covered, no trace making allocations unsafe, the queue idle and capturing nothing; else None."""
        queue = self._queues[0]
        if not self._open or not self.executes or self.allocations_unsafe or devices != len(self._local):
            return None
        if devices != self._shape.mesh_size() or queue.capture is not None or queue.has_work():
            return None
        return queue

    def mesh_command_queue(self, cq_id: int = 0):
        self.check_open()
        if not isinstance(cq_id, int) or not 0 <= cq_id < len(self._queues):
            raise MeshnnValueError(f"cq_id {cq_id!r} is not a queue of this mesh (it has {len(self._queues)})")
        return self._queues[cq_id]

    @property
    def num_command_queues(self) -> int:
        return len(self._queues)

    def quiesce_devices(self) -> None:
        for queue in self._queues:
            queue.finish()

    def enable_async(self, enable: bool) -> None:
        """Accepted as ttnn still accepts it (dispatch is asynchronous regardless); recorded."""
        if not isinstance(enable, bool):
            raise MeshnnTypeError(f"enable_async: enable must be a bool, got {enable!r}")
        self.async_enabled = enable

    def __iter__(self) -> Iterator[Device]:
        return iter(self.get_devices())

    def __repr__(self) -> str:
        state = ("" if self.executes else ", planning") + ("" if self._open else ", closed")
        return f"MeshDevice(shape={self._shape!r}, system={self.system.name}{state})"


def _caller_outside_meshnn() -> str:
    """``file:line`` of the first frame outside the meshnn package (where the user called)."""
    frame = sys._getframe(1)
    while frame is not None and is_meshnns(frame.f_code.co_filename):
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
    execute: bool | None = None,
    mesh_type: MeshType = MeshType.RowMajor,
) -> MeshDevice:
    """Open a mesh of simulated devices (``ttnn.open_mesh_device``).

    ``mesh_shape`` None opens the whole system (``system=`` or ``$MESHNN_SYSTEM``, default t3k).
    The mesh may have any 1-D or 2-D shape whose size the system has devices for.  ``execute``
    False opens a planning mesh (:mod:`meshnn.mesh.planning`); None: executing unless inside
    ``meshnn.planning()``.  ``mesh_type`` (a ``ttnn.MeshType``) is checked and recorded.
    """
    mesh_type = checked_mesh_type(mesh_type)
    execute = resolve_execute(execute)
    spec = system_spec(system)
    binding = rank_binding()
    mesh_shape = shape_on(spec, bound_shape(binding, mesh_shape))
    spec = check_worker_l1_size(worker_l1_size, spec)
    context = mesh_context(mesh_shape[0], binding)  # tt-run: each rank's own mesh, or a big mesh's rows
    ids = device_ids_on(spec, mesh_shape, offset, physical_device_ids)
    check_ranks_agree(context, "open_mesh_device", f"{mesh_shape} on {spec.name}, devices {ids}, execute={execute}")
    tensix = dict(fabric_options()).get("fabric_tensix_config")
    dispatch = dispatch_core_config_for(spec, dispatch_core_config, tensix)
    spec = system_for(spec, dispatch, tensix)  # the compute grid (and L1 banks) the dispatch cores leave
    allocator = DeviceAllocator(spec, l1_small_size=l1_small_size, trace_region_size=trace_region_size)
    mesh = MeshDevice(
        mesh_shape,
        system=spec,
        allocator=allocator,
        device_ids=ids,
        num_command_queues=num_command_queues,
        context=context,
        execute=execute,
    )
    mesh.fabric_config = get_fabric_config()
    mesh.settings = DeviceSettings(
        l1_small_size,
        trace_region_size,
        num_command_queues,
        dispatch,
        worker_l1_size,
        mesh.fabric_config,
        fabric_options(),
        mesh_type,
    )
    return mesh


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
