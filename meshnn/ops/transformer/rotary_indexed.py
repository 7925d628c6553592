"""``ttnn.experimental.deepseek_prefill.rotary_embedding_indexed``: ``rotary_embedding_llama``'s
prefill (``x * cos + (x @ T) * sin``, :func:`~meshnn.ops.transformer.rotary_llama.llama_rotated`) on
each device's chunk of a sequence-parallel prefill, whose cos / sin rows start at that device's own
offset into its shard of block-cyclically sharded caches.

Input ``[b, heads, chunk_local, d]`` per device; cos / sin ``[*, 1 or heads, shard rows, d]`` per
device (one set of frequencies for every head, or one per head when dim 1 equals the input's heads;
their dim 0 is not read: the kernel reads the caches' first batch).  Device ``i`` along
``cluster_axis`` rotates local row ``r`` with cache row ``32 * update_tile + r``, ``update_tile``
from ``kv_actual_global`` (:func:`~meshnn.ops.transformer.padded_chunks.update_tile`).  The scalar is
read when the op runs, not part of the program's key (tt-metal patches it into a cached program), so a
run of chunks reuses one program.  Computed in float32 and rounded once into the input's dtype.

Checks are tt-metal's (2026-06), with its messages.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and
the ops' launch, checks, config, outputs, values and transformer modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.padded_chunks import (
    TILE,
    check_axis,
    check_tile_aligned,
    farthest_update_tile,
    sp_factor,
    sp_index,
    uint_arg,
    update_tile,
)
from meshnn.ops.transformer.rotary_llama import llama_rotated
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek_prefill.rotary_embedding_indexed"


def _check_shapes(x: Tensor, cos: Tensor, sin: Tensor, trans: Tensor) -> None:
    for name, t in (("input", x), ("cos", cos), ("sin", sin), ("trans_mat", trans)):
        if t.layout is not Layout.TILE:
            raise MeshnnValueError(f"ttnn.{OP}: {name} must be TILE layout")
    xs, cs, ts = tuple(x.padded_shape), tuple(cos.padded_shape), tuple(trans.padded_shape)
    if len(xs) != 4:
        raise MeshnnValueError(f"ttnn.{OP}: input must be 4D (got rank {len(xs)})")
    if len(cs) != 4:
        raise MeshnnValueError(f"ttnn.{OP}: cos must be 4D (got rank {len(cs)})")
    if ts != (1, 1, TILE, TILE):
        raise MeshnnValueError(f"ttnn.{OP}: trans_mat must be a single tile [1, 1, 32, 32] (got {list(ts)})")
    if cos.dtype is not sin.dtype:
        raise MeshnnValueError(f"ttnn.{OP}: cos and sin dtype must match")
    if cs != tuple(sin.padded_shape):
        raise MeshnnValueError(f"ttnn.{OP}: cos and sin must have the same shape")
    if xs[-1] != cs[-1]:
        raise MeshnnValueError(f"ttnn.{OP}: input and cos head dim must match")
    if xs[-2] % TILE:
        raise MeshnnValueError(f"ttnn.{OP}: input seq dim ({xs[-2]}) must be tile-aligned")


def _check_runtime(x: Tensor, cos: Tensor, kv_actual: int, axis: int) -> int:
    """The per-call checks (tt-metal's cache-hit ones too); the SP extent."""
    check_axis(OP, axis)
    check_tile_aligned(OP, "kv_actual_global", kv_actual)
    sp = sp_factor(OP, cos.storage.mesh_buffer.device(), axis)  # type: ignore[union-attr]
    chunk_t = x.padded_shape[-2] // TILE
    if chunk_t == 0:
        raise MeshnnValueError(f"ttnn.{OP}: input chunk seq dim ({x.padded_shape[-2]}) must be at least one tile")
    shard_t = cos.padded_shape[-2] // TILE
    if farthest_update_tile(kv_actual // TILE, sp, chunk_t) + chunk_t > shard_t:
        raise MeshnnValueError(
            f"ttnn.{OP}: kv_actual_global ({kv_actual} tok) + chunk would index past the per-device cos/sin shard "
            f"({shard_t} tiles)"
        )
    return sp


@register(OP, kind=OpKind.TRANSFORMER, family=OpFamily.BINARY, device_operation="RotaryEmbeddingIndexedDeviceOperation")
def rotary_embedding_indexed(
    input: Tensor,
    cos: Tensor,
    sin: Tensor,
    trans_mat: Tensor,
    kv_actual_global: int,
    cluster_axis: int,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``input`` rotated as ``rotary_embedding_llama``'s prefill with each device's rows of ``cos`` /
    ``sin`` from its own offset (see the module's text); a new tensor of ``input``'s spec."""
    named = {n: device_input(OP, n, t) for n, t in (("input", input), ("cos", cos), ("sin", sin),
                                                     ("trans_mat", trans_mat))}  # fmt: skip
    mesh = same_mesh(OP, named)
    x, c, s, trans = named.values()
    kv_actual, axis = uint_arg(OP, "kv_actual_global", kv_actual_global), uint_arg(OP, "cluster_axis", cluster_axis)
    config = check_compute_kernel_config(OP, compute_kernel_config)
    _check_shapes(x, c, s, trans)
    sp = _check_runtime(x, c, kv_actual, axis)
    spec = out_spec_like(x, memory_config=memory_config, op=OP)
    heads, chunk = x.padded_shape[1], x.padded_shape[2]
    per_head = c.padded_shape[1] == heads
    kv_t = kv_actual // TILE

    c_spec = c.spec  # (the kernel holds no tensor: a trace must not keep it allocated)
    s_spec = s.spec
    trans_spec = trans.spec
    x_spec = x.spec

    def kernel(in_rows, out_rows, coords) -> None:
        values = logical_values(in_rows[0], x_spec)  # (k, b, heads, chunk, d)
        cos_v, sin_v = logical_values(in_rows[1], c_spec), logical_values(in_rows[2], s_spec)
        t = logical_values(in_rows[3], trans_spec)[:, 0, 0, :TILE, :TILE]
        out = np.empty(values.shape, np.float32)
        for d, coord in enumerate(coords):
            first = update_tile(kv_t, sp, chunk // TILE, sp_index(coord, axis)) * TILE
            rows = slice(first, first + values.shape[3])
            cd = cos_v[d, 0, :heads, rows] if per_head else cos_v[d, 0, :1, rows]
            sd = sin_v[d, 0, :heads, rows] if per_head else sin_v[d, 0, :1, rows]
            out[d] = llama_rotated(values[d : d + 1], cd[None, None], sd[None, None], t[d : d + 1])[0]
        write_values(out_rows[0], out, spec, owned=True)

    # kv_actual_global is a runtime argument of tt-metal's cached program: it is left out of the
    # attributes its program key is made of.
    attrs = {"cluster_axis": axis, "memory_config": spec.memory_config, "compute_kernel_config": config}
    return launch(OP, mesh, [x, c, s, trans], [Output(spec)], kernel, reads_memos=True, attrs=attrs)[0]
