"""Global circular buffers (``ttnn.create_global_circular_buffer``): a circular buffer of ``size``
bytes on each of a set of sender cores and their receiver cores, at the same L1 address on every
core and every device of a mesh, as tt-metal makes them.

Two HEIGHT_SHARDED L1 (or L1_SMALL) MeshBuffers over every sender and receiver core, one page per
core: the FIFO (``size`` bytes a core) and the config buffer (tt-metal's per-core remote-CB
interface: 7 words, the receivers' NoC x/y words, then a pages-sent / pages-acked slot pair per
receiver, each slot L1-aligned).  The config words that do not depend on NoC coordinates are
written as tt-metal writes them (``is_sender``, receivers, FIFO start, size, FIFO pointer, the
NoC-coordinates address, the pages-sent address); the NoC coordinate words stay 0 (the simulator
has no NoC).  A buffer lives as long as its Python object or until :meth:`deallocate`.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.device` and the mesh layer's buffers and device.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.allocator import align_up
from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, ShardSpecBuffer, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.buffer_config import DeviceLocalBufferConfig, ReplicatedBufferConfig
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import MeshDevice

CONFIG_WORDS = 7
"""uint32 words of a core's remote-CB interface before its NoC coordinates: is_sender, receivers,
FIFO start, FIFO size, FIFO pointer, NoC-coordinates address, pages-sent address."""

_OP = "create_global_circular_buffer"


class GlobalCircularBuffer:
    """A FIFO of :meth:`size` bytes on every sender and receiver core of every device of a mesh.
    Made by :func:`create_global_circular_buffer`."""

    __slots__ = ("__weakref__", "buffer_type", "cb", "config", "mapping", "mesh_device", "size_")

    def __init__(self, *_: object, **__: object) -> None:
        raise MeshnnTypeError("use ttnn.create_global_circular_buffer(device, sender_receiver_core_mapping, size)")

    def size(self) -> int:
        """The FIFO's bytes on each core."""
        return self.size_

    def buffer_address(self) -> int:
        """The L1 address of every core's FIFO (the same on every core and device)."""
        return self.cb.address()

    address = buffer_address

    def config_address(self) -> int:
        """The L1 address of every core's remote-CB config page."""
        return self.config.address()

    def sender_receiver_core_mapping(self) -> list[tuple[CoreCoord, CoreRangeSet]]:
        return list(self.mapping)

    def sender_cores(self) -> CoreRangeSet:
        return CoreRangeSet([CoreRange(s, s) for s, _ in self.mapping])

    def receiver_cores(self) -> CoreRangeSet:
        return CoreRangeSet([r for _, receivers in self.mapping for r in receivers.ranges()])

    def all_cores(self) -> CoreRangeSet:
        """Every sender and receiver core, one range each, in row-major order."""
        return CoreRangeSet([CoreRange(c, c) for c in _all_cores(self.mapping)])

    def sender_core_type(self) -> str:
        """``"worker"``: the senders are Tensix cores (ttnn's DRAM-sender buffers are experimental)."""
        return "worker"

    def is_allocated(self) -> bool:
        return self.cb.is_allocated() and self.config.is_allocated()

    def deallocate(self) -> None:
        """Free both buffers on every device; safe to repeat."""
        self.cb.deallocate()
        self.config.deallocate()

    def __repr__(self) -> str:
        return (
            f"GlobalCircularBuffer(address={self.cb.address()}, size={self.size_}, "
            f"senders={len(self.mapping)}, {self.buffer_type})"
        )


def _all_cores(mapping: Sequence[tuple[CoreCoord, CoreRangeSet]]) -> list[CoreCoord]:
    cores = [s for s, _ in mapping] + [c for _, r in mapping for c in r.cores()]
    return sorted(cores, key=lambda c: (c.y, c.x))


def _checked_mapping(mapping: object, grid: CoreCoord) -> list[tuple[CoreCoord, CoreRangeSet]]:
    """The (sender core, receiver cores) pairs: at least one, cores inside the compute grid, no core twice."""
    if isinstance(mapping, str | bytes) or not isinstance(mapping, Sequence) or not mapping:
        raise MeshnnValueError(
            f"ttnn.{_OP}: sender_receiver_core_mapping must be a non-empty list of (CoreCoord, CoreRangeSet), "
            f"got {mapping!r}"
        )
    pairs = []
    for pair in mapping:
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise MeshnnTypeError(f"ttnn.{_OP}: each mapping entry must be (CoreCoord, CoreRangeSet), got {pair!r}")
        sender, receivers = pair
        if not isinstance(sender, CoreCoord) or not isinstance(receivers, CoreRangeSet):
            raise MeshnnTypeError(f"ttnn.{_OP}: each mapping entry must be (CoreCoord, CoreRangeSet), got {pair!r}")
        if receivers.num_cores() == 0:
            raise MeshnnValueError(f"ttnn.{_OP}: sender {sender!r} has no receiver cores")
        pairs.append((sender, receivers))
    check_cores(_OP, _all_cores(pairs), grid, "a core is a sender or a receiver once")
    return pairs


def check_cores(op: str, cores: Sequence[CoreCoord], grid: CoreCoord, once: str) -> None:
    """A global circular buffer's ``cores``: each on the ``grid`` (x, y) compute grid, none twice
    (``once`` says why, in the error)."""
    for core in cores:
        if not (0 <= core.x < grid.x and 0 <= core.y < grid.y):
            raise MeshnnValueError(
                f"ttnn.{op}: core ({core.x}, {core.y}) is outside the {grid.x}x{grid.y} compute grid"
            )
    if len({(c.x, c.y) for c in cores}) != len(cores):
        raise MeshnnValueError(f"ttnn.{op}: duplicate cores found ({once})")


