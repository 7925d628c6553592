"""The decode and paged cache writes of ``ttnn.experimental``: ``paged_update_cache`` (each user's
new key or value row at its position: ``update_idxs`` given or an ``update_idxs_tensor`` read when
the kernel runs; a ``page_table`` maps positions to blocks), ``paged_fused_update_cache`` (keys and
values at once) and ``paged_fill_cache`` (a prefill's rows through a user's page-table row).

The input of an update is the ``[1, users, heads (padded to 32), d]`` tensor
``nlp_create_qkv_heads_decode`` makes, height-sharded one user per core; the first ``heads`` of the
cache's rows of each user are written.  The cache keeps its address (see :mod:`kv_cache`).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' checks,
values and tile_rows, and the transformer ops' cache_args and kv_cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import ShardOrientation, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, int_arg, int_list
from meshnn.ops.registry import OpKind, register
from meshnn.ops.tile_rows import encoded_row_tiles, write_rows, write_tiles
from meshnn.ops.transformer.cache_args import (
    CACHE_DTYPES,
    batch_index_input,
    cache_input,
    cache_rows,
    cache_view,
    index_input,
    integers,
    padded_spec,
    page_table_input,
    page_table_rows,
    position_modulo,
    rows_spec,
)
from meshnn.ops.transformer.kv_cache import TILE_H, _input, _run, _same_devices, patch_rows
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

UPDATE_INPUT_DTYPES = (DataType.FLOAT32, DataType.BFLOAT16)


def _check_update_input(op: str, x: Tensor, cache: Tensor, paged: bool) -> None:
    """tt-metal's checks of an update's input against its cache."""
    xp, cp = tuple(x.padded_shape), tuple(cache.padded_shape)
    if xp[-1] % 32 or xp[-1] != cp[-1]:
        raise MeshnnValueError(
            f"ttnn.{op}: Last dim of input tensor ({xp[-1]}) must match last dim of cache tensor ({cp[-1]}) "
            "and be a multiple of TILE_WIDTH (32)"
        )
    if paged and cp[2] % TILE_H:
        raise MeshnnValueError(f"ttnn.{op}: block_size ({cp[2]}) must be a multiple of TILE_HEIGHT ({TILE_H})")
    if cp[1] > xp[2]:
        raise MeshnnValueError(f"ttnn.{op}: the input's {xp[2]} (padded) heads do not hold the cache's {cp[1]}")
    config = x.spec.memory_config
    if not config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Expect input_tensor to be sharded")
    shard = config.shard_spec
    if config.memory_layout is TensorMemoryLayout.WIDTH_SHARDED or shard is None or shard.shape[1] != xp[-1]:
        raise MeshnnValueError(
            f"ttnn.{op}: Expect input_tensor to be height sharded, its shard width equal to its last dimension {xp[-1]}"
        )
    if shard.orientation is not ShardOrientation.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: Only ROW_MAJOR sharding is supported")
    if shard.num_cores() != xp[1]:
        raise MeshnnValueError(
            f"ttnn.{op}: Input tensor shard grid must have num_cores ({shard.num_cores()}) equal to the number of "
            f"users / batch ({xp[1]}). The kernel dispatches one user per core"
        )


def _positions(op: str, update_idxs: object, update_idxs_tensor: object, batch: int) -> tuple[list[int], Tensor | None]:
    """Exactly one of a list of positions and a positions tensor, with one entry per user."""
    given = update_idxs is not None and len(update_idxs) > 0  # type: ignore[arg-type]
    if given == (update_idxs_tensor is not None):
        raise MeshnnValueError(
            f"ttnn.{op}: Only an update tensor or an update vector can be provided. Not both or neither."
        )
    if update_idxs_tensor is None:
        idxs = int_list(op, "update_idxs", update_idxs)
        if len(idxs) != batch:
            raise MeshnnValueError(f"ttnn.{op}: Number of update_idxs ({len(idxs)}) should match batch size ({batch})")
        return idxs, None
    t = index_input(op, "update_idxs_tensor", update_idxs_tensor)
    count = t.shape[-1] if len(t.shape) else t.padded_shape[0]  # a scalar: tt-metal's padded [1], one user
    if count != batch:
        raise MeshnnValueError(f"ttnn.{op}: Number of update_idxs ({count}) should match batch size ({batch})")
    return [], t


def _update_plan(
    op: str, cache_tensor, input_tensor, update_idxs, update_idxs_tensor, share_cache, page_table, batch_offset
):
    """The checked cache, input, positions and page table of one update (the fused update's input
    may be ROW_MAJOR: :func:`_check_fused_layouts`)."""
    cache = cache_input(op, "cache_tensor", cache_tensor, CACHE_DTYPES)
    x = _input(op, input_tensor, UPDATE_INPUT_DTYPES, row_major_ok=op.endswith("fused_update_cache"))
    if int_arg(op, "batch_offset", batch_offset) != 0:
        raise MeshnnValueError(f"ttnn.{op}: batch_offset must be 0")
    paged = page_table is not None
    _check_update_input(op, x, cache, paged)
    batch = x.padded_shape[1]
    if paged:
        if share_cache:
            raise MeshnnValueError(f"ttnn.{op}: share_cache not supported with paged cache")
        if update_idxs_tensor is None:
            raise MeshnnValueError(f"ttnn.{op}: Paged cache requires update_idxs tensor")
        table = page_table_input(op, page_table, batch, cache.padded_shape[0])
    else:
        table = None
        want = 1 if share_cache else batch
        if cache.padded_shape[0] != want:
            raise MeshnnValueError(
                f"ttnn.{op}: Expect batch in input tensor ({batch}) match the batch in cache tensor "
                f"({cache.padded_shape[0]})" + (" (a shared cache has batch 1)" if share_cache else "")
            )
    idxs, idx_tensor = _positions(op, update_idxs, update_idxs_tensor, batch)
    for i in idxs:
        if i >= (cache.padded_shape[2] if table is None else cache.padded_shape[2] * table.shape[1]):
            raise MeshnnValueError(f"ttnn.{op}: update index {i} is past the cache's rows")
    return cache, x, idxs, idx_tensor, table, bool(share_cache)


def _update_kernel(cache: Tensor, x: Tensor, idxs: list[int], inputs: list[Tensor], share: bool, modulo=None):
    """``kernel(in_rows, out_rows, coords)`` writing one update (the inputs: x, then the
    positions tensor and the page table when given, in that order); ``modulo``: positions wrap
    at it (``cache_position_modulo``)."""
    cp = tuple(cache.padded_shape)
    heads, width = cp[1], cp[3]
    specs = [rows_spec(x.spec, heads)] + [t.spec for t in inputs[1:]]
    has_idx = len(inputs) > 1 and not idxs
    paged = len(inputs) - 1 - int(has_idx) == 1
    fixed = np.array(idxs, np.int64)[None] if idxs else None

    def positions_and_rows(in_rows):
        values = logical_values(in_rows[0], specs[0])[:, 0, :, :heads]  # (k, B, heads, d)
        k, batch = values.shape[:2]
        pos = integers(in_rows[1], specs[1]).reshape(k, -1)[:, :batch] if has_idx else np.repeat(fixed, k, 0)
        table = page_table_rows(in_rows[-1], specs[-1], batch) if paged else None
        users = np.zeros(batch, np.int64) if share else None
        if modulo is not None:
            pos = np.where(pos < 0, pos, pos % modulo)
        rows = cache_rows(pos, heads, cp[2], table=table, users=users, blocks=cp[0])
        return values.reshape(k, batch * heads, width), rows.reshape(k, batch * heads)

    cache_dtype = cache.dtype  # (the kernel holds no tensor: a trace must not keep it allocated)
    cache_spec = cache.spec

    def kernel(in_rows, out_rows, coords) -> None:
        values, rows = positions_and_rows(in_rows)
        stored = write_rows(out_rows[0], cache_dtype, cache_spec.tile, width, rows, values)
        patch_rows(out_rows[0], cache_spec, rows, stored)

    return kernel


@register("experimental.paged_update_cache", kind=OpKind.KV_CACHE, family=OpFamily.KV_UPDATE)
def paged_update_cache(
    cache_tensor: Tensor,
    input_tensor: Tensor,
    *,
    update_idxs: Sequence[int] | None = None,
    update_idxs_tensor: Tensor | None = None,
    share_cache: bool | None = None,
    page_table: Tensor | None = None,
    batch_offset: int = 0,
    compute_kernel_config: object = None,
    mesh_coords: object = None,
    block_size: int | None = None,
    num_kv_heads: int | None = None,
    cache_position_modulo: int | None = None,
    queue_id: int = 0,
) -> Tensor:
    """Write user ``b``'s row ``input_tensor[0, b, :heads]`` at its position (``update_idxs[b]`` or
    ``update_idxs_tensor[b]``; negative: skipped) of ``cache_tensor``: ``[users, heads, max_seq,
    d]``, or ``[blocks, heads, block_size, d]`` through ``page_table`` ``[users, max_blocks]``;
    with ``cache_position_modulo`` (paged) position ``p`` is written at ``p % cache_position_modulo``.
    ``block_size`` / ``num_kv_heads`` (tt-metal of 2026's views of the cache's bytes with another
    geometry) are taken when they name the cache's own."""
    op = "experimental.paged_update_cache"
    plan = _update_plan(
        op, cache_tensor, input_tensor, update_idxs, update_idxs_tensor, share_cache, page_table, batch_offset
    )
    cache, x, idxs, idx_tensor, table, share = plan
    view = cache_view(op, cache, block_size, num_kv_heads, table is not None, x.padded_shape[-1])
    modulo = position_modulo(op, cache_position_modulo, view[0], table is not None)
    inputs = [x] + [t for t in (idx_tensor, table) if t is not None]
    where = _same_devices(
        op, cache, dict(zip(("input_tensor", "update_idxs_tensor", "page_table"), inputs, strict=False))
    )
    kernel = _update_kernel(cache, x, idxs, inputs, share, modulo)
    attrs = {"update_idxs": idxs, "share_cache": share, "compute_kernel_config": compute_kernel_config}
    attrs |= {"block_size": view[0], "num_kv_heads": view[1], "cache_position_modulo": modulo}
    return _run(op, cache, inputs, where, kernel, queue_id, attrs, keeps_memos=True)


