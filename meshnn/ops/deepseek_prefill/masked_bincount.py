"""``ttnn.experimental.deepseek_prefill.masked_bincount``: each device's histogram of the experts its
tokens selected, counting only the experts of its dispatch group.

Per device: ``input_tensor`` ``[sp_dim, topk_dim]`` uint16, ROW_MAJOR, HEIGHT_SHARDED (each token's
expert ids), ``expert_mask`` int32 ROW_MAJOR ``[n]`` or ``[1, n]`` with ``n = n_routed_experts`` (the
dispatch table's row of the device's group: the chip an expert lives on, negative where the expert
belongs to another group).  Output ``[n]`` uint32, ROW_MAJOR, DRAM interleaved:
``out[e] = #{(t, k): k < num_experts_per_token, input[t, k] == e}`` where ``expert_mask[e] >= 0``, else 0.
Ids ``>= n`` are skipped, as tt-metal's kernel skips them; columns past ``num_experts_per_token`` (a
padded shard width) are not read.  Counts are exact (uint32, as the kernel's atomic increments).

ttnn's checks (tt-metal 2026-06, ``MaskedBincountDeviceOperation``): the input uint16, ROW_MAJOR, 2-D
(padded), HEIGHT_SHARDED with a shard spec; ``n_routed_experts > 0``; ``num_experts_per_token`` in
``(0, topk_dim]``; the mask int32, ROW_MAJOR, of shape ``[n]`` or ``[1, n]``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, launch, outputs, values and registry.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.deepseek_prefill.arguments import require, uint_arg
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek_prefill.masked_bincount"


def masked_counts(ids: np.ndarray, mask: np.ndarray, n: int, per_token: int) -> np.ndarray:
    """``(k, n)`` uint32 histograms of ``k`` devices' expert ids ``(k, T, W)`` (their first
    ``per_token`` columns; ids ``>= n`` skipped) with the experts whose ``mask`` ``(k, n)`` is
    negative zeroed."""
    k = ids.shape[0]
    chosen = ids[:, :, :per_token].reshape(k, -1).astype(np.int64)
    counts = np.zeros((k, n), dtype=np.uint32)
    for row in range(k):
        picked = chosen[row][chosen[row] < n]
        counts[row] = np.bincount(picked, minlength=n)[:n].astype(np.uint32)
    counts[mask < 0] = 0
    return counts


def _check(tensor: Tensor, mask: Tensor, n: int, per_token: int) -> None:
    require(OP, "input_tensor", tensor, (DataType.UINT16,), Layout.ROW_MAJOR)
    shape = tuple(tensor.spec.padded_shape)
    if len(shape) != 2:
        raise MeshnnValueError(
            f"ttnn.{OP}: input_tensor must be 2D [sp_dim, topk_dim], got {len(shape)} dimensions {list(shape)}"
        )
    config = tensor.spec.memory_config
    if config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor must be HEIGHT_SHARDED, it is {config.memory_layout.name}")
    if config.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{OP}: input_tensor must have a shard spec")
    if n == 0:
        raise MeshnnValueError(f"ttnn.{OP}: n_routed_experts must be > 0")
    if not 0 < per_token <= shape[-1]:
        raise MeshnnValueError(f"ttnn.{OP}: num_experts_per_token must be in (0, {shape[-1]}], got {per_token}")
    require(OP, "expert_mask", mask, (DataType.INT32,), Layout.ROW_MAJOR)
    mask_shape = tuple(mask.spec.padded_shape)
    if mask_shape not in ((n,), (1, n)):
        raise MeshnnValueError(
            f"ttnn.{OP}: expert_mask (the dispatch table) must have shape [{n}] or [1, {n}], got {list(mask_shape)}"
        )


@register(OP, kind=OpKind.REDUCTION, family=OpFamily.ARGMAX, device_operation="MaskedBincountDeviceOperation")
def masked_bincount(
    input_tensor: Tensor, expert_mask: Tensor, n_routed_experts: int, num_experts_per_token: int
) -> Tensor:
    """Each device's ``[n_routed_experts]`` uint32 count of the experts its tokens chose, zero for the
    experts its ``expert_mask`` marks absent (negative); see the module's text."""
    tensor = device_input(OP, "input_tensor", input_tensor)
    mask = device_input(OP, "expert_mask", expert_mask)
    mesh = same_mesh(OP, {"input_tensor": tensor, "expert_mask": mask})
    n = uint_arg(OP, "n_routed_experts", n_routed_experts)
    per_token = uint_arg(OP, "num_experts_per_token", num_experts_per_token)
    _check(tensor, mask, n, per_token)
    spec = TensorSpec((n,), DataType.UINT32, Layout.ROW_MAJOR, memory_config=DRAM_MEMORY_CONFIG)

    mask_spec = mask.spec  # (the kernel holds no tensor: a trace must not keep it allocated)
    tensor_spec = tensor.spec

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], _coords: tuple[MeshCoordinate, ...]) -> None:
        ids = logical_values(in_rows[0], tensor_spec, as_float=False)
        table = logical_values(in_rows[1], mask_spec, as_float=False).reshape(-1, n)
        write_values(out_rows[0], masked_counts(ids, table, n, per_token), spec)

    attrs = {"n_routed_experts": n, "num_experts_per_token": per_token}
    return launch(OP, mesh, [tensor, mask], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]
