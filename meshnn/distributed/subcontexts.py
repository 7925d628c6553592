"""Sub-contexts of a split MPI job: how tt-run's rank-bindings mapping divides the ranks of a run.

tt-run, given ``--rank-bindings-mapping``, launches several rank-binding overlays as one MPI job
and tells each process ``TT_RUN_SUBCONTEXT_ID`` (its sub-context, 0, 1, ...) and
``TT_RUN_SUBCONTEXT_SIZES`` (every sub-context's size, comma separated, in id order; the
sub-contexts are contiguous blocks of world ranks, sub-context 0 first).  As tt-metal's MPI
context does, meshnn then splits the world communicator by sub-context (ranks in world order):
the run's distributed context is this process's sub-context (``distributed_context_get_rank`` /
``get_size`` / ``barrier``, shared meshes, sockets between ranks), and
``distributed_context_world_rank`` / ``world_size`` still answer for the whole job.  Without
``TT_RUN_SUBCONTEXT_ID`` the job is one sub-context of every rank.

Layers: imports errors only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from meshnn.errors import DistributedError


@dataclass(frozen=True, slots=True)
class SubcontextLayout:
    """``this_id``: this process's sub-context (None: the job is not split); ``sizes``: every
    sub-context's rank count, in id order (their sum is the world size)."""

    this_id: int | None
    sizes: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.sizes)

    def first_world_rank(self, subcontext_id: int) -> int:
        """The world rank of local rank 0 of ``subcontext_id``."""
        return sum(self.sizes[:subcontext_id])

    def size(self, subcontext_id: int) -> int:
        """The rank count of ``subcontext_id``; out of range: ValueError (tt-metal's words)."""
        if isinstance(subcontext_id, bool) or not isinstance(subcontext_id, int):
            raise DistributedError(f"subcontext_id must be an int, got {subcontext_id!r}")
        if not 0 <= subcontext_id < self.count:
            raise _OutOfRange(
                f"subcontext_id out of range: expected 0 <= subcontext_id < {self.count}, got {subcontext_id}"
            )
        return self.sizes[subcontext_id]

    def local_to_world_rank(self, subcontext_id: int, local_rank: int) -> int:
        """The world rank of ``local_rank`` of ``subcontext_id``."""
        size = self.size(subcontext_id)
        if isinstance(local_rank, bool) or not isinstance(local_rank, int) or not 0 <= local_rank < size:
            raise _OutOfRange(
                f"local_rank out of range for subcontext {subcontext_id}: expected 0 <= local_rank < {size}, "
                f"got {local_rank}"
            )
        return self.first_world_rank(subcontext_id) + local_rank


class _OutOfRange(DistributedError, IndexError):
    """An id or rank outside the layout (ttnn raises IndexError: its ``std::out_of_range``)."""


def single(world_size: int) -> SubcontextLayout:
    """The layout of a job that is not split: one sub-context of every rank."""
    return SubcontextLayout(None, (world_size,))


def layout_from_env(world_size: int, environ: Mapping[str, str]) -> SubcontextLayout:
    """The layout tt-run's variables give a job of ``world_size`` ranks, with tt-metal's checks."""
    text = environ.get("TT_RUN_SUBCONTEXT_ID", "")
    if not text:
        return single(world_size)
    sizes_text = environ.get("TT_RUN_SUBCONTEXT_SIZES", "")
    if not sizes_text:
        raise DistributedError("TT_RUN_SUBCONTEXT_ID is set but TT_RUN_SUBCONTEXT_SIZES is missing")
    try:
        this_id = int(text)
    except ValueError:
        raise DistributedError(f"Invalid TT_RUN_SUBCONTEXT_ID (expected integer): {text}") from None
    if this_id < 0:
        raise DistributedError(f"TT_RUN_SUBCONTEXT_ID must be non-negative, got {this_id}")
    try:
        sizes = tuple(int(part) for part in sizes_text.split(","))
    except ValueError:
        raise DistributedError(f"TT_RUN_SUBCONTEXT_SIZES: sizes must be integers, got {sizes_text!r}") from None
    for size in sizes:
        if size <= 0:
            raise DistributedError(f"TT_RUN_SUBCONTEXT_SIZES: sizes must be positive, got {size}")
    if this_id >= len(sizes):
        raise DistributedError(f"TT_RUN_SUBCONTEXT_ID {this_id} out of range for {len(sizes)} sub-contexts")
    if sum(sizes) != world_size:
        raise DistributedError(
            f"TT_RUN_SUBCONTEXT_SIZES sum {sum(sizes)} does not match MPI_COMM_WORLD size {world_size}"
        )
    return SubcontextLayout(this_id, sizes)
