"""Where a chunked prefill's new chunk lands on each device of a sequence-parallel (SP) axis, as
DeepSeek-V3's prefill ops derive it on device (``ttnn.experimental.deepseek_prefill``'s
``rotary_embedding_indexed``, ``update_padded_kv_cache`` and ``zero_padded_kv_cache``).

The KV cache is laid out block-cyclically: global token ``p`` lives on SP device
``(p mod chunk_global) // chunk_local`` at local row ``(p // chunk_global) * chunk_local + p mod
chunk_local``, with ``chunk_global = sp * chunk_local``.  Given ``kv_actual_global`` tokens already
valid (tile-aligned), the boundary device (the one holding the first pad cell) writes its new chunk
mid-slab, devices before it in the next slab, devices after it at the current slab's base.  All
counts are in tiles of 32 rows unless named tokens.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh` and the ops' checks.
"""

from __future__ import annotations

from meshnn.errors import MeshnnValueError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.checks import int_arg

TILE = 32


def uint_arg(op: str, name: str, value: object) -> int:
    """``value`` checked to be a non-negative int (ttnn's ``uint32_t`` arguments)."""
    number = int_arg(op, name, value)
    if number < 0:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be non-negative (a uint32), got {number}")
    return number


def check_axis(op: str, cluster_axis: int) -> None:
    if cluster_axis not in (0, 1):
        raise MeshnnValueError(f"ttnn.{op}: cluster_axis ({cluster_axis}) must be 0 or 1")


def check_tile_aligned(op: str, name: str, tokens: int) -> None:
    if tokens % TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} ({tokens}) must be tile-aligned (a multiple of {TILE})")


def sp_factor(op: str, mesh: MeshDevice, cluster_axis: int) -> int:
    """The mesh's extent along ``cluster_axis`` (its rows for 0, columns for 1); the mesh must be 2-D."""
    shape = tuple(mesh.shape)
    if len(shape) != 2:
        raise MeshnnValueError(f"ttnn.{op}: {op.rsplit('.', 1)[-1]} requires a 2D mesh, got shape {list(shape)}")
    return int(shape[cluster_axis])


def sp_index(coord: MeshCoordinate, cluster_axis: int) -> int:
    """A device's index along the SP axis."""
    return int(tuple(coord)[cluster_axis])


def update_tile(kv_actual_t: int, sp: int, chunk_t: int, mine: int) -> int:
    """The local tile row at which SP device ``mine`` writes (or reads the rope of) its new chunk of
    ``chunk_t`` tiles, ``kv_actual_t`` tiles being valid already."""
    if chunk_t == 0:
        return 0
    slab = kv_actual_t // (sp * chunk_t)
    boundary = (kv_actual_t // chunk_t) % sp
    offset = kv_actual_t % chunk_t
    return slab * chunk_t + (chunk_t if mine < boundary else offset if mine == boundary else 0)


def farthest_update_tile(kv_actual_t: int, sp: int, chunk_t: int) -> int:
    """The largest :func:`update_tile` over the SP devices."""
    return max(update_tile(kv_actual_t, sp, chunk_t, mine) for mine in range(sp))
