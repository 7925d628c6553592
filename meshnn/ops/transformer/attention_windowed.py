"""``ttnn.transformer.windowed_scaled_dot_product_attention`` (tt-metal of 2026; Qwen2.5-VL's vision
attention): :func:`~meshnn.ops.transformer.attention.scaled_dot_product_attention` whose mask is
block-diagonal, built from ``cu_window_seqlens`` ``[w + 1]`` (cumulative window lengths, a device
tensor read when the kernel runs): query ``i`` attends key ``j`` when both lie in one window
``[cu[t], cu[t + 1])``.  Not causal.  A query in no window attends nothing: its softmax, and its
output row, are NaN (no window covers it; tt-metal's windows cover the sequence).  The checks of
q, k, v are SDPA's; ``cu_window_seqlens`` is a 1-D UINT32 or INT32 ROW_MAJOR tensor in DRAM of at
least 2 elements (tt-metal's checks and messages).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' launch,
checks, outputs, values and config, and the transformer ops' attention and cache_args.
"""

from __future__ import annotations

import itertools

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import check_queue_id, device_input, same_mesh
from meshnn.ops.config import SDPAProgramConfig, check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.attention import attend, sdpa_dims, sdpa_inputs, sdpa_scale
from meshnn.ops.transformer.cache_args import integers
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def window_mask(bounds: np.ndarray, s: int, sk: int) -> np.ndarray:
    """``(s, s_k)`` float32: 0 where query and key share a window ``[bounds[t], bounds[t + 1])``,
    -inf elsewhere."""
    mask = np.full((s, sk), -np.inf, np.float32)
    for start, end in itertools.pairwise(int(b) for b in bounds):
        mask[max(start, 0) : end, max(start, 0) : end] = 0.0
    return mask


def _bounds_input(op: str, tensor: object) -> Tensor:
    """``cu_window_seqlens`` checked as tt-metal checks it."""
    t = device_input(op, "cu_window_seqlens", tensor)
    if len(t.shape) != 1:
        raise MeshnnValueError(f"ttnn.{op}: cu_window_seqlens must be a 1D tensor, got {list(t.shape)}")
    if t.shape[0] < 2:
        raise MeshnnValueError(f"ttnn.{op}: cu_window_seqlens must have at least 2 elements")
    if t.dtype not in (DataType.UINT32, DataType.INT32):
        raise MeshnnTypeError(f"ttnn.{op}: cu_window_seqlens must be uint32 or int32, got {t.dtype}")
    if t.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: cu_window_seqlens must be in row-major layout")
    if t.spec.memory_config.buffer_type is not BufferType.DRAM:
        raise MeshnnValueError(f"ttnn.{op}: cu_window_seqlens must be in DRAM")
    return t


@register("transformer.windowed_scaled_dot_product_attention", kind=OpKind.TRANSFORMER, family=OpFamily.SDPA)
def windowed_scaled_dot_product_attention(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    cu_window_seqlens: Tensor,
    *,
    scale: float | None = None,
    memory_config: MemoryConfig | None = None,
    program_config: SDPAProgramConfig | None = None,
    compute_kernel_config: object = None,
    queue_id: int = 0,
) -> Tensor:
    """``softmax(q @ k^T * scale + window mask) @ v`` (see the module's text) for q ``[b, nqh, s,
    d]``, k and v ``[b, nkv, s_k, d]``; ``scale`` defaults to 1 / sqrt(d).  The output has q's
    shape and dtype, in TILE layout."""
    op = "transformer.windowed_scaled_dot_product_attention"
    named, mesh = sdpa_inputs(
        op, (input_tensor_q, input_tensor_k, input_tensor_v), None, False, program_config, dram_only=True
    )
    dims = sdpa_dims(op, named, False, program_config)
    named["cu_window_seqlens"] = _bounds_input(op, cu_window_seqlens)
    mesh = same_mesh(op, named)
    scale = sdpa_scale(op, scale, dims[-1])
    queue_id = check_queue_id(op, mesh, queue_id)
    spec = out_spec_like(named["input_tensor_q"], memory_config=memory_config, op=op)
    inputs = list(named.values())
    specs = [t.spec for t in inputs]
    factor, s, sk = np.float32(scale), dims[3], dims[4]

    def kernel(in_rows, out_rows, coords) -> None:
        qv, kv, vv = (logical_values(r, sp) for r, sp in zip(in_rows[:3], specs[:3], strict=True))
        bounds = integers(in_rows[3], specs[3])
        bias = np.stack([window_mask(row, s, sk) for row in bounds])[:, None, None, None]
        write_values(out_rows[0], attend(qv, kv, vv, factor, bias), spec, owned=True)

    attrs = {
        "scale": float(scale),
        "memory_config": spec.memory_config,
        "program_config": program_config,
        "compute_kernel_config": check_compute_kernel_config(op, compute_kernel_config),
    }
    return launch(op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, rowwise=True, attrs=attrs)[0]
