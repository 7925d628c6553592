"""Which process owns which devices: the distributed context, and its one-process default.

Every rank of a multi-process run executes the same program (SPMD).  A mesh's devices are dealt
to ranks by mesh row: by default the rows are split into ``world_size`` contiguous, near-equal
blocks, rank 0 first; a ``rank -> (first row, row count)`` mapping overrides that.  Ownership is
stated in rows here because this layer knows nothing of mesh coordinates.

The MPI implementation lives in :mod:`meshnn.distributed.mpi`, the only module that imports
mpi4py; it is chosen when the process runs under ``mpiexec`` with more than one rank.  Every
collective takes ``op``, the name of the operation it serves, so that ranks that call different
collectives are named.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from meshnn.distributed.subcontexts import single
from meshnn.errors import DistributedError, MeshnnTypeError, MeshnnValueError

if TYPE_CHECKING:
    from meshnn.distributed.binding import MeshBinding


class DistributedContext(Protocol):
    """What the mesh layer needs of the processes of a run."""

    @property
    def rank(self) -> int: ...

    @property
    def world_size(self) -> int: ...

    def barrier(self, op: str = ...) -> None: ...

    def allgather_object(self, value: object, op: str = ..., *, data: bool = ...) -> list[object]: ...

    def gather_object(self, value: object, op: str = ..., *, data: bool = ...) -> list[object] | None: ...

    def allgather_array(self, array: np.ndarray, out: np.ndarray | None = None, op: str = ...) -> list[np.ndarray]: ...

    def allreduce_array(self, array: np.ndarray, out: np.ndarray | None = None, op: str = ...) -> np.ndarray: ...

    def relay_array(
        self, running: np.ndarray, order: Sequence[int], visit: Callable[[np.ndarray, int, int], None], op: str = ...
    ) -> np.ndarray: ...

    def abort(self, message: str) -> None: ...


class SingleProcessContext:
    """The default: one process owns every device of every mesh."""

    rank = 0
    world_size = 1
    job_rank = 0  # (the whole job's rank and size: a split MPI job's differ from its sub-context's)
    job_size = 1
    layout = single(1)

    def barrier(self, op: str = "barrier") -> None:
        return None

    def allgather_object(self, value: object, op: str = "allgather_object", *, data: bool = False) -> list[object]:
        return [value]

    def gather_object(self, value: object, op: str = "gather_object", *, data: bool = False) -> list[object] | None:
        return [value]

    def allgather_array(
        self, array: np.ndarray, out: np.ndarray | None = None, op: str = "allgather_array"
    ) -> list[np.ndarray]:
        if out is None:
            return [array]
        np.copyto(out, array)
        return [out]

    def allreduce_array(
        self, array: np.ndarray, out: np.ndarray | None = None, op: str = "allreduce_array"
    ) -> np.ndarray:
        if out is None:
            return array
        np.copyto(out, array)
        return out

    def relay_array(
        self,
        running: np.ndarray,
        order: Sequence[int],
        visit: Callable[[np.ndarray, int, int], None],
        op: str = "relay_array",
    ) -> np.ndarray:
        flat = running.reshape(-1)
        visit(flat, 0, flat.size)
        return running

    def abort(self, message: str) -> None:
        raise DistributedError(message, rank=0)

    def __repr__(self) -> str:
        return "SingleProcessContext(rank=0, world_size=1)"


_CONTEXT: DistributedContext | None = None
_RANK_ROWS: dict[int, tuple[int, int]] | None = None

_MPI_ENV = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")


def launched_under_mpi() -> bool:
    """True when an MPI launcher started this process as one of several ranks."""
    for name in _MPI_ENV:
        value = os.environ.get(name)
        if value is not None and value.isdecimal() and int(value) > 1:
            return True
    return False


def get_context() -> DistributedContext:
    """The context of this process: MPI when launched as one of several ranks, else one process."""
    global _CONTEXT
    if _CONTEXT is None:
        if launched_under_mpi():
            from meshnn.distributed.mpi import MpiContext  # imported only when needed

            _CONTEXT = MpiContext()
        else:
            _CONTEXT = SingleProcessContext()
    return _CONTEXT


def mesh_context(num_rows: int, binding: MeshBinding | None) -> DistributedContext:
    """The context that owns a new mesh of ``num_rows`` rows: this process alone when tt-run bound
    the rank to a mesh of its own (the run's context is made all the same, every rank opening a
    mesh), else the run's (its ranks share the mesh's rows: at least one each; under tt-run's big
    mesh, rank ``h`` is host rank ``h`` and there is one rank per host rank)."""
    context = get_context()
    if binding is not None and not binding.shared:
        return SingleProcessContext()
    if binding is not None and binding.mesh_host_rank != context.rank:
        raise DistributedError(
            f"rank {context.rank} is bound to host rank {binding.mesh_host_rank} of mesh {binding.mesh_id}; "
            "meshnn deals a shared mesh's rows by MPI rank: bind rank h to host rank h",
            rank=context.rank,
        )
    if context.world_size > num_rows:
        raise DistributedError(
            f"{context.world_size} ranks cannot share a mesh of {num_rows} row(s): every rank owns at "
            f"least one mesh row; run with at most {num_rows} ranks",
            rank=context.rank,
        )
    return context


def end_all_ranks(message: str) -> None:
    """Under an MPI run, print ``meshnn: rank R: message`` and end every rank now (``MPI_Abort``):
    what an uncaught error does, for callers that caught it (``meshnn run``, the test plugin).  A
    rank that fails before any mesh was opened joins MPI first (its context made, ``MPI_Init``) and
    then aborts: MPICH's launcher does not end the other ranks when one exits non-zero before
    ``MPI_Init``, and they would wait in theirs for it forever.  In one process: nothing."""
    if not isinstance(message, str):
        raise MeshnnTypeError(f"end_all_ranks: message must be a str, got {type(message).__name__}")
    context = _CONTEXT if _CONTEXT is not None or not launched_under_mpi() else get_context()
    if context is not None and context.world_size > 1:
        context.abort(message)


def check_ranks_agree(context: DistributedContext, call: str, value: str) -> None:
    """Under MPI, every rank made ``call`` with the same ``value`` (what it describes: the mesh a
    rank opens), or a DistributedError naming each rank's, raised on every rank (all see the same
    values) before anything is made.  One process: nothing."""
    if context.world_size == 1:
        return
    seen = context.allgather_object(value, op=f"ttnn.{call}")
    if len(set(seen)) > 1:
        each = "; ".join(f"rank {r}: {v}" for r, v in enumerate(seen))
        raise DistributedError(f"ranks called ttnn.{call} differently ({each}); every rank must make the same call")


def set_context(context: DistributedContext | None) -> None:
    """Install ``context`` (None: choose again on next use)."""
    global _CONTEXT
    _CONTEXT = context


def set_rank_rows(mapping: Mapping[int, tuple[int, int]] | None) -> None:
    """Override which mesh rows each rank owns: ``{rank: (first_row, num_rows)}`` (None: default)."""
    global _RANK_ROWS
    if mapping is None:
        _RANK_ROWS = None
        return
    if not isinstance(mapping, Mapping):
        raise MeshnnTypeError(f"set_rank_rows: mapping must be a dict {{rank: (first_row, num_rows)}}, got {mapping!r}")
    checked: dict[int, tuple[int, int]] = {}
    for rank, rows in mapping.items():
        if not isinstance(rows, tuple | list) or len(rows) != 2 or not all(isinstance(v, int) for v in (rank, *rows)):
            raise MeshnnTypeError(f"set_rank_rows: mapping[{rank!r}] must be (first_row, num_rows) ints, got {rows!r}")
        if rank < 0 or rows[0] < 0 or rows[1] < 1:
            raise MeshnnValueError(
                f"set_rank_rows: mapping[{rank}] = {tuple(rows)} needs rank, first_row >= 0, num_rows >= 1"
            )
        checked[rank] = (rows[0], rows[1])
    _RANK_ROWS = checked


def rows_of_rank(num_rows: int, rank: int, world_size: int) -> range:
    """The mesh rows that ``rank`` owns in a mesh of ``num_rows`` rows."""
    if world_size > num_rows:
        raise DistributedError(
            f"{world_size} ranks cannot share a mesh of {num_rows} row(s): every rank needs at least one "
            f"mesh row; run with at most {num_rows} ranks or open a mesh with more rows",
            rank=rank,
        )
    if _RANK_ROWS is not None:
        if rank not in _RANK_ROWS:
            raise MeshnnValueError(f"the rank -> rows mapping names no rows for rank {rank}")
        first, count = _RANK_ROWS[rank]
        if first < 0 or count < 1 or first + count > num_rows:
            raise MeshnnValueError(f"rank {rank} is mapped to rows {first}..{first + count - 1} of {num_rows}")
        return range(first, first + count)
    base, extra = divmod(num_rows, world_size)
    first = rank * base + min(rank, extra)
    return range(first, first + base + (rank < extra))
