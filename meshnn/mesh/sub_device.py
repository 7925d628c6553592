"""Sub-devices (``ttnn.SubDevice``, ``MeshDevice.create_sub_device_manager`` and the rest): a mesh's
worker cores partitioned into sub-devices that run programs independently, as tt-metal's
SubDeviceManagerTracker does.

Accepted with tt-metal's checks and recorded (readable back): a manager's sub-devices (at most
:data:`MAX_SUB_DEVICES`, Tensix cores inside the compute grid, no two intersecting), its
``local_l1_size`` (aligned to L1's alignment), which manager is loaded, and the stall group (the
sub-devices a blocking call waits for).  Every mesh starts with a default manager of one
sub-device over the whole grid, which cannot be removed.  What a sub-device changes on hardware
(which cores run a program, dispatch overlapping across sub-devices, per-sub-device L1
allocators) does not change a result on the simulator: programs run in queue order and L1 stays
one allocator (``local_l1_size`` is recorded, the global L1 is not shrunk).  A manager is not
loaded while a trace is being captured.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` and nothing else of the mesh layer
(a base of :class:`~meshnn.mesh.mesh_device.MeshDevice`, it reads the mesh's queues and grid).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from meshnn.device.allocator import align_up
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError, TraceError

MAX_SUB_DEVICES = 16
"""tt-metal's ``DispatchSettings::DISPATCH_MESSAGE_ENTRIES``: the most sub-devices a manager has."""

_MANAGER_IDS = itertools.count()


class SubDeviceId(int):
    """The index of a sub-device in its manager (``ttnn.SubDeviceId``)."""

    def __new__(cls, value: int) -> SubDeviceId:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise MeshnnTypeError(f"SubDeviceId: value must be a non-negative int, got {value!r}")
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return f"SubDeviceId({int(self)})"


class SubDeviceManagerId(int):
    """The id of a sub-device manager (``ttnn.SubDeviceManagerId``)."""

    def __new__(cls, value: int) -> SubDeviceManagerId:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise MeshnnTypeError(f"SubDeviceManagerId: value must be a non-negative int, got {value!r}")
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return f"SubDeviceManagerId({int(self)})"


class SubDevice:
    """``ttnn.SubDevice(cores)``: one CoreRangeSet per programmable core type (Tensix first, then
    active Ethernet)."""

    def __init__(self, cores: Sequence[CoreRangeSet]) -> None:
        if isinstance(cores, CoreRangeSet) or not isinstance(cores, Sequence) or not 1 <= len(cores) <= 2:
            raise MeshnnTypeError(
                f"ttnn.SubDevice: cores must be a list of one or two CoreRangeSets (Tensix, Ethernet), got {cores!r}"
            )
        for c in cores:
            if not isinstance(c, CoreRangeSet):
                raise MeshnnTypeError(f"ttnn.SubDevice: cores must hold ttnn.CoreRangeSet, got {c!r}")
        self.cores = tuple(cores)

    def tensix(self) -> CoreRangeSet:
        return self.cores[0]

    def num_cores(self) -> int:
        return self.cores[0].num_cores()

    def __repr__(self) -> str:
        return f"SubDevice({list(self.cores)!r})"


class _Manager:
    def __init__(self, sub_devices: tuple[SubDevice, ...], local_l1_size: int) -> None:
        self.id = SubDeviceManagerId(next(_MANAGER_IDS))
        self.sub_devices, self.local_l1_size = sub_devices, local_l1_size
        self.stall_group = [SubDeviceId(i) for i in range(len(sub_devices))]


def _intersect(a: CoreRangeSet, b: CoreRangeSet) -> bool:
    return any(
        r.start_coord.x <= s.end_coord.x
        and s.start_coord.x <= r.end_coord.x
        and r.start_coord.y <= s.end_coord.y
        and s.start_coord.y <= r.end_coord.y
        for r in a.ranges()
        for s in b.ranges()
    )


