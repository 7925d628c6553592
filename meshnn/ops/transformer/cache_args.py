"""What the KV-cache and decode-attention ops share: the checks of a cache, of a tensor of
positions (``update_idxs_tensor`` / ``cur_pos_tensor``) and of a page table, tt-metal's messages
included; the values a kernel reads (a TILE tensor's padded values, a position or page table's
integers); and the matrix rows of a cache where a user's position lands (paged or not).

A paged cache is ``[num_blocks, heads, block_size, head_dim]``: position ``p`` of user ``b`` is row
``p % block_size`` of block ``page_table[b, p // block_size]``.  An unpaged cache is
``[users, heads, max_seq, head_dim]``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`,
the ops' checks and values.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, int_arg
from meshnn.ops.values import logical_values
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

CACHE_DTYPES = (DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B)


def cache_input(op: str, name: str, tensor: object, dtypes: tuple[DataType, ...] = CACHE_DTYPES) -> Tensor:
    """A TILE, interleaved device cache of one of ``dtypes``."""
    cache = device_input(op, name, tensor)
    if cache.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: Cache tensor in update_cache must be tilized ({name} is {cache.layout})")
    if cache.dtype not in dtypes:
        names = ", ".join(d.name for d in dtypes)
        raise MeshnnTypeError(f"ttnn.{op}: Data type of cache tensor must be {names} and is {cache.dtype.name}")
    if cache.spec.memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Only interleaved cache is supported ({name} is sharded)")
    if len(cache.shape) != 4:
        raise MeshnnValueError(
            f"ttnn.{op}: {name} must be [batch or blocks, heads, seq, head_dim], got {list(cache.shape)}"
        )
    return cache


def index_input(op: str, name: str, tensor: object, *, sharded_dtype: DataType = DataType.INT32) -> Tensor:
    """A ROW_MAJOR INT32 device tensor of indices, DRAM interleaved (or L1 height-sharded, of
    ``sharded_dtype``)."""
    t = device_input(op, name, tensor)
    config = t.spec.memory_config
    want = sharded_dtype if config.is_sharded() else DataType.INT32
    if t.dtype is not want:
        raise MeshnnTypeError(f"ttnn.{op}: Expected {name} to have datatype {want.name}, got {t.dtype.name}")
    if t.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: Expected {name} to have memory layout in ROW MAJOR, got {t.layout}")
    if config.is_sharded():
        if config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED or config.buffer_type is not BufferType.L1:
            raise MeshnnValueError(f"ttnn.{op}: Expect {name} to be HEIGHT SHARDED in L1 if sharded")
    elif config.buffer_type is not BufferType.DRAM:
        raise MeshnnValueError(f"ttnn.{op}: Expect {name} to be DRAM INTERLEAVED, it is in {config.buffer_type.name}")
    return t


def batch_index_input(op: str, tensor: object) -> Tensor:
    """``paged_fill_cache``'s ``batch_idx_tensor``: a device tensor of one UINT32 or INT32 element
    (tt-metal's checks: a single element, an integer type), the user whose blocks are filled."""
    t = device_input(op, "batch_idx_tensor", tensor)
    if t.dtype not in (DataType.UINT32, DataType.INT32):
        raise MeshnnTypeError(
            f"ttnn.{op}: Batch idx tensor must be an integer type (UINT32 or INT32), got {t.dtype.name}"
        )
    if t.spec.volume() != 1:
        raise MeshnnValueError(
            f"ttnn.{op}: Batch idx tensor must have a single element, got {list(t.shape)} "
            f"({t.spec.volume()} elements with its padding)"
        )
    return t


def page_table_input(op: str, tensor: object, batch: int, num_blocks: int, name: str = "page_table") -> Tensor:
    """A ``[batch, max_blocks_per_seq]`` INT32 ROW_MAJOR page table (UINT16 when sharded) whose
    rows are the users and whose blocks fit the cache's ``num_blocks``."""
    table = device_input(op, name, tensor)
    sharded = table.spec.memory_config.is_sharded()
    want = DataType.UINT16 if sharded else DataType.INT32
    if table.dtype is not want:
        raise MeshnnTypeError(f"ttnn.{op}: Expect page table to have datatype {want.name}, got {table.dtype.name}")
    if table.layout is not Layout.ROW_MAJOR or len(table.shape) != 2:
        raise MeshnnValueError(
            f"ttnn.{op}: Expect page table to be a ROW MAJOR [batch, max_num_blocks_per_seq] tensor, got "
            f"{list(table.shape)} {table.layout}"
        )
    rows = table.shape[0] // table.spec.memory_config.shard_spec.num_cores() if sharded else table.shape[0]
    if rows != batch:
        raise MeshnnValueError(
            f"ttnn.{op}: Batch size between page_table ({rows}) and input_tensor ({batch}) must match"
        )
    if table.shape[1] > num_blocks:
        raise MeshnnValueError(
            f"ttnn.{op}: max_num_blocks_per_seq must be less than max_num_blocks: max_num_blocks_per_seq="
            f"{table.shape[1]}, max_num_blocks={num_blocks}"
        )
    return table


def padded_spec(spec: TensorSpec) -> TensorSpec:
    """A spec of the same bytes whose logical shape is ``spec``'s padded shape (a TILE tensor's
    padding is data a kernel reads)."""
    padded = tuple(spec.padded_shape)
    if padded == tuple(spec.shape) and not spec.memory_config.is_sharded():
        return spec
    return TensorSpec(padded, spec.dtype, spec.layout, tile=spec.tile)


def rows_spec(spec: TensorSpec, rows: int) -> TensorSpec:
    """The spec to read the first ``rows`` rows of each matrix of a TILE tensor by: its own when its
    logical shape holds them (every other dim unpadded), whose values its producer may have left
    as a memo; else :func:`padded_spec` (those rows are padding the kernel reads).  The values of
    those rows are the same either way: the logical window is the padded array's origin corner."""
    shape, padded = tuple(spec.shape), tuple(spec.padded_shape)
    if len(shape) >= 2 and shape[-2] >= rows and shape[:-2] == padded[:-2] and shape[-1] == padded[-1]:
        return spec
    return padded_spec(spec)


def integers(rows: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``(k, *shape)`` int64 values of an integer tensor's rows."""
    return np.asarray(logical_values(rows, spec, as_float=False)).astype(np.int64)


def page_table_rows(rows: np.ndarray, spec: TensorSpec, batch: int) -> np.ndarray:
    """``(k, batch, max_blocks)`` int64: the users' rows of a page table's rows.  A sharded table
    (UINT16, height-sharded) is a ``[batch, max_blocks]`` table on each core of its grid, which a
    kernel reads from its own core's L1 (tt-metal's Galaxy models repeat the table on every core):
    read as its first core's shard, as the sharded positions are."""
    values = integers(rows, spec)
    return values.reshape(values.shape[0], -1, values.shape[-1])[:, :batch]


def cache_rows(
    positions: np.ndarray,
    heads: int,
    seq: int,
    *,
    table: np.ndarray | None,
    users: np.ndarray | None = None,
    blocks: int | None = None,
) -> np.ndarray:
    """The matrix rows (of the cache's 2-D view) where each user's position lands, per head:
    ``positions`` ``(k, B)`` -> ``(k, B, heads)`` int64, -1 where a position is negative (skipped).
    ``seq``: the cache's rows per user (unpaged) or per block (paged, with ``table`` ``(k, B, max)``).
    ``users``: the cache row block of each user when not ``arange(B)`` (a shared cache: all 0).
    ``blocks``: the paged cache's blocks; a page-table entry of a written position past them (a
    device would write past the cache) is refused."""
    k, batch = positions.shape
    skip = positions < 0
    pos = np.where(skip, 0, positions)
    if table is not None:
        slot = pos // seq
        if (slot >= table.shape[2]).any():
            raise MeshnnValueError(f"a position {int(pos.max())} is past the page table's {table.shape[2] * seq} rows")
        owner = np.take_along_axis(table, slot[:, :, None], axis=2)[:, :, 0]
        if blocks is not None and ((owner >= blocks) & ~skip).any():
            bad = int(owner[~skip].max())
            raise MeshnnValueError(f"a page table entry {bad} names a block past the cache's {blocks} blocks")
        pos = pos % seq
    else:
        if (pos >= seq).any():
            raise MeshnnValueError(f"a position {int(pos.max())} is past the cache's {seq} rows")
        owner = np.broadcast_to(np.arange(batch) if users is None else users, (k, batch))
    rows = (owner[:, :, None] * heads + np.arange(heads)) * seq + pos[:, :, None]
    return np.where(skip[:, :, None], -1, rows)


def position_modulo(op: str, value: object, block_size: int, paged: bool) -> int | None:
    """``cache_position_modulo`` checked (tt-metal of 2026, with its messages): None, or in paged
    mode a positive multiple of the block size (tokens): positions wrap at it, the cache a circular
    buffer of that many tokens."""
    if value is None:
        return None
    modulo = int_arg(op, "cache_position_modulo", value)
    if not paged:
        raise MeshnnValueError(
            f"ttnn.{op}: cache_position_modulo is only supported in paged mode (when page_table is provided)"
        )
    if modulo <= 0 or modulo % block_size:
        raise MeshnnValueError(
            f"ttnn.{op}: cache_position_modulo ({value}) must be a positive multiple of effective block_size "
            f"({block_size}); otherwise a wrapped position would split across blocks and the kernel can't address it."
        )
    return modulo


def cache_view(
    op: str, cache: Tensor, block_size: object, num_kv_heads: object, paged: bool, head_dim: int = 0
) -> tuple[int, int]:
    """The ``(block_size, kv heads)`` a paged op reads its cache with: the cache's own.  tt-metal of
    2026 takes ``block_size`` / ``num_kv_heads`` to view a cache's bytes with another geometry
    (vLLM's kv-cache groups sharing one buffer); meshnn takes them when they name the cache's own
    and refuses another view (paged mode only, as tt-metal)."""
    own = (cache.padded_shape[2], cache.padded_shape[1])
    view = list(own)
    for i, (name, value) in enumerate((("block_size", block_size), ("num_kv_heads", num_kv_heads))):
        if value is None:
            continue
        view[i] = int_arg(op, name, value)
        if not paged:
            raise MeshnnValueError(
                f"ttnn.{op}: {name} override is only supported in paged mode (when page_table is provided)"
            )
    cache_d = cache.padded_shape[3]
    if head_dim and view[0] * view[1] * head_dim != own[0] * own[1] * cache_d:
        raise MeshnnValueError(
            f"ttnn.{op}: geometry mismatch: cache has {own[0] * own[1] * cache_d} elems/block (kv_heads={own[1]}, "
            f"block_size={own[0]}, head_dim={cache_d}) but the view is {view[0] * view[1] * head_dim} "
            f"(kv_heads={view[1]}, block_size={view[0]}, head_dim={head_dim})"
        )
    for name, given, mine in (("block_size", view[0], own[0]), ("num_kv_heads", view[1], own[1])):
        if given != mine:
            raise MeshnnValueError(
                f"ttnn.{op}: {name}={given} views the cache with another geometry than its own ({mine}); "
                "meshnn reads a paged cache with its own geometry only"
            )
    return own
