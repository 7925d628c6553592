"""``ttnn.experimental.deepseek.moe.deepseek_moe_gate``: DeepSeek-V3's MoE gate on one 16x16 face a
core: of 256 router logits, the 8 routed experts and their weights.

Per core (one batch of the ``[*, 16, 16]`` tensors, a 32x32 tile shard each), with ``x`` the logits
as given, ``b`` the bias and ``i`` the indices, both given TRANSPOSED (as tt-metal's kernel reads
them: it transposes the logits' tile and adds the bias tile as it is), so that expert ``e = 16 r + c``
(``x[r, c]``) has bias ``b[c, r]`` and id ``i[c, r]``:

- ``s = bf16(sigmoid(x))`` with ``enable_sigmoid`` (the kernel's 16-bit destination), else ``x``;
- ``v = bf16(s + b^T)`` (the FPU's add into the 16-bit destination);
- 8 groups of 32 experts (logit rows ``2g`` and ``2g + 1``), each ranked by ``bf16(v1 + v2)`` of its two
  largest ``v``; the 4 best groups kept (equal sums: the lower group first);
- of the kept 128, the 8 largest ``v`` (equal values: the lower expert first), largest first;
- their weights ``bf16(s_k * (scale / (sum(s) + eps)))``, the sum in float32 as the kernel's SFPU
  adds (pairs, then pairs of pairs), the reciprocal exact in float32.

Written: row 0, columns 0..7 of each core's ``output_tensor`` tile (bfloat16 weights) and
``output_indices_tensor`` tile (uint16 ids ``i^T[chosen]``); the rest of the two tiles keeps what it
held (the kernel packs its whole working tile there: scratch values no caller reads).  Both tensors
are returned.

tt-metal's checks (2026-06, ``DeepseekMoeGateDeviceOperation``):
:func:`~meshnn.ops.deepseek_decode.gate_cores.check` (32x32 logits shards, input indices of the
logits' shape).  ``eps`` / ``scaling_factor`` are floats (the kernel gets their float32 bits);
``enable_sigmoid`` a bool.

May import: :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry and the decode gates'
cores.
"""

from __future__ import annotations

import numpy as np

from meshnn.formats.bfloat16 import bf16
from meshnn.ops.deepseek_decode.gate_cores import check, gate_tensors, run_gate
from meshnn.ops.deepseek_prefill.arguments import bool_arg, float_arg
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek.moe.deepseek_moe_gate"
GROUPS, KEPT, CHOSEN = 8, 4, 8
"""DeepSeek-V3's routing, fixed in the kernel: 8 groups of 32 experts, 4 kept, 8 experts chosen."""


def _largest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest along the last axis, largest first, equal values lower index first."""
    return np.argsort(-values, axis=-1, kind="stable")[..., :k]


def choose(v: np.ndarray) -> np.ndarray:
    """The chosen positions ``(n, 8)`` of ``n`` tokens' 256 bias-corrected scores ``v`` (bfloat16
    values): the 4 of 8 groups of 32 whose two largest ``v`` sum (rounded to bfloat16) largest
    (equal sums: the lower group), then the 8 largest ``v`` of those (equal values: the lower
    expert), largest first."""
    grouped = v.reshape(-1, GROUPS, 256 // GROUPS)
    top2 = -np.sort(-grouped, axis=-1)[..., :2]
    sums = bf16(top2[..., 0] + top2[..., 1])
    keep = np.zeros(sums.shape, dtype=bool)
    np.put_along_axis(keep, _largest(sums, KEPT), True, axis=-1)
    return _largest(np.where(keep[..., None], grouped, -np.inf).reshape(v.shape), CHOSEN)


def gate(logits: np.ndarray, bias_t: np.ndarray, ids_t: np.ndarray, eps: float, scale: float, sigmoid: bool):
    """(weights float32 bfloat16 values, ids) ``(n, 8)`` of ``n`` faces ``(n, 16, 16)`` (bias and ids
    transposed, as given to the op): the module's arithmetic."""
    x = logits.astype(np.float32).reshape(-1, 256)
    s = bf16(1.0 / (1.0 + np.exp(-x.astype(np.float64)))) if sigmoid else x
    bias = np.swapaxes(bias_t.reshape(-1, 16, 16), -1, -2).reshape(-1, 256).astype(np.float32)
    ids = np.swapaxes(ids_t.reshape(-1, 16, 16), -1, -2).reshape(-1, 256)
    v = bf16(s + bias)
    chosen = choose(v)
    picked = np.take_along_axis(s, chosen, axis=-1).astype(np.float32)
    pairs = picked[:, 0::2] + picked[:, 1::2]
    total = (pairs[:, 0] + pairs[:, 1]) + (pairs[:, 2] + pairs[:, 3])
    factor = (np.float32(1.0) / (total + np.float32(eps))) * np.float32(scale)
    weights = bf16(picked * factor[:, None].astype(np.float32))
    return weights, np.take_along_axis(ids, chosen, axis=-1)


@register(OP, kind=OpKind.SAMPLING, family=OpFamily.REDUCTION, device_operation="DeepseekMoeGateDeviceOperation")
def deepseek_moe_gate(
    input_tensor: Tensor,
    *,
    bias_tensor: Tensor,
    input_indices_tensor: Tensor,
    output_tensor: Tensor,
    output_indices_tensor: Tensor,
    eps: float = 1e-20,
    scaling_factor: float = 2.5,
    enable_sigmoid: bool = False,
) -> tuple[Tensor, Tensor]:
    """(output_tensor, output_indices_tensor), written with each core's 8 routed experts' weights
    and ids (see the module's text)."""
    tensors = (input_tensor, bias_tensor, input_indices_tensor, output_tensor, output_indices_tensor)
    named = gate_tensors(OP, tensors)
    eps_value, scale = float_arg(OP, "eps", eps), float_arg(OP, "scaling_factor", scaling_factor)
    sigmoid = bool_arg(OP, "enable_sigmoid", enable_sigmoid)
    check(OP, named, generalized=False)

    def route(x: np.ndarray, bias: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return gate(x, bias, ids, eps_value, scale, sigmoid)

    attrs = {"eps": eps_value, "scaling_factor": scale, "enable_sigmoid": sigmoid}
    return run_gate(OP, named, route, attrs)
