"""DeepSeek-V3 prefill's block-cyclic KV cache written in place:
``ttnn.experimental.deepseek_prefill.update_padded_kv_cache`` (a chunk of new tokens written at each
device's own offset) and ``zero_padded_kv_cache`` (the pad window after the last real token zeroed).

The cache ``[slots * layers, heads, cache_seq, d]`` per device holds, for batch ``slot * num_layers +
layer``, the rows of its sequence-parallel (SP) device in the block-cyclic order of
:mod:`~meshnn.ops.transformer.padded_chunks`.

``update_padded_kv_cache``: device ``i`` along ``cluster_axis`` copies the tiles of its input chunk
``[1, heads, chunk_local, d]`` (the first batch: the kernel reads no other) into its cache rows from
``32 * update_tile(kv_actual_global)``, head by head.  A tile copy: values move bit for bit.  (tt-metal's
writer writes each core's pages consecutively from its first block's page, which is this whenever no
core's blocks run from one head into the next: always with one head, as DeepSeek's KVPE cache has.)

``zero_padded_kv_cache``: the global tokens ``[valid_global, ceil(valid_global / pad_align) *
pad_align)`` of the cache (one head), each device zeroing the rows of the window it holds: the tile
row holding ``valid_global`` multiplied by a row mask (rows before it times 1, from it on times 0, in
float32, rounded into the cache's dtype), the window's later tile rows written as zeros.

``slot_idx`` and ``kv_actual_global`` / ``valid_global`` are runtime arguments of tt-metal's cached
program: they are left out of the program's key (one cached program per layer).  Checks are
tt-metal's (2026-06), with its messages.  A cache may be interleaved or sharded (DeepSeek's is N-D
sharded over DRAM banks): its bytes are held in page order either way, so a tile's page index is its
place.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and
the ops' launch, checks, outputs, tile_rows and transformer modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.tile_rows import decode_row_tiles, write_rows, write_tiles
from meshnn.ops.transformer.padded_chunks import (
    TILE,
    check_axis,
    check_tile_aligned,
    sp_factor,
    sp_index,
    uint_arg,
    update_tile,
)
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

NAMESPACE = "experimental.deepseek_prefill"


def _cache(op: str, tensor: object) -> Tensor:
    cache = device_input(op, "cache", tensor)
    if cache.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: cache must be TILE layout")
    if len(cache.padded_shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: cache must be 4D (got rank {len(cache.padded_shape)})")
    return cache


def _layers(op: str, cache: Tensor, layer_idx: object, num_layers: object) -> tuple[int, int]:
    layer, layers = uint_arg(op, "layer_idx", layer_idx), uint_arg(op, "num_layers", num_layers)
    if layers == 0:
        raise MeshnnValueError(f"ttnn.{op}: num_layers must be positive")
    if cache.padded_shape[0] % layers:
        raise MeshnnValueError(
            f"ttnn.{op}: cache batch dim ({cache.padded_shape[0]}) must be a multiple of num_layers ({layers})"
        )
    if layer >= layers:
        raise MeshnnValueError(f"ttnn.{op}: layer_idx {layer} out of range for num_layers {layers}")
    return layer, layers


def _slot(op: str, cache: Tensor, slot: int, layers: int) -> None:
    slots = cache.padded_shape[0] // layers
    if slot >= slots:
        raise MeshnnValueError(f"ttnn.{op}: slot_idx ({slot}) out of range for num_slots ({slots})")


def _run(op: str, cache: Tensor, inputs: list[Tensor], kernel, attrs: dict) -> Tensor:
    mesh = cache.storage.mesh_buffer.device()  # type: ignore[union-attr]
    where = (inputs[0] if inputs else cache).storage.coords  # type: ignore[union-attr]
    launch(op, mesh, inputs, [Output(cache.spec)], kernel, coords=where, into=[cache], attrs=attrs)
    return cache


@register(
    f"{NAMESPACE}.update_padded_kv_cache",
    kind=OpKind.KV_CACHE,
    family=OpFamily.KV_FILL,
    device_operation="UpdatePaddedKvCacheDeviceOperation",
)
def update_padded_kv_cache(
    cache: Tensor,
    input: Tensor,
    slot_idx: int,
    layer_idx: int,
    num_layers: int,
    kv_actual_global: int,
    cluster_axis: int,
) -> Tensor:
    """Each device's chunk ``input`` copied into its rows of ``cache``'s batch ``slot_idx *
    num_layers + layer_idx`` from its offset after ``kv_actual_global`` valid tokens (see the
    module's text); returns ``cache``."""
    op = f"{NAMESPACE}.update_padded_kv_cache"
    c, x = _cache(op, cache), device_input(op, "input", input)
    if x.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: input must be TILE layout")
    if c.dtype is not x.dtype:
        raise MeshnnValueError(f"ttnn.{op}: cache and input dtype must match")
    cs, xs = tuple(c.padded_shape), tuple(x.padded_shape)
    if len(xs) != 4:
        raise MeshnnValueError(f"ttnn.{op}: input must be 4D (got rank {len(xs)})")
    if cs[-1] != xs[-1]:
        raise MeshnnValueError(f"ttnn.{op}: cache and input head dim must match")
    if cs[1] != xs[1]:
        raise MeshnnValueError(f"ttnn.{op}: cache and input num-heads dim must match")
    if xs[-2] % TILE:
        raise MeshnnValueError(f"ttnn.{op}: input seq dim ({xs[-2]}) must be tile-aligned")
    if cs[-2] % xs[-2]:
        raise MeshnnValueError(f"ttnn.{op}: cache seq ({cs[-2]}) must be a multiple of input seq ({xs[-2]})")
    layer, layers = _layers(op, c, layer_idx, num_layers)
    slot, kv, axis = (uint_arg(op, n, v) for n, v in (("slot_idx", slot_idx), ("kv_actual_global", kv_actual_global),
                                                      ("cluster_axis", cluster_axis)))  # fmt: skip
    same_mesh(op, {"input": x, "cache": c})
    check_axis(op, axis)
    check_tile_aligned(op, "kv_actual_global", kv)
    _slot(op, c, slot, layers)
    sp = sp_factor(op, c.storage.mesh_buffer.device(), axis)  # type: ignore[union-attr]
    if kv + sp * xs[-2] > sp * cs[-2]:
        raise MeshnnValueError(
            f"ttnn.{op}: kv_actual_global ({kv}) + chunk_global ({sp * xs[-2]}) would overflow global cache "
            f"capacity ({sp * cs[-2]})"
        )
    heads, chunk_t, width_t, cache_t = xs[1], xs[2] // TILE, xs[3] // TILE, cs[2] // TILE
    batch = slot * layers + layer
    h, r, col = np.meshgrid(np.arange(heads), np.arange(chunk_t), np.arange(width_t), indexing="ij")
    c_spec = c.spec  # (the kernel holds no tensor: a trace must not keep it allocated)
    size, count = c_spec.tile.get_tile_size(c_spec.dtype), heads * chunk_t * width_t

    def kernel(in_rows, out_rows, coords) -> None:
        dest = np.empty((len(coords), count), np.int64)
        for d, coord in enumerate(coords):
            first = update_tile(kv // TILE, sp, chunk_t, sp_index(coord, axis))
            dest[d] = (((batch * heads + h) * cache_t + first + r) * width_t + col).reshape(-1)
        tiles = in_rows[0][:, : count * size].reshape(len(coords), count, size)
        write_tiles(out_rows[0], c_spec.dtype, c_spec.tile, dest, tiles)

    attrs = {"layer_idx": layer, "num_layers": layers, "cluster_axis": axis}  # (slot, kv: runtime arguments)
    return _run(op, c, [x], kernel, attrs)


@register(
    f"{NAMESPACE}.zero_padded_kv_cache",
    kind=OpKind.KV_CACHE,
    family=OpFamily.KV_FILL,
    device_operation="ZeroPaddedKvCacheDeviceOperation",
)
def zero_padded_kv_cache(
    cache: Tensor,
    slot_idx: int,
    layer_idx: int,
    num_layers: int,
    valid_global: int,
    chunk_size_global: int,
    cluster_axis: int,
    pad_align: int = 128,
) -> Tensor:
    """The pad window ``[valid_global, ceil_pad_align(valid_global))`` of ``cache``'s batch
    ``slot_idx * num_layers + layer_idx`` zeroed in place, each device its share (see the module's
    text); returns ``cache``."""
    op = f"{NAMESPACE}.zero_padded_kv_cache"
    c = _cache(op, cache)
    cs = tuple(c.padded_shape)
    if cs[1] != 1:
        raise MeshnnValueError(f"ttnn.{op}: cache num-heads dim must be 1 (got {cs[1]})")
    layer, layers = _layers(op, c, layer_idx, num_layers)
    slot, valid, chunk, axis, pad = (uint_arg(op, n, v) for n, v in (
        ("slot_idx", slot_idx), ("valid_global", valid_global), ("chunk_size_global", chunk_size_global),
        ("cluster_axis", cluster_axis), ("pad_align", pad_align)))  # fmt: skip
    check_axis(op, axis)
    _slot(op, c, slot, layers)
    sp = sp_factor(op, c.storage.mesh_buffer.device(), axis)  # type: ignore[union-attr]
    _check_window(op, sp, chunk, pad, sp * cs[-2], valid)
    local = chunk // sp
    rows_at = cs[2]  # rows of one batch (its one head)
    base = (slot * layers + layer) * rows_at
    width = cs[3]

    c_spec = c.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords) -> None:
        for d, coord in enumerate(coords):
            rows, mask = _window(valid, pad, chunk, local, sp_index(coord, axis))
            if rows.size == 0:
                continue
            dest = (base + rows)[None]
            old = _rows(out_rows[0][d : d + 1], c_spec, base + rows, width)
            write_rows(out_rows[0][d : d + 1], c_spec.dtype, c_spec.tile, width, dest, old * mask[None, :, None])

    attrs = {
        "layer_idx": layer,
        "num_layers": layers,
        "chunk_size_global": chunk,
        "cluster_axis": axis,
        "pad_align": pad,
    }  # fmt: skip  (slot_idx, valid_global: runtime arguments)
    return _run(op, c, [], kernel, attrs)


def _check_window(op: str, sp: int, chunk: int, pad: int, capacity: int, valid: int) -> None:
    """tt-metal's checks of the pad window: inside one slab, tile-aligned device chunks, inside the cache."""
    if chunk % sp:
        raise MeshnnValueError(f"ttnn.{op}: chunk_size_global ({chunk}) must be a multiple of sp_factor ({sp})")
    if pad == 0:
        raise MeshnnValueError(f"ttnn.{op}: pad_align must be positive")
    if chunk % pad:
        raise MeshnnValueError(
            f"ttnn.{op}: chunk_size_global ({chunk}) must be a multiple of pad_align ({pad}) so the window stays "
            "within one slab"
        )
    check_tile_aligned(op, "chunk_local", chunk // sp)
    if capacity % pad:
        raise MeshnnValueError(f"ttnn.{op}: global cache capacity ({capacity}) must be a multiple of pad_align ({pad})")
    if valid > capacity:
        raise MeshnnValueError(f"ttnn.{op}: valid_global ({valid}) exceeds cache capacity ({capacity})")


def _window(valid: int, pad: int, chunk: int, local: int, mine: int) -> tuple[np.ndarray, np.ndarray]:
    """The local rows (of one batch) device ``mine`` rewrites and the mask (1 kept, 0 zeroed) of each."""
    end = -(-valid // pad) * pad
    rows, mask = [], []
    if chunk == 0 or end == valid:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    for tile_row in range(valid // TILE, end // TILE):
        token = tile_row * TILE
        if (token % chunk) // local != mine:
            continue
        first = (token // chunk) * local + (token % chunk) % local
        rows.extend(range(first, first + TILE))
        kept = valid % TILE if tile_row == valid // TILE else 0
        mask.extend([1.0] * kept + [0.0] * (TILE - kept))
    return np.array(rows, np.int64), np.array(mask, np.float32)


def _rows(out: np.ndarray, cache: TensorSpec, rows: np.ndarray, width: int) -> np.ndarray:
    """``(1, R, width)`` float32 values of the 2-D rows ``rows`` (whole tile rows, in runs of 32) of a
    device's cache bytes ``out`` (the cache's spec ``cache``)."""
    tile, size = cache.tile, cache.tile.get_tile_size(cache.dtype)
    per_row = width // tile.tile_shape[1]
    tile_rows = rows[::TILE] // TILE
    index = (tile_rows[:, None] * per_row + np.arange(per_row)).reshape(-1)
    tiles = out[:, : (out.shape[1] // size) * size].reshape(1, -1, size)[:, index]
    return decode_row_tiles(tiles, cache.dtype, tile, rows.size, width)
