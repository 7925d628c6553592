"""``ttnn.experimental.deepseek.moe.generalized_moe_gate``: the MoE gate of
:mod:`~meshnn.ops.deepseek_decode.moe_gate` generalized: 256 or 512 experts a token (one or two
16x16 blocks a core, each in the top-left face of its own 32x32 tile), a global top-``topk``
(4, 6 or 8), linear or softmax normalization; ``grouped`` runs DeepSeek's grouped gate exactly as
``deepseek_moe_gate`` does.

Per core, block ``b``'s expert ``e = 256 b + 16 r + c`` has logit ``x[b, r, c]``, bias ``bias[b, c, r]``
and id ``ids[b, c, r]`` (bias and ids given transposed within each block):

- ``s = bf16(sigmoid(x))`` with ``enable_sigmoid``, else ``x``; ``v = bf16(s + bias^T)``;
- the 8 largest ``v`` over every block (equal values: the lower expert first), largest first; ranks
  ``>= topk`` dropped (their weight and id written 0);
- linear: ``w = bf16(s_k * (scaling_factor / (sum + eps)))`` over the kept ranks (the sum in float32,
  pairs then pairs of pairs); softmax: the same over ``bf16(exp(s_k - s_0))`` (``s_0``: rank 0's
  score, the kernel's max-subtraction; its exp is an SFPU approximation, here exact then rounded).

Written: row 0, columns 0..7 of each core's output and output-index tiles (ranks in order).

tt-metal's checks (2026-06, ``GeneralizedMoeGateDeviceOperation``): ``topk`` one of 4, 6, 8; with
``grouped``, ``topk`` 8 and no ``output_softmax``; then
:func:`~meshnn.ops.deepseek_decode.gate_cores.check` (1 or 2 blocks a logits shard, 1 when grouped).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry,
the DeepSeek prefill arguments and the decode gates.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.bfloat16 import bf16
from meshnn.ops.deepseek_decode.gate_cores import check, gate_tensors, run_gate
from meshnn.ops.deepseek_decode.moe_gate import gate
from meshnn.ops.deepseek_prefill.arguments import bool_arg, float_arg, uint_arg
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek.moe.generalized_moe_gate"
TOPKS = (4, 6, 8)
RANKS = 8


def ungrouped(x, bias_t, ids_t, options: tuple[float, float, bool, int, bool]) -> tuple[np.ndarray, np.ndarray]:
    """(weights, ids) ``(n, 8)`` of ``n`` cores' blocks ``(n, blocks, 16, 16)`` (bias and ids
    transposed within each block); ``options = (eps, scaling_factor, enable_sigmoid, topk,
    output_softmax)`` (the module's arithmetic)."""
    eps, scale, sigmoid, topk, softmax = options
    n = x.shape[0]
    logits = x.astype(np.float32).reshape(n, -1)
    s = bf16(1.0 / (1.0 + np.exp(-logits.astype(np.float64)))) if sigmoid else logits
    bias = np.swapaxes(bias_t, -1, -2).reshape(n, -1).astype(np.float32)
    ids = np.swapaxes(ids_t, -1, -2).reshape(n, -1)
    v = bf16(s + bias)
    chosen = np.argsort(-v, axis=-1, kind="stable")[:, :RANKS]
    picked = np.take_along_axis(s, chosen, axis=-1).astype(np.float32)
    if softmax:
        picked = bf16(np.exp((picked - picked[:, :1]).astype(np.float64)))
    picked[:, topk:] = 0.0
    pairs = picked[:, 0::2] + picked[:, 1::2]
    total = (pairs[:, 0] + pairs[:, 1]) + (pairs[:, 2] + pairs[:, 3])
    factor = (np.float32(1.0) / (total + np.float32(eps))) * np.float32(scale)
    weights = bf16(picked * factor[:, None].astype(np.float32))
    out_ids = np.take_along_axis(ids, chosen, axis=-1).astype(np.float32)
    out_ids[:, topk:] = 0.0
    return weights, out_ids


@register(OP, kind=OpKind.SAMPLING, family=OpFamily.REDUCTION, device_operation="GeneralizedMoeGateDeviceOperation")
def generalized_moe_gate(
    input_tensor: Tensor,
    *,
    bias_tensor: Tensor,
    input_indices_tensor: Tensor,
    output_tensor: Tensor,
    output_indices_tensor: Tensor,
    eps: float = 1e-20,
    scaling_factor: float = 2.5,
    enable_sigmoid: bool = False,
    topk: int = 8,
    output_softmax: bool = False,
    grouped: bool = False,
) -> tuple[Tensor, Tensor]:
    """(output_tensor, output_indices_tensor), written with each core's top-``topk`` experts'
    weights and ids (see the module's text)."""
    tensors = (input_tensor, bias_tensor, input_indices_tensor, output_tensor, output_indices_tensor)
    named = gate_tensors(OP, tensors)
    eps_value, scale = float_arg(OP, "eps", eps), float_arg(OP, "scaling_factor", scaling_factor)
    sigmoid = bool_arg(OP, "enable_sigmoid", enable_sigmoid)
    k = uint_arg(OP, "topk", topk)
    softmax, is_grouped = bool_arg(OP, "output_softmax", output_softmax), bool_arg(OP, "grouped", grouped)
    if k not in TOPKS:
        raise MeshnnValueError(f"ttnn.{OP}: topk must be one of {{4, 6, 8}}, got {k}")
    if is_grouped and k != RANKS:
        raise MeshnnValueError(f"ttnn.{OP}: grouped mode (DeepSeek gate) is hardwired to top-8; got topk={k}")
    if is_grouped and softmax:
        raise MeshnnValueError(
            f"ttnn.{OP}: grouped mode (DeepSeek gate) normalizes linearly; output_softmax must be false"
        )
    check(OP, named, generalized=True, grouped=is_grouped)
    options = (eps_value, scale, sigmoid, k, softmax)

    def route(x: np.ndarray, bias: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if is_grouped:
            return gate(x, bias, ids, eps_value, scale, sigmoid)
        return ungrouped(x, bias, ids, options)

    attrs = {"eps": eps_value, "scaling_factor": scale, "enable_sigmoid": sigmoid, "topk": k}
    attrs.update(output_softmax=softmax, grouped=is_grouped)
    return run_gate(OP, named, route, attrs)
