"""Multi-latent attention (tt-metal of 2026; DeepSeek's MLA): ``ttnn.transformer.flash_mla_prefill``,
``chunked_flash_mla_prefill`` and the decodes ``flash_multi_latent_attention_decode`` /
``paged_flash_multi_latent_attention_decode`` (the values the keys' first ``head_dim_v`` columns:
``input_tensor_v`` None, tt-metal's ``reuse_k``; or a values cache of K's shape, ``head_dim_v`` wide).
The keys are the latent cache ``[.., kv heads, s_k, d]``
(``kv_lora_rank`` latent columns, then the rope columns); given ``head_dim_v`` the values are the
keys' first ``head_dim_v`` columns, read from the same tensor, and the output is ``[b, q heads, s,
head_dim_v]``.  ``flash_mla_prefill`` also takes an ``input_tensor_v`` ``[b, kv heads, s_k, d_v]``
in its place (tt-metal's second overload: values in embedding space).  Otherwise each is
:func:`~meshnn.ops.transformer.attention.scaled_dot_product_attention` /
``chunked_scaled_dot_product_attention`` with SDPA's checks, computed in float32 and rounded once
into q's dtype.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' launch, checks, outputs, values
and config, and the transformer ops' attention modules and checks.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.ops.checks import check_queue_id, int_arg
from meshnn.ops.config import SDPAProgramConfig, check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.attention import (
    SDPA_DTYPES,
    attend,
    causal_bias,
    mask_bias,
    sdpa_dims,
    sdpa_inputs,
    sdpa_scale,
)
from meshnn.ops.transformer.attention_chunked import _inputs as chunked_inputs
from meshnn.ops.transformer.attention_chunked import chunked_attention
from meshnn.ops.transformer.attention_decode import _decode
from meshnn.ops.transformer.checks import of_rank, tile_input
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _head_dim_v(op: str, value: object, d: int) -> int:
    """``head_dim_v`` checked: a positive int, at most the keys' head size ``d``."""
    dv = int_arg(op, "head_dim_v", value)
    if not 0 < dv <= d:
        raise MeshnnValueError(f"ttnn.{op}: head_dim_v ({dv}) must be positive and at most the keys' head size ({d})")
    return dv


def _values(op: str, named: dict[str, Tensor], third: object, dims: tuple) -> int:
    """The values' head size: ``head_dim_v`` (values read from the keys), or a values tensor's
    (added to ``named``, checked against the keys: ``[b, kv heads or q heads, s_k, d_v]``: with q's
    heads each q head has its own values, the keys shared)."""
    b, nqh, nkv, _s, sk, d = dims
    if not isinstance(third, Tensor):
        return _head_dim_v(op, third, d)
    v = tile_input(op, "input_tensor_v", third, SDPA_DTYPES)
    vb, vh, vs, dv = of_rank(op, "input_tensor_v", v, 4, "[b, nkv, s_k, d_v]")
    if (vb, vs) != (b, sk) or vh not in (nkv, nqh):
        raise MeshnnValueError(f"ttnn.{op}: input_tensor_v {[vb, vh, vs, dv]} must be [{b}, {nkv} or {nqh}, {sk}, d_v]")
    named["input_tensor_v"] = v
    return dv


