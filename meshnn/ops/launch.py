"""How an operation runs on a mesh: validate, allocate outputs as MeshBuffers, run a MeshWorkload.

Every op follows the same steps:

1. validate every input first (:mod:`meshnn.ops.checks`: tensors on one open mesh, allocated,
   shapes and dtypes the op takes) and compute the output specs (:mod:`meshnn.ops.outputs`);
   nothing is allocated before all checks pass;
2. allocate each output as a Replicated MeshBuffer through the mesh allocator (lock-step, shown
   in memory views); if one allocation fails, the ones made before it are freed;
3. enqueue ONE MeshWorkload on the command queue: a uniform program over the populated devices,
   so its kernel sees the slab rows of all of them at once and computes with one numpy call
   (:mod:`meshnn.ops.values` decodes and encodes them).

This module holds :func:`launch` (steps 2 and 3) and the program it runs (:class:`_Run`). Launch's further
keywords: ``trace_bytes``, the op's dispatch-command bytes per device in a trace, when the op has its own
figure (None: the trace's); ``waits``, the run may wait for another queue's work (``MeshWorkload.waits``);
``repeat_key``, the outputs are a function of the inputs' bytes and this key alone, written whole
(``Program.repeat_key``); ``program_key``, the op's program-cache key
(:func:`~meshnn.ops.program_keys.program_key` of the op, its specs and ``attrs``) made once by a caller that
launches them again and again (else it is looked up at every call); ``torch_elements``, the kernel's torch
operations are element-wise over at most this many elements per device (None: not known): when they are few
enough that torch runs them on the calling thread (:data:`~meshnn.host.omp.SERIAL_ELEMENTS` over all the
devices), the thread's count of torch threads is left as it is; ``fills``, the kernel writes every byte of its
new outputs (their slabs need no zeroing first: :meth:`~meshnn.mesh.mesh_buffer.MeshBuffer.fresh_rows`);
``quiets``, the kernel keeps numpy's floating-point warnings off around its own numpy work (a run that binds
or settles no memo then needs no ``np.errstate`` of its own); ``semaphores``, how many global semaphores
ttnn's program makes for itself when it is not cached (a collective given none:
:func:`~meshnn.mesh.global_semaphore.program_semaphores`, held with its cache entry, after the outputs are
allocated, as ttnn makes them; the call's ``use_l1_small_for_semaphores`` is part of the program's key then,
as it is of ttnn's).

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' own :mod:`~meshnn.ops.memo`,
:mod:`~meshnn.ops.outputs` and :mod:`~meshnn.ops.shared_rows`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from meshnn.errors import MeshnnError
from meshnn.host import omp
from meshnn.host.omp import SERIAL_ELEMENTS
from meshnn.mesh.command_queue import MeshCommandQueue
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange
from meshnn.mesh.global_semaphore import program_semaphores
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.observers import OBSERVERS, OpEvent
from meshnn.mesh.op_keywords import recorded
from meshnn.mesh.range_set import MeshCoordinateRangeSet
from meshnn.mesh.slab import WRITES
from meshnn.mesh.workload import MeshWorkload, Program, ProgramContext
from meshnn.ops.memo import MEMO_MIN_DEVICE_BYTES, VALUES_MEMO, bind_rows, settle, unbind_rows
from meshnn.ops.outputs import Output, output_buffers, output_tensors
from meshnn.ops.program_keys import remember
from meshnn.ops.shared_rows import all_replicated, inputs_alike
from meshnn.tensor.tensor import Tensor

Kernel = Callable[[Sequence[np.ndarray], Sequence[np.ndarray], tuple[MeshCoordinate, ...]], None]
"""``kernel(input rows, output rows, coords)``: each a ``(k, device_local_size)`` uint8 view of the
slab rows of the ``k`` devices at ``coords``, in the order of the op's inputs and outputs."""


