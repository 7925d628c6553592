"""``ttnn.experimental.deepseek_grouped_gate``: DeepSeek-V3's grouped gate over bfloat16 scores
after the router's projection: per token (a row of the last dim, 256 experts), which 8 experts,
and with what weight.

Per token, every value rounded to bfloat16 where the kernel packs it (its destination register is
16-bit, ``fp32_dest_acc_en`` off): ``s = bf16(sigmoid(scores))``; ``v = bf16(s + bias)``; the experts
chosen as :func:`~meshnn.ops.deepseek_decode.moe_gate.choose` chooses (8 groups of 32, each ranked
by its two largest ``v``, 4 kept, the 8 largest ``v`` of those, largest first, equal values the
lower expert); their weights ``w = bf16(bf16(s_k * r) * bf16(route_scale))`` with
``r = bf16(1 / bf16(bf16(sum s_k) + bf16(epsilon)))`` (a row reduce, an epsilon add, a reciprocal,
a column-broadcast multiply, a scalar multiply).  Outputs: the weights (scores' dtype) and the
expert ids (uint16), both ``[..., 8]``, TILE, ``memory_config`` (default: scores').

ttnn's checks (tt-metal 2026-06, ``DeepseekGroupedGateDeviceOperation``): both tensors on device,
BFLOAT16, TILE, of one logical shape; ``summed_experts_per_group`` 2, ``n_groups`` 8, ``topk_groups``
4, 256 experts, ``n_activated_experts`` 8 (in that order).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, launch, outputs, values, registry and the decode gate.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.bfloat16 import bf16
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_decode.moe_gate import choose
from meshnn.ops.deepseek_prefill.arguments import float_arg, require, uint_arg
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek_grouped_gate"
FIXED = (("summed_experts_per_group", 2), ("n_groups", 8), ("topk_groups", 4))
EXPERTS, CHOSEN = 256, 8


def grouped_gate(scores: np.ndarray, bias: np.ndarray, scale: float, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(weights, expert ids) ``(..., 8)`` of ``scores`` and ``bias`` ``(..., 256)`` (the module's text)."""
    lead = scores.shape[:-1]
    x = scores.reshape(-1, EXPERTS).astype(np.float64)
    s = bf16(1.0 / (1.0 + np.exp(-x)))
    v = bf16(s + bias.reshape(-1, EXPERTS).astype(np.float32))
    ids = choose(v)
    picked = np.take_along_axis(s, ids, axis=-1)
    total = bf16(picked.sum(axis=-1, dtype=np.float32))
    r = bf16(np.float32(1.0) / bf16(total + bf16(np.array([eps], dtype=np.float32))[0]))
    weights = bf16(bf16(picked * r[:, None]) * bf16(np.array([scale], dtype=np.float32))[0])
    return weights.reshape(*lead, CHOSEN), ids.reshape(*lead, CHOSEN)


@register(OP, kind=OpKind.SAMPLING, family=OpFamily.REDUCTION, device_operation="DeepseekGroupedGateDeviceOperation")
def deepseek_grouped_gate(
    scores: Tensor,
    bias: Tensor,
    *,
    n_groups: int = 8,
    summed_experts_per_group: int = 2,
    topk_groups: int = 4,
    n_activated_experts: int = 8,
    route_scale: float = 1.0,
    epsilon: float = 1e-20,
    memory_config: MemoryConfig | None = None,
) -> tuple[Tensor, Tensor]:
    """(weights, expert ids uint16), each ``[..., 8]``, of DeepSeek's grouped gate over ``scores``
    and ``bias`` (see the module's text)."""
    named = {"scores": device_input(OP, "scores", scores), "bias": device_input(OP, "bias", bias)}
    mesh = same_mesh(OP, named)
    given = {
        "n_groups": uint_arg(OP, "n_groups", n_groups),
        "summed_experts_per_group": uint_arg(OP, "summed_experts_per_group", summed_experts_per_group),
        "topk_groups": uint_arg(OP, "topk_groups", topk_groups),
        "n_activated_experts": uint_arg(OP, "n_activated_experts", n_activated_experts),
    }
    scale, eps = float_arg(OP, "route_scale", route_scale), float_arg(OP, "epsilon", epsilon)
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig or None, got {memory_config!r}")
    s, b = named["scores"], named["bias"]
    require(OP, "scores", s, (DataType.BFLOAT16,), Layout.TILE)
    require(OP, "bias", b, (DataType.BFLOAT16,), Layout.TILE)
    if tuple(s.shape) != tuple(b.shape):
        raise MeshnnValueError(
            f"ttnn.{OP}: Scores and bias must have the same shape, got {list(s.shape)} and {list(b.shape)}"
        )
    for name, wanted in FIXED:
        if given[name] != wanted:
            raise MeshnnValueError(f"ttnn.{OP}: {name} must be {wanted} at the moment. Got {given[name]}")
    if len(tuple(s.shape)) == 0 or s.shape[-1] != EXPERTS:
        raise MeshnnValueError(f"ttnn.{OP}: Experts must be {EXPERTS}. Got {tuple(s.shape)[-1:] or None}")
    if given["n_activated_experts"] != CHOSEN:
        got = given["n_activated_experts"]
        raise MeshnnValueError(f"ttnn.{OP}: n_activated_experts must be 8 at the moment. Got {got}")
    shape = (*tuple(s.shape)[:-1], CHOSEN)
    config = memory_config or s.spec.memory_config
    w_spec = out_spec_like(s, shape=shape, memory_config=config, op=OP)
    i_spec = out_spec_like(s, shape=shape, dtype=DataType.UINT16, memory_config=config, op=OP)
    s_spec, b_spec = s.spec, b.spec

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        weights, ids = grouped_gate(logical_values(in_rows[0], s_spec), logical_values(in_rows[1], b_spec), scale, eps)
        write_values(out_rows[0], weights, w_spec)
        write_values(out_rows[1], ids.astype(np.float32), i_spec)

    attrs = {"n_groups": 8, "topk_groups": 4, "n_activated_experts": CHOSEN, "route_scale": scale}
    attrs["memory_config"] = config
    result = launch(OP, mesh, [s, b], [Output(w_spec), Output(i_spec)], kernel, rowwise=True, attrs=attrs)
    return result[0], result[1]