@register("transformer.flash_mla_prefill", kind=OpKind.TRANSFORMER, family=OpFamily.SDPA)
def flash_mla_prefill(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    head_dim_v: int | Tensor | None = None,
    *,
    input_tensor_v: Tensor | None = None,
    attn_mask: Tensor | None = None,
    is_causal: bool = True,
    scale: float | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: SDPAProgramConfig | None = None,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> Tensor:
    """MLA's prefill attention (see the module's text); the third argument is ``head_dim_v`` or
    the values tensor (also taken as ``input_tensor_v=``), exactly one of them."""
    op = "transformer.flash_mla_prefill"
    if (head_dim_v is None) == (input_tensor_v is None):
        raise MeshnnValueError(f"ttnn.{op}: give head_dim_v or input_tensor_v, exactly one")
    third = input_tensor_v if input_tensor_v is not None else head_dim_v
    k = input_tensor_k
    named, mesh = sdpa_inputs(op, (input_tensor_q, k, k), attn_mask, is_causal, program_config)
    dims = sdpa_dims(op, named, is_causal, program_config)
    del named["input_tensor_v"]  # (the keys stood for it in the checks)
    dv = _values(op, named, third, dims)
    scale = sdpa_scale(op, scale, dims[-1])
    queue_id = check_queue_id(op, mesh, queue_id)
    b, nqh, _nkv, s, _sk, _d = dims
    config = memory_config or DRAM_MEMORY_CONFIG  # (ttnn's default output config, whatever q's)
    spec = out_spec_like(named["input_tensor_q"], shape=(b, nqh, s, dv), memory_config=config, op=op)
    specs = {name: t.spec for name, t in named.items()}
    names, factor = list(named), np.float32(scale)

    def kernel(in_rows, out_rows, coords) -> None:
        rows = dict(zip(names, in_rows, strict=True))
        qv, kv = (logical_values(rows[name], specs[name]) for name in ("input_tensor_q", "input_tensor_k"))
        vv = logical_values(rows["input_tensor_v"], specs["input_tensor_v"]) if "input_tensor_v" in rows else kv
        if vv.shape[2] != kv.shape[2]:  # values per q head: each q head its own copy of its keys
            kv = np.repeat(kv, vv.shape[2] // kv.shape[2], axis=2)
        bias = causal_bias(s) if is_causal else None
        if "attn_mask" in rows:
            bias = mask_bias(logical_values(rows["attn_mask"], specs["attn_mask"]), kv.shape[2])
        write_values(out_rows[0], attend(qv, kv, vv[..., :dv], factor, bias), spec, owned=True)

    attrs = {
        "head_dim_v": dv,
        "is_causal": is_causal,
        "scale": float(scale),
        "memory_config": spec.memory_config,
        "program_config": program_config,
        "compute_kernel_config": check_compute_kernel_config(op, compute_kernel_config),
    }
    inputs = list(named.values())
    return launch(op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, rowwise=True, attrs=attrs)[0]


@register("transformer.chunked_flash_mla_prefill", kind=OpKind.TRANSFORMER, family=OpFamily.SDPA)
def chunked_flash_mla_prefill(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    head_dim_v: int,
    page_table_tensor: Tensor,
    chunk_start_idx: int,
    *,
    scale: float | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> Tensor:
    """``chunked_scaled_dot_product_attention`` over a paged latent cache ``[blocks, kv heads,
    block_size, d]`` whose first ``head_dim_v`` columns are the values (see the module's text)."""
    op = "transformer.chunked_flash_mla_prefill"
    tensors = (input_tensor_q, input_tensor_k, input_tensor_k, page_table_tensor)
    named, start = chunked_inputs(op, tensors, chunk_start_idx, program_config)
    del named["input_tensor_v"]  # (the keys stood for it in the checks)
    dv = _head_dim_v(op, head_dim_v, named["input_tensor_k"].shape[-1])
    configs = (scale, memory_config, program_config, compute_kernel_config, queue_id)
    return chunked_attention(op, named, start, configs, head_dim_v=dv)


def _mla_decode(op: str, tensors: tuple, head_dim_v: object, options: tuple, configs: tuple) -> Tensor:
    """A decode whose values are the keys' first ``head_dim_v`` columns, or (``input_tensor_v`` given) the
    values tensor's, ``head_dim_v`` wide (tt-metal's check: its head size is ``head_dim_v``)."""
    q, k, v, table = tensors
    keys = tile_input(op, "input_tensor_k", k, SDPA_DTYPES)
    dv = _head_dim_v(op, head_dim_v, keys.shape[-1])
    if v is not None:
        v = tile_input(op, "input_tensor_v", v, SDPA_DTYPES)
        if v.padded_shape[-1] != dv:
            raise MeshnnValueError(
                f"ttnn.{op}: Head dimension of V must be equal to head_dim_v, got {v.padded_shape[-1]} and {dv} "
                "(input_tensor_v)"
            )
    return _decode(op, (q, keys, keys if v is None else v, table), options, configs, head_dim_v=dv)


@register("transformer.flash_multi_latent_attention_decode", kind=OpKind.TRANSFORMER, family=OpFamily.SDPA_DECODE)
def flash_multi_latent_attention_decode(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor | None = None,
    head_dim_v: int | None = None,
    *,
    is_causal: bool = True,
    attn_mask: Tensor | None = None,
    cur_pos: list[int] | None = None,
    cur_pos_tensor: Tensor | None = None,
    attention_sink: Tensor | None = None,
    scale: float | None = None,
    sliding_window_size: int | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> Tensor:
    """``scaled_dot_product_attention_decode`` of MLA: output ``[1, users, q heads, head_dim_v]``."""
    return _mla_decode(
        "transformer.flash_multi_latent_attention_decode",
        (input_tensor_q, input_tensor_k, input_tensor_v, None),
        head_dim_v,
        (is_causal, attn_mask, cur_pos, cur_pos_tensor, attention_sink, scale, sliding_window_size),
        (memory_config, program_config, compute_kernel_config, queue_id),
    )


@register("transformer.paged_flash_multi_latent_attention_decode", kind=OpKind.TRANSFORMER, family=OpFamily.SDPA_DECODE)
def paged_flash_multi_latent_attention_decode(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor | None = None,
    head_dim_v: int | None = None,
    page_table_tensor: Tensor | None = None,
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
    queue_id: int = 0,
) -> Tensor:
    """``paged_scaled_dot_product_attention_decode`` of MLA: output ``[1, users, q heads, head_dim_v]``."""
    op = "transformer.paged_flash_multi_latent_attention_decode"
    if page_table_tensor is None:
        raise MeshnnValueError(f"ttnn.{op}: Must have page_table tensor for paged attention")
    if is_causal is True and cur_pos_tensor is None:
        raise MeshnnValueError(f"ttnn.{op}: Must have cur_pos tensor for paged attention in causal mode")
    return _mla_decode(
        op,
        (input_tensor_q, input_tensor_k, input_tensor_v, page_table_tensor),
        head_dim_v,
        (is_causal, attn_mask, None, cur_pos_tensor, attention_sink, scale, sliding_window_size),
        (memory_config, program_config, compute_kernel_config, queue_id),
    )
