"""The rows of a KV cache that a decode attention reads: only the pages its users' positions
reach (paged caches), or only the leading rows up to the furthest position (contiguous ones).

Where they come from, fastest first:

- the cache's memo: float32 values (:class:`~meshnn.ops.memo.Known`) or bfloat16 ones
  (:class:`~meshnn.ops.decoded.Decoded`), which the in-place cache updates keep true (they patch
  the memo where they write the bytes), so a decode step reads the keys written since without
  decoding anything;
- the whole cache decoded into a bfloat16 memo, when torch is present, the decoded-values
  bound has room for it, and either the cache takes at most :data:`CACHE_SHARE` of the bound or
  the call reads :data:`WHOLE_FRACTION` of it (then the next steps read the memo): a large
  cache read sparsely (a Galaxy's paged cache of 4096 blocks, its 32 users' positions reaching
  3 blocks each: 2.1 GB of bfloat16 values, and 4.3 GB more of float32 ones, for 2% of it) is
  not held whole;
- else the tiles read, alone: a cache ``[A, kv heads, S, d]`` in TILE layout stores each ``[S,
  d]`` matrix as its tile rows one after another, so page ``a`` (or the first ``r`` tile rows of
  every matrix) is a block of whole tiles of the slab, gathered and decoded (a call reading
  :data:`WHOLE_FRACTION` of the cache or more, or a cache with tile padding, decodes it whole).

The values are the same whichever way they come (every value of a cache's dtype is a bfloat16
value); the reads are float32 numpy arrays.  A Decoded cache's reads take its float32 values,
kept beside the bfloat16 ones while the bound has room (:meth:`~meshnn.ops.decoded.Decoded.in_dtype`;
the updates patch both), read-only views of them where no gather is needed: a decode step then
widens nothing (it widened the rows it read, 8 of decode.py's 65 ms a step).

May import: :mod:`meshnn.formats`, :mod:`meshnn.tensor` (the spec) and the ops' memo, decoded, tile_rows,
operands and values.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from meshnn.formats.bfp_torch import read_only_tensor
from meshnn.formats.codec import decode
from meshnn.formats.layout import Layout
from meshnn.ops.decoded import BF16_EXACT, DECODED
from meshnn.ops.memo import BOUND_ROWS, bound_rows, known_values
from meshnn.ops.operands import bf16_torch, operand
from meshnn.ops.tile_rows import tile_grid
from meshnn.ops.values import logical_values
from meshnn.tensor.spec import TensorSpec

WHOLE_FRACTION = 0.25
"""A call that reads this fraction of a cache's tiles or more decodes it whole (see above)."""

CACHE_SHARE = 8
"""A cache whose bfloat16 values take more than 1 / ``CACHE_SHARE`` of the decoded-values bound
is decoded whole into a memo only by a call reading :data:`WHOLE_FRACTION` of it."""


def _held(rows: np.ndarray, spec: TensorSpec, fraction: float) -> np.ndarray | Any | None:
    """The cache's ``(n, *spec.shape)`` values (a float32 array, or a torch bfloat16 tensor) when
    its memo holds them or they are decoded whole now; None when only the tiles read are to be."""
    bound = bound_rows(rows) if BOUND_ROWS else None
    if bound is not None:
        decoded = DECODED.get(bound.buffer, spec)
        if decoded is not None and not decoded.sides and decoded.values.shape[0] == rows.shape[0]:
            return decoded.in_dtype(sys.modules["torch"].float32)  # (kept beside while the bound has room)
        known = known_values(rows, spec)
        if known is not None:
            return known
        torch = bf16_torch() if spec.dtype in BF16_EXACT else None
        size = rows.shape[0] * spec.volume() * 2
        whole = fraction >= WHOLE_FRACTION or size * CACHE_SHARE <= DECODED.limit
        if torch is not None and bound.keep and not bound.first and whole and DECODED.has_room(size):
            values = operand(rows, spec, torch, let_go=False)  # (kept as the buffer's Decoded memo)
            decoded = DECODED.get(bound.buffer, spec)
            return values if decoded is None else decoded.in_dtype(torch.float32)
    if fraction >= WHOLE_FRACTION or _tile_grid(spec) is None:
        return logical_values(rows, spec)
    return None


def _floats(values: Any) -> np.ndarray:
    """A read of :func:`_held` values as a float32 numpy array: a float32 torch tensor's own
    memory, read-only (a memo's float32 values: the attention only reads them), else a copy."""
    if isinstance(values, np.ndarray):
        return values
    if values.dtype == sys.modules["torch"].float32:
        view = values.numpy()
        view.flags.writeable = False
        return view
    out = np.empty(tuple(values.shape), np.float32)
    sys.modules["torch"].from_numpy(out).copy_(values)
    return out