@register(
    "experimental.paged_fused_update_cache",
    kind=OpKind.KV_CACHE,
    family=OpFamily.KV_UPDATE,
    device_operation="PagedFusedUpdateCacheDeviceOperation",
)
def paged_fused_update_cache(
    cache_tensor1: Tensor,
    input_tensor1: Tensor,
    cache_tensor2: Tensor,
    input_tensor2: Tensor,
    *,
    update_idxs: Sequence[int] | None = None,
    update_idxs_tensor: Tensor | None = None,
    share_cache: bool | None = None,
    page_table: Tensor | None = None,
    batch_offset: int = 0,
    compute_kernel_config: object = None,
    mesh_coords: object = None,
    queue_id: int = 0,
) -> tuple[Tensor, Tensor]:
    """``paged_update_cache`` of keys (``input_tensor1`` into ``cache_tensor1``) and values
    (``input_tensor2`` into ``cache_tensor2``) at the same positions, both checked before either
    is written."""
    op = "experimental.paged_fused_update_cache"
    args = (update_idxs, update_idxs_tensor, share_cache, page_table, batch_offset)
    first = _update_plan(op, cache_tensor1, input_tensor1, *args)
    second = _update_plan(op, cache_tensor2, input_tensor2, *args)
    _check_fused_layouts(op, first[1], second[1])
    if first[0].storage.mesh_buffer.shares_bytes(second[0].storage.mesh_buffer):  # type: ignore[union-attr]
        raise MeshnnValueError(f"ttnn.{op}: cache_tensor1 and cache_tensor2 must be two caches")
    if tuple(first[0].padded_shape) != tuple(second[0].padded_shape):
        raise MeshnnValueError(
            f"ttnn.{op}: the two caches must have one shape, got {list(first[0].shape)} and {list(second[0].shape)}"
        )
    results = []
    for cache, x, idxs, idx_tensor, table, share in (first, second):
        inputs = [x] + [t for t in (idx_tensor, table) if t is not None]
        where = _same_devices(op, cache, {"input_tensor": x})
        attrs = {"update_idxs": idxs, "share_cache": share, "compute_kernel_config": compute_kernel_config}
        kernel = _update_kernel(cache, x, idxs, inputs, share)
        results.append(_run(op, cache, inputs, where, kernel, queue_id, attrs, keeps_memos=True))
    return results[0], results[1]


