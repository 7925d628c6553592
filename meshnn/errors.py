"""The one error hierarchy of meshnn.

Every error meshnn raises on purpose is a :class:`MeshnnError`.  Because ttnn reports every
failed check (``TT_FATAL``) as a ``RuntimeError``, ``MeshnnError`` is itself a ``RuntimeError``,
so TTNN code written as ``except RuntimeError`` keeps working; each subclass is also the builtin
that matches its meaning (``ValueError``, ``TypeError``, ``MemoryError``, ``AttributeError``).
Errors keep their numbers as attributes, so callers and tests read fields rather than parse text.

This module is the bottom layer: it imports nothing from meshnn.
"""

from __future__ import annotations


def format_bytes(size: int) -> str:
    """Human-readable size in binary units, exact bytes below 1 KiB (``1.50 MiB``, ``960 B``)."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{size} B" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


class MeshnnError(RuntimeError):
    """Base class: ``except MeshnnError`` catches every failure meshnn raises on purpose."""


class MeshnnValueError(MeshnnError, ValueError):
    """An argument has the right type but a value meshnn cannot accept."""


class MeshnnTypeError(MeshnnError, TypeError):
    """An argument has the wrong type."""


class OutOfMemoryError(MeshnnError, MemoryError):
    """No free block of a buffer type is large enough; the allocator is left as it was.

    All sizes are in bytes and per bank, except ``size`` (the whole buffer).
    """

    def __init__(
        self,
        *,
        buffer_type: str,
        size: int,
        num_banks: int,
        size_per_bank: int,
        bank_size: int,
        allocated: int,
        free: int,
        largest_free: int,
        where: str = "",
    ) -> None:
        self.buffer_type = buffer_type
        self.size = size
        self.num_banks = num_banks
        self.size_per_bank = size_per_bank
        self.bank_size = bank_size
        self.allocated = allocated
        self.free = free
        self.largest_free = largest_free
        self.where = where
        fragmented = " (memory is fragmented)" if free >= size_per_bank else ""
        super().__init__(
            f"Out of Memory: Not enough space to allocate {size} B {buffer_type} buffer across "
            f"{num_banks} banks, where each bank needs to store {size_per_bank} B, but bank size is "
            f"{bank_size} B (allocated: {allocated} B, free: {free} B, largest free block: "
            f"{largest_free} B).{fragmented}{where}"
        )


class HostMemoryError(MeshnnError, MemoryError):
    """A conversion would need more host memory than the machine has available; nothing was
    allocated on a device.  ``needed`` and ``available`` are bytes."""

    def __init__(self, *, op: str, needed: int, available: int, what: str) -> None:
        self.op, self.needed, self.available = op, needed, available
        super().__init__(
            f"{op}: needs about {format_bytes(needed)} of host memory ({what}), but this machine has "
            f"{format_bytes(available)} available; use a smaller tensor, or a machine with more memory"
        )


class InvalidFreeError(MeshnnValueError):
    """A free of an address that is not allocated (a double free, or not ours)."""


class DeallocatedError(MeshnnError):
    """A buffer or tensor was used after it was deallocated."""


class DeviceClosedError(MeshnnError):
    """A device or mesh was used after it was closed."""


class WrongMeshError(MeshnnValueError):
    """Objects that must live on one mesh live on different meshes."""


class NotImplementedByMeshnn(MeshnnError, AttributeError):
    """A ttnn name that meshnn does not implement yet."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"ttnn.{name} is not implemented by meshnn yet (meshnn answers `import ttnn`; "
            f"see the API coverage table in its README)"
        )


class PlanningError(MeshnnError):
    """Values were asked of a planning mesh (``open_mesh_device(..., execute=False)``), which
    validates every op and allocates its outputs at their real addresses but computes and stores
    nothing."""


class QueueError(MeshnnError):
    """Work enqueued on a mesh command queue failed on the dispatch thread."""


class ComparisonError(MeshnnError):
    """Under ttnn's comparison mode, an op's output agreed with its golden function less than
    ``ttnn.CONFIG.comparison_mode_pcc`` (raised when ``comparison_mode_should_raise_exception``)."""


class TraceError(MeshnnError):
    """A trace misused: a host read, write or event wait during its capture, a trace id that is not
    captured (or was released), a trace larger than the trace region, a replay of freed inputs."""


class TensorFileError(MeshnnValueError):
    """A tensor file is malformed; nothing was allocated because of it."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class TensorFileWriteError(TensorFileError, OSError):
    """Writing a tensor file (or a weight cache) failed in the operating system (no space, no
    permission, a read-only file system): names the file asked for, never a temporary one; also an
    ``OSError`` whose ``errno`` is the system's."""

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(path, f"cannot be written: {error.strerror or error}")
        self.errno, self.strerror, self.filename = error.errno, error.strerror, path

    def __str__(self) -> str:  # TensorFileError's message, not OSError's "[Errno N] ..."
        return f"{self.path}: {self.problem}"


class DistributedError(MeshnnError):
    """A multi-process run failed; ``rank`` names the rank at fault when known."""

    def __init__(self, message: str, *, rank: int | None = None) -> None:
        self.rank = rank
        super().__init__(message)
