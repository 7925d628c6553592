"""MeshCommandQueue: in-order reads, writes, workloads and events on a mesh.

Each queue executes its work in order (how: :mod:`meshnn.mesh.dispatch`, its base).  Every call
validates its arguments before it enqueues anything.  A non-blocking write owns its data: it
copies the caller's bytes when it cannot write them at once.

An error raised while work executes is kept and surfaces at the next blocking call, ``finish``
or ``event_synchronize`` of that queue; the queue stays usable.  Events order work across the
queues of a mesh (``enqueue_wait_for_event``), and every wait is bounded (``MESHNN_WAIT_TIMEOUT``
seconds, default 120): a wait that times out becomes the queue's error instead of a hang.

Argument orders are tt-metal's: writes take ``(mesh_buffer, data)``, reads ``(data, mesh_buffer)``.
What a transfer may hold, and how its checks are made, is :mod:`meshnn.mesh.transfers`'; how a
checked plan is copied into or out of a buffer's slab (over the host worker threads for large
copies) is :mod:`meshnn.mesh.slab_copies`'.

Part of the ``mesh`` layer; imports ``meshnn.errors``, ``meshnn.host`` and ``meshnn.mesh``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from meshnn.errors import (
    MeshnnTypeError,
    MeshnnValueError,
    QueueError,
    TraceError,
    WrongMeshError,
)
from meshnn.host.threads import wait_timeout
from meshnn.mesh.buffer_config import BufferRegion, ShardedBufferConfig
from meshnn.mesh.coord import MeshCoordinateRange
from meshnn.mesh.dispatch import QueueEngine
from meshnn.mesh.events import EVENT_IDS, MeshEvent
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.planning import check_executes
from meshnn.mesh.slab_copies import owned_copies, read_rows, same_in_every_row, write_rows
from meshnn.mesh.transfers import (
    ShardDataTransfer,
    host_bytes,
    is_strided,
    read_plan,
    shard_devices,
    shard_view,
    write_plan,
)
from meshnn.mesh.workload import MeshWorkload

if TYPE_CHECKING:
    pass


class MeshCommandQueue(QueueEngine):
    """One command queue (``cq_id``) of a mesh device.  ``capture``: the trace being captured on it
    (:mod:`meshnn.mesh.trace`), or None."""

    capture: Any = None

    def id(self) -> int:
        return self.cq_id

    # ------------------------------------------------------------------------------ checks

    def refuse_in_capture(self, what: str) -> None:
        """tt-metal's refusal of host I/O and events while this queue captures a trace (a caller that
        allocates before it writes asks first, so that nothing is allocated for a refused write)."""
        if self.capture is not None:
            verb = "is" if what.startswith("Event") else "are"
            raise TraceError(f"{what} {verb} not supported during trace capture.")

    def enqueue_trace(self, trace: Any, blocking: bool = False) -> None:
        """Replay a captured trace (:mod:`meshnn.mesh.trace`) in this queue's order."""
        self._submit(lambda: trace.replay(self._mesh), blocking=blocking)

    def _check_buffer(self, mesh_buffer: MeshBuffer) -> None:
        if not isinstance(mesh_buffer, MeshBuffer):
            raise MeshnnTypeError(f"expected a MeshBuffer, got {type(mesh_buffer).__name__}")
        self._mesh.check_open()
        mesh_buffer.check_allocated()
        if mesh_buffer.mesh_id != self._mesh.mesh_id:
            raise WrongMeshError("the MeshBuffer belongs to another mesh device than this queue's")

    # ------------------------------------------------------------------------------ writes

    def enqueue_write_shards(
        self, mesh_buffer: MeshBuffer, transfers: Sequence[ShardDataTransfer], blocking: bool = False
    ) -> None:
        """Write each transfer's bytes to its device (its region); remote devices are skipped."""
        self.refuse_in_capture("Writes")
        self._check_buffer(mesh_buffer)
        plan = write_plan(self._mesh, mesh_buffer, transfers)
        if not self._mesh.executes:
            return  # a planning mesh: the write is checked, and there are no bytes to write
        slab = mesh_buffer.slab()  # taken now: the write lands even if the buffer is freed meanwhile
        same = same_in_every_row(plan, transfers, slab)

        def write(items=plan) -> None:
            write_rows(mesh_buffer, slab, items, same)

        def owned() -> Callable[[], None]:
            items = owned_copies(plan)  # copied (encoders run) now, at the enqueue: the caller may reuse its memory
            return lambda: write(items)

        self._submit(write, blocking=blocking, own=owned)

    def enqueue_write_mesh_buffer(self, mesh_buffer: MeshBuffer, host_data: Any, blocking: bool = False) -> None:
        """Replicated: the same bytes to every device; sharded: the global buffer cut into shards."""
        self._check_buffer(mesh_buffer)
        data = host_bytes(host_data, writable=False, what="host data")
        if is_strided(data):
            data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        config = mesh_buffer.global_config()
        if isinstance(config, ShardedBufferConfig):
            self._write_sharded(mesh_buffer, config, data, blocking)
            return
        local = mesh_buffer.device_local_size()
        if data.size < local:
            raise MeshnnValueError(f"host data has {data.size} B, the buffer holds {local} B per device")
        coords = self._mesh.local_coords()
        self.enqueue_write_shards(mesh_buffer, [ShardDataTransfer(c, data[:local]) for c in coords], blocking)

    def enqueue_write_shard_to_sub_grid(
        self,
        mesh_buffer: MeshBuffer,
        host_data: Any,
        device_range: MeshCoordinateRange,
        blocking: bool = False,
        region: BufferRegion | None = None,
    ) -> None:
        """The same bytes to every device of ``device_range``."""
        self._check_buffer(mesh_buffer)
        if isinstance(mesh_buffer.global_config(), ShardedBufferConfig):
            self.enqueue_write_mesh_buffer(mesh_buffer, host_data, blocking)
            return
        transfers = [ShardDataTransfer(c, host_data, region) for c in device_range if self._mesh.is_local(c)]
        self.enqueue_write_shards(mesh_buffer, transfers, blocking)

    def _write_sharded(
        self, mesh_buffer: MeshBuffer, config: ShardedBufferConfig, data: np.ndarray, blocking: bool
    ) -> None:
        if data.size < config.global_size:
            raise MeshnnValueError(f"host data has {data.size} B, the sharded buffer holds {config.global_size} B")
        shards = shard_view(config, data[: config.global_size])
        coords = list(self._mesh.shape.coords())
        transfers = [
            ShardDataTransfer(coords[i], shards[k])
            for k, devices in enumerate(shard_devices(config, self._mesh.num_rows, self._mesh.num_cols))
            for i in devices
        ]
        self.enqueue_write_shards(mesh_buffer, transfers, blocking)

    # ------------------------------------------------------------------------------- reads

    def enqueue_read_shards(
        self, transfers: Sequence[ShardDataTransfer], mesh_buffer: MeshBuffer, blocking: bool = True
    ) -> None:
        """Read each transfer's device (its region) into its host array; remote devices are skipped."""
        self.refuse_in_capture("Reads")
        self._check_buffer(mesh_buffer)
        check_executes(self._mesh, "read a MeshBuffer")
        plan = read_plan(self._mesh, mesh_buffer, transfers)
        slab = mesh_buffer.rows()  # checked above; a read keeps the buffer's memo

        def read() -> None:
            read_rows(slab, plan)

        self._submit(read, blocking=blocking)

    def enqueue_read_mesh_buffer(self, host_data: Any, mesh_buffer: MeshBuffer, blocking: bool = True) -> None:
        """Reassemble a sharded, unreplicated buffer into ``host_data`` (global row-major bytes)."""
        self._check_buffer(mesh_buffer)
        out = host_bytes(host_data, writable=True, what="host array")
        if is_strided(out):
            raise MeshnnValueError("host array must be C-contiguous to be read into")
        config = mesh_buffer.global_config()
        if not isinstance(config, ShardedBufferConfig):
            if self._mesh.get_num_devices() != 1:
                raise MeshnnValueError("Can only read a Sharded MeshBuffer from a MeshDevice.")
            local = mesh_buffer.device_local_size()
            self.enqueue_read_shards(
                [ShardDataTransfer(self._mesh.local_coords()[0], out[:local])], mesh_buffer, blocking
            )
            return
        if any(config.replicated_dims()):
            raise MeshnnValueError("Cannot read a MeshBuffer that is replicated along any dimension.")
        if out.size < config.global_size:
            raise MeshnnValueError(f"host array has {out.size} B, the sharded buffer holds {config.global_size} B")
        shards = shard_view(config, out[: config.global_size])
        staging = np.empty((shards.shape[0], mesh_buffer.device_local_size()), dtype=np.uint8)
        owners = shard_devices(config, self._mesh.num_rows, self._mesh.num_cols)
        coords = list(self._mesh.shape.coords())
        transfers = [ShardDataTransfer(coords[devices[0]], staging[k]) for k, devices in enumerate(owners)]
        self.enqueue_read_shards(transfers, mesh_buffer, blocking=False)

        def scatter() -> None:
            shards[...] = staging.reshape(shards.shape)

        self._submit(scatter, blocking=blocking)

    # ---------------------------------------------------------------------- workloads, events

    def enqueue_mesh_workload(self, workload: MeshWorkload, blocking: bool = False) -> None:
        if not isinstance(workload, MeshWorkload):
            raise MeshnnTypeError(f"expected a MeshWorkload, got {type(workload).__name__}")
        self._mesh.check_open()
        workload.validate(self._mesh)
        if not self._mesh.executes:
            return  # a planning mesh: checked, never run (its buffers have no bytes)
        if self.capture is not None:
            self.capture.record(workload)  # run when the trace is replayed
            return
        bound = workload.bind()
        self._submit(lambda: workload.run(self._mesh, bound), blocking=blocking, inline=not workload.waits)

    def enqueue_record_event(self, device_range: MeshCoordinateRange | None = None) -> MeshEvent:
        """An event that completes when this queue reaches it."""
        self.refuse_in_capture("Event Synchronization")
        self._mesh.check_open()
        span = device_range or MeshCoordinateRange(self._mesh.shape)
        event = MeshEvent(self.cq_id, next(EVENT_IDS), span, self._mesh.mesh_id)
        self._submit(event._done.set, blocking=False)
        return event

    enqueue_record_event_to_host = enqueue_record_event

    def enqueue_wait_for_event(self, event: MeshEvent) -> None:
        """Make this queue wait (not the host) until ``event`` completes."""
        if not isinstance(event, MeshEvent):
            raise MeshnnTypeError(f"expected a MeshEvent, got {type(event).__name__}")
        if event.mesh_id != self._mesh.mesh_id:
            raise WrongMeshError("the event was recorded on another mesh device")
        if event.is_completed():
            return

        def wait() -> None:
            if not event._done.wait(timeout=wait_timeout()):
                raise QueueError(
                    f"cq {self.cq_id} timed out after {wait_timeout()} s waiting for event {event.event_id} "
                    f"of cq {event.cq_id}"
                )

        self._submit(wait, blocking=False, inline=False)
