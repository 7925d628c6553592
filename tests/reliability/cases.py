"""The bad-input table's vocabulary: :class:`Case` (one bad call and the error it must raise),
the meshnn errors each row may expect (and the builtin each also is) and the dtypes, layouts and
memory configs rows use.  Rows live in ``test_bad_input.py`` and in the family modules of
``rows/``.

A row's ``call(e)`` gets the table's environment ``e`` (see ``env`` in ``test_bad_input.py``):
``e.mesh`` (a 2x4 mesh), ``e.a`` / ``e.a2`` (float32 TILE [1, 3, 40] per device, sharded over 8
devices), ``e.a_bf16``, ``e.b`` ([1, 5, 7]: broadcasts with nothing), ``e.w`` ([40, 24]
replicated), ``e.rm`` (ROW_MAJOR like e.a), ``e.bfp8``, ``e.heads`` ([1, 2, 32, 32] bfloat16),
``e.table`` / ``e.ids`` (embedding), ``e.host`` (a host tensor), ``e.freed`` (deallocated),
``e.other`` (on another mesh), ``e.closed`` (its mesh closed), ``e.tmp`` (a folder).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import meshnn as ttnn

F32, BF16, BFP8, BFP4, U32, I32 = (
    ttnn.float32,
    ttnn.bfloat16,
    ttnn.bfloat8_b,
    ttnn.bfloat4_b,
    ttnn.uint32,
    ttnn.int32,
)
RM, TILE = ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT
DRAM_MC, L1_MC = ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG

BUILTIN = {  # the builtin each meshnn error also is
    ttnn.MeshnnValueError: ValueError,
    ttnn.WrongMeshError: ValueError,
    ttnn.InvalidFreeError: ValueError,
    ttnn.TensorFileError: ValueError,
    ttnn.HostMemoryError: MemoryError,
    ttnn.MeshnnTypeError: TypeError,
    ttnn.OutOfMemoryError: MemoryError,
    ttnn.DeallocatedError: RuntimeError,
    ttnn.DeviceClosedError: RuntimeError,
    ttnn.TraceError: RuntimeError,
    ttnn.MeshnnError: RuntimeError,
}

VALUE, TYPE, OOM = ttnn.MeshnnValueError, ttnn.MeshnnTypeError, ttnn.OutOfMemoryError
DEAD, CLOSED, WRONG_MESH = ttnn.DeallocatedError, ttnn.DeviceClosedError, ttnn.WrongMeshError


@dataclass(frozen=True)
class Case:
    """One bad call: ``call(env)`` must raise ``error`` with ``names`` (a regex) in its message."""

    target: str  # the public name under test: "add", "MeshShape", "Tensor.reshape", "MeshDevice.reshape"
    what: str  # what is wrong, in a few words
    call: Callable[[SimpleNamespace], object]
    error: type[ttnn.MeshnnError]
    names: str  # the argument's name (a regex), as the message must give it

    @property
    def id(self) -> str:
        return f"{self.target}: {self.what}"
