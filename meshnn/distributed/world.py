"""ttnn's distributed-context functions (``ttnn.init_distributed_context``,
``ttnn.distributed_context_get_rank`` and kin): the processes of a run, as tt-metal's multi-host
Python API names them, answered by meshnn's context (:mod:`meshnn.distributed.context`: MPI under
``mpiexec``, else one process).

tt-metal creates its distributed context when a device opens or when
``init_distributed_context()`` is called; until then ``is_initialized()`` is False and every other
call raises (tt-metal's message).  Ranks and sizes are ttnn's small value types :class:`Rank` and
:class:`Size` (``int(rank)``, comparisons).

May import: :mod:`meshnn.errors` and :mod:`meshnn.distributed.context`.
"""

from __future__ import annotations

import functools

import numpy as np

from meshnn.distributed.context import get_context
from meshnn.distributed.subcontexts import SubcontextLayout, single
from meshnn.errors import MeshnnError, MeshnnTypeError

_STATE = {"initialized": False}


@functools.total_ordering
class _Count:
    """An int with ttnn's name: ``int(x)``, ``str(x)``, comparisons with its own kind."""

    __slots__ = ("_value",)

    def __init__(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise MeshnnTypeError(f"{type(self).__name__}: value must be an int, got {value!r}")
        self._value = int(value)

    def __int__(self) -> int:
        return self._value

    __index__ = __int__

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._value == self._value  # type: ignore[attr-defined]

    def __lt__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._value < other._value  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._value})"

    def __str__(self) -> str:
        return str(self._value)


class Rank(_Count):
    """``ttnn.Rank``: a process's rank in the distributed context."""


class Size(_Count):
    """``ttnn.Size``: the number of processes in the distributed context."""


def mark_initialized() -> None:
    """What opening a device does to the context (tt-metal creates it then)."""
    _STATE["initialized"] = True


def init_distributed_context() -> None:
    """``ttnn.init_distributed_context()``: create the context of this run (idempotent)."""
    get_context()
    mark_initialized()


def distributed_context_is_initialized() -> bool:
    """``ttnn.distributed_context_is_initialized()``."""
    return _STATE["initialized"]


def _world():
    if not _STATE["initialized"]:
        raise MeshnnError("Distributed context not initialized. Call init_distributed_context() first.")
    return get_context()


def distributed_context_get_rank() -> Rank:
    """``ttnn.distributed_context_get_rank()``: this process's rank (0 without MPI)."""
    return Rank(_world().rank)


def distributed_context_get_size() -> Size:
    """``ttnn.distributed_context_get_size()``: the number of processes (1 without MPI)."""
    return Size(_world().world_size)


def distributed_context_barrier() -> None:
    """``ttnn.distributed_context_barrier()``: wait until every process reaches it."""
    _world().barrier("distributed_context_barrier")


def distributed_context_allgather_int(value: int) -> list[int]:
    """``ttnn.distributed_context_allgather_int(value)``: every rank's ``value``, by rank."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MeshnnTypeError(f"distributed_context_allgather_int: value must be an int, got {value!r}")
    return [int(v) for v in _world().allgather_object(int(value), "distributed_context_allgather_int", data=True)]


class SubcontextId(_Count):
    """``ttnn.SubcontextId``: a sub-context of a split MPI job."""


def distributed_context_world_rank() -> Rank:
    """``ttnn.distributed_context_world_rank()``: this process's rank in the whole job (a split
    job's sub-context ranks count from 0 in each sub-context)."""
    return Rank(getattr(_world(), "job_rank", _world().rank))


def distributed_context_world_size() -> Size:
    """``ttnn.distributed_context_world_size()``: the number of processes of the whole job."""
    return Size(getattr(_world(), "job_size", _world().world_size))


def _layout() -> SubcontextLayout:
    context = _world()
    return getattr(context, "layout", single(context.world_size))


def distributed_context_subcontext_id() -> int | None:
    """``ttnn.distributed_context_subcontext_id()``: this process's sub-context (tt-run's
    ``TT_RUN_SUBCONTEXT_ID``), None when the job is not split."""
    return _layout().this_id


def distributed_context_subcontext_count() -> int:
    """``ttnn.distributed_context_subcontext_count()``: how many sub-contexts (1 when not split)."""
    return _layout().count


def distributed_context_subcontext_sizes() -> list[int]:
    """``ttnn.distributed_context_subcontext_sizes()``: every sub-context's rank count, by id."""
    return list(_layout().sizes)


def distributed_context_subcontext_size(subcontext_id: int) -> Size:
    """``ttnn.distributed_context_subcontext_size(subcontext_id)``: its rank count (an id out of
    range raises IndexError)."""
    return Size(_layout().size(subcontext_id))


def distributed_context_local_to_world_rank(subcontext_id: int, local_rank: int) -> Rank:
    """``ttnn.distributed_context_local_to_world_rank(subcontext_id, local_rank)``: the whole
    job's rank of ``local_rank`` of that sub-context."""
    return Rank(_layout().local_to_world_rank(subcontext_id, local_rank))
