"""``ttnn.experimental.topk_router_gpt``: gpt-oss's MoE router in one program (tt-metal 2026-06,
``TopkRouterGptDeviceOperation``): the router's linear layer, its top-``k`` experts and their softmax
weights, for a decode batch of 32 tokens and 128 experts.

The arithmetic, as its twelve cores compute it (four groups of three, one group per 32 experts; the
hidden dim's tiles split in three, the first ``hidden_tiles % 3`` parts a tile longer):
- each core multiplies its part of ``input_tensor`` by its part of ``weight_tensor``, summing in
  float32 (the kernel's fp32 destination register); the two sender cores pack their partial sums to
  bfloat16; the worker adds them to its own float32 sum, first part then second, then the bias
  (bfloat16), and packs the logits to bfloat16;
- the 128 logits of a token are ranked (largest first; equal logits: the lower expert first, the
  order meshnn's ``ttnn.topk`` gives them) and the best 32 kept, then the first ``k`` softmaxed (the
  rest masked with -inf): ``e = exp(l - max)`` packed to bfloat16, their float32 sum's reciprocal
  packed to bfloat16, and each weight ``e * (1 / sum)`` packed to bfloat16;
- outputs: the expert ids UINT16 and the weights BFLOAT16, both ``[32, k_padded]`` ROW_MAJOR in L1
  (``k_padded``: ``k`` rounded up to 8; the columns past ``k`` hold 0).
Not modelled: the matmul's HiFi2 operand truncation and the SFPU's approximate exp (meshnn computes
the products and exp in float32, as its other ops do).

ttnn's checks (``validate_on_program_cache_miss``): ``k`` in ``[1, 32]``; ``num_experts`` 128; every
tensor on device, TILE, BFLOAT16; ``input_tensor`` ``[32, hidden]`` with ``hidden`` a multiple of 32;
``weight_tensor`` ``[hidden, num_experts]``; ``bias_tensor`` ``[32, num_experts]`` (the bias broadcast
over the batch by the caller); the program needs 12 DRAM-aligned cores (a Blackhole chip has 8: refused).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the
ops' checks, launch, outputs, values, registry and deepseek_prefill.arguments.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.bfloat16 import bf16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_prefill.arguments import require, uint_arg
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import L1_MEMORY_CONFIG
from meshnn.tensor.tensor import Tensor

OP = "experimental.topk_router_gpt"
BATCH = 32
"""The decode batch the program is built for (one tile of tokens)."""
EXPERTS = 128
"""The experts it takes: four groups of 32, one a worker core."""
MAX_K = 32
"""The most experts it picks: the 32 a tile's top-k sort keeps."""
CORES_PER_GROUP = 3
REQUIRED_CORES = 4 * CORES_PER_GROUP
"""The DRAM-aligned cores the program runs on (one per DRAM bank)."""
TILE = 32


def hidden_parts(hidden: int) -> list[slice]:
    """The three parts of the hidden dim a group's cores multiply (sender, sender, worker), in
    elements: ``hidden / 32`` tiles split in three, the first ``tiles % 3`` parts a tile longer."""
    tiles = hidden // TILE
    base, extra = divmod(tiles, CORES_PER_GROUP)
    parts, start = [], 0
    for pos in range(CORES_PER_GROUP):
        size = (base + (pos < extra)) * TILE
        parts.append(slice(start, start + size))
        start += size
    return parts