def _tile_grid(spec: TensorSpec) -> tuple[int, int, int] | None:
    """``(tile rows a matrix, bytes a tile row, tile height)`` of a 4-D TILE cache without padding
    (:func:`~meshnn.ops.tile_rows.tile_grid`), else None."""
    grid = tile_grid(spec)
    if grid is None or len(grid) != 4:
        return None
    return grid[2], grid[3] * spec.tile.get_tile_size(spec.dtype), spec.tile.tile_shape[0]


def _decoded_tiles(tiles: np.ndarray, spec: TensorSpec, shape: tuple[int, ...]) -> np.ndarray:
    """float32 values ``shape`` (device axis first) of gathered whole tiles ``tiles`` (uint8)."""
    flat = np.ascontiguousarray(tiles).reshape(-1)
    values = decode(flat, spec.dtype, Layout.TILE, shape, tile=spec.tile)
    return values.astype(np.float32, copy=False)


def page_values(rows: np.ndarray, spec: TensorSpec, table: np.ndarray) -> np.ndarray:
    """``(n, kv, users, columns x block, d)`` values of a paged cache ``[blocks, kv, block, d]``
    (``rows``: its ``n`` devices' bytes) through ``table`` ``(n, users, columns)``, heads first:
    for each kv head, user ``u``'s pages in order (an out-of-range block reads block 0: masked or
    unused).  Heads first is the order a page's rows are copied in whole (:func:`_by_head`)."""
    blocks, kv, block, d = tuple(spec.shape)
    n, users, columns = table.shape
    safe = np.where((table >= 0) & (table < blocks), table, 0)
    used, where = np.unique(safe, return_inverse=True)
    cache = _held(rows, spec, used.size / blocks)
    if cache is None:
        grid = _tile_grid(spec)
        page = kv * grid[0] * grid[1]
        tiles = rows[:, : blocks * page].reshape(n, blocks, page)[:, used]
        cache, safe = _decoded_tiles(tiles, spec, (n, used.size, kv, block, d)), where.reshape(safe.shape)
    return _by_head(cache, safe).reshape(n, kv, users, columns * block, d)


def _by_head(cache: np.ndarray | Any, safe: np.ndarray) -> np.ndarray:
    """``(n, kv, users, columns, block, d)`` float32: ``cache[i, safe[i, u, c], h]`` of a cache
    ``(n, blocks, kv, block, d)`` (float32 numpy, or a torch tensor) for every device ``i``, head
    ``h``.  With torch, one ``index_select`` per (device, head) copies each page's ``[block, d]``
    rows whole (in a 1B decode step, 2.0 ms a call against 3.5 ms for a gather in the cache's own
    order and a transpose)."""
    n, users, columns = safe.shape
    kv, block, d = cache.shape[2:]
    torch = sys.modules.get("torch")
    if torch is None:
        picked = cache[np.arange(n)[:, None, None], safe]  # (n, users, columns, kv, block, d)
        return np.ascontiguousarray(picked.transpose(0, 3, 1, 2, 4, 5), dtype=np.float32)
    source = read_only_tensor(torch, cache) if isinstance(cache, np.ndarray) else cache  # (only read)
    out = torch.empty((n, kv, users * columns, block, d), dtype=source.dtype)
    for i in range(n):
        index = torch.from_numpy(safe[i].reshape(-1).astype(np.int64))
        for h in range(kv):
            torch.index_select(source[i, :, h], 0, index, out=out[i, h])
    return _floats(out.view(n, kv, users, columns, block, d))


def leading_values(rows: np.ndarray, spec: TensorSpec, count: int) -> np.ndarray:
    """``(n, users, kv, r, d)`` values of a cache ``[users, kv, S, d]``: its first ``r`` rows,
    ``count`` rounded up to whole tile rows (at most ``S``)."""
    users, kv, seq, d = tuple(spec.shape)
    height = spec.tile.tile_shape[0] if spec.layout is Layout.TILE else 1
    rows_read = min(seq, max(1, -(-count // height)) * height)
    cache = _held(rows, spec, rows_read / seq)
    if cache is not None:
        return _floats(cache[:, :, :, :rows_read])
    tile_rows, row_bytes, height = _tile_grid(spec)
    n = rows.shape[0]
    keep = rows_read // height
    tiles = rows[:, : users * kv * tile_rows * row_bytes].reshape(n, users * kv, tile_rows, row_bytes)[:, :, :keep]
    return _decoded_tiles(tiles, spec, (n, users, kv, rows_read, d))


def gather_pages(cache: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``(n, blocks, kv, block, d)`` cache values through ``(n, users, max_blocks)`` -> ``(n,
    users, kv, max_blocks x block, d)`` (an out-of-range block reads block 0: masked or unused)."""
    n, blocks, kv, block, d = cache.shape
    safe = np.where((table >= 0) & (table < blocks), table, 0)
    picked = cache[np.arange(n)[:, None, None], safe]  # (n, users, max_blocks, kv, block, d)
    users, most = table.shape[1], table.shape[2]
    return picked.transpose(0, 1, 3, 2, 4, 5).reshape(n, users, kv, most * block, d)
