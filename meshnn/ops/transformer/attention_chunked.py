"""``ttnn.transformer.chunked_scaled_dot_product_attention``: causal prefill attention of one chunk
of a long prompt against the paged cache that already holds the prompt's earlier chunks (and this
one): q ``[b, q heads, s, d]`` holds positions ``chunk_start_idx .. chunk_start_idx + s``; query
``i`` attends cache positions ``0 .. chunk_start_idx + i`` of its user, read through
``page_table_tensor [b, max_blocks]`` from k, v ``[blocks, kv heads, block_size, d]`` (GQA as in
:mod:`attention`).  Computed in float32, rounded once into q's dtype; the output has q's shape.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.tensor`, the ops' launch,
checks, outputs, values and config, and the transformer ops' attention, attention_decode,
cache_args and checks.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnValueError
from meshnn.ops.checks import int_arg, same_mesh
from meshnn.ops.config import DEFAULT_CHUNK
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.attention import SDPA_DTYPES, sdpa_scale
from meshnn.ops.transformer.cache_args import integers, page_table_input
from meshnn.ops.transformer.cache_reads import gather_pages
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.transformer.products import product
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


@register("transformer.chunked_scaled_dot_product_attention", kind=OpKind.TRANSFORMER, family=OpFamily.SDPA)
def chunked_scaled_dot_product_attention(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    page_table_tensor: Tensor,
    chunk_start_idx: int,
    *,
    scale: float | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> Tensor:
    """Causal attention of a prompt chunk starting at ``chunk_start_idx`` (see the module docstring)."""
    op = "transformer.chunked_scaled_dot_product_attention"
    tensors = (input_tensor_q, input_tensor_k, input_tensor_v, page_table_tensor)
    named, start = _inputs(op, tensors, chunk_start_idx, program_config)
    configs = (scale, memory_config, program_config, compute_kernel_config, queue_id)
    return chunked_attention(op, named, start, configs)


def chunked_attention(op: str, named: dict[str, Tensor], start: int, configs: tuple, head_dim_v: int = 0) -> Tensor:
    """The chunk's attention of checked inputs (q, k, v, the page table); ``head_dim_v`` > 0: the
    values are the keys' first ``head_dim_v`` columns (MLA's), the output that wide."""
    scale, memory_config, program_config, compute_kernel_config, queue_id = configs
    q, k = named["input_tensor_q"], named["input_tensor_k"]
    b, heads, s, d = tuple(q.shape)
    kv_heads = k.shape[1]
    scale = sdpa_scale(op, scale, d)
    mesh = same_mesh(op, named)
    dv = head_dim_v or d
    shape = (b, heads, s, dv)
    spec = out_spec_like(q, shape=shape, memory_config=memory_config or DRAM_MEMORY_CONFIG, op=op)
    specs = {name: t.spec for name, t in named.items()}
    names = list(named)
    factor, group, length = np.float32(scale), heads // kv_heads, start + s
    bias = np.where(np.arange(length)[None, :] <= start + np.arange(s)[:, None], 0.0, -np.inf).astype(np.float32)

    def kernel(in_rows, out_rows, coords) -> None:
        rows = dict(zip(names, in_rows, strict=True))
        qv, kv = (logical_values(rows[name], specs[name]) for name in ("input_tensor_q", "input_tensor_k"))
        n = qv.shape[0]
        pages = integers(rows["page_table_tensor"], specs["page_table_tensor"]).reshape(n, b, -1)
        keys = gather_pages(kv, pages)[:, :, :, :length]  # (n, b, kv, length, d)
        if head_dim_v:
            values = keys[..., :dv]
        else:
            vv = logical_values(rows["input_tensor_v"], specs["input_tensor_v"])
            values = gather_pages(vv, pages)[:, :, :, :length]
        grouped = qv.reshape(n, b, kv_heads, group, s, d) * factor
        scores = product(grouped, np.swapaxes(keys, -1, -2)[:, :, :, None]) + bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        out = product(scores, values[:, :, :, None]) / scores.sum(axis=-1, keepdims=True)
        write_values(out_rows[0], out.reshape(n, *shape).astype(np.float32, copy=False), spec, owned=True)

    attrs = {
        "chunk_start_idx": start,
        "head_dim_v": dv,
        "scale": float(factor),
        "memory_config": spec.memory_config,
        "program_config": program_config,
        "compute_kernel_config": compute_kernel_config,
    }
    return launch(op, mesh, list(named.values()), [Output(spec)], kernel, queue_id=queue_id, rowwise=True, attrs=attrs)[
        0
    ]


def _inputs(op: str, tensors: tuple, chunk_start_idx: object, program_config: object) -> tuple[dict[str, Tensor], int]:
    """q, k, v and the page table checked, and the chunk's start."""
    input_tensor_q, input_tensor_k, input_tensor_v, page_table_tensor = tensors
    names = ("input_tensor_q", "input_tensor_k", "input_tensor_v")
    named = {
        n: tile_input(op, n, t, SDPA_DTYPES)
        for n, t in zip(names, (input_tensor_q, input_tensor_k, input_tensor_v), strict=True)
    }
    for name, t in named.items():
        if t.spec.memory_config.buffer_type is not BufferType.DRAM:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be in DRAM")
    q, k, v = named.values()
    if len(q.shape) != 4 or len(k.shape) != 4 or tuple(k.shape) != tuple(v.shape):
        raise MeshnnValueError(
            f"ttnn.{op}: q [b, heads, s, d] and paged k, v [blocks, kv heads, block, d] alike, got "
            f"{list(q.shape)}, {list(k.shape)}, {list(v.shape)}"
        )
    b, heads, s, d = tuple(q.shape)
    blocks, kv_heads, block, kd = tuple(k.shape)
    if kd != d or kv_heads == 0 or heads % kv_heads:
        raise MeshnnValueError(f"ttnn.{op}: k's {kv_heads} heads of {kd} must divide q's {heads} heads of {d}")
    named["page_table_tensor"] = table = page_table_input(op, page_table_tensor, b, blocks, "page_table_tensor")
    start = int_arg(op, "chunk_start_idx", chunk_start_idx)
    q_chunk = getattr(program_config, "q_chunk_size", DEFAULT_CHUNK) if program_config is not None else DEFAULT_CHUNK
    if start < 0 or (q_chunk and start % q_chunk):
        raise MeshnnValueError(
            f"ttnn.{op}: chunk_start_idx ({start}) must be a non-negative multiple of q_chunk_size ({q_chunk})"
        )
    if start + s > table.shape[1] * block:
        raise MeshnnValueError(
            f"ttnn.{op}: chunk_start_idx + s ({start + s}) is past the page table's {table.shape[1] * block} rows"
        )
    return named, start
