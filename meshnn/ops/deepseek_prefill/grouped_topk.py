"""``ttnn.experimental.deepseek_prefill.moe_grouped_topk``: DeepSeek-V3's gate after its linear
projection: which experts each token goes to, and with what weight.

Per token (a row of the last dim, ``E`` experts), in float32 (the kernel's fp32 destination):
``s = sigmoid(scores)``; ``b = s + bias`` (for choosing only); the ``E`` experts cut into ``n_groups``
groups of ``E / n_groups``; each group ranked by the sum of its ``summed_experts_per_group`` largest
``b``; the ``topk_groups`` best groups kept; the ``n_activated_experts`` largest ``b`` of the kept
groups chosen, largest first (equal values: the lower expert first); their weights
``s[chosen] / (sum(s[chosen]) + epsilon) * route_scale``.  With ``n_groups == 1`` the grouping is a
no-op: a plain top-k over the experts (Kimi's 384).  Outputs: the weights bfloat16 (rounded once)
and the expert ids uint16, both ``[..., n_activated_experts]`` in ``scores``' layout and
``memory_config`` (default: ``scores``').  ``stable_sort`` (ttnn's tie order) changes nothing here:
ties are always broken by the lower index.

ttnn's checks (tt-metal 2026-06, ``MoeGroupedTopkDeviceOperation``): both tensors on device, float32,
TILE, of one logical shape; ``n_groups == 1``: ``E`` a multiple of 32 and ``n_activated_experts`` in
``[1, min(64, E)]``; otherwise DeepSeek's figures only: ``n_groups`` 8, ``summed_experts_per_group``
2, ``topk_groups`` 4, ``E`` 256, ``n_activated_experts`` 8.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, launch, outputs, values and registry.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_prefill.arguments import bool_arg, float_arg, require, uint_arg
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek_prefill.moe_grouped_topk"
DEEPSEEK = {"n_groups": 8, "summed_experts_per_group": 2, "topk_groups": 4, "n_activated_experts": 8}
"""The only grouped routing tt-metal's kernel takes (one tile of 32 experts per group)."""
TOPK_LIMIT = 64


