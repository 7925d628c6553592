"""Global semaphores (``ttnn.create_global_semaphore``): one uint32 per core of a core range set,
at the same L1 address on every device of a mesh, as tt-metal makes them: a HEIGHT_SHARDED L1
(or L1_SMALL) MeshBuffer of ``4 x cores`` bytes, one 4-byte page per core.  The collectives take
them as arguments (``multi_device_global_semaphore=``, ``barrier_semaphore=``) and check them; the
simulated links need no handshake, so the values are only what ``reset_global_semaphore_value``
last wrote.  A semaphore lives as long as its Python object (its buffer is freed with it).
The semaphores a ttnn collective makes for itself when its program is not cached (``all_gather``,
``reduce_scatter``, ``all_broadcast``...: :func:`program_semaphores`) live as long as the program's
cache entry: in L1 they split the free L1 of every core until the cache is cleared, which is what
``use_l1_small_for_semaphores=True`` avoids (they go to L1_SMALL).

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` and the mesh layer's buffers and device.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, ShardSpecBuffer, TensorMemoryLayout
from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.buffer_config import DeviceLocalBufferConfig, ReplicatedBufferConfig
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.op_keywords import recorded

WORD = 4  # bytes of one semaphore (a uint32)


class GlobalSemaphore:
    """A uint32 per core of ``cores`` at one L1 address on every device of ``mesh_device``.
    Made by :func:`create_global_semaphore`."""

    __slots__ = ("buffer", "buffer_type", "cores", "mesh_device")

    def __init__(self, *_: object, **__: object) -> None:
        raise MeshnnTypeError("use ttnn.create_global_semaphore(mesh_device, cores, initial_value)")

    def address(self) -> int:
        """The L1 address of every core's semaphore, the same on every device."""
        return self.buffer.address()

    def values(self) -> np.ndarray:
        """The semaphores' values, ``(devices, cores)`` uint32 (local devices, row-major)."""
        queue = self.mesh_device.mesh_command_queue(0)
        queue.finish()
        return self.buffer.slab()[:, : WORD * self.cores.num_cores()].view(np.uint32).copy()

    def __repr__(self) -> str:
        return f"GlobalSemaphore(address={self.address()}, cores={self.cores.num_cores()}, {self.buffer_type})"


def _checked_value(op: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
    if not 0 <= value < 1 << 32:
        raise MeshnnValueError(f"ttnn.{op}: {name} must fit a uint32 (0 .. 2**32-1), got {value}")
    return int(value)


def create_global_semaphore(
    mesh_device: MeshDevice, cores: CoreRangeSet, initial_value: int, buffer_type: BufferType = BufferType.L1
) -> GlobalSemaphore:
    """A semaphore on every core of ``cores`` (which must lie in the compute grid) of every device,
    set to ``initial_value``."""
    op = "create_global_semaphore"
    if not isinstance(mesh_device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{op}: mesh_device must be a MeshDevice, got {type(mesh_device).__name__}")
    mesh_device.check_open()
    if not isinstance(cores, CoreRangeSet):
        raise MeshnnTypeError(f"ttnn.{op}: cores must be a ttnn.CoreRangeSet, got {cores!r}")
    if buffer_type not in (BufferType.L1, BufferType.L1_SMALL):
        raise MeshnnValueError(
            f"ttnn.{op}: buffer_type must be L1 or L1_SMALL (a semaphore lives in L1), got {buffer_type!r}"
        )
    value = _checked_value(op, "initial_value", initial_value)
    grid = mesh_device.compute_with_storage_grid_size()
    n = cores.num_cores()
    if n == 0:
        raise MeshnnValueError(f"ttnn.{op}: cores must hold at least one core")
    box = cores.bounding_box()
    if box.end.x >= grid.x or box.end.y >= grid.y:
        raise MeshnnValueError(
            f"ttnn.{op}: cores reach core ({box.end.x}, {box.end.y}), outside the {grid.x}x{grid.y} compute grid"
        )
    shards = ShardSpecBuffer(ShardSpec(cores, (1, 1), ShardOrientation.ROW_MAJOR), (1, 1), (n, 1))
    local = DeviceLocalBufferConfig(WORD, buffer_type, TensorMemoryLayout.HEIGHT_SHARDED, shards)
    semaphore = object.__new__(GlobalSemaphore)
    semaphore.mesh_device, semaphore.cores, semaphore.buffer_type = mesh_device, cores, buffer_type
    semaphore.buffer = MeshBuffer.create(ReplicatedBufferConfig(WORD * n), local, mesh_device)
    _write(semaphore, value)
    return semaphore


def program_semaphores(mesh_device: MeshDevice, key: object, count: int) -> tuple[GlobalSemaphore, ...]:
    """The ``count`` semaphores (value 0) that the cached program ``key`` of a collective made for
    itself on the worker cores of the call's ``subdevice_id`` (the first sub-device when none), in
    L1, or L1_SMALL when the call gave ``use_l1_small_for_semaphores=True``: made on a cache miss and
    held with the entry (:meth:`~meshnn.mesh.program_cache.ProgramCache.held_by_program`)."""
    given = recorded()
    buffer_type = BufferType.L1_SMALL if given.get("use_l1_small_for_semaphores") else BufferType.L1
    cores = mesh_device.sub_device_cores(given.get("subdevice_id"))

    def make() -> tuple[GlobalSemaphore, ...]:
        return tuple(create_global_semaphore(mesh_device, cores, 0, buffer_type) for _ in range(count))

    return mesh_device.held_by_program((key, buffer_type, cores), make)  # type: ignore[return-value]


def _write(semaphore: GlobalSemaphore, value: int) -> None:
    words = np.full(semaphore.cores.num_cores(), value, dtype=np.uint32)
    semaphore.mesh_device.mesh_command_queue(0).enqueue_write_mesh_buffer(semaphore.buffer, words.view(np.uint8))


def check_semaphore(op: str, name: str, semaphore: object, mesh: MeshDevice) -> GlobalSemaphore:
    """``semaphore`` checked to be a live GlobalSemaphore of ``mesh``."""
    if not isinstance(semaphore, GlobalSemaphore):
        raise MeshnnTypeError(
            f"ttnn.{op}: {name} must be a GlobalSemaphore (ttnn.create_global_semaphore), got {semaphore!r}"
        )
    if semaphore.mesh_device.mesh_id != mesh.mesh_id:
        raise MeshnnValueError(f"ttnn.{op}: {name} was created on another mesh device than the input's")
    if not semaphore.buffer.is_allocated():
        raise MeshnnValueError(f"ttnn.{op}: {name}'s buffer is no longer allocated (its mesh was closed)")
    return semaphore


def reset_global_semaphore_value(global_semaphore: GlobalSemaphore, reset_value: int) -> None:
    """Write ``reset_value`` to every core's semaphore on every device."""
    op = "reset_global_semaphore_value"
    if not isinstance(global_semaphore, GlobalSemaphore):
        raise MeshnnTypeError(f"ttnn.{op}: global_semaphore must be a GlobalSemaphore, got {global_semaphore!r}")
    global_semaphore.mesh_device.check_open()
    _write(global_semaphore, _checked_value(op, "reset_value", reset_value))


def get_global_semaphore_address(global_semaphore: GlobalSemaphore) -> int:
    """The L1 address of ``global_semaphore`` (the same on every device and core)."""
    if not isinstance(global_semaphore, GlobalSemaphore):
        raise MeshnnTypeError(
            f"ttnn.get_global_semaphore_address: global_semaphore must be a GlobalSemaphore, got {global_semaphore!r}"
        )
    return global_semaphore.address()
