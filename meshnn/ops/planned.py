"""An op's repeated call by a plan made once: from the call straight to the allocator and the kernel.

An op called again and again with inputs of the same specs (a decode loop's adds, say) makes the
same output spec, kernel and program-cache key each time.  A :class:`Plan` holds them, made by the
op's first successful call; :func:`run_planned` then runs a later call of two device tensors the
way :func:`~meshnn.ops.launch.launch` would, without its general layers (the argument checks'
frames, the workload, the run object, the observers' events), when nothing could tell the two apart:

- no observer is on (hooks, graph, perf and report capture, memory timelines: every op is theirs),
  and no hardware-only keyword is recorded for the call;
- both inputs are allocated device tensors on one open mesh, populating the same devices (in the
  same order), every device of the mesh and all of them held by this process;
- command queue 0 is idle and captures no trace, the mesh executes (not a planning mesh), and no
  trace makes allocations unsafe (the warning is the ordinary path's);
- the op's buffers are too small for value memos (:data:`~meshnn.ops.memo.MEMO_MIN_DEVICE_BYTES`).

Otherwise :func:`run_planned` returns None having changed nothing, and the caller takes the
ordinary path, which raises the ordinary errors (a deallocated input named, a closed mesh).  A
plan holds only what follows from its input specs, which are immutable, so it is never stale: the
tensors, the mesh, the queue and the observers are looked at on every call.  What the call does is
:func:`launch`'s own steps in its order: the output allocated by the same allocator call, the
program noted in the mesh's program cache, the kernel over the same slab rows on the queue's thread
(:meth:`~meshnn.mesh.dispatch.MeshCommandQueue.run_if_idle`: the same order and error keeping), on the
first device's rows when the inputs are replicated and known alike, and the output tensor made.

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, :mod:`meshnn.host` and the ops' own
:mod:`~meshnn.ops.memo` and :mod:`~meshnn.ops.shared_rows`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.host import omp
from meshnn.host.omp import SERIAL_ELEMENTS
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.observers import OBSERVERS
from meshnn.mesh.op_keywords import recorded
from meshnn.ops.memo import BOUND_ROWS, MEMO_MIN_DEVICE_BYTES, VALUES_MEMO
from meshnn.ops.shared_rows import all_replicated, inputs_alike
from meshnn.tensor.lifetime import allocate_mesh_buffer
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor

Kernel = Callable[[Sequence[np.ndarray], Sequence[np.ndarray], tuple[MeshCoordinate, ...]], None]
NativeKernel = Callable[[np.ndarray, np.ndarray, np.ndarray], None]
"""``native(a rows, b rows, output rows)``: :mod:`meshnn.ops.eltwise.native`'s kernels."""


@dataclass(frozen=True, slots=True)
class Plan:
    """An element-wise op of two inputs of ``in_specs`` (exactly these spec objects), made once.

    ``spec``: the output's; ``kernel``: :func:`~meshnn.ops.eltwise.kernel.elementwise_kernel`'s,
    writing every byte of a new output and keeping numpy's warnings off around its own numpy work;
    ``program_key``: the op's program-cache key; ``torch_elements``: the kernel's torch work is
    element-wise over this many elements per device (None: it does no torch work); ``out_bytes``:
    the output buffer's bytes per device; ``native``: the native kernel ``kernel`` calls over rows
    stored alike (None: none), when its specs let it (see :func:`_kernel`)."""

    op: str
    in_specs: tuple[TensorSpec, TensorSpec]
    spec: TensorSpec
    kernel: Kernel
    program_key: tuple
    torch_elements: int | None
    out_bytes: int
    native: NativeKernel | None


def run_planned(plan: Plan, a: Tensor, b: Tensor) -> Tensor | None:
    """``plan``'s op over device tensors ``a`` and ``b`` (of the plan's specs), run as the module's
    text says; None, nothing done, when the call needs the ordinary path."""
    sa, sb = a.storage, b.storage
    if OBSERVERS or recorded() or type(sa) is not DeviceStorage or type(sb) is not DeviceStorage:
        return None
    ba, bb = sa.mesh_buffer, sb.mesh_buffer
    where = sa.coords
    if sb is not sa and (not bb.is_allocated() or (sb.coords is not where and sb.coords != where)):
        return None
    if not ba.is_allocated():
        return None
    mesh = ba.device()
    queue = mesh.idle_queue(len(where))
    if queue is None or bb.mesh_id != mesh.mesh_id:
        return None
    memo = MEMO_MIN_DEVICE_BYTES  # (a buffer this large binds memos: the ordinary path's work)
    if VALUES_MEMO.limit > 0 and (
        plan.out_bytes >= memo or ba.device_local_size() >= memo or bb.device_local_size() >= memo
    ):
        return None
    out = allocate_mesh_buffer(plan.spec, mesh)
    mesh.record_program(plan.program_key)
    buffers = (ba, bb, out)
    rows = (ba.rows(), bb.rows(), out.fresh_rows())
    once = len(where) > 1 and all_replicated((a, b))
    work = _work(plan, mesh, buffers, rows, once)
    if not queue.run_if_idle(work):  # another thread's work came first: the ordinary path enqueues it
        out.deallocate()  # (the allocator takes the same block back: see meshnn.device.allocator)
        return None
    tensor = Tensor.make(plan.spec, DeviceStorage(out, where), a.tensor_topology())
    out.views = weakref.ref(tensor)  # (track_view of a new buffer's one view)
    return tensor


def _work(plan: Plan, mesh: MeshDevice, buffers: tuple[MeshBuffer, ...], rows: tuple, once: bool) -> Callable[[], None]:
    """The run of ``plan``'s kernel over the slab ``rows`` of ``buffers`` (inputs, then the output) on
    every device of ``mesh``: :meth:`meshnn.ops.launch._Run.run_whole`'s steps for it."""
    out, coords = buffers[2], mesh.local
    native, elements = plan.native, plan.torch_elements
    serial = elements is not None and elements * len(coords) <= SERIAL_ELEMENTS  # torch on this thread: nothing to set

    def work() -> None:
        out.touch()
        mesh.last_repeat = None
        threads = None if serial else omp.one_thread()  # torch on this thread alone
        try:
            if once and inputs_alike(rows, buffers, plan.in_specs):
                a = rows[0][:1]
                firsts = (a, a if rows[1] is rows[0] else rows[1][:1], rows[2][:1])  # (x op x: one view)
                _kernel(plan, native, firsts, coords[:1])
                if not out.has_deferred_write():
                    rows[2][1:] = rows[2][0]
            else:
                _kernel(plan, native, rows, coords)
        finally:
            if threads is not None:
                omp.restore(threads)

    return work


def _kernel(plan: Plan, native: NativeKernel | None, rows: tuple, coords: tuple[MeshCoordinate, ...]) -> None:
    """The plan's kernel over ``rows``: its native kernel straight away when the kernel would call it
    (no memo bound, every row alike: a new output's slab rows and its inputs' whole rows are)."""
    a, b, out = rows
    if native is not None and not BOUND_ROWS and a.shape == b.shape == out.shape and _contiguous(a, b, out):
        native(a, b, out)
    else:
        plan.kernel(rows[:2], rows[2:], coords)


def _contiguous(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> bool:
    return a.flags.c_contiguous and b.flags.c_contiguous and out.flags.c_contiguous
