"""``ttnn.experimental.rotary_embedding_hf`` (newer ttnn): HuggingFace's rotary embedding,
``x * cos + rotate_half(x) * sin`` with ``rotate_half(x) = cat(-x[d/2:], x[:d/2])`` over the
head dim ``d`` (no transformation matrix, unlike ``rotary_embedding_llama``).

Prefill (``is_decode_mode=False``): x ``[b, heads, s, d]``, cos / sin ``[1, 1, s_cache >= s, d]``,
row ``i`` of the sequence taking row ``i`` of the caches.  Decode: x ``[1, users, heads, d]``
height-sharded, cos / sin ``[1, users, 1, d]`` sharded, every head of user ``u`` taking row
``u``.  ttnn's checks: device TILE tensors on one mesh, a padded head dim of 32 or a multiple of
64 (the rotation's midpoint on a tile boundary), cos and sin of one dtype and shape, an output
that is not width-sharded.  The output has the input's dtype; computed in float32 and rounded
once into it (ttnn's kernel runs HiFi4 on bfloat16 tiles: within the dtype's rounding and
bfloat16's product rounding).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.tensor`, the ops' launch,
checks, outputs, registry and values and :mod:`meshnn.ops.transformer.checks`.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.checks import same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

TILE = 32
OP = "experimental.rotary_embedding_hf"


def _check_shapes(x: Tensor, cos: Tensor, sin: Tensor) -> None:
    d = x.padded_shape[-1]
    if d != TILE and d % (2 * TILE):
        raise MeshnnValueError(
            f"ttnn.{OP}: Input X dim ({d}) must be either {TILE} (single tile) or divisible by {2 * TILE} "
            f"(rotate_half midpoint must align with a tile boundary)"
        )
    if cos.dtype is not sin.dtype:
        raise MeshnnTypeError(f"ttnn.{OP}: Cos and Sin dtypes must match ({cos.dtype.name}, {sin.dtype.name})")
    if tuple(cos.padded_shape) != tuple(sin.padded_shape):
        raise MeshnnValueError(f"ttnn.{OP}: Cos and Sin shapes must match ({list(cos.shape)}, {list(sin.shape)})")
    if len(x.shape) != 4 or len(cos.shape) != 4 or cos.padded_shape[0] != 1 or cos.padded_shape[-1] != d:
        raise MeshnnValueError(f"ttnn.{OP}: Cos dims must match input dims ({list(cos.shape)}, {list(x.shape)})")


def _check_decode(x: Tensor, cos: Tensor, sin: Tensor) -> None:
    for name, t in (("Input", x), ("Cos", cos), ("Sin", sin)):
        if not t.spec.memory_config.is_sharded():
            raise MeshnnValueError(f"ttnn.{OP}: {name} must be sharded in decode mode")
    if x.spec.memory_config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{OP}: Input must be HEIGHT_SHARDED in decode mode")
    if cos.padded_shape[1] != x.padded_shape[1]:
        raise MeshnnValueError(f"ttnn.{OP}: Cos batch dim must match input ({list(cos.shape)}, {list(x.shape)})")


def _check_prefill(x: Tensor, cos: Tensor) -> None:
    if cos.padded_shape[1] != 1:
        raise MeshnnValueError(f"ttnn.{OP}: Cos must have batch dim = 1 in prefill mode, got {list(cos.shape)}")
    if cos.shape[-2] < x.shape[-2]:
        raise MeshnnValueError(
            f"ttnn.{OP}: Cos seq_len must be >= input seq_len. Input seq_len: {x.shape[-2]}, Cos seq_len: "
            f"{cos.shape[-2]}."
        )
    if x.spec.memory_config.memory_layout is TensorMemoryLayout.WIDTH_SHARDED:
        raise MeshnnValueError(f"ttnn.{OP}: Input cannot be WIDTH_SHARDED")


@register(OP, kind=OpKind.TRANSFORMER, family=OpFamily.BINARY, device_operation="RotaryEmbeddingHfDeviceOperation")
def rotary_embedding_hf(
    input_tensor: Tensor,
    cos_cache: Tensor,
    sin_cache: Tensor,
    *,
    is_decode_mode: bool = False,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``x * cos + rotate_half(x) * sin`` (see the module docstring for the two modes' shapes)."""
    if not isinstance(is_decode_mode, bool):
        raise MeshnnTypeError(f"ttnn.{OP}: is_decode_mode must be a bool, got {is_decode_mode!r}")
    x = tile_input(OP, "input_tensor", input_tensor)
    cos = tile_input(OP, "cos_cache", cos_cache)
    sin = tile_input(OP, "sin_cache", sin_cache)
    mesh = same_mesh(OP, {"input_tensor": x, "cos_cache": cos, "sin_cache": sin})
    _check_shapes(x, cos, sin)
    if is_decode_mode:
        _check_decode(x, cos, sin)
    else:
        _check_prefill(x, cos)
    spec = out_spec_like(x, memory_config=memory_config, op=OP)
    if spec.memory_config.memory_layout is TensorMemoryLayout.WIDTH_SHARDED:
        raise MeshnnValueError(f"ttnn.{OP}: Output cannot be WIDTH_SHARDED")
    specs = (x.spec, cos.spec, sin.spec)
    rows = x.shape[-2]

    def kernel(in_rows, out_rows, coords) -> None:
        values = logical_values(in_rows[0], specs[0])  # (devices, b, heads, s, d) or (devices, 1, users, heads, d)
        c = logical_values(in_rows[1], specs[1])
        s = logical_values(in_rows[2], specs[2])
        if not is_decode_mode:
            c, s = c[..., :rows, :], s[..., :rows, :]
        half = values.shape[-1] // 2
        turned = np.concatenate([-values[..., half:], values[..., :half]], axis=-1)
        out = values * c + turned * s
        write_values(out_rows[0], out.astype(np.float32, copy=False), spec, owned=True)

    attrs = {"is_decode_mode": is_decode_mode, "memory_config": spec.memory_config}
    attrs["compute_kernel_config"] = compute_kernel_config
    return launch(OP, mesh, [x, cos, sin], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]