def launch(
    op: str,
    mesh: MeshDevice,
    inputs: Sequence[Tensor],
    outputs: Sequence[Output],
    kernel: Kernel,
    *,
    coords: Sequence[MeshCoordinate] | None = None,
    queue_id: int = 0,
    into: Sequence[Tensor] | None = None,
    rowwise: bool = False,
    reads_memos: bool = False,
    keeps_memos: bool = False,
    attrs: Mapping[str, object] | None = None,
    trace_bytes: int | None = None,
    waits: bool = False,
    repeat_key: object = None,
    program_key: tuple | None = None,
    torch_elements: int | None = None,
    fills: bool = False,
    semaphores: int = 0,
    quiets: bool = False,
) -> list[Tensor]:
    """Allocate ``outputs`` (or write ``into`` preallocated output tensors, checked by
    :func:`~meshnn.ops.outputs.output_into`) and run ``kernel(input rows, output rows, coords)`` over the populated
    devices as one MeshWorkload on command queue ``queue_id``; returns the output tensors.

    ``rowwise``: the kernel computes each device's outputs from that device's inputs alone, the same way on every
    device (true of every op but the collectives).  Then, when every input is replicated and its bytes are the same
    on every device (checked, not assumed), the kernel runs on one device's rows and its outputs are copied to the
    others: the bytes every device would have computed, for one device's work.

    ``reads_memos``: the kernel reads its inputs only through ``logical_values`` / ``known_values``, or calls
    ``settled`` on input rows before it reads their bytes; its inputs' deferred writes are then left undone (see
    :mod:`meshnn.ops.memo`).  Otherwise they are done before the kernel runs.  A new output whose kernel runs inside
    this call (the queue was idle) may defer its own bytes (``write_values``).

    ``keeps_memos``: the kernel keeps its outputs' memos true itself (an in-place update of a few rows patches the
    memo's values there, :func:`~meshnn.ops.memo.patch_known`), so they are not dropped before it runs; when its
    rows are not bound for memos, they are dropped as usual.

    ``attrs``: what the op was configured with that its tensors do not say (program and compute-kernel configs,
    memory config, topology, ...), by ttnn's argument names, for the observers of :mod:`meshnn.mesh.observers`, over
    the call's :func:`~meshnn.mesh.op_keywords.recorded`.  The other keywords: see the module's text."""
    first = inputs[0] if inputs else None
    where = tuple(coords) if coords is not None else first.storage.coords  # type: ignore[union-attr]
    event = OpEvent(op, mesh, tuple(inputs), where, queue_id, {**recorded(), **(attrs or {})}) if OBSERVERS else None
    if event is not None:
        OBSERVERS.op_begin(event)
    buffers = _allocate(mesh, outputs, into, event, ((op, inputs, outputs, attrs), program_key, semaphores))
    once = rowwise and len(where) > 1 and len(inputs) > 0 and all_replicated(inputs)
    run = _Run(kernel, inputs, buffers, mesh, once=once, reads_memos=reads_memos, deferrable=into is None)
    run.keeps, run.fills, run.quiet = keeps_memos, fills and into is None, quiets and not run.memos
    run.serial = torch_elements is not None and torch_elements * len(where) <= SERIAL_ELEMENTS
    _enqueue(op, mesh, mesh.mesh_command_queue(queue_id), where, run, (trace_bytes, repeat_key), waits)
    run.caller = None  # from now on a run is not this call's own: it writes its bytes at once
    result = list(into) if into is not None else output_tensors(mesh, outputs, buffers, first, where)
    if event is not None:
        OBSERVERS.op_end(event, result)
    return result


def _cached(mesh: MeshDevice, program: tuple, program_key: tuple | None, semaphores: int) -> None:
    """Record ``program = (op, inputs, outputs, attrs)`` in the mesh's program cache (by
    ``program_key`` when the caller made it) with the ``semaphores`` it makes for itself."""
    op, inputs, outputs, attrs = program
    if semaphores:
        attrs = {**(attrs or {}), "use_l1_small_for_semaphores": bool(recorded().get("use_l1_small_for_semaphores"))}
    grids = recorded().get("sub_core_grids")
    if grids is not None:  # the cores a program runs on are in ttnn's hash of it (the caller's key lacks them)
        attrs, program_key = {**(attrs or {}), "sub_core_grids": grids}, None
    entries = mesh.num_program_cache_entries() if semaphores else 0
    if program_key is None:
        program_key = remember(mesh, op, inputs, outputs, attrs)
    else:
        mesh.record_program(program_key)
    if semaphores:
        try:
            program_semaphores(mesh, program_key, semaphores)
        except MeshnnError as error:  # (they did not fit): the program was not made, nor cached
            if mesh.num_program_cache_entries() > entries:
                mesh.forget_program(program_key)
            error.add_note(f"ttnn.{op}: its {semaphores} global semaphores could not be allocated")
            raise


def _enqueue(
    op: str,
    mesh: MeshDevice,
    queue: MeshCommandQueue,
    where: tuple[MeshCoordinate, ...],
    run: _Run,
    keys: tuple[int | None, object],
    waits: bool,
) -> None:
    """``run`` on ``queue``: at once when it may (:func:`_ran_inline`), else as its workload."""
    if waits or keys[1] is not None or not _ran_inline(queue, mesh, where, run):
        queue.enqueue_mesh_workload(_workload(op, mesh, where, run, keys, waits), blocking=False)


