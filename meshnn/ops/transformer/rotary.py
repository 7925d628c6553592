"""``ttnn.experimental.rotary_embedding``: ``x * cos + rotate_half(x) * sin`` with
``rotate_half([a | b]) = [-b | a]`` (the GPT-NeoX / Llama form), prefill (row i of the sequence
takes row i of the caches) or decode (every row takes the caches' row ``token_index``).  Its
output has the input's padded shape, as ttnn's does.  The checks of the input and caches are
apart from the compute (:func:`_rotary_kernel`).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch,
checks, outputs, values and tilize modules and :mod:`meshnn.ops.transformer.checks`.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops import goldens
from meshnn.ops.checks import check_queue_id, device_input, same_mesh
from meshnn.ops.launch import Kernel, launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.tilize import tilize_with_val_padding
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


@register(
    "experimental.rotary_embedding",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.BINARY,
    device_operation="RotaryEmbeddingDeviceOperation",
    golden=goldens.rotary_embedding,
)
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
    x = tile_input(op, "input_tensor", input_tensor)
    cos = tile_input(op, "cos_cache", cos_cache)
    sin = tile_input(op, "sin_cache", sin_cache)
    mesh = same_mesh(op, {"input_tensor": x, "cos_cache": cos, "sin_cache": sin})
    _check_shapes(op, x, cos, sin, token_index)
    queue_id = check_queue_id(op, mesh, queue_id)
    shape = tuple(x.shape)
    out_shape = (*shape[:-2], tuple(x.spec.padded_shape)[-2], shape[-1])
    spec = out_spec_like(x, shape=out_shape, memory_config=memory_config, op=op)
    kernel = _rotary_kernel((x.spec, cos.spec, sin.spec), spec, out_shape, shape[-2], token_index)
    inputs = [x, cos, sin]
    attrs = {"memory_config": spec.memory_config, "compute_kernel_config": compute_kernel_config}
    return launch(
        op, mesh, inputs, [Output(spec)], kernel, queue_id=queue_id, rowwise=True, reads_memos=True, attrs=attrs
    )[0]


def _check_shapes(op: str, x: Tensor, cos: Tensor, sin: Tensor, token_index: object) -> None:
    """The input's head dimension is whole pairs of tiles, the caches ``[1, 1, s_cache, d]`` alike
    and with the rows the input takes (``token_index``'s, or the sequence's)."""
    shape = tuple(x.shape)
    width = tuple(x.spec.padded_shape)[-1]
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


def _rotary_kernel(
    specs: tuple[TensorSpec, TensorSpec, TensorSpec],
    spec: TensorSpec,
    out_shape: tuple[int, ...],
    seq: int,
    token_index: int | None,
) -> Kernel:
    """The kernel: every device's rows rotated in float32, the pad rows past ``seq`` zero."""
    rows, half = out_shape[-2], out_shape[-1] // 2

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

    return kernel


def _golden_rotate_half(torch, input, **_):
    half = input.shape[-1] // 2
    return torch.cat((-input[..., half:], input[..., :half]), dim=-1)


@register(
    "experimental.rotate_half",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="RotateHalfDeviceOperation",
    golden=torch_golden(_golden_rotate_half),
)
def rotate_half(input: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """The last dimension's halves ``[a | b]`` as ``[-b | a]`` (the rotary embedding's rotation),
    exact.  tt-metal's rules: interleaved in and out, the padded last dimension whole pairs of tiles
    (a multiple of 64); a ROW_MAJOR input is tilized first (``tilize_with_val_padding`` with zeros to
    whole tiles, as ttnn's composite does), so the output is TILE."""
    op = "experimental.rotate_half"
    x = device_input(op, "input", input)
    if x.layout is Layout.ROW_MAJOR and x.dtype.is_float:
        if len(x.shape) < 2 or tuple(x.spec.padded_shape)[-1] % 64:
            raise MeshnnValueError(f"ttnn.{op}: input {list(x.shape)} needs a last dimension that is a multiple of 64")
        tiles = [*x.spec.padded_shape[:-2], *(-(-d // 32) * 32 for d in x.spec.padded_shape[-2:])]
        x = tilize_with_val_padding(x, tiles, 0.0, memory_config=x.memory_config())
    x = tile_input(op, "input", x)
    width = tuple(x.spec.padded_shape)[-1]
    if len(x.shape) < 2 or width % 64 or x.shape[-1] != width:
        raise MeshnnValueError(f"ttnn.{op}: input {list(x.shape)} needs a last dimension that is a multiple of 64")
    spec = out_spec_like(x, memory_config=memory_config, op=op)
    for name, config in (("input", x.memory_config()), ("memory_config", spec.memory_config)):
        if config.is_sharded():
            raise MeshnnValueError(f"ttnn.{op}: {name} must be interleaved (rotate_half does not shard), got {config}")
    half = width // 2

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec)
        write_values(out_rows[0], np.concatenate((-values[..., half:], values[..., :half]), axis=-1), spec)

    attrs = {"output_mem_config": spec.memory_config}
    return launch(op, x.device(), [x], [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]