def check_size(op: str, size: object, per: str) -> None:
    """A global circular buffer's ``size``: an int, a positive uint32 (bytes a ``per`` core)."""
    if isinstance(size, bool) or not isinstance(size, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: size must be an int (bytes per {per}), got {size!r}")
    if not 0 < size < 1 << 32:
        raise MeshnnValueError(f"ttnn.{op}: size must be a positive uint32 (bytes per {per}), got {size}")


def allocate_fifo_and_config(
    mesh_device: MeshDevice, cores: Sequence[CoreCoord], size: int, page: int, buffer_type: BufferType
) -> tuple[MeshBuffer, MeshBuffer]:
    """A global circular buffer's two lock-step L1 buffers, one shard on each of ``cores``: its FIFO
    (``size`` bytes a core) and its config page (``page`` bytes a core).  Out of memory for the second
    frees the first: the allocator is left as it was (a traceback would keep the first alive)."""
    everywhere = CoreRangeSet([CoreRange(c, c) for c in cores])
    shards = ShardSpecBuffer(ShardSpec(everywhere, (1, 1), ShardOrientation.ROW_MAJOR), (1, 1), (len(cores), 1))
    layout = TensorMemoryLayout.HEIGHT_SHARDED
    fifo = MeshBuffer.create(
        ReplicatedBufferConfig(size * len(cores)),
        DeviceLocalBufferConfig(size, buffer_type, layout, shards),
        mesh_device,
    )
    try:
        config = MeshBuffer.create(
            ReplicatedBufferConfig(page * len(cores)),
            DeviceLocalBufferConfig(page, buffer_type, layout, shards),
            mesh_device,
        )
    except BaseException:
        fifo.deallocate()
        raise
    return fifo, config


def create_global_circular_buffer(
    device: MeshDevice,
    sender_receiver_core_mapping: Sequence[tuple[CoreCoord, CoreRangeSet]],
    size: int,
    buffer_type: BufferType = BufferType.L1,
) -> GlobalCircularBuffer:
    """A global circular buffer of ``size`` bytes per core over every sender and receiver core of
    ``sender_receiver_core_mapping`` on every device of ``device``."""
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"ttnn.{_OP}: device must be a MeshDevice, got {type(device).__name__}")
    device.check_open()
    if buffer_type not in (BufferType.L1, BufferType.L1_SMALL):
        raise MeshnnValueError(
            f"ttnn.{_OP}: global circular buffer can only be created for L1 buffer types, got {buffer_type!r}"
        )
    check_size(_OP, size, "core")
    pairs = _checked_mapping(sender_receiver_core_mapping, device.compute_with_storage_grid_size())
    cores = _all_cores(pairs)
    alignment = device.system.arch_spec.l1_alignment
    receivers_max = max(r.num_cores() for _, r in pairs)
    page = align_up(4 * (CONFIG_WORDS + 2 * receivers_max), alignment) + 2 * receivers_max * alignment
    fifo, config = allocate_fifo_and_config(device, cores, int(size), page, buffer_type)
    gcb = object.__new__(GlobalCircularBuffer)
    gcb.mesh_device, gcb.mapping, gcb.size_, gcb.buffer_type = device, tuple(pairs), int(size), buffer_type
    gcb.cb, gcb.config = fifo, config
    words = config_words(gcb, page, alignment)
    device.mesh_command_queue(0).enqueue_write_mesh_buffer(config, words.view(np.uint8))
    return gcb


def config_words(gcb: GlobalCircularBuffer, page: int, alignment: int) -> np.ndarray:
    """Every core's config page as tt-metal writes it (uint32, cores in the buffer's order); the
    NoC coordinate words are 0."""
    cores = [(c.x, c.y) for c in _all_cores(gcb.mapping)]
    words = np.zeros(page * len(cores) // 4, dtype=np.uint32)
    fifo, base = gcb.buffer_address(), gcb.config_address()
    noc_xy = base + 4 * CONFIG_WORDS
    receivers_max = max(r.num_cores() for _, r in gcb.mapping)
    pages_sent = align_up(noc_xy + 8 * receivers_max, alignment)
    for sender, receivers in gcb.mapping:
        n = receivers.num_cores()
        at = cores.index((sender.x, sender.y)) * page // 4
        words[at : at + CONFIG_WORDS] = (1, n, fifo, gcb.size_, fifo, noc_xy, pages_sent)
        for i, r in enumerate(receivers.cores()):
            at = cores.index((r.x, r.y)) * page // 4
            words[at : at + CONFIG_WORDS] = (0, n, fifo, gcb.size_, fifo, noc_xy, pages_sent + 2 * i * alignment)
    return words


def check_global_cb(op: str, global_cb: object, mesh: MeshDevice) -> GlobalCircularBuffer:
    """``global_cb`` checked to be a live GlobalCircularBuffer of ``mesh``."""
    if not isinstance(global_cb, GlobalCircularBuffer):
        raise MeshnnTypeError(
            f"ttnn.{op}: global_cb must be a GlobalCircularBuffer (ttnn.create_global_circular_buffer), "
            f"got {global_cb!r}"
        )
    if global_cb.mesh_device.mesh_id != mesh.mesh_id:
        raise MeshnnValueError(f"ttnn.{op}: global_cb was created on another mesh device than the inputs'")
    if not global_cb.is_allocated():
        raise MeshnnValueError(f"ttnn.{op}: global_cb is deallocated (or its mesh was closed)")
    return global_cb