def _check_fused_layouts(op: str, x1: Tensor, x2: Tensor) -> None:
    """tt-metal's fused update: both inputs TILE or both ROW_MAJOR, the row-major form only for
    Llama-70B's shapes (a last dim of 128, 8 padded heads in the second)."""
    layouts = {x1.layout, x2.layout}
    if len(layouts) != 1:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor1 and input_tensor2 must be either both tiled or both row-major"
        )
    if Layout.ROW_MAJOR in layouts and (x1.padded_shape[-1] != 128 or x2.padded_shape[-2] != 8):
        raise MeshnnValueError(
            f"ttnn.{op}: when input_tensor1 and input_tensor2 are row major, only Llama70b tensor shapes are supported "
            f"(got {list(x1.padded_shape)} and {list(x2.padded_shape)})"
        )


def _fill_checks(op: str, cache: Tensor, x: Tensor, table: Tensor, block_size: object, modulo: object) -> int | None:
    """tt-metal's checks of a paged fill's input and page table against its cache; the modulo."""
    cp, xp = tuple(cache.padded_shape), tuple(x.padded_shape)
    if table.dtype is not DataType.INT32 or len(table.shape) != 2:
        raise MeshnnTypeError(f"ttnn.{op}: page_table must be an INT32 [users, max_blocks] tensor, got {table.dtype}")
    if xp[1] != cp[1] or xp[3] != cp[3] or cp[2] % TILE_H:
        raise MeshnnValueError(f"ttnn.{op}: input {list(xp)} must match the cache {list(cp)} in heads and head_dim")
    cache_view(op, cache, block_size, None, True, x.padded_shape[-1])
    modulo = position_modulo(op, modulo, cp[2], True)
    if modulo is not None and modulo > cp[2] * table.shape[1]:
        raise MeshnnValueError(
            f"ttnn.{op}: cache_position_modulo ({modulo}) must fit in max_num_blocks_per_seq ({table.shape[1]}) "
            f"* block_size ({cp[2]})"
        )
    if modulo is None and xp[2] > cp[2] * table.shape[1]:
        raise MeshnnValueError(f"ttnn.{op}: Input seq_len must fit in max_num_blocks_per_seq")
    return modulo


