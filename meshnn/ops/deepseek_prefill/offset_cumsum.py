"""``ttnn.experimental.deepseek_prefill.offset_cumsum``: where each device's tokens go in every
expert's buffer, from the devices' expert histograms (``masked_bincount``'s outputs).

ttnn's composition (tt-metal 2026-06), followed here op for op: the input ``[..., n]`` uint32 (its
volume ``n``) viewed as ``[1, n]``, ``all_gather`` on dim 0 over ``cluster_axis`` (``num_links``,
``memory_config``, ``use_l1_small_for_semaphores`` passed on) into ``[H, n]`` (H the devices of the
axis), ``to_layout`` ROW_MAJOR, then the device operation (``OffsetCumsumDeviceOperation``: one
core's loop).  With ``hist`` that ``[H, n]`` matrix, ``r`` the device's coordinate on
``cluster_axis`` and ``c = experts_per_chip``, its three ``[1, n]`` uint32 outputs (ROW_MAJOR, DRAM
interleaved, each device its own: topology sharded on every mesh dim) are

- ``expert_region[e] = sum_{e' in [c*(e//c), e)} ceil32(totals[e'])``: the exclusive prefix sum of
  the tile-aligned totals within each chip's group of ``c`` experts (``ceil32``: up to a multiple
  of 32, the tile height);
- ``totals[e] = sum_h hist[h, e]``;
- ``offsets[e] = sum_{h < r} hist[h, e] + expert_region[e]``.

Sums wrap modulo 2**32, as the kernel's uint32 adds.  Returned as (offsets, totals, expert_region).

ttnn's checks: of the gathered tensor, uint32, 2-D, both dims > 0, ``experts_per_chip > 0`` dividing
``n``.  meshnn makes them, and the input's checks, before the gather allocates anything.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, launch, outputs, values and registry, the collectives' all_gather and the
data-movement ops.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.ccl.all_gather import all_gather
from meshnn.ops.ccl.arguments import checked_input, group_grid
from meshnn.ops.data_movement import to_layout
from meshnn.ops.deepseek_prefill.arguments import bool_arg, require, uint_arg
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.lifetime import deallocate
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.reshape import reshape
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementShard, TensorTopology

OP = "experimental.deepseek_prefill.offset_cumsum"
TILE_HEIGHT = 32
"""The alignment of each expert's region: its total rounded up to whole tile rows."""


def dispatch_offsets(hist: np.ndarray, row: int, per_chip: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, totals, expert_region), each ``(n,)`` uint32, of the histograms ``hist`` ``(H, n)``
    for the device at position ``row`` of the axis (see the module's text)."""
    hist = hist.astype(np.uint32, copy=False)
    totals = hist.sum(axis=0, dtype=np.uint32)
    local = hist[:row].sum(axis=0, dtype=np.uint32)
    aligned = ((totals.astype(np.uint64) + TILE_HEIGHT - 1) // TILE_HEIGHT * TILE_HEIGHT).astype(np.uint32)
    groups = aligned.reshape(-1, per_chip)
    region = (np.cumsum(groups, axis=1, dtype=np.uint32) - groups).reshape(-1)
    return region + local, totals, region


def _checked(tensor: Tensor, per_chip: int) -> int:
    """The experts ``n`` of ``tensor`` (its volume), after ttnn's checks of what the gather will make."""
    require(OP, "input_tensor", tensor, (DataType.UINT32,), None)
    shape = tuple(tensor.shape)
    n = shape[-1] if shape else 0
    if not shape or math.prod(shape) != n or n == 0:
        raise MeshnnValueError(
            f"ttnn.{OP}: input_tensor must be a histogram [n_routed_experts] (n > 0; leading dims of 1), "
            f"got shape {list(shape)}"
        )
    if per_chip == 0 or n % per_chip:
        raise MeshnnValueError(f"ttnn.{OP}: n_routed_experts ({n}) must be divisible by experts_per_chip ({per_chip})")
    return n


@register(OP, kind=OpKind.COLLECTIVE, family=OpFamily.ARGMAX, device_operation="OffsetCumsumDeviceOperation")
@ttnn_keywords(records=("use_l1_small_for_semaphores",))
def offset_cumsum(
    input_tensor: Tensor,
    cluster_axis: int,
    num_links: int,
    experts_per_chip: int,
    memory_config: MemoryConfig,
    use_l1_small_for_semaphores: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    """(global dispatch offsets, total counts per expert, expert region offsets), each ``[1, n]``
    uint32 per device, of the devices' histograms gathered over ``cluster_axis`` (see the module's text)."""
    tensor, mesh, _ = checked_input(OP, input_tensor, None)
    axis = uint_arg(OP, "cluster_axis", cluster_axis)
    group_grid(mesh, axis, OP)  # (cluster_axis in range)
    links = uint_arg(OP, "num_links", num_links)
    per_chip = uint_arg(OP, "experts_per_chip", experts_per_chip)
    if links == 0:
        raise MeshnnValueError(f"ttnn.{OP}: num_links must be >= 1, got 0")
    if not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    bool_arg(OP, "use_l1_small_for_semaphores", use_l1_small_for_semaphores)
    n = _checked(tensor, per_chip)
    flat = reshape(tensor, (1, n))
    gathered = all_gather(flat, 0, axis, num_links=links, memory_config=memory_config)
    rows = to_layout(gathered, Layout.ROW_MAJOR)
    try:
        return _prim(rows, mesh, tensor.tensor_topology(), axis, per_chip)
    finally:
        if rows is not gathered:
            deallocate(rows)
        deallocate(gathered)


def _prim(rows: Tensor, mesh, topology: TensorTopology, axis: int, per_chip: int) -> tuple[Tensor, Tensor, Tensor]:
    """``OffsetCumsumDeviceOperation`` on the gathered ``[H, n]`` histograms ``rows``."""
    height, n = tuple(rows.shape)
    spec = TensorSpec((1, n), DataType.UINT32, Layout.ROW_MAJOR, memory_config=DRAM_MEMORY_CONFIG)
    placements = tuple(PlacementShard(i) for i in range(len(tuple(topology.distribution_shape))))
    own = TensorTopology(topology.distribution_shape, placements, topology.mesh_coords)
    in_spec = rows.spec

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        hist = logical_values(in_rows[0], in_spec, as_float=False).reshape(len(coords), height, n)
        made = [dispatch_offsets(hist[i], coords[i][axis], per_chip) for i in range(len(coords))]
        for j in range(3):
            write_values(out_rows[j], np.stack([m[j] for m in made]).reshape(len(coords), 1, n), spec)

    attrs = {"cluster_axis": axis, "experts_per_chip": per_chip}
    outs = [Output(spec, topology=own) for _ in range(3)]
    result = launch(OP, mesh, [rows], outs, kernel, attrs=attrs)
    return result[0], result[1], result[2]
