"""``ttnn.transformer`` and its ``ttnn.experimental`` relatives: the fused attention ops of a
TTNN transformer model, each one MeshWorkload that computes in float32 and rounds once into its
output dtype.

- ``scaled_dot_product_attention``: softmax(q k^T * scale + mask) v per head, causal or with an
  additive mask, grouped-query heads (``nqh`` a multiple of ``nkv``); the checks of tt-metal's
  SDPA (TILE inputs in DRAM of bfloat16 / bfloat8_b / bfloat4_b, no padding but on the sequence
  axes, a ``[b, 1, s, s_k]`` mask whose sequence lengths divide into the chunk sizes).
- ``rotary_embedding``: ``x * cos + rotate_half(x) * sin`` with ``rotate_half([a | b]) = [-b | a]``
  (the GPT-NeoX / Llama form); its output has the input's padded shape, as ttnn's does.
- ``split_query_key_value_and_split_heads``: a fused ``[b, s, (nh + 2 nkv) * d]`` projection into
  ``q [b, nh, s, d]``, ``k [b, nkv, d, s]`` (or ``[b, nkv, s, d]``) and ``v [b, nkv, s, d]``.
- ``concatenate_heads``: ``[b, nh, s, d]`` back to ``[b, s, nh * d]``.
- ``nlp_create_qkv_heads`` / ``nlp_concat_heads`` (``ttnn.experimental``): the same two moves for
  the ``[b, 1, s, w]`` tensors of tt-metal's model code.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.execution import (
    Output,
    check_queue_id,
    device_input,
    launch,
    logical_values,
    out_spec_like,
    same_mesh,
    write_values,
)
from meshnn.tensor.dtypes import DataType
from meshnn.tensor.layout import Layout
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.tensor import Tensor

SDPA_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B)
"""The dtypes tt-metal's SDPA reads (inputs and mask)."""

DEFAULT_CHUNK = 32
"""q_chunk_size and k_chunk_size without a program config (tt-metal's default)."""


@dataclass(frozen=True)
class SDPAProgramConfig:
    """``ttnn.SDPAProgramConfig``: the core grid and the Q / K chunk sizes (rows, multiples of 32)
    of the attention kernel.  The simulator computes every chunk at once; the sizes are checked as
    tt-metal checks them and decide which masks and sequence lengths are accepted."""

    compute_with_storage_grid_size: object = None
    q_chunk_size: int = DEFAULT_CHUNK
    k_chunk_size: int = DEFAULT_CHUNK
    exp_approx_mode: bool = False
    max_cores_per_head_batch: int = 16

    def __post_init__(self) -> None:
        for name in ("q_chunk_size", "k_chunk_size"):
            size = getattr(self, name)
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0 or size % 32:
                raise MeshnnValueError(f"SDPAProgramConfig: {name} must be a positive multiple of 32, got {size!r}")


def _tile_input(op: str, name: str, tensor: object, dtypes: tuple[DataType, ...] | None = None) -> Tensor:
    """A device tensor in TILE layout (of one of ``dtypes``, when given)."""
    t = device_input(op, name, tensor)
    if t.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: {name} {list(t.shape)} must be in TILE layout, it is {t.layout}")
    if dtypes is not None and t.dtype not in dtypes:
        allowed = ", ".join(str(d) for d in dtypes)
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be one of {allowed}, got {t.dtype}")
    if dtypes is None and not t.dtype.is_float:
        raise MeshnnTypeError(f"ttnn.{op}: {name} must hold floating-point values, got {t.dtype}")
    return t


def _rank(op: str, name: str, tensor: Tensor, rank: int, dims: str) -> tuple[int, ...]:
    shape = tuple(tensor.shape)
    if len(shape) != rank:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be {dims}, got {list(shape)}")
    return shape


def _unsupported(op: str, **options: object) -> None:
    for name, value in options.items():
        if value is not None:
            raise NotImplementedByMeshnn(f"{op}({name}=...)")


# ------------------------------------------------------------------------------------- SDPA