@register("experimental.paged_fill_cache", kind=OpKind.KV_CACHE, family=OpFamily.KV_FILL)
def paged_fill_cache(
    cache_tensor: Tensor,
    input_tensor: Tensor,
    page_table: Tensor,
    *,
    batch_idx: int = 0,
    batch_idx_tensor: Tensor | None = None,
    compute_kernel_config: object = None,
    mesh_coords: object = None,
    block_size: int | None = None,
    cache_position_modulo: int | None = None,
    queue_id: int = 0,
) -> Tensor:
    """Write ``input_tensor`` ``[1, heads, s, d]`` (its padded rows) into the blocks user
    ``batch_idx`` (or ``batch_idx_tensor[0]``, read when the kernel runs) has in ``page_table``:
    position ``p`` goes to row ``p % block_size`` of block ``page_table[batch_idx, p // block_size]``
    of ``cache_tensor`` ``[blocks, heads, block_size, d]``, rounded into the cache's dtype.  With
    ``cache_position_modulo`` ``M`` position ``p`` goes where ``p % M`` would: of a prefill longer
    than ``M`` the last ``M`` positions stay.  ``block_size``: see :func:`paged_update_cache`."""
    op = "experimental.paged_fill_cache"
    cache = cache_input(op, "cache_tensor", cache_tensor, CACHE_DTYPES)
    x = _input(op, input_tensor, CACHE_DTYPES)
    cp, xp = tuple(cache.padded_shape), tuple(x.padded_shape)
    table = device_input(op, "page_table", page_table)
    modulo = _fill_checks(op, cache, x, table, block_size, cache_position_modulo)
    inputs = [x, table]
    if batch_idx_tensor is not None:
        inputs.append(batch_index_input(op, batch_idx_tensor))
    elif not 0 <= int_arg(op, "batch_idx", batch_idx) < table.shape[0]:
        raise MeshnnValueError(f"ttnn.{op}: batch_idx {batch_idx} is not a row of the {table.shape[0]}-row page table")
    where = _same_devices(op, cache, {"input_tensor": x, "page_table": table})
    tile, specs = cache.spec.tile, [padded_spec(x.spec), table.spec] + [t.spec for t in inputs[2:]]
    per_row, blocks_tiles = cp[3] // tile.tile_shape[1], cp[2] // tile.tile_shape[0]
    count = xp[2] // tile.tile_shape[0]  # the input's tile rows; with a modulo only the last wrap's stay
    first = 0 if modulo is None else max(0, count - modulo // tile.tile_shape[0])

    table_shape, x_dtype, cache_dtype = table.shape, x.dtype, cache.dtype  # (the kernel holds no tensor)

    def kernel(in_rows, out_rows, coords) -> None:
        k = in_rows[0].shape[0]
        pages = integers(in_rows[1], specs[1]).reshape(k, -1, table_shape[1])
        user = integers(in_rows[2], specs[2]).reshape(k, -1)[:, 0] if len(specs) > 2 else np.full(k, batch_idx)
        t = np.arange(first, count) % (count if modulo is None else modulo // tile.tile_shape[0])
        block = pages[np.arange(k)[:, None], user[:, None], (t * tile.tile_shape[0]) // cp[2]]  # (k, T)
        row = (block[:, None, :] * cp[1] + np.arange(cp[1])[None, :, None]) * blocks_tiles + t % blocks_tiles
        dest = (row[..., None] * per_row + np.arange(per_row)).reshape(k, -1)  # (k, heads * T * C)
        if x_dtype is cache_dtype:
            size = tile.get_tile_size(cache_dtype)
            tiles = in_rows[0][:, : cp[1] * count * per_row * size].reshape(k, cp[1], count, per_row * size)
            tiles = tiles[:, :, first:].reshape(k, -1, size)
        else:
            values = logical_values(in_rows[0], specs[0]).reshape(k, cp[1], -1, cp[3])
            tiles = encoded_row_tiles(
                values[:, :, first * tile.tile_shape[0] :].reshape(k, -1, cp[3]), cache_dtype, tile
            )
        write_tiles(out_rows[0], cache_dtype, tile, dest, tiles)

    attrs = {"batch_idx": batch_idx, "page_table": "tensor", "block_size": cp[2], "cache_position_modulo": modulo}
    return _run(op, cache, inputs, where, kernel, queue_id, attrs)
