"""The matmul blocking a strided collective takes (``models/tt_dit``'s fused linears): the
minimal matmul's block in tiles (``mm_block_ht`` rows, ``mm_block_wt`` columns), its core rows
(``mm_cores_y``) and the like, which only order the collective's reads and writes after the
matmul's blocks; each a positive int when given (the ones the op's program divides by,
required).  Shared by ``strided_reduce_scatter_async`` and ``strided_all_gather_async``.

May import: :mod:`meshnn.errors`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from meshnn.errors import MeshnnTypeError, MeshnnValueError


def checked_blocking(op: str, blocking: Mapping[str, object], required: Collection[str]) -> dict[str, int | None]:
    """``blocking`` (name: value) checked: every value a positive int, or None where its name is
    not in ``required``; returned as a dict to record with the launch."""
    checked: dict[str, int | None] = {}
    for name, value in blocking.items():
        if value is None and name not in required:
            checked[name] = None
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")
        if value <= 0:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be > 0, got {value}")
        checked[name] = value
    return checked