def router_logits(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """The bfloat16 logits ``(..., 32, 128)`` (float32 holding bfloat16 values) of ``x @ w + bias``
    as the program sums them: float32 partial products per part, the senders' packed to bfloat16,
    added to the worker's float32 one, then the bias, then packed."""
    x, w = np.asarray(x, np.float32), np.asarray(w, np.float32)
    first, second, own = (np.matmul(x[..., p], w[..., p, :], dtype=np.float32) for p in hidden_parts(x.shape[-1]))
    total = own + bf16(first)
    total = total + bf16(second)
    total = total + np.asarray(bias, np.float32)
    return bf16(total)


def route(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(weights float32 of bfloat16 values, expert ids int64), each ``(..., k)``, of bfloat16
    ``logits``: the ``k`` largest (equal values: the lower id first), softmaxed as the program does."""
    ids = np.argsort(-logits.astype(np.float64), axis=-1, kind="stable")[..., :k]
    best = np.take_along_axis(logits, ids, axis=-1).astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        e = bf16(np.exp(best - best[..., :1]))
        total = e.sum(axis=-1, keepdims=True, dtype=np.float32)
        recip = bf16(np.float32(1.0) / total)
        weights = bf16(e * recip)
    return weights, ids


def _inputs(input_tensor: object, weight_tensor: object, bias_tensor: object) -> dict[str, Tensor]:
    named = {
        "input_tensor": device_input(OP, "input_tensor", input_tensor),
        "weight_tensor": device_input(OP, "weight_tensor", weight_tensor),
        "bias_tensor": device_input(OP, "bias_tensor", bias_tensor),
    }
    for name, tensor in named.items():
        require(OP, name, tensor, (DataType.BFLOAT16,), Layout.TILE)
    return named


def _check_shapes(x: Tensor, w: Tensor, b: Tensor, experts: int) -> None:
    for name, tensor in (("input_tensor", x), ("weight_tensor", w), ("bias_tensor", b)):
        if len(tuple(tensor.shape)) != 2:
            raise MeshnnValueError(f"ttnn.{OP}: {name} must be rank 2, got rank {len(tuple(tensor.shape))}")
    batch, hidden = tuple(x.shape)
    if batch != BATCH:
        raise MeshnnValueError(f"ttnn.{OP}: only batch_size={BATCH} is supported (input_tensor dim 0), got {batch}")
    if hidden % TILE:
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor hidden_dim must be divisible by 32 (tile size), got {hidden}")
    if tuple(w.shape) != (hidden, experts):
        raise MeshnnValueError(
            f"ttnn.{OP}: weight_tensor must be [hidden_dim, num_experts] = {[hidden, experts]}, got {list(w.shape)}"
        )
    if tuple(b.shape) != (batch, experts):
        raise MeshnnValueError(
            f"ttnn.{OP}: bias_tensor must be [batch, num_experts] = {[batch, experts]} (pre-broadcast), got "
            f"{list(b.shape)}"
        )


@register(OP, kind=OpKind.SAMPLING, family=OpFamily.REDUCTION, device_operation="TopkRouterGptDeviceOperation")
def topk_router_gpt(
    input_tensor: Tensor,
    *,
    weight_tensor: Tensor,
    bias_tensor: Tensor,
    k: int = 4,
    num_experts: int = 128,
) -> tuple[Tensor, Tensor]:
    """(expert ids UINT16, weights BFLOAT16), each ``[32, k rounded up to 8]`` ROW_MAJOR in L1, of the
    router ``softmax(topk(input_tensor @ weight_tensor + bias_tensor, k))`` (see the module's text)."""
    count, experts = uint_arg(OP, "k", k), uint_arg(OP, "num_experts", num_experts)
    if not 1 <= count <= MAX_K:
        raise MeshnnValueError(f"ttnn.{OP}: k must be in range [1, {MAX_K}], got {count}")
    if experts != EXPERTS:
        raise MeshnnValueError(f"ttnn.{OP}: only num_experts={EXPERTS} is supported (4 groups of 32), got {experts}")
    named = _inputs(input_tensor, weight_tensor, bias_tensor)
    mesh = same_mesh(OP, named)
    x, w, b = named.values()
    _check_shapes(x, w, b, experts)
    banks = mesh.dram_grid_size().x
    if banks < REQUIRED_CORES:
        raise MeshnnValueError(
            f"ttnn.{OP}: requires at least {REQUIRED_CORES} DRAM-aligned cores, got {banks} ({mesh.arch().name})"
        )
    padded = -(-count // 8) * 8
    shape = (BATCH, padded)
    i_spec = out_spec_like(x, shape=shape, dtype=DataType.UINT16, layout=Layout.ROW_MAJOR,
                           memory_config=L1_MEMORY_CONFIG, op=OP)  # fmt: skip
    w_spec = out_spec_like(x, shape=shape, dtype=DataType.BFLOAT16, layout=Layout.ROW_MAJOR,
                           memory_config=L1_MEMORY_CONFIG, op=OP)  # fmt: skip
    specs = [t.spec for t in named.values()]  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        xv, wv, bv = (logical_values(r, s) for r, s in zip(in_rows, specs, strict=True))
        weights, ids = route(router_logits(xv, wv, bv), count)
        pad = [(0, 0)] * (weights.ndim - 1) + [(0, padded - count)]
        write_values(out_rows[0], np.pad(ids, pad).astype(np.uint16), i_spec)
        write_values(out_rows[1], np.pad(weights, pad), w_spec, exact=True)

    attrs = {"k": count, "num_experts": experts}
    result = launch(OP, mesh, [x, w, b], [Output(i_spec), Output(w_spec)], kernel, rowwise=True, attrs=attrs)
    return result[0], result[1]