def _ran_inline(queue: MeshCommandQueue, mesh: MeshDevice, where: tuple[MeshCoordinate, ...], run: _Run) -> bool:
    """Run ``run`` at once on this thread, when its queue is idle and not capturing and its
    program is one uniform program over a whole mesh held by this process: what enqueueing its
    workload would do (bind its slabs, then :func:`~meshnn.mesh.workload.run_programs`' steps for
    such a program, the queue's order and error keeping), without making the workload.  False,
    nothing done, otherwise (the caller enqueues the workload)."""
    if (
        queue.has_work()  # (a guess before the queue's lock: run_if_idle decides)
        or queue.capture is not None
        or not mesh.executes
        or not mesh.all_local
        or len(where) != mesh.get_num_devices()
    ):
        return False
    mesh.check_open()
    touched, n_in = run.touched, run.n_in
    ins = [b.lazy_rows() for b in touched[:n_in]] if run.lazy else [b.rows() for b in touched[:n_in]]
    outs = [b.fresh_rows() for b in touched[n_in:]] if run.fills else [b.rows() for b in touched[n_in:]]
    slabs = tuple(ins + outs)
    return queue.run_if_idle(lambda: run.run_whole(mesh, slabs))


def _allocate(mesh: MeshDevice, outputs: Sequence[Output], into, event: OpEvent | None, cached) -> list[MeshBuffer]:
    """The outputs' buffers (:func:`~meshnn.ops.outputs.output_buffers`), then the program noted in
    the cache (``cached``: :func:`_cached`'s arguments); a failure is the op's (new outputs freed)."""
    buffers: list[MeshBuffer] = []
    try:
        buffers = output_buffers(mesh, outputs, into)
        _cached(mesh, *cached)
        return buffers
    except BaseException as error:
        for buffer in buffers if into is None else ():
            buffer.deallocate()
        if event is not None:
            OBSERVERS.op_failed(event, error)
        raise


_ANY_THREAD = object()
"""A replayed run's ``caller``: its new outputs may defer their bytes on any thread."""


class _Run:
    """The program of one :func:`launch`: its kernel over a program's slab rows (the inputs' buffers
    first, then the outputs'), bound for memos when the op's buffers are large enough, on the first
    device's rows only when ``once`` and the inputs' bytes allow it.  ``caller``: the thread whose
    runs may defer their outputs' bytes (the launching one, until :func:`launch` returns)."""

    __slots__ = (
        *("buffers", "caller", "deferrable", "fills", "in_specs", "keeps", "kernel", "lazy"),
        *("memos", "n_in", "n_local", "once", "quiet", "serial", "touched"),
    )

    def __init__(
        self,
        kernel: Kernel,
        inputs: Sequence[Tensor],
        buffers: list[MeshBuffer],
        mesh: MeshDevice,
        *,
        once: bool,
        reads_memos: bool,
        deferrable: bool,
    ) -> None:
        self.kernel, self.buffers, self.once = kernel, buffers, once
        self.in_specs = tuple([t.spec for t in inputs])
        self.n_in = len(inputs)
        self.touched = [t.storage.mesh_buffer for t in inputs]  # type: ignore[union-attr]
        self.touched += buffers
        self.n_local = len(mesh.local)
        self.memos = False
        if VALUES_MEMO.limit > 0:
            for b in self.touched:  # (a loop: cheaper than any(genexpr) for an op's few buffers)
                if b.device_local_size() >= MEMO_MIN_DEVICE_BYTES:
                    self.memos = True
                    break
        self.lazy = self.memos and reads_memos
        # launch's keeps_memos, torch_elements (torch runs the kernel on this thread), fills and quiets:
        self.keeps = self.serial = self.fills = self.quiet = False
        self.caller = threading.get_ident() if deferrable else None  # new outputs, written on this thread
        self.deferrable = deferrable  # its outputs are new buffers the kernel writes whole

    def __call__(self, ctx: ProgramContext) -> None:
        """The kernel over the rows of every device of the program (bound for memos when they are
        all the local devices), or over the first device's only (:meth:`_on_first_device`).  A
        device computes inf and NaN without a word: numpy's floating-point warnings are off while
        a kernel runs, so none reaches the user for inf / NaN input (a kernel that quiets its own
        numpy work, run without memos to bind or settle, needs no more)."""
        if self.quiet:
            return self._run(ctx)
        with np.errstate(all="ignore"):
            self._run(ctx)

    def _run(self, ctx: ProgramContext) -> None:
        if self.serial:  # (torch opens no parallel region for so few elements: nothing to set)
            self._run_kernel(ctx)
            return
        threads = omp.one_thread()  # torch on this thread alone, but for large products
        try:
            self._run_kernel(ctx)
        finally:
            omp.restore(threads)

    def _run_kernel(self, ctx: ProgramContext) -> None:
        rows, coords = ctx.buffers, ctx.coords
        caller = self.caller
        defer = caller is _ANY_THREAD or caller == threading.get_ident()
        if self.once and len(coords) > 1 and inputs_alike(rows, self.touched, self.in_specs):
            self._on_first_device(rows, coords, defer)
            return
        n_in = self.n_in
        whole = self.memos and len(coords) == self.n_local
        if self.lazy and not whole:
            settle(self.touched[:n_in])
        if self.keeps and not whole:
            for buffer in self.buffers:  # (no memo to patch: dropped, as for any write)
                buffer.touch()
        if whole:
            bind_rows(rows, self.touched, n_in, first=False, defer=defer)
        try:
            self.kernel(rows[:n_in], rows[n_in:], coords)
        finally:
            if whole:
                unbind_rows(rows)

    def run_whole(self, mesh: MeshDevice, slabs: tuple[np.ndarray, ...]) -> None:
        """What :func:`~meshnn.mesh.workload.run_programs` does for this run's program when it is
        one uniform program over the whole of ``mesh``, held by this process (no repeat key):
        its outputs' memos dropped (or settled, when the kernel keeps them), then the run over
        ``slabs``, the slabs the program would have bound."""
        if self.keeps:
            for buffer in self.buffers:
                buffer.settle()
            WRITES.bump()
        else:
            for buffer in self.buffers:
                buffer.touch()
        mesh.last_repeat = None
        self(ProgramContext(slabs, mesh.local, None))

    def for_trace(self, swap: Callable[[MeshBuffer], object]) -> _Run:
        """This run for a trace to replay (:mod:`meshnn.mesh.trace`): the same kernel over the
        buffers ``swap`` gives for its own (which do not keep them allocated).  Outputs it makes
        whole may leave their bytes to a deferred write on whatever thread replays it: a replay's
        later programs read their values, and any other way to the bytes writes them first."""
        copy = object.__new__(_ReplayRun)
        for name in _Run.__slots__:
            setattr(copy, name, getattr(self, name))
        copy.touched = [swap(b) for b in self.touched]
        copy.buffers = copy.touched[self.n_in :]
        copy.caller = _ANY_THREAD if self.deferrable else None
        return copy

    def _on_first_device(self, rows: tuple[np.ndarray, ...], coords: tuple[MeshCoordinate, ...], defer: bool) -> None:
        """The kernel over the first device's rows; its outputs copied to the other devices."""
        n_in = self.n_in
        firsts = tuple([r[:1] for r in rows])
        if self.memos:
            bind_rows(firsts, self.touched, n_in, first=True, defer=defer)
        elif self.lazy:
            settle(self.touched[:n_in])
        try:
            self.kernel(firsts[:n_in], firsts[n_in:], coords[:1])
        finally:
            if self.memos:
                unbind_rows(firsts)
        for out, buffer in zip(rows[n_in:], self.buffers, strict=True):
            if not buffer.has_deferred_write():  # (a deferred write fills every device itself)
                out[1:] = out[0]