def _largest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest along the last axis, largest first, equal values lower index first."""
    return np.argsort(-values, axis=-1, kind="stable")[..., :k]


def grouped_topk(scores: np.ndarray, bias: np.ndarray, sizes: tuple[int, int, int, int], scale: float, eps: float):
    """(weights float32, ids int64) ``(..., n)`` of the gate's ``scores`` and ``bias`` ``(..., E)``,
    ``sizes = (n_groups, summed_experts_per_group, topk_groups, n)`` (see the module's text)."""
    groups, summed, kept, n = sizes
    s = (1.0 / (1.0 + np.exp(-scores.astype(np.float32)))).astype(np.float32)
    b = (s + bias.astype(np.float32)).astype(np.float32)
    if groups > 1:
        grouped = b.reshape(*b.shape[:-1], groups, -1)
        ranked = -np.sort(-grouped, axis=-1)[..., :summed].astype(np.float32)
        best = _largest(ranked.sum(axis=-1, dtype=np.float32), kept)
        keep = np.zeros(grouped.shape[:-1], dtype=bool)
        np.put_along_axis(keep, best, True, axis=-1)
        b = np.where(keep[..., None], grouped, -np.inf).reshape(b.shape).astype(np.float32)
    ids = _largest(b, n)
    chosen = np.take_along_axis(s, ids, axis=-1)
    total = chosen.sum(axis=-1, keepdims=True, dtype=np.float32) + np.float32(eps)
    weights = (chosen * (np.float32(1.0) / total) * np.float32(scale)).astype(np.float32)
    return weights, ids


def _check_sizes(experts: int, groups: int, summed: int, kept: int, n: int) -> None:
    if groups == 1:
        if experts % 32:
            raise MeshnnValueError(
                f"ttnn.{OP}: the number of experts must be a multiple of the tile width (32), got {experts}"
            )
        if not 0 < n <= TOPK_LIMIT:
            raise MeshnnValueError(f"ttnn.{OP}: n_activated_experts must be in [1, {TOPK_LIMIT}], got {n}")
        if n > experts:
            raise MeshnnValueError(f"ttnn.{OP}: n_activated_experts ({n}) must be <= experts ({experts})")
        return
    given = {"n_groups": groups, "summed_experts_per_group": summed, "topk_groups": kept, "n_activated_experts": n}
    for name, value in given.items():
        if value != DEEPSEEK[name]:
            raise MeshnnValueError(f"ttnn.{OP}: {name} must be {DEEPSEEK[name]} at the moment, got {value}")
    if experts != 256:
        raise MeshnnValueError(f"ttnn.{OP}: the number of experts must be 256 with n_groups 8, got {experts}")


@register(OP, kind=OpKind.SAMPLING, family=OpFamily.REDUCTION, device_operation="MoeGroupedTopkDeviceOperation")
def moe_grouped_topk(
    scores: Tensor,
    bias: Tensor,
    *,
    n_groups: int = 8,
    summed_experts_per_group: int = 2,
    topk_groups: int = 4,
    n_activated_experts: int = 8,
    route_scale: float = 1.0,
    epsilon: float = 1e-20,
    stable_sort: bool = False,
    memory_config: MemoryConfig | None = None,
) -> tuple[Tensor, Tensor]:
    """(weights bfloat16, expert ids uint16), each ``[..., n_activated_experts]``, of DeepSeek's
    grouped gate over ``scores`` and ``bias`` (see the module's text)."""
    named = {"scores": device_input(OP, "scores", scores), "bias": device_input(OP, "bias", bias)}
    mesh = same_mesh(OP, named)
    sizes = tuple(
        uint_arg(OP, name, value)
        for name, value in (("n_groups", n_groups), ("summed_experts_per_group", summed_experts_per_group),
                            ("topk_groups", topk_groups), ("n_activated_experts", n_activated_experts))
    )  # fmt: skip
    scale, eps = float_arg(OP, "route_scale", route_scale), float_arg(OP, "epsilon", epsilon)
    bool_arg(OP, "stable_sort", stable_sort)
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig or None, got {memory_config!r}")
    s, b = named["scores"], named["bias"]
    for name, tensor in named.items():
        require(OP, name, tensor, (DataType.FLOAT32,), Layout.TILE)
    if tuple(s.shape) != tuple(b.shape):
        raise MeshnnValueError(f"ttnn.{OP}: scores {list(s.shape)} and bias {list(b.shape)} must have the same shape")
    if len(tuple(s.shape)) == 0:
        raise MeshnnValueError(f"ttnn.{OP}: scores must have an experts dim")
    _check_sizes(s.shape[-1], *sizes)
    shape = (*tuple(s.shape)[:-1], sizes[3])
    config = memory_config or s.spec.memory_config
    w_spec = out_spec_like(s, shape=shape, dtype=DataType.BFLOAT16, memory_config=config, op=OP)
    i_spec = out_spec_like(s, shape=shape, dtype=DataType.UINT16, memory_config=config, op=OP)

    b_spec = b.spec  # (the kernel holds no tensor: a trace must not keep it allocated)
    s_spec = s.spec

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        weights, ids = grouped_topk(
            logical_values(in_rows[0], s_spec), logical_values(in_rows[1], b_spec), sizes, scale, eps
        )
        write_values(out_rows[0], weights, w_spec)
        write_values(out_rows[1], ids.astype(np.float32), i_spec)

    attrs = {"n_groups": sizes[0], "topk_groups": sizes[2], "n_activated_experts": sizes[3], "memory_config": config}
    result = launch(OP, mesh, [s, b], [Output(w_spec), Output(i_spec)], kernel, rowwise=True, attrs=attrs)
    return result[0], result[1]
