"""Decode attention: ``ttnn.transformer.scaled_dot_product_attention_decode`` and
``paged_scaled_dot_product_attention_decode``: one new query row per user, ``q [1, users, q
heads, d]``, against the user's keys and values in a cache (``[users, kv heads, max_seq, d]``, or
``[blocks, kv heads, block_size, d]`` through ``page_table_tensor [users, max_blocks]``).

Causal (the default): user ``u`` attends positions ``0 .. cur_pos[u]`` (``cur_pos`` a list, or a
``cur_pos_tensor`` read when the kernel runs, so a replayed trace attends where the tensor says
now), or the last ``sliding_window_size`` of them; a negative position skips its user (its
output rows are zero).  Not causal: every position, plus ``attn_mask [b, 1, q heads,
max_seq]`` when given (user ``u`` adds the ``u % b``-th block of q heads x max_seq, so ``b = 1``
broadcasts).  GQA: q head ``h`` reads kv head ``h // (q heads / kv heads)``.  An
``attention_sink [q heads (32), 32]`` adds ``exp(scale * sink[h, 0])`` to head ``h``'s softmax
denominator (tt-metal's flash decode takes the sink as a logit of the unscaled ``q k`` and applies
the scale in its exponent, as to the scores; gpt-oss hands it ``sink / scale`` for that reason).
Computed in float32 (normalised last, as flash decode does) and rounded once into q's dtype; the
output is ``[1, users, q heads, d]``, in DRAM unless ``memory_config`` says otherwise.  The checks
are tt-metal's, with its messages.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`,
the ops' launch, checks, memo, outputs, values and config, and the transformer ops' checks, cache_args and
decode_args.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.ops.checks import device_input, int_arg, int_list, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.memo import settled
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.attention import SDPA_DTYPES, sdpa_scale
from meshnn.ops.transformer.cache_args import (
    cache_view,
    index_input,
    integers,
    page_table_input,
    page_table_rows,
    position_modulo,
)
from meshnn.ops.transformer.cache_reads import leading_values, page_values
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.transformer.decode_args import decode_dims, decode_qkv
from meshnn.ops.transformer.products import product, softmax_values
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


def chunk_size_for(seq: int) -> int:
    """tt-metal's chunk of keys for ``seq`` rows when the program config leaves it 0."""
    for size in (32, 64, 128, 256):
        if seq <= size:
            return size
    return 512 if seq % 512 == 0 else 32


def _positions(op: str, cur_pos: object, cur_pos_tensor: object, users: int, seq: int, is_causal: bool):
    if not is_causal:
        if cur_pos is not None or cur_pos_tensor is not None:
            raise MeshnnValueError(f"ttnn.{op}: cur_pos / cur_pos_tensor are for causal attention")
        return [], None
    if (cur_pos is None or len(cur_pos) == 0) == (cur_pos_tensor is None):  # type: ignore[arg-type]
        raise MeshnnValueError(f"ttnn.{op}: causal decode needs exactly one of cur_pos and cur_pos_tensor")
    if cur_pos_tensor is None:
        pos = int_list(op, "cur_pos", cur_pos)
        if len(pos) != users or any(p >= seq for p in pos):
            raise MeshnnValueError(
                f"ttnn.{op}: cur_pos must be <= K sequence dim ({seq}), one per user ({users}): {pos}"
            )
        return pos, None
    t = index_input(op, "cur_pos_tensor", cur_pos_tensor)
    count = t.shape[-1] if len(t.shape) else t.padded_shape[0]  # a scalar: tt-metal's padded [1], one user
    if not t.spec.memory_config.is_sharded() and count != users:
        raise MeshnnValueError(f"ttnn.{op}: cur_pos must have batch size equal to Q, got {count} and {users}")
    return [], t