class SubDevices:
    """The sub-device managers of a mesh (a base of MeshDevice, which provides ``check_open``,
    ``compute_with_storage_grid_size``, ``l1_size_per_core``, ``system`` and ``_queues``)."""

    _sub_device_state: tuple[dict[int, _Manager], list[int]] | None = None

    def _sub_devices(self) -> tuple[dict[int, _Manager], list[int]]:
        """``(managers by id, [default id, loaded id])``, made on first use."""
        if self._sub_device_state is None:
            grid = self.compute_with_storage_grid_size()  # type: ignore[attr-defined]
            every_core = CoreRangeSet(CoreRange(CoreCoord(0, 0), CoreCoord(grid.x - 1, grid.y - 1)))
            whole = _Manager((SubDevice([every_core]),), 0)
            self._sub_device_state = ({int(whole.id): whole}, [int(whole.id), int(whole.id)])
        return self._sub_device_state

    def _manager(self, manager_id: object) -> _Manager:
        if isinstance(manager_id, bool) or not isinstance(manager_id, int):
            raise MeshnnTypeError(f"sub_device_manager_id must be a SubDeviceManagerId, got {manager_id!r}")
        manager = self._sub_devices()[0].get(int(manager_id))
        if manager is None:
            raise MeshnnValueError(f"Sub device manager {int(manager_id)} does not exist")
        return manager

    def create_sub_device_manager(self, sub_devices: Sequence[SubDevice], local_l1_size: int) -> SubDeviceManagerId:
        """A new manager of ``sub_devices`` (checked as tt-metal checks them), not loaded."""
        self.check_open()  # type: ignore[attr-defined]
        if not isinstance(sub_devices, Sequence) or not sub_devices:
            raise MeshnnTypeError(f"sub_devices must be a non-empty list of ttnn.SubDevice, got {sub_devices!r}")
        for s in sub_devices:
            if not isinstance(s, SubDevice):
                raise MeshnnTypeError(f"sub_devices must hold ttnn.SubDevice, got {s!r}")
        if len(sub_devices) > MAX_SUB_DEVICES:
            raise MeshnnValueError(
                f"Number of sub-devices specified {len(sub_devices)} is larger than the max number of sub-devices "
                f"{MAX_SUB_DEVICES}"
            )
        grid = self.compute_with_storage_grid_size()  # type: ignore[attr-defined]
        for s in sub_devices:
            box = s.tensix().bounding_box() if s.num_cores() else None
            if box is not None and (box.end_coord.x >= grid.x or box.end_coord.y >= grid.y):
                raise MeshnnValueError(
                    f"Tensix cores {s.tensix()!r} specified in sub device must be within device grid {grid.x}x{grid.y}"
                )
        for i, a in enumerate(sub_devices):
            for b in sub_devices[i + 1 :]:
                if any(_intersect(x, y) for x, y in zip(a.cores, b.cores, strict=False)):
                    raise MeshnnValueError("SubDevices specified for SubDeviceManager intersect")
        if isinstance(local_l1_size, bool) or not isinstance(local_l1_size, int) or local_l1_size < 0:
            raise MeshnnValueError(f"local_l1_size must be a non-negative int (bytes), got {local_l1_size!r}")
        arch = self.system.arch_spec  # type: ignore[attr-defined]
        aligned = align_up(local_l1_size, arch.l1_alignment)
        if aligned >= arch.l1_bank_size:
            raise MeshnnValueError(f"local_l1_size {local_l1_size} B must be less than the L1 bank size")
        manager = _Manager(tuple(sub_devices), aligned)
        self._sub_devices()[0][int(manager.id)] = manager
        return manager.id

    def load_sub_device_manager(self, sub_device_manager_id: SubDeviceManagerId) -> None:
        """Make the manager the loaded one (its stall group reset to all its sub-devices)."""
        self.check_open()  # type: ignore[attr-defined]
        manager = self._manager(sub_device_manager_id)
        for queue in self._queues:  # type: ignore[attr-defined]
            if queue.capture is not None:
                raise TraceError(f"cannot load sub device manager {int(manager.id)} while a trace is being captured")
        manager.stall_group = [SubDeviceId(i) for i in range(len(manager.sub_devices))]
        self._sub_devices()[1][1] = int(manager.id)

    def clear_loaded_sub_device_manager(self) -> None:
        """Load the default manager (the whole grid) again."""
        self.load_sub_device_manager(SubDeviceManagerId(self._sub_devices()[1][0]))

    def remove_sub_device_manager(self, sub_device_manager_id: SubDeviceManagerId) -> None:
        self.check_open()  # type: ignore[attr-defined]
        manager = self._manager(sub_device_manager_id)
        managers, (default, loaded) = self._sub_devices()
        if int(manager.id) == loaded:
            raise MeshnnValueError(f"Cannot remove active sub device manager {int(manager.id)}")
        if int(manager.id) == default:
            raise MeshnnValueError(f"Cannot remove default sub device manager {int(manager.id)}")
        del managers[int(manager.id)]

    def get_sub_device_ids(self) -> list[SubDeviceId]:
        """The ids of the loaded manager's sub-devices."""
        return [SubDeviceId(i) for i in range(len(self._loaded().sub_devices))]

    def sub_device_cores(self, sub_device_id: SubDeviceId | None = None) -> CoreRangeSet:
        """The Tensix cores of the loaded manager's sub-device ``sub_device_id`` (None: the first),
        tt-metal's ``worker_cores(TENSIX, id)``."""
        sub_devices = self._loaded().sub_devices
        index = 0 if sub_device_id is None else int(sub_device_id)
        if not 0 <= index < len(sub_devices):
            raise MeshnnValueError(f"SubDevice index {index} out of bounds {len(sub_devices)}")
        return sub_devices[index].tensix()

    def get_sub_device_stall_group(self) -> list[SubDeviceId]:
        return list(self._loaded().stall_group)

    def set_sub_device_stall_group(self, sub_device_ids: Sequence[SubDeviceId]) -> None:
        """The sub-devices a blocking call waits for (ids of the loaded manager)."""
        self.check_open()  # type: ignore[attr-defined]
        manager = self._loaded()
        if not isinstance(sub_device_ids, Sequence) or not sub_device_ids:
            raise MeshnnValueError(f"sub_device_ids to stall must not be empty, got {sub_device_ids!r}")
        for i in sub_device_ids:
            if isinstance(i, bool) or not isinstance(i, int):
                raise MeshnnTypeError(f"sub_device_ids must hold ttnn.SubDeviceId, got {i!r}")
            if not 0 <= i < len(manager.sub_devices):
                raise MeshnnValueError(f"SubDevice index {int(i)} out of bounds {len(manager.sub_devices)}")
        manager.stall_group = [SubDeviceId(i) for i in sub_device_ids]

    def reset_sub_device_stall_group(self) -> None:
        """Stall on every sub-device of the loaded manager again."""
        self.check_open()  # type: ignore[attr-defined]
        manager = self._loaded()
        manager.stall_group = [SubDeviceId(i) for i in range(len(manager.sub_devices))]

    def _loaded(self) -> _Manager:
        managers, (_, loaded) = self._sub_devices()
        return managers[loaded]

    def get_active_sub_device_manager_id(self) -> SubDeviceManagerId:
        return self._loaded().id

    def get_default_sub_device_manager_id(self) -> SubDeviceManagerId:
        return SubDeviceManagerId(self._sub_devices()[1][0])
