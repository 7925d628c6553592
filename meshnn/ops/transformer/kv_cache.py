"""KV caches written in place: ``ttnn.fill_cache`` (a prefill's keys or values into one user's
rows), ``ttnn.update_cache`` (one decode position of every user), and their paged forms
``ttnn.experimental.paged_update_cache`` / ``paged_fused_update_cache`` / ``paged_fill_cache``.

The cache keeps its MeshBuffer and address: each op writes into the cache's own slab (only the
bytes of the rows it writes change, :mod:`meshnn.ops.tile_rows`), allocates nothing, and returns
the cache.  Positions and page tables given as device tensors are read by the kernel when it runs,
so a replayed trace writes where the tensors say now.  A negative position skips its user.  The
checks are tt-metal's, with its messages.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' launch, checks, outputs, values and tile_rows, and the transformer ops' cache_args.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import check_queue_id, device_input, int_arg
from meshnn.ops.launch import launch
from meshnn.ops.memo import drop_known, patch_known
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.tile_rows import write_rows, write_tiles
from meshnn.ops.transformer.cache_args import cache_input, padded_spec
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

TILE_H = 32

CACHE_DTYPES_FILL = (DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B)
"""What ``fill_cache`` / ``update_cache`` take for the cache and the input."""


def _same_devices(op: str, cache: Tensor, others: dict[str, Tensor]) -> tuple[MeshCoordinate, ...]:
    """The devices the op runs on: the first other tensor's, every one of them the cache's too."""
    mesh_id = cache.storage.mesh_buffer.mesh_id  # type: ignore[union-attr]
    cache_coords = set(cache.storage.coords)  # type: ignore[union-attr]
    where = next(iter(others.values())).storage.coords  # type: ignore[union-attr]
    for name, t in others.items():
        if t.storage.mesh_buffer.mesh_id != mesh_id:  # type: ignore[union-attr]
            raise MeshnnValueError(f"ttnn.{op}: {name} and the cache need to be on the same device")
        if not set(t.storage.coords) <= cache_coords:  # type: ignore[union-attr]
            raise MeshnnValueError(f"ttnn.{op}: {name} populates devices the cache does not")
    return tuple(where)


def _input(op: str, tensor: object, dtypes: tuple[DataType, ...], *, row_major_ok: bool = False) -> Tensor:
    """An update's input: TILE (``row_major_ok``: ROW_MAJOR too, as the fused update takes it)."""
    t = device_input(op, "input_tensor", tensor)
    if t.layout is not Layout.TILE and not (row_major_ok and t.layout is Layout.ROW_MAJOR):
        raise MeshnnValueError(f"ttnn.{op}: Input tensor in update_cache must be tilized (input_tensor is {t.layout})")
    if t.dtype not in dtypes:
        names = ", ".join(d.name for d in dtypes)
        raise MeshnnTypeError(f"ttnn.{op}: Input tensor dtype must be {names} but got {t.dtype.name} (input_tensor)")
    if len(t.shape) != 4 or t.padded_shape[0] != 1:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor must be [1, ...] of rank 4 (its batch, dim 0, is 1), got {list(t.shape)}"
        )
    return t


def _run(
    op: str, cache: Tensor, inputs: list[Tensor], where, kernel, queue_id: int, attrs: dict, *, keeps_memos=False
) -> Tensor:
    """The cache written in place by ``kernel`` over the devices ``where`` (its memo patched by the
    kernel when ``keeps_memos``, else dropped).  A kernel that keeps the memos reads its inputs
    through ``logical_values`` alone (launch's ``reads_memos``: a producer's deferred write is
    left undone)."""
    mesh = cache.storage.mesh_buffer.device()  # type: ignore[union-attr]
    queue_id = check_queue_id(op, mesh, queue_id)
    out = Output(cache.spec)
    launch(
        op,
        mesh,
        inputs,
        [out],
        kernel,
        coords=where,
        queue_id=queue_id,
        into=[cache],
        keeps_memos=keeps_memos,
        reads_memos=keeps_memos,
        attrs=attrs,
    )
    return cache


def patch_rows(out: np.ndarray, spec, rows: np.ndarray, stored: np.ndarray) -> None:
    """The cache's memo (if any) told the values ``stored`` ``(k, R, d)`` now held by the rows
    ``rows`` ``(k, R)`` of its 2-D view (-1: not written)."""
    padded = tuple(spec.padded_shape)
    if tuple(spec.shape) != padded:
        drop_known(out)  # (a cache with tile padding)
        return
    written = rows >= 0
    device = np.nonzero(written)[0]
    flat = rows[written]
    heads, seq = padded[1], padded[2]
    user, rest = np.divmod(flat, heads * seq)
    head, position = np.divmod(rest, seq)
    patch_known(out, spec, (device, user, head, position), stored[written])