def _options(op: str, named, attn_mask, attention_sink, scale, window, is_causal, program_config, dims, paged_seq):
    """The mask, sink, scale, window and k chunk, checked; the mask and sink join ``named``."""
    users, heads, _, _, d = dims
    q = named["input_tensor_q"]
    if not isinstance(is_causal, bool):
        raise MeshnnTypeError(f"ttnn.{op}: is_causal must be a bool, got {is_causal!r}")
    chunk = getattr(program_config, "k_chunk_size", 0) if program_config is not None else 0
    if not is_causal and chunk == 0:
        chunk = chunk_size_for(paged_seq)
    if chunk % 32:
        raise MeshnnValueError(f"ttnn.{op}: Chunk size must be multiple of 32, got: {chunk}")
    if not is_causal and paged_seq % chunk:
        raise MeshnnValueError(
            f"ttnn.{op}: K sequence length must be multiple of chunk size, got: {paged_seq} and {chunk}"
        )
    if attn_mask is not None:
        if is_causal:
            raise MeshnnValueError(
                f"ttnn.{op}: Must not have attn_mask tensor for non-causal attention (is_causal=True)"
            )
        mask = tile_input(op, "attn_mask", attn_mask, SDPA_DTYPES)
        if len(mask.shape) != 4 or mask.shape[2] != heads or mask.padded_shape[3] != paged_seq:
            raise MeshnnValueError(
                f"ttnn.{op}: Expect attn_mask [{users} or 1, 1, {heads}, {paged_seq}] (Q's heads, K's sequence), "
                f"got {list(mask.shape)}"
            )
        named["attn_mask"] = mask
    if attention_sink is not None:
        sink = tile_input(op, "attention_sink", attention_sink, (DataType.BFLOAT16,))
        if len(sink.shape) != 2 or sink.padded_shape[0] != q.padded_shape[2] or sink.padded_shape[1] != 32:
            raise MeshnnValueError(
                f"ttnn.{op}: Attention sink must be [{q.padded_shape[2]}, 32] (Q's padded heads, one tile wide), "
                f"got {list(sink.shape)}"
            )
        if sink.spec.memory_config.buffer_type is not BufferType.DRAM:
            raise MeshnnValueError(f"ttnn.{op}: Attention sink must be in DRAM memory")
        named["attention_sink"] = sink
    scale = sdpa_scale(op, scale, d)
    if window is not None and int_arg(op, "sliding_window_size", window) < 1:
        raise MeshnnValueError(f"ttnn.{op}: sliding_window_size must be positive, got {window}")
    return np.float32(scale), chunk