def scaled_dot_product_attention(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    *,
    attn_mask: Tensor | None = None,
    is_causal: bool = True,
    scale: float | None = None,
    sliding_window_size: int | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: SDPAProgramConfig | None = None,
    compute_kernel_config: object = None,
    attention_sink: Tensor | None = None,
    queue_id: int = 0,
) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` for q ``[b, nqh, s, d]`` and k, v ``[b, nkv, s_k, d]``
    (each k / v head serves ``nqh / nkv`` q heads), on every device.  ``is_causal`` (the default)
    masks key positions after the query's (s == s_k); otherwise ``attn_mask`` ``[b, 1, s, s_k]``
    is added to every head's scores, if given.  ``scale`` defaults to 1 / sqrt(d).  The output
    has q's shape and dtype, in TILE layout."""
    op = "transformer.scaled_dot_product_attention"
    _unsupported(op, sliding_window_size=sliding_window_size, attention_sink=attention_sink)
    q = _tile_input(op, "input_tensor_q", input_tensor_q, SDPA_DTYPES)
    k = _tile_input(op, "input_tensor_k", input_tensor_k, SDPA_DTYPES)
    v = _tile_input(op, "input_tensor_v", input_tensor_v, SDPA_DTYPES)
    named = {"input_tensor_q": q, "input_tensor_k": k, "input_tensor_v": v}
    if not isinstance(is_causal, bool):
        raise MeshnnTypeError(f"ttnn.{op}: is_causal must be a bool, got {is_causal!r}")
    if is_causal and attn_mask is not None:
        raise MeshnnValueError(f"ttnn.{op}: is_causal and attn_mask cannot both be given (a causal op makes its mask)")
    mask = None
    if attn_mask is not None:
        mask = named["attn_mask"] = _tile_input(op, "attn_mask", attn_mask, SDPA_DTYPES)
    if program_config is not None and not isinstance(program_config, SDPAProgramConfig):
        raise MeshnnTypeError(f"ttnn.{op}: program_config must be a ttnn.SDPAProgramConfig, got {program_config!r}")
    mesh = same_mesh(op, named)
    for name, t in named.items():
        if t.spec.memory_config.buffer_type is not BufferType.DRAM:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be in DRAM, it is in {t.spec.memory_config.buffer_type}")
    b, nqh, s, d = _rank(op, "input_tensor_q", q, 4, "[b, nqh, s, d]")
    kb, nkv, sk, kd = _rank(op, "input_tensor_k", k, 4, "[b, nkv, s_k, d]")
    vshape = _rank(op, "input_tensor_v", v, 4, "[b, nkv, s_k, d]")
    if (kb, kd) != (b, d) or vshape != (b, nkv, sk, d):
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor_k {[kb, nkv, sk, kd]} and input_tensor_v {list(vshape)} must be "
            f"[{b}, nkv, s_k, {d}] (q's batch and head size, the same nkv and s_k)"
        )
    if nkv == 0 or nqh % nkv:
        raise MeshnnValueError(f"ttnn.{op}: q's {nqh} heads must be a multiple of k's and v's {nkv}")
    for name, t in (("input_tensor_q", q), ("input_tensor_k", k), ("input_tensor_v", v)):
        padded = tuple(t.spec.padded_shape)
        if padded[-1] != t.shape[-1]:
            raise MeshnnValueError(
                f"ttnn.{op}: {name} {list(t.shape)} is padded on the head dimension ({padded[-1]}); only the "
                "sequence may be padded"
            )
    if is_causal and s != sk:
        raise MeshnnValueError(f"ttnn.{op}: causal attention needs q and k of one sequence length, got {s} and {sk}")
    if mask is not None:
        if tuple(mask.shape) != (b, 1, s, sk):
            raise MeshnnValueError(
                f"ttnn.{op}: attn_mask must be [{b}, 1, {s}, {sk}] (q's batch, one head broadcast over all, "
                f"s x s_k), got {list(mask.shape)}"
            )
        q_chunk = program_config.q_chunk_size if program_config is not None else DEFAULT_CHUNK
        k_chunk = program_config.k_chunk_size if program_config is not None else DEFAULT_CHUNK
        if s % q_chunk or sk % k_chunk:
            raise MeshnnValueError(
                f"ttnn.{op}: with attn_mask, q's sequence {s} must divide by q_chunk_size {q_chunk} and k's {sk} "
                f"by k_chunk_size {k_chunk}"
            )
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    elif isinstance(scale, bool) or not isinstance(scale, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: scale must be a number, got {scale!r}")
    queue_id = check_queue_id(op, mesh, queue_id)
    spec = out_spec_like(q, memory_config=memory_config, op=op)
    inputs = list(named.values())
    specs = [t.spec for t in inputs]
    group = nqh // nkv
    factor = np.float32(scale)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        qv, kv, vv = (logical_values(r, sp) for r, sp in zip(in_rows[:3], specs[:3], strict=True))
        n = qv.shape[0]
        grouped = qv.reshape(n, b, nkv, group, s, d) * factor  # (scaling q: s x d values, not s x s_k)
        scores = np.matmul(grouped, np.swapaxes(kv, -1, -2)[:, :, :, None])  # (n, b, nkv, group, s, s_k)
        if is_causal:
            scores += _causal_bias(s)
        elif mask is not None:
            scores += logical_values(in_rows[3], specs[3])[:, :, :, None]  # (n, b, 1, 1, s, s_k)
        with np.errstate(invalid="ignore"):  # a row masked everywhere gives NaN, as its softmax does
            scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        total = scores.sum(axis=-1, keepdims=True)
        out = np.matmul(scores, vv[:, :, :, None])  # (n, b, nkv, group, s, d)
        out /= total  # normalised last, as flash attention does (s x d values, not s x s_k)
        write_values(out_rows[0], out.reshape((n, b, nqh, s, d)), spec, owned=True)

    return launch(op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, rowwise=True, reads_memos=True)[0]


_CAUSAL: dict[int, np.ndarray] = {}


def _causal_bias(s: int) -> np.ndarray:
    """``(s, s)`` float32: 0 where key j <= query i, -inf after (read-only, made once per s)."""
    bias = _CAUSAL.get(s)
    if bias is None:
        bias = np.triu(np.full((s, s), -np.inf, np.float32), 1)
        bias.flags.writeable = False
        _CAUSAL[s] = bias
    return bias


# ----------------------------------------------------------------------------------- rotary


def rotary_embedding(
    input_tensor: Tensor,
    cos_cache: Tensor,
    sin_cache: Tensor,
    token_index: int | None = None,
    *,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> Tensor:
    """``x * cos + rotate_half(x) * sin`` over the last dimension (its halves ``[a | b]`` rotated
    to ``[-b | a]``), row ``i`` of the sequence (second to last axis) taking row ``i`` of the caches
    ``[1, 1, s_cache, d]``.  With ``token_index`` (decode: x ``[1, 1, batch, d]``, sequence length
    1), every row takes the caches' row ``token_index``.  The output has the input's padded shape
    (ttnn's: the sequence rounded up to whole tiles, the pad rows zero)."""
    op = "experimental.rotary_embedding"
    x = _tile_input(op, "input_tensor", input_tensor)
    cos = _tile_input(op, "cos_cache", cos_cache)
    sin = _tile_input(op, "sin_cache", sin_cache)
    mesh = same_mesh(op, {"input_tensor": x, "cos_cache": cos, "sin_cache": sin})
    shape = tuple(x.shape)
    padded = tuple(x.spec.padded_shape)
    width = padded[-1]
    if len(shape) < 2:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor must have rank >= 2 ([..., sequence, head_dim]), got {list(shape)}"
        )
    if width % 64 or shape[-1] != width:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor {list(shape)} needs a last dimension that divides into pairs of tiles "
            f"(a multiple of 64), got {shape[-1]}"
        )
    if cos.dtype is not sin.dtype or tuple(cos.spec.padded_shape) != tuple(sin.spec.padded_shape):
        raise MeshnnValueError(
            f"ttnn.{op}: cos_cache {list(cos.shape)} ({cos.dtype}) and sin_cache {list(sin.shape)} ({sin.dtype}) "
            "must match in shape and dtype"
        )
    cache = tuple(cos.shape)
    if len(cache) != 4 or cache[:2] != (1, 1) or cache[-1] != shape[-1]:
        raise MeshnnValueError(
            f"ttnn.{op}: cos_cache and sin_cache must be [1, 1, s_cache, {shape[-1]}], got {list(cache)}"
        )
    rows = padded[-2]
    if token_index is not None:
        if isinstance(token_index, bool) or not isinstance(token_index, int | np.integer) or token_index < 0:
            raise MeshnnTypeError(f"ttnn.{op}: token_index must be a non-negative int, got {token_index!r}")
        if len(shape) != 4 or shape[0] != 1:
            raise MeshnnValueError(
                f"ttnn.{op}: with token_index the input is [1, 1, batch, d] (sequence length 1 first), "
                f"got {list(shape)}"
            )
        if token_index >= cache[2]:
            raise MeshnnValueError(f"ttnn.{op}: token_index {token_index} is past the caches' {cache[2]} rows")
    elif cache[2] < shape[-2]:
        raise MeshnnValueError(
            f"ttnn.{op}: the caches' {cache[2]} rows do not cover input_tensor's sequence of {shape[-2]}"
        )
    queue_id = check_queue_id(op, mesh, queue_id)
    out_shape = (*shape[:-2], rows, shape[-1])
    spec = out_spec_like(x, shape=out_shape, memory_config=memory_config, op=op)
    specs = (x.spec, cos.spec, sin.spec)
    half, seq = shape[-1] // 2, shape[-2]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        xv, cv, sv = (logical_values(r, sp) for r, sp in zip(in_rows, specs, strict=True))
        if token_index is None:
            cv, sv = cv[..., :seq, :], sv[..., :seq, :]
        else:
            cv, sv = cv[..., token_index : token_index + 1, :], sv[..., token_index : token_index + 1, :]
        n = xv.shape[0]
        lead = (1,) * (xv.ndim - 3)
        cv, sv = cv.reshape((n, *lead, *cv.shape[-2:])), sv.reshape((n, *lead, *sv.shape[-2:]))
        out = np.zeros((n, *out_shape), np.float32) if rows != seq else np.empty((n, *out_shape), np.float32)
        y = out[..., :seq, :]
        np.multiply(xv, cv, out=y)
        product = np.multiply(xv[..., half:], sv[..., :half])  # (one scratch for both halves' products)
        np.subtract(y[..., :half], product, out=y[..., :half])
        np.multiply(xv[..., :half], sv[..., half:], out=product)
        np.add(y[..., half:], product, out=y[..., half:])
        write_values(out_rows[0], out, spec)

    inputs = [x, cos, sin]
    return launch(op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, rowwise=True, reads_memos=True)[0]


# -------------------------------------------------------------------------------- head moves


def split_query_key_value_and_split_heads(
    input_tensor: Tensor,
    kv_input_tensor: Tensor | None = None,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    transpose_key: bool = True,
    memory_config: MemoryConfig | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Split a fused projection ``[b, s, (num_heads + 2 num_kv_heads) * d]`` (q's heads, then k's,
    then v's; with ``kv_input_tensor``, q ``[b, s, num_heads * d]`` and k, v from
    ``[b, s, 2 num_kv_heads * d]``) into q ``[b, num_heads, s, d]``, k ``[b, num_kv_heads, d, s]``
    (``[b, num_kv_heads, s, d]`` when not ``transpose_key``) and v ``[b, num_kv_heads, s, d]``."""
    return _split_heads(
        "transformer.split_query_key_value_and_split_heads",
        ("input_tensor", input_tensor),
        ("kv_input_tensor", kv_input_tensor),
        num_heads,
        num_kv_heads,
        ("transpose_key", transpose_key),
        memory_config,
        rank=3,
    )


def nlp_create_qkv_heads(
    input: Tensor,
    input_kv: Tensor | None = None,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    transpose_k_heads: bool = True,
    kv_tied: bool = False,
    memory_config: MemoryConfig | None = None,
    output_tensors: object = None,
    head_split: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    """``ttnn.experimental.nlp_create_qkv_heads``: the head split of a fused ``[b, 1, s, (num_heads
    + 2 num_kv_heads) * d]`` projection (TILE, float32 / bfloat16 / bfloat8_b), as
    :func:`split_query_key_value_and_split_heads` does for ``[b, s, ...]``.  ``head_split`` only
    changes how tt-metal shares the work out (the output is the same)."""
    op = "experimental.nlp_create_qkv_heads"
    _unsupported(op, output_tensors=output_tensors)
    if kv_tied:
        raise NotImplementedByMeshnn(f"{op}(kv_tied=True)")
    return _split_heads(
        op,
        ("input", input),
        ("input_kv", input_kv),
        num_heads,
        num_kv_heads,
        ("transpose_k_heads", transpose_k_heads),
        memory_config,
        rank=4,
    )


NLP_DTYPES = (DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B)
"""The dtypes tt-metal's nlp_* head ops take."""


def _split_heads(
    op: str,
    q_input: tuple[str, object],
    kv_input: tuple[str, object],
    num_heads: object,
    num_kv_heads: object,
    transpose: tuple[str, object],
    memory_config: MemoryConfig | None,
    *,
    rank: int,
) -> tuple[Tensor, Tensor, Tensor]:
    """The head split of both ops: inputs ``[b, s, w]`` (rank 3) or ``[b, 1, s, w]`` (rank 4, the
    nlp op's, TILE of its dtypes), each ``(name, value)`` for the messages."""
    x = _tile_input(op, *q_input, NLP_DTYPES) if rank == 4 else device_input(op, *q_input)
    named = {q_input[0]: x}
    if kv_input[1] is not None:
        named[kv_input[0]] = device_input(op, kv_input[0], kv_input[1])
    for name, count in (("num_heads", num_heads), ("num_kv_heads", num_kv_heads)):
        if (count is not None or name == "num_heads") and (
            isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1
        ):
            raise MeshnnValueError(f"ttnn.{op}: {name} must be a positive int, got {count!r}")
    transpose_name, transpose_key = transpose
    if not isinstance(transpose_key, bool):
        raise MeshnnTypeError(f"ttnn.{op}: {transpose_name} must be a bool, got {transpose_key!r}")
    heads = int(num_heads)  # type: ignore[call-overload]
    kv_heads = heads if num_kv_heads is None else int(num_kv_heads)  # type: ignore[call-overload]
    mesh = same_mesh(op, named)
    if rank == 4:
        b, one, s, width = _rank(op, q_input[0], x, 4, "[batch, 1, sequence, width]")
        if one != 1:
            raise MeshnnValueError(f"ttnn.{op}: {q_input[0]} must be [batch, 1, sequence, width], got {list(x.shape)}")
    else:
        b, s, width = _rank(op, q_input[0], x, 3, "[batch, sequence, hidden]")
    lead = tuple(x.shape[:-1])
    if kv_input[1] is None:
        if width % (heads + 2 * kv_heads):
            raise MeshnnValueError(
                f"ttnn.{op}: {q_input[0]}'s width {width} does not split into {heads} + 2 x {kv_heads} heads"
            )
        d = width // (heads + 2 * kv_heads)
    else:
        kv = named[kv_input[0]]
        if kv.dtype is not x.dtype or kv.layout is not x.layout:
            raise MeshnnValueError(f"ttnn.{op}: {kv_input[0]} must have {q_input[0]}'s dtype and layout")
        if width % heads:
            raise MeshnnValueError(f"ttnn.{op}: {q_input[0]}'s width {width} does not split into {heads} heads")
        d = width // heads
        if tuple(kv.shape) != (*lead, 2 * kv_heads * d):
            raise MeshnnValueError(
                f"ttnn.{op}: {kv_input[0]} must be {[*lead, 2 * kv_heads * d]} (2 x {kv_heads} heads of {d}), "
                f"got {list(kv.shape)}"
            )
    key_shape = (b, kv_heads, d, s) if transpose_key else (b, kv_heads, s, d)
    shapes = ((b, heads, s, d), key_shape, (b, kv_heads, s, d))
    layout = Layout.TILE if rank == 4 else None  # (the nlp op's outputs are tiles)
    out_specs = [out_spec_like(x, shape=shape, layout=layout, memory_config=memory_config, op=op) for shape in shapes]
    specs = [t.spec for t in named.values()]
    exact = not x.dtype.is_block_float

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        parts = [logical_values(r, sp, as_float=False) for r, sp in zip(in_rows, specs, strict=True)]
        fused = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)
        n = fused.shape[0]
        split = fused.reshape(n, b, s, heads + 2 * kv_heads, d)
        query = split[:, :, :, :heads].transpose(0, 1, 3, 2, 4)
        key = split[:, :, :, heads : heads + kv_heads].transpose(0, 1, 3, 2, 4)
        value = split[:, :, :, heads + kv_heads :].transpose(0, 1, 3, 2, 4)
        if transpose_key:
            key = key.swapaxes(-1, -2)
        for out, values, spec in zip(out_rows, (query, key, value), out_specs, strict=True):
            write_values(out, np.ascontiguousarray(values), spec, exact=exact)

    outputs = [Output(spec) for spec in out_specs]
    q, k, v = launch(op, mesh, list(named.values()), outputs, kernel, rowwise=True, reads_memos=True)
    return q, k, v


def concatenate_heads(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``[b, num_heads, s, d]`` to ``[b, s, num_heads * d]``: each position's heads side by side."""
    return _concat_heads("transformer.concatenate_heads", input_tensor, memory_config, keep_one=False)


def nlp_concat_heads(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.experimental.nlp_concat_heads``: ``[b, num_heads, s, d]`` (TILE) to
    ``[b, 1, s, num_heads * d]``."""
    return _concat_heads("experimental.nlp_concat_heads", input_tensor, memory_config, keep_one=True)


def _concat_heads(op: str, input_tensor: object, memory_config: MemoryConfig | None, *, keep_one: bool) -> Tensor:
    x = (
        _tile_input(op, "input_tensor", input_tensor, NLP_DTYPES)
        if keep_one
        else device_input(op, "input_tensor", input_tensor)
    )
    mesh = same_mesh(op, {"input_tensor": x})
    b, heads, s, d = _rank(op, "input_tensor", x, 4, "[batch, num_heads, sequence, head_size]")
    shape = (b, 1, s, heads * d) if keep_one else (b, s, heads * d)
    spec = out_spec_like(x, shape=shape, memory_config=memory_config, op=op)
    exact = not x.dtype.is_block_float

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x.spec, as_float=False)
        moved = np.ascontiguousarray(values.transpose(0, 1, 3, 2, 4)).reshape(values.shape[0], *shape)
        write_values(out_rows[0], moved, spec, exact=exact, owned=True)

    return launch(op, mesh, [x], [Output(spec)], kernel, rowwise=True, reads_memos=True)[0]


# ------------------------------------------------------------------------------- namespaces


class OpNamespace(types.ModuleType):
    """``ttnn.transformer`` / ``ttnn.experimental``: the ops meshnn has under that name; any other
    name raises :class:`NotImplementedByMeshnn` naming it."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise NotImplementedByMeshnn(f"{self.__name__.removeprefix('meshnn.')}.{name}")


def _namespace(name: str, doc: str, **ops: object) -> OpNamespace:
    module = OpNamespace(f"meshnn.{name}", doc)
    for key, value in ops.items():
        setattr(module, key, value)
    return module


transformer = _namespace(
    "transformer",
    "ttnn.transformer: fused attention ops.",
    scaled_dot_product_attention=scaled_dot_product_attention,
    split_query_key_value_and_split_heads=split_query_key_value_and_split_heads,
    concatenate_heads=concatenate_heads,
    SDPAProgramConfig=SDPAProgramConfig,
)
experimental = _namespace(
    "experimental",
    "ttnn.experimental: the experimental ops meshnn has.",
    rotary_embedding=rotary_embedding,
    concatenate_heads=concatenate_heads,
    nlp_create_qkv_heads=nlp_create_qkv_heads,
    nlp_concat_heads=nlp_concat_heads,
)
