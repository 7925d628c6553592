"""MeshWorkload and Program: Python kernels over the slabs of MeshBuffers.

A :class:`Program` is a kernel plus the MeshBuffers it touches and its runtime arguments.  A
:class:`MeshWorkload` maps disjoint :class:`MeshCoordinateRange` s to programs (SPMD when one
program covers the mesh, MPMD when ranges differ).  A program whose arguments are the same on
every device of its range is *uniform*: it runs once per contiguous run of slab rows, so a
program over a whole mesh is one vectorised call.  A program with per-device runtime arguments
runs once per device.  Devices of a rank that owns none of a range run nothing there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.coord import MeshCoordinate, MeshCoordinateRange, MeshShape, as_coord
from meshnn.mesh.mesh_buffer import MeshBuffer
from meshnn.mesh.slab import WRITES

if TYPE_CHECKING:
    from meshnn.mesh.mesh_device import MeshDevice


class ProgramContext(NamedTuple):
    """What a kernel sees: for each of the program's buffers, a ``(k, device_local_size)`` uint8
    view of the slab rows of the ``k`` devices at ``coords``; and the arguments for them.
    (Immutable; a named tuple because one is made for every kernel call.)"""

    buffers: tuple[np.ndarray, ...]
    coords: tuple[MeshCoordinate, ...]
    args: Any


Kernel = Callable[[ProgramContext], None]


class Program:
    """A kernel over some MeshBuffers, with common or per-device runtime arguments.

    ``writes``: the indices of the buffers the kernel writes (None: it may write any).  Their memos
    (:attr:`MeshBuffer.memo`) are dropped just before the kernel runs; the others are only read.
    ``lazy_reads``: the kernel reads the others through their memos, or settles them
    (:meth:`MeshBuffer.settle`) before it reads their bytes, so binding leaves deferred writes be.
    ``keeps_memos``: the kernel keeps the memos of the buffers it writes true itself (it changes a
    memo's values where it changes the bytes, or drops it), so they are not dropped before it runs
    (an in-place update of a few rows of a large buffer).

    ``trace_bytes``: the dispatch-command bytes the program adds to a trace on each device when it
    is not the trace's per-program figure (an op launched with its own, see
    :func:`meshnn.ops.launch.launch`); None takes the figure of :mod:`meshnn.mesh.trace`."""

    trace_bytes: int | None = None
    repeat_key: object = None
    """Set by an op whose kernel only reads its first ``n_read`` buffers and writes the others
    whole, its result a function of the read bytes and this key alone: a run of the same key over
    the same buffers right after it, with no slab written between, is skipped (see
    :func:`run_programs`)."""

    def __init__(
        self,
        kernel: Kernel,
        buffers: Sequence[MeshBuffer] = (),
        *,
        args: Any = None,
        runtime_args: Mapping[MeshCoordinate, Any] | None = None,
        name: str = "program",
        writes: Sequence[int] | None = None,
        lazy_reads: bool = False,
        keeps_memos: bool = False,
    ) -> None:
        if not callable(kernel):
            raise MeshnnTypeError(f"a Program needs a callable kernel, got {kernel!r}")
        self.buffers = tuple(buffers)
        for buffer in self.buffers:
            if not isinstance(buffer, MeshBuffer):
                raise MeshnnTypeError(f"Program buffers must be MeshBuffers, got {list(buffers)!r}")
        self.kernel = kernel
        if writes is None:
            self.written = self.buffers
        elif type(writes) is range and writes.step == 1 and 0 <= writes.start <= writes.stop <= len(self.buffers):
            self.written = self.buffers[writes.start : writes.stop]  # (an op's outputs: the common case)
        elif all(isinstance(i, int) and 0 <= i < len(self.buffers) for i in writes):
            self.written = tuple(self.buffers[i] for i in writes)
        else:
            raise MeshnnValueError(f"writes must index the program's {len(self.buffers)} buffers, got {writes!r}")
        self.lazy_reads = lazy_reads and writes is not None
        self.n_read: int | None = None  # (an op's program: its first n_read buffers are only read)
        self.keeps_memos = bool(keeps_memos)
        self.args = args
        self.runtime_args = None if runtime_args is None else {as_coord(c): a for c, a in runtime_args.items()}
        self.name = name

    @classmethod
    def of_op(
        cls,
        kernel: Kernel,
        buffers: Sequence[MeshBuffer],
        first_written: int,
        *,
        name: str,
        lazy_reads: bool,
        keeps_memos: bool,
        trace_bytes: int | None = None,
        repeat_key: object = None,
    ) -> Program:
        """A uniform program of an op launch: ``buffers`` (MeshBuffers the op has checked) of
        which those from ``first_written`` on are written (its outputs).  The same program as the
        constructor makes, without checking again what the op checked (one is made per op)."""
        program = cls.__new__(cls)
        program.buffers = buffers = tuple(buffers)
        program.kernel, program.written, program.n_read = kernel, buffers[first_written:], first_written
        program.lazy_reads, program.keeps_memos = lazy_reads, keeps_memos
        program.args = program.runtime_args = None
        program.name = name
        program.trace_bytes, program.repeat_key = trace_bytes, repeat_key
        return program

    @property
    def is_uniform(self) -> bool:
        return self.runtime_args is None

    def __repr__(self) -> str:
        return f"Program({self.name!r}, {len(self.buffers)} buffers, uniform={self.is_uniform})"


class MeshWorkload:
    """Programs on disjoint ranges of one mesh.

    The programs are kept as ``(range, program)`` pairs in the order they were added: the ranges
    are disjoint (checked by :meth:`add_program`), so no range appears twice and a dict keyed by
    range (:meth:`get_programs`) holds the same.  (A list, because an op makes a workload per call
    and a range's hash is computed in Python.)"""

    def __init__(self, program: Program | None = None, device_range: MeshCoordinateRange | None = None) -> None:
        self._programs: list[tuple[MeshCoordinateRange, Program]] = []
        if program is not None:
            self.add_program(device_range or MeshCoordinateRange(MeshCoordinate(0, 0), MeshCoordinate(0, 0)), program)

    def add_program(self, device_range: MeshCoordinateRange, program: Program) -> None:
        if not isinstance(device_range, MeshCoordinateRange) or not isinstance(program, Program):
            raise MeshnnTypeError("add_program needs a MeshCoordinateRange and a Program")
        for existing, _ in self._programs:
            if existing.dims() == device_range.dims() and existing.intersects(device_range):
                raise MeshnnValueError(f"program range {device_range!r} overlaps {existing!r}")
        self._programs.append((device_range, program))

    @classmethod
    def of_programs(cls, programs: list[tuple[MeshCoordinateRange, Program]]) -> MeshWorkload:
        """A workload of ``(range, program)`` pairs whose ranges are known disjoint (an op's boxes)."""
        workload = cls.__new__(cls)
        workload._programs = programs
        workload._checked = True
        return workload

    def get_programs(self) -> dict[MeshCoordinateRange, Program]:
        return dict(self._programs)

    waits = False
    """A workload that may wait for another queue's work (a socket's receive waits for its send):
    run on the queue's dispatch thread, never in the enqueuing thread, so the caller goes on."""

    _checked = False
    """An op's workload (:meth:`of_programs`): its op checked its buffers, ranges and arguments."""

    def validate(self, mesh: MeshDevice) -> None:
        """Everything a run needs, checked before anything is enqueued (an op's workload was)."""
        if self._checked:
            return
        if not self._programs:
            raise MeshnnValueError("a MeshWorkload needs at least one program")
        full, mesh_id = mesh.full_range, mesh.mesh_id
        for device_range, program in self._programs:
            inside = (
                device_range is full
                or device_range == full
                or (device_range.dims() == mesh.shape.dims() and full.contains(device_range))
            )
            if not inside:
                raise MeshnnValueError(f"program range {device_range!r} is outside the {mesh.shape!r} mesh")
            for buffer in program.buffers:
                if not buffer.is_allocated():
                    buffer.check_allocated(f"buffer of {program.name}")
                if buffer.mesh_id != mesh_id:
                    raise WrongMeshError(f"{program.name} uses a MeshBuffer of another mesh device")
            if program.runtime_args is not None:
                missing = [c for c in device_range if c not in program.runtime_args]
                if missing:
                    raise MeshnnValueError(f"{program.name} has no runtime args for devices {missing[:4]}")

    def bind(self) -> list[tuple[np.ndarray, ...]]:
        """Each program's slabs, taken when the workload is enqueued (after :meth:`validate`): a
        buffer deallocated while the workload waits in the queue keeps its memory until the
        workload has run."""
        bound = []
        for _, program in self._programs:
            buffers = program.buffers
            if not program.lazy_reads:
                bound.append(tuple([b.rows() for b in buffers]))
            elif program.n_read is not None:
                n = program.n_read
                bound.append(tuple([b.lazy_rows() for b in buffers[:n]] + [b.rows() for b in buffers[n:]]))
            else:
                written = program.written
                bound.append(tuple(b.lazy_rows() if b not in written else b.rows() for b in buffers))
        return bound

    def run(self, mesh: MeshDevice, bound: Sequence[Sequence[np.ndarray]] | None = None) -> None:
        """Execute every program on the local devices of its range (on the dispatch thread)."""
        if bound is None:
            self.validate(mesh)
            bound = self.bind()
        run_programs(mesh, self._programs, bound)


def run_programs(mesh: MeshDevice, programs: Iterable[tuple[MeshCoordinateRange, Any]], bound: Iterable) -> None:
    """Run each ``(range, program)`` of ``programs`` over its slabs (the next of ``bound``, taken
    just before it runs): the memos of the buffers it writes dropped first, then its kernel on the
    local devices of its range (one call over a whole mesh held here).  A program is a
    :class:`Program` or anything with its ``kernel``, ``args``, ``runtime_args``, ``written``,
    ``keeps_memos``, ``repeat_key`` and ``is_uniform`` (a trace's replay).

    A program with a ``repeat_key`` that follows, on this mesh, a run of the same key over the same
    buffers, with :data:`~meshnn.mesh.slab.WRITES` unchanged since that run ended, is skipped: its
    inputs hold the bytes they held then and its outputs the bytes it would write (a traced loop of
    one collective over persistent buffers writes them once).  Only in a process that holds every
    device (ranks must all run what one runs)."""
    full = mesh.full_range
    whole = mesh.all_local
    for (device_range, program), slabs in zip(programs, bound, strict=True):
        repeat = None
        if program.repeat_key is not None and whole:
            repeat = (
                program.repeat_key,
                device_range,
                [(id(b._storage), b.device_local_size()) for b in program.buffers],
            )
            if mesh.last_repeat == (repeat, WRITES.value):
                continue  # the bytes it would write are there: nothing changed since it last ran
        if program.keeps_memos:
            for buffer in program.written:
                buffer.settle()
            WRITES.bump()
        else:
            for buffer in program.written:
                buffer.touch()
        mesh.last_repeat = None
        if program.runtime_args is None and whole and (device_range is full or device_range == full):
            program.kernel(ProgramContext(tuple(slabs), mesh.local, program.args))  # one vectorised call
        else:
            for rows, coords in _row_runs(mesh, device_range, per_device=not program.is_uniform):
                args = program.args if program.is_uniform else program.runtime_args[coords[0]]
                program.kernel(ProgramContext(tuple(s[rows] for s in slabs), coords, args))
        if repeat is not None:
            mesh.last_repeat = (repeat, WRITES.value)


def _row_runs(mesh: MeshDevice, device_range: MeshCoordinateRange, *, per_device: bool):
    """Contiguous runs of local slab rows covering ``device_range``: (slice, coords) pairs.
    (A uniform program over a whole mesh held by this process never comes here: ``run`` gives it
    the whole slab in one call.)"""
    coords = [c for c in device_range if mesh.is_local(c)]
    run: list[tuple[int, MeshCoordinate]] = []
    for coord in coords:
        row = mesh.local_row(coord)
        if run and (per_device or row != run[-1][0] + 1):
            yield slice(run[0][0], run[-1][0] + 1), tuple(c for _, c in run)
            run = []
        run.append((row, coord))
    if run:
        yield slice(run[0][0], run[-1][0] + 1), tuple(c for _, c in run)


def full_range(shape: MeshShape) -> MeshCoordinateRange:
    return MeshCoordinateRange(shape)