def _output_spec(op: str, q: Tensor, memory_config: object, kv_heads: int, width: int = 0) -> TensorSpec:
    config = DRAM_MEMORY_CONFIG if memory_config is None else memory_config
    if not isinstance(config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {config!r}")
    if config.is_sharded() and config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: Output memory config layout must be HEIGHT_SHARDED when sharded")
    if config.is_sharded() and kv_heads > 1:
        raise MeshnnValueError(f"ttnn.{op}: Sharded output not supported for GQA")
    shape = (*tuple(q.shape)[:3], width or q.shape[3])
    return TensorSpec(shape, q.dtype, q.layout, tile=q.spec.tile, memory_config=config)


@register("transformer.scaled_dot_product_attention_decode", kind=OpKind.TRANSFORMER, family=OpFamily.SDPA_DECODE)
def scaled_dot_product_attention_decode(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    *,
    is_causal: bool = True,
    attn_mask: Tensor | None = None,
    cur_pos: Sequence[int] | None = None,
    cur_pos_tensor: Tensor | None = None,
    attention_sink: Tensor | None = None,
    scale: float | None = None,
    sliding_window_size: int | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    share_cache: bool | None = None,
    queue_id: int = 0,
) -> Tensor:
    """Each user's query row against its cache rows (see the module docstring); ``share_cache``: K and V
    hold one batch that every user reads (tt-metal 2026; None and False differ only in the program key)."""
    op = "transformer.scaled_dot_product_attention_decode"
    if share_cache is not None and not isinstance(share_cache, bool):
        raise MeshnnTypeError(f"ttnn.{op}: share_cache must be a bool or None, got {share_cache!r}")
    return _decode(
        op,
        (input_tensor_q, input_tensor_k, input_tensor_v, None),
        (is_causal, attn_mask, cur_pos, cur_pos_tensor, attention_sink, scale, sliding_window_size),
        (memory_config, program_config, compute_kernel_config, queue_id),
        share_cache=share_cache,
    )


@register("transformer.paged_scaled_dot_product_attention_decode", kind=OpKind.TRANSFORMER, family=OpFamily.SDPA_DECODE)
def paged_scaled_dot_product_attention_decode(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    page_table_tensor: Tensor,
    *,
    is_causal: bool = True,
    attn_mask: Tensor | None = None,
    cur_pos_tensor: Tensor | None = None,
    attention_sink: Tensor | None = None,
    scale: float | None = None,
    sliding_window_size: int | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    block_size: int | None = None,
    num_kv_heads: int | None = None,
    cache_position_modulo: int | None = None,
    queue_id: int = 0,
) -> Tensor:
    """:func:`scaled_dot_product_attention_decode` over paged caches: user ``u``'s position ``p``
    is row ``p % block_size`` of block ``page_table_tensor[u, p // block_size]``; with
    ``cache_position_modulo`` ``M`` (tt-metal of 2026: a cache that is a circular buffer of ``M``
    tokens, at least the sliding window) position ``p`` is where ``p % M`` would be.
    ``block_size`` / ``num_kv_heads``: the cache's own (see ``paged_update_cache``)."""
    op = "transformer.paged_scaled_dot_product_attention_decode"
    if page_table_tensor is None:
        raise MeshnnValueError(f"ttnn.{op}: Must have page_table tensor for paged attention")
    if is_causal is True and cur_pos_tensor is None:
        raise MeshnnValueError(f"ttnn.{op}: Must have cur_pos tensor for paged attention in causal mode")
    k = tile_input(op, "input_tensor_k", input_tensor_k, SDPA_DTYPES)
    q = device_input(op, "input_tensor_q", input_tensor_q)
    view = cache_view(op, k, block_size, num_kv_heads, True, q.padded_shape[-1])
    modulo = position_modulo(op, cache_position_modulo, view[0], True)
    if modulo is not None and sliding_window_size and modulo < sliding_window_size:
        raise MeshnnValueError(
            f"ttnn.{op}: cache_position_modulo ({modulo}) must be >= sliding_window_size ({sliding_window_size}); "
            "a tighter capacity would let the SDPA attention range wrap multiple times and double-count positions."
        )
    return _decode(
        op,
        (q, k, input_tensor_v, page_table_tensor),
        (is_causal, attn_mask, None, cur_pos_tensor, attention_sink, scale, sliding_window_size),
        (memory_config, program_config, compute_kernel_config, queue_id),
        modulo,
    )


def _decode(
    op: str, tensors: tuple, options: tuple, configs: tuple, modulo=None, head_dim_v: int = 0, share_cache=None
) -> Tensor:
    """A decode attention; ``modulo``: positions wrap (paged); ``head_dim_v``: the values are the
    keys' first ``head_dim_v`` columns (MLA's), the output that wide; ``share_cache``: one K / V batch for all."""
    q_in, k_in, v_in, table_in = tensors
    is_causal, attn_mask, cur_pos, cur_pos_tensor, sink, scale, window = options
    memory_config, program_config, compute_kernel_config, queue_id = configs
    named = decode_qkv(op, q_in, k_in, v_in)
    own_v = head_dim_v if v_in is not k_in else 0  # MLA given a values tensor: its width, not the keys'
    dims = decode_dims(op, named, table_in is not None, bool(share_cache), own_v)
    users, _heads, kv_heads, seq, _d = dims
    if table_in is not None:
        named["page_table_tensor"] = page_table_input(
            op, table_in, users, named["input_tensor_k"].shape[0], "page_table_tensor"
        )
        total = seq * named["page_table_tensor"].shape[1] if modulo is None else np.iinfo(np.int32).max
    else:
        total = seq
    pos, pos_tensor = _positions(op, cur_pos, cur_pos_tensor, users, total, is_causal)
    if pos_tensor is not None:
        named["cur_pos_tensor"] = pos_tensor
    factor, chunk = _options(op, named, attn_mask, sink, scale, window, is_causal, program_config, dims, total)
    mesh = same_mesh(op, named)
    spec = _output_spec(op, named["input_tensor_q"], memory_config, kv_heads, head_dim_v)
    plan = DecodePlan(dims, list(named), [t.spec for t in named.values()], spec, factor, is_causal, pos, window)
    plan.modulo, plan.head_dim_v = modulo, 0 if own_v else head_dim_v
    attrs = {
        "is_causal": is_causal,
        "cur_pos": pos,
        "scale": float(factor),
        "sliding_window_size": window,
        "cache_position_modulo": modulo,
        "k_chunk_size": chunk,
        "memory_config": spec.memory_config,
        "program_config": program_config,
        "compute_kernel_config": compute_kernel_config,
    }
    if share_cache is not None:
        attrs["share_cache"] = share_cache
    inputs, out = list(named.values()), [Output(spec)]  # (reads_memos: _caches settles the caches' bytes)
    return launch(op, mesh, inputs, out, plan.kernel, queue_id=queue_id, rowwise=True, reads_memos=True, attrs=attrs)[0]


class DecodePlan:
    """The kernel of one decode attention call: names of its inputs in order, their specs, and
    what the call fixed (dims, scale, causality, positions given as a list, window)."""

    def __init__(self, dims, names, specs, spec, factor, is_causal, pos, window) -> None:
        self.dims, self.names, self.specs, self.spec = dims, names, specs, spec
        self.factor, self.is_causal, self.window = factor, is_causal, window
        self.pos = np.array(pos, np.int64)[None] if pos else None
        self.modulo: int | None = None  # positions wrap at it (paged: cache_position_modulo)
        self.head_dim_v = 0  # > 0: the values are the keys' first head_dim_v columns (MLA)

    def _get(self, rows, name, as_int=False):
        i = self.names.index(name)
        return integers(rows[i], self.specs[i]) if as_int else logical_values(rows[i], self.specs[i])

    def kernel(self, in_rows, out_rows, coords) -> None:
        users, heads, kv_heads, _seq, d = self.dims
        q = self._get(in_rows, "input_tensor_q")[:, 0]  # (k, users, heads, d)
        n = q.shape[0]
        pos = self._positions(in_rows, n, users)
        k_vals, v_vals, by_head = self._caches(in_rows, n, users, pos)
        swap = (lambda a: a.transpose(0, 2, 1, 3, 4)) if by_head else (lambda a: a)  # (users, kv) <-> (kv, users)
        total = k_vals.shape[3]
        group = heads // kv_heads
        grouped = np.ascontiguousarray(swap(q.reshape(n, users, kv_heads, group, d) * self.factor))
        scores = product(grouped, np.swapaxes(k_vals, -1, -2))  # (n, users, kv, group, total), or kv first
        keep = self._keep(pos, n, users, total)
        if keep is not None:
            scores = np.where(swap(keep[:, :, None, None, :]), scores, -np.inf)
        if "attn_mask" in self.names:
            scores += swap(self._mask(in_rows, users, heads).reshape(n, users, kv_heads, group, -1))
        sink = self._sink(in_rows, n, heads, kv_heads, group)
        out = swap(softmax_values(scores, v_vals, None if sink is None else swap(sink)))
        out = out.reshape(n, 1, users, heads, v_vals.shape[-1])
        if keep is not None:
            out = np.where(keep.any(axis=-1)[:, None, :, None, None], out, 0.0)
        write_values(out_rows[0], np.ascontiguousarray(out, dtype=np.float32), self.spec, owned=True)

    def _mask(self, in_rows, users: int, heads: int) -> np.ndarray:
        """``(n, users, heads, seq)``: user ``u`` reads the ``u % mask.shape[0]``-th block of heads x seq
        of the mask's blocks in order, as tt-metal's reader offsets by ``(batch % mask batch)`` blocks."""
        mask = self._get(in_rows, "attn_mask")  # (n, b, d1, heads, seq)
        blocks = mask.reshape(mask.shape[0], -1, mask.shape[3], mask.shape[4])
        return blocks[:, np.arange(users) % mask.shape[1], :heads]

    def _caches(self, in_rows, n: int, users: int, pos: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, bool]:
        """The keys and values a call reads, ``(n, users, kv, positions, d)`` (paged: ``(n, kv, users, ...)``,
        True third), causal: only the positions up to the furthest user's (its pages, or its leading rows)."""
        span = None if pos is None else max(1, int(pos.max()) + 1)
        k_spec, v_spec = (self.specs[self.names.index(name)] for name in ("input_tensor_k", "input_tensor_v"))
        k_rows, v_rows = (settled(in_rows[self.names.index(name)]) for name in ("input_tensor_k", "input_tensor_v"))
        if "page_table_tensor" in self.names:
            i = self.names.index("page_table_tensor")
            table = page_table_rows(in_rows[i], self.specs[i], users)
            if span is not None:
                columns = np.arange(-(-span // k_spec.shape[2]))
                table = table[:, :, columns if self.modulo is None else columns % (self.modulo // k_spec.shape[2])]
            keys = page_values(k_rows, k_spec, table)  # (heads first: the same matrices, batched in another order)
            return self._with_values(keys, lambda: page_values(v_rows, v_spec, table), True)

        def read(name, rows, spec):  # (n, users, ...): a shared cache's one batch read by every user
            held = self._get(in_rows, name) if span is None else leading_values(rows, spec, span)
            return held if held.shape[1] == users else np.broadcast_to(held, (n, users, *held.shape[2:]))

        return self._with_values(read("input_tensor_k", k_rows, k_spec), lambda: read("input_tensor_v", v_rows, v_spec))

    def _with_values(self, keys: np.ndarray, values, by_head: bool = False) -> tuple[np.ndarray, np.ndarray, bool]:
        """The keys, the values (read only when they are not the keys' first columns), ``by_head``."""
        return keys, (keys[..., : self.head_dim_v] if self.head_dim_v else values()), by_head

    def _sink(self, in_rows, n: int, heads: int, kv_heads: int, group: int) -> np.ndarray | None:
        if "attention_sink" not in self.names:
            return None
        sink = self._get(in_rows, "attention_sink")[:, :heads, 0] * self.factor  # scaled as the scores
        return sink.reshape(n, 1, kv_heads, group, 1)

    def _positions(self, in_rows, n: int, users: int) -> np.ndarray | None:
        """``(n, users)`` positions of a causal call (checked against the cache), else None."""
        if not self.is_causal:
            return None
        pos = self.pos if self.pos is not None else self._get(in_rows, "cur_pos_tensor", True).reshape(n, -1)[:, :users]
        _users, _heads, _kv, seq, _d = self.dims
        total = seq
        if "page_table_tensor" in self.names:
            total = seq * self.specs[self.names.index("page_table_tensor")].shape[-1]
        if self.modulo is None and (pos >= total).any():
            raise MeshnnValueError(f"cur_pos {int(pos.max())} is past the {total} cached positions")
        return pos

    def _keep(self, pos: np.ndarray | None, n: int, users: int, total: int) -> np.ndarray | None:
        """``(n, users, total)`` True where a user attends a position (None: everywhere)."""
        if pos is None:
            return None
        rows = np.arange(total)
        keep = rows <= pos[..., None]
        if self.window is not None:
            keep &= rows > pos[..., None] - self.window
        return np.broadcast_to(keep, (n, users, total))
