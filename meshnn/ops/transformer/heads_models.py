"""Two models' fixed forms of ``ttnn.experimental.nlp_create_qkv_heads`` (tt-metal 2026-06):

- ``nlp_create_qkv_heads_vit(input, *, memory_config=None, output_tensors=None)``: ViT-Base's fused
  ``[B, 1, S, 2304]`` projection into q, k, v ``[B, 12, S, 64]`` each (the width's three 768-wide
  blocks, 12 heads of 64; k not transposed).  tt-metal's checks: TILE, float32 / bfloat16 /
  bfloat8_b, exactly ``[B, 1, S, 2304]``, S a multiple of 32, an INTERLEAVED output config.
- ``nlp_create_qkv_heads_boltz(input, input_kv=None, *, num_heads, num_kv_heads=None,
  transpose_k_heads=True, memory_config=None, output_tensors=None)``: Boltz's pair representation
  ``[1, S, S, 3 * heads * d]`` into q ``[heads, S, S, d]``, k ``[kv_heads, S, S, d]`` (``[kv_heads,
  d, S, S]`` transposed) and v ``[kv_heads, S, S, d]``: the split of ``nlp_create_qkv_heads`` over
  the ``S * S`` rows (tt-metal's output shape takes both S from the input's dim 2; meshnn refuses an
  input whose dims 0, 1 are not ``1, S``, whose values that shape would not hold).  Separate
  ``input_kv``, sharded inputs and ``output_tensors`` are not simulated.

Values are moved, not computed (no rounding but a block float's), by the head split of
:mod:`meshnn.ops.transformer.heads`.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the registry and the transformer ops' head
moves and checks.
"""

from __future__ import annotations

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnValueError
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import tile_input, unsupported
from meshnn.ops.transformer.heads import NLP_DTYPES, _split_heads
from meshnn.perf.desc import OpFamily
from meshnn.tensor.reshape import reshape
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

VIT = "experimental.nlp_create_qkv_heads_vit"
BOLTZ = "experimental.nlp_create_qkv_heads_boltz"
VIT_WIDTH, VIT_HEADS = 2304, 12
TILE = 32


@register(VIT, kind=OpKind.TRANSFORMER, family=OpFamily.COPY, device_operation="NlpCreateHeadsVitDeviceOperation")
def nlp_create_qkv_heads_vit(
    input: Tensor, *, memory_config: MemoryConfig | None = None, output_tensors: object = None
) -> tuple[Tensor, Tensor, Tensor]:
    """``[B, 1, S, 2304]`` into q, k, v ``[B, 12, S, 64]`` (see the module's text)."""
    unsupported(VIT, output_tensors=output_tensors)
    x = tile_input(VIT, "input", input, NLP_DTYPES)
    shape = tuple(x.shape)
    if len(shape) != 4 or shape[1] != 1 or shape[3] != VIT_WIDTH:
        raise MeshnnValueError(f"ttnn.{VIT}: Unsupported input shape {list(shape)}: it must be [B, 1, S, {VIT_WIDTH}]")
    if shape[2] % TILE:
        raise MeshnnValueError(f"ttnn.{VIT}: Input shape[2] ({shape[2]}) must be divisible by TILE_HEIGHT ({TILE})")
    if memory_config is not None and memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(
            f"ttnn.{VIT}: Output memory config layout must be INTERLEAVED but got {memory_config.memory_layout}"
        )
    return _split_heads(
        VIT, ("input", x), ("input_kv", None), VIT_HEADS, VIT_HEADS, ("transpose_k_heads", False), memory_config, rank=4
    )


@register(BOLTZ, kind=OpKind.TRANSFORMER, family=OpFamily.COPY, device_operation="NlpCreateHeadsBoltzDeviceOperation")
def nlp_create_qkv_heads_boltz(
    input: Tensor,
    input_kv: Tensor | None = None,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    transpose_k_heads: bool = True,
    memory_config: MemoryConfig | None = None,
    output_tensors: object = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """``[1, S, S, 3 * heads * d]`` into q ``[heads, S, S, d]``, k and v (see the module's text)."""
    unsupported(BOLTZ, input_kv=input_kv, output_tensors=output_tensors)
    x = tile_input(BOLTZ, "input", input, NLP_DTYPES)
    shape = tuple(x.shape)
    if len(shape) != 4 or shape[0] != 1 or shape[1] != shape[2]:
        raise MeshnnValueError(f"ttnn.{BOLTZ}: input must be a pair representation [1, S, S, width], got {list(shape)}")
    side = shape[2]
    if side % TILE:
        raise MeshnnValueError(f"ttnn.{BOLTZ}: Unsupported input height {side} is not tile aligned")
    if x.memory_config().is_sharded():
        raise MeshnnValueError(f"ttnn.{BOLTZ}: sharded inputs are not simulated (interleaved only)")
    rows = reshape(x, (1, 1, side * side, shape[3]))
    heads = _split_heads(
        BOLTZ,
        ("input", rows),
        ("input_kv", None),
        num_heads,
        num_kv_heads,
        ("transpose_k_heads", transpose_k_heads),
        memory_config,
        rank=4,
    )
    q, k, v = (reshape(t, (t.shape[1], *_square(t, side, i == 1 and transpose_k_heads))) for i, t in enumerate(heads))
    return q, k, v


def _square(t: Tensor, side: int, transposed: bool) -> tuple[int, int, int]:
    """The per-head dims of a ``[1, h, rows, d]`` (or transposed ``[1, h, d, rows]``) head tensor
    with its ``side * side`` rows as ``side, side``."""
    d = t.shape[2] if transposed else t.shape[3]
    return (d, side, side) if transposed else (side, side, d)