class _ReplayRun(_Run):
    """A :class:`_Run` as a trace replays it: the replay turns numpy's floating-point warnings off
    once for all of its programs (:meth:`meshnn.mesh.trace.MeshTrace.replay`), not per kernel."""

    __slots__ = ()

    def __call__(self, ctx: ProgramContext) -> None:
        self._run(ctx)


def _workload(
    op: str,
    mesh: MeshDevice,
    where: tuple[MeshCoordinate, ...],
    run: _Run,
    keys: tuple[int | None, object],
    waits: bool,
) -> MeshWorkload:
    """``run`` as one program per box of the devices ``where``; ``keys``: its trace bytes and repeat key."""
    trace_bytes, repeat_key = keys
    if repeat_key is not None and any(b.shares_bytes(i) for b in run.buffers for i in run.touched[: run.n_in]):
        repeat_key = None  # an in-place op: its run changes what it reads
    boxes = (mesh.full_range,) if len(where) == mesh.get_num_devices() else _boxes(mesh, where)
    name, touched, n_in = f"ttnn.{op}", run.touched, run.n_in
    workload = MeshWorkload.of_programs(
        [
            (
                box,
                Program.of_op(
                    run,
                    touched,
                    n_in,
                    name=name,
                    lazy_reads=run.lazy,
                    keeps_memos=run.keeps,
                    trace_bytes=trace_bytes,
                    repeat_key=repeat_key,
                ),
            )
            for box in boxes
        ]
    )
    workload.waits = waits
    return workload


def _boxes(mesh: MeshDevice, coords: Sequence[MeshCoordinate]) -> list[MeshCoordinateRange]:
    """Disjoint boxes covering ``coords`` (one box for a whole mesh)."""
    if len(coords) == mesh.get_num_devices():
        return [mesh.full_range]
    ranges = MeshCoordinateRangeSet()
    for coord in coords:
        ranges.merge(MeshCoordinateRange(coord))
    return ranges.ranges()