@register(kind=OpKind.KV_CACHE, family=OpFamily.KV_FILL, device_operation="UpdateKVCacheOperation")
def fill_cache(
    cache_tensor: Tensor, input_tensor: Tensor, batch_idx: int, *, update_idx: int = 0, queue_id: int = 0
) -> Tensor:
    """Copy ``input_tensor`` ``[1, heads, s, d]`` (its padded tiles) into rows ``update_idx ..
    update_idx + s`` of user ``batch_idx`` of ``cache_tensor`` ``[users, heads, max_seq, d]``."""
    op = "fill_cache"
    cache = cache_input(op, "cache_tensor", cache_tensor, CACHE_DTYPES_FILL)
    x = _input(op, input_tensor, CACHE_DTYPES_FILL)
    batch_idx, update_idx = int_arg(op, "batch_idx", batch_idx), int_arg(op, "update_idx", update_idx)
    if x.dtype is not cache.dtype:
        raise MeshnnTypeError(
            f"ttnn.{op}: Input and cache tensors must have same dtype! (input_tensor {x.dtype.name}, "
            f"cache {cache.dtype.name})"
        )
    cp, xp = tuple(cache.padded_shape), tuple(x.padded_shape)
    if xp[-1] != cp[-1] or xp[1] != cp[1]:
        raise MeshnnValueError(
            f"ttnn.{op}: Input tensor {list(xp)} must match the cache {list(cp)} in heads (dim 1) and width (dim 3)"
        )
    if not 0 <= batch_idx < cp[0]:
        raise MeshnnValueError(
            f"ttnn.{op}: Batch index (batch_idx={batch_idx}) must be less than cache tensor batch size ({cp[0]})"
        )
    if update_idx < 0 or update_idx % TILE_H or update_idx + xp[2] > cp[2]:
        raise MeshnnValueError(
            f"ttnn.{op}: update_idx {update_idx} (a multiple of {TILE_H}) plus the input's {xp[2]} rows must fit the "
            f"cache's {cp[2]}"
        )
    _check_work_blocks(op, x)
    where = _same_devices(op, cache, {"input_tensor": x})
    tile = cache.spec.tile
    per_row, seq_tiles = cp[3] // tile.tile_shape[1], cp[2] // tile.tile_shape[0]
    heads, rows_in = xp[1], xp[2] // tile.tile_shape[0]
    h, t, c = np.meshgrid(np.arange(heads), np.arange(rows_in), np.arange(per_row), indexing="ij")
    dest = (((batch_idx * heads + h) * seq_tiles + update_idx // tile.tile_shape[0] + t) * per_row + c).reshape(-1)
    size = tile.get_tile_size(cache.dtype)

    cache_dtype = cache.dtype  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords) -> None:
        k = in_rows[0].shape[0]
        tiles = in_rows[0][:, : dest.size * size].reshape(k, dest.size, size)
        write_tiles(out_rows[0], cache_dtype, tile, np.broadcast_to(dest, (k, dest.size)), tiles)

    attrs = {"batch_idx": batch_idx, "update_idx": update_idx}
    return _run(op, cache, [x], where, kernel, queue_id, attrs)


def _check_work_blocks(op: str, x: Tensor) -> None:
    """tt-metal's fill of an interleaved multi-head input gives each core one tile row of work."""
    if x.spec.memory_config.memory_layout is TensorMemoryLayout.INTERLEAVED and x.padded_shape[1] > 1:
        mesh = x.storage.mesh_buffer.device()  # type: ignore[union-attr]
        grid = mesh.compute_with_storage_grid_size()
        blocks = x.padded_shape[1] * x.padded_shape[2] // TILE_H
        if blocks > grid.x * grid.y:
            raise MeshnnValueError(
                f"ttnn.{op}: Number of work blocks ({blocks}) must be <= total grid size ({grid.x * grid.y})"
            )


@register(kind=OpKind.KV_CACHE, family=OpFamily.KV_UPDATE, device_operation="UpdateKVCacheOperation")
def update_cache(
    cache_tensor: Tensor,
    input_tensor: Tensor,
    update_idx: int,
    batch_offset: int = 0,
    *,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> Tensor:
    """Write row ``batch_offset + b`` of ``input_tensor`` ``[1, heads, batch (padded to 32), d]``
    into position ``update_idx`` of user ``b`` of ``cache_tensor`` ``[users, heads, max_seq, d]``,
    for every user of the cache, rounded into the cache's dtype."""
    op = "update_cache"
    cache = cache_input(op, "cache_tensor", cache_tensor, CACHE_DTYPES_FILL)
    x = _input(op, input_tensor, CACHE_DTYPES_FILL)
    update_idx, batch_offset = int_arg(op, "update_idx", update_idx), int_arg(op, "batch_offset", batch_offset)
    cp, xp = tuple(cache.padded_shape), tuple(x.padded_shape)
    if xp[-1] != cp[-1] or xp[1] != cp[1]:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor {list(xp)} must match the cache {list(cp)} in heads and width")
    if x.spec.memory_config.memory_layout is TensorMemoryLayout.WIDTH_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor memory layout must not be WIDTH_SHARDED")
    users = cp[0]
    if users > xp[2]:
        raise MeshnnValueError(f"ttnn.{op}: Cache tensor batch size ({users}) must be <= input tensor height ({xp[2]})")
    if (users < 32 and batch_offset + users > 32) or (users >= 32 and batch_offset != 0) or batch_offset < 0:
        raise MeshnnValueError(
            f"ttnn.{op}: Batch offset ({batch_offset}) + cache tensor batch size ({users}) must be <= 32 (0 when "
            "the cache has 32 users or more)"
        )
    if not 0 <= update_idx < cp[2]:
        raise MeshnnValueError(f"ttnn.{op}: update_idx {update_idx} is past the cache's {cp[2]} rows")
    where = _same_devices(op, cache, {"input_tensor": x})
    heads = cp[1]
    rows = ((np.arange(users)[:, None] * heads + np.arange(heads)) * cp[2] + update_idx).reshape(-1)
    spec = padded_spec(x.spec)

    cache_dtype, cache_tile = (
        cache.dtype,
        cache.spec.tile,
    )  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords) -> None:
        values = logical_values(in_rows[0], spec)[:, 0, :, batch_offset : batch_offset + users]  # (k, H, B, d)
        k = values.shape[0]
        flat = np.ascontiguousarray(np.swapaxes(values, 1, 2)).reshape(k, users * heads, cp[3])
        write_rows(out_rows[0], cache_dtype, cache_tile, cp[3], np.broadcast_to(rows, (k, rows.size)), flat)

    attrs = {"update_idx": update_idx, "batch_offset": batch_offset, "compute_kernel_config": compute_kernel_config}
    return _run(op, cache, [x], where, kernel, queue_id, attrs)


@register(
    "kv_cache.fill_cache_for_user_",
    kind=OpKind.KV_CACHE,
    family=OpFamily.KV_FILL,
    device_operation="UpdateKVCacheOperation",
)
def fill_cache_for_user_(cache: Tensor, input: Tensor, batch_index: int, update_idx: int = 0) -> Tensor:
    """``ttnn.kv_cache.fill_cache_for_user_``: :func:`fill_cache` under ttnn's older names (the same
    device operation); returns ``cache``, written in place."""
    _named("kv_cache.fill_cache_for_user_", cache, input, batch_index=batch_index, update_idx=update_idx)
    return fill_cache(cache, input, batch_index, update_idx=update_idx)


def _named(op: str, cache: object, input: object, **indices: object) -> None:
    """The older names' own argument checks (so an error names ``cache``, not ``cache_tensor``)."""
    device_input(op, "cache", cache)
    device_input(op, "input", input)
    for name, value in indices.items():
        int_arg(op, name, value)


@register(
    "kv_cache.update_cache_for_token_",
    kind=OpKind.KV_CACHE,
    family=OpFamily.KV_UPDATE,
    device_operation="UpdateKVCacheOperation",
)
def update_cache_for_token_(
    cache: Tensor, input: Tensor, update_index: int, batch_offset: int = 0, compute_kernel_config: object = None
) -> Tensor:
    """``ttnn.kv_cache.update_cache_for_token_``: :func:`update_cache` under ttnn's older names (the
    same device operation); returns ``cache``, written in place."""
    _named("kv_cache.update_cache_for_token_", cache, input, update_index=update_index, batch_offset=batch_offset)
    return update_cache(cache, input, update_index, batch_offset, compute_kernel_config=compute_kernel_config)
