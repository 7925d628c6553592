"""``ttnn.group_norm`` on a DRAM-interleaved tiled input with Welford statistics, timed as tt-metal's
multi-core program runs it.

tt-metal (2026-06) runs it with ttnn/cpp/ttnn/operations/normalization/groupnorm/device/
groupnorm_mcast_program_factory.cpp and its Welford kernels:

- the grid: ``virtual_cols`` columns split the channels (the most, at most the grid's width and the
  groups, whose share of the channels is whole tiles and which divide the groups), the rest of the grid
  splits the rows (``virtual_rows = grid.x / virtual_cols x grid.y``); a core holds ``per_core_Mt`` tile
  rows of ``per_core_Nt`` tiles and ``groups / virtual_cols`` groups;
- the reader (kernels/dataflow/welford_reader_mcast_sender_unary_gn.cpp) reads the core's tiles twice, one
  tile at a time, each read waited for (``async_read_barrier`` per tile): a statistics pass and a
  normalise pass; between them the cores of a column gather and combine their groups' Welford partials
  (one exchange for all groups: the sharded norms' cross-core statistics cost,
  :attr:`~meshnn.perf.latency.OpLatency.sharded_norm_stats_ns`);
- the compute kernel (kernels/compute/welford_groupnorm.cpp): in the statistics pass each tile is
  transposed (``transpose_wh_tile``) and its channels' rows folded into their group's running mean and
  M2 on the SFPU (tt-llk ckernel_sfpu_welfords.h: per block of four rows two transposes and four loads,
  per row eight instructions from the replay buffer and its reciprocal's load, about 3; the group's state
  saved and restored around it, about 4 each), an instruction a cycle; in the normalise pass, for each
  group in the tile, four tile operations each packed and handed on through a circular buffer that the
  next one waits for (the tile minus the group's mean, the mask times the group's scale, their product,
  copied or added into the output tile), then gamma's multiply, beta's add and the copy out, so each
  operation is its operands' unpack, the FPU at the fidelity (a multiply's phases) and its pack, in turn;
- the writer writes each output tile.

So a core's time is its statistics pass (each tile, the slower of its waited read and its compute), the
exchange, and its normalise pass (the same), at the costs the model already has: the interleaved norms'
DRAM wait (:func:`meshnn.perf.norm_reader.read_wait_cycles`), the operand unpack and FPU figures, the
packers' rate.  What a tile operation's initialisation and data-format reconfiguration cost (each
operation of the normalise pass is preceded by its own ``*_init_short`` and ``reconfig_data_format``) has
no figure, so it is not counted.  Nothing is fitted here; tests/perf/published_sdxl.py checks it.
Units: chip cycles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from meshnn.perf.desc import TILE, Layout, OpDesc, TensorDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.norm_reader import read_wait_cycles
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import kernel_prediction, operand_cycles, traffic

GROUP_NORM_CODES = frozenset({"GroupNorm", "GroupNormDeviceOperation"})
WELFORD_ROW_INSTRUCTIONS = 8  # ckernel_sfpu_welfords.h: WELFORD_INSTR_PER_ROW
RECIPROCAL_LOAD_INSTRUCTIONS = 3  # _load_recip_of_idx_: the row's 1/n loaded into an LREG
BLOCK_LOAD_INSTRUCTIONS = 6  # _welfords_load_block_: two SFPTRANSP and four SFPLOAD for four rows
STATE_INSTRUCTIONS = 4  # a group's mean and M2 restored or saved (two loads or stores and their offsets)


def is_dram_welford_group_norm(desc: OpDesc) -> bool:
    """Whether ``desc`` is a ``group_norm`` of an interleaved tiled input with Welford statistics: its
    ``use_welford`` attribute, or a float32 ``reciprocals`` input (ttnn accepts one with Welford only)."""
    if desc.op_code not in GROUP_NORM_CODES or desc.inputs[0].sharded:
        return False
    welford = dict(desc.attributes).get("use_welford") == "True"
    return welford or any(t.dtype == "FLOAT32" for t in desc.inputs[1:])


@dataclass(frozen=True, slots=True)
class DramGroupNorm:
    """One core's share: ``tiles`` (its tile rows x ``width_tiles``), ``groups`` groups of
    ``channels_per_group``; ``cores`` in all, ``row_cores`` of them sharing each group's rows."""

    tiles: int
    width_tiles: int
    row_cores: int
    groups: int
    channels_per_group: int
    cores: int
    gamma: bool
    beta: bool


def dram_geometry(desc: OpDesc) -> DramGroupNorm:
    """The per-core share of the multi-core program for ``desc`` (the module docstring)."""
    x = desc.inputs[0]
    channels = x.shape[-1]
    named = dict(desc.attributes).get("num_groups")
    groups = int(named) if named else 32
    gx, gy = desc.core_grid or (8, 8)
    cols = max(1, min(gx, groups))
    while cols > 1 and ((channels // cols) % TILE or groups % cols):
        cols -= 1
    virtual_rows = (gx // cols) * gy
    tile_rows = math.ceil(math.prod(x.shape[:-1]) / TILE)
    per_core_n = max(1, channels // cols // TILE)
    weights = [t for t in desc.inputs[1:] if t.layout is Layout.ROW_MAJOR and t.dtype != "FLOAT32"]  # gamma, beta
    return DramGroupNorm(
        tiles=math.ceil(tile_rows / virtual_rows) * per_core_n,
        width_tiles=per_core_n,
        row_cores=virtual_rows,
        groups=max(1, groups // cols),
        channels_per_group=max(1, channels // groups),
        cores=cols * virtual_rows,
        gamma=len(weights) > 0,
        beta=len(weights) > 1,
    )


def welford_tile_cycles(arch: ArchPerf, x: TensorDesc, geo: DramGroupNorm) -> float:
    """The statistics pass's compute for one tile: its transpose, then its 32 channel rows folded into
    their groups' state on the SFPU (blocks of four rows), each group's state restored and saved."""
    transpose = operand_cycles(arch, x.tile_bytes) + arch.fpu_eltwise_cycles_per_tile
    rows = TILE
    sfpu = rows // 4 * BLOCK_LOAD_INSTRUCTIONS + rows * (WELFORD_ROW_INSTRUCTIONS + RECIPROCAL_LOAD_INSTRUCTIONS)
    groups_in_tile = max(1, math.ceil(TILE / geo.channels_per_group))
    return transpose + sfpu + groups_in_tile * 2 * STATE_INSTRUCTIONS


def normalise_tile_cycles(arch: ArchPerf, x: TensorDesc, geo: DramGroupNorm, fidelity: MathFidelity) -> float:
    """The normalise pass's compute for one tile: per group in it four operations handed on through
    circular buffers (each unpacked, computed, packed in turn), then gamma, beta and the copy out."""
    unpack, fpu = operand_cycles(arch, x.tile_bytes), arch.fpu_eltwise_cycles_per_tile
    pack = x.tile_bytes / arch.packer_bytes_per_cycle
    add = 2 * unpack + fpu + pack  # subtract a broadcast scalar, add into the output tile
    mul = 2 * unpack + fpu * fidelity.phases + pack  # the mask by the scale, the two factors' product
    copy = unpack + fpu + pack
    groups_in_tile = max(1, math.ceil(TILE / geo.channels_per_group))
    per_group = add + mul + mul + add
    return groups_in_tile * per_group + (mul if geo.gamma else 0.0) + (add if geo.beta else 0.0) + copy


def predict_dram_welford_group_norm(desc: OpDesc, machine: Machine) -> Prediction:
    """The kernel time of a DRAM Welford ``group_norm`` ``desc`` on ``machine`` (the module docstring)."""
    arch = machine.system.arch
    fidelity = desc.fidelity or MathFidelity.HiFi4
    x = desc.inputs[0]
    geo = dram_geometry(desc)
    read = read_wait_cycles(arch, x, x.tile_bytes)
    stats = max(read, welford_tile_cycles(arch, x, geo))
    normalise = max(read, normalise_tile_cycles(arch, x, geo, fidelity))
    cycles = geo.tiles * (stats + normalise)
    exchange_ns = op_latency(arch.arch).sharded_norm_stats_ns if geo.row_cores > 1 else 0.0
    moves = [(x, 2.0), *((t, 1.0) for t in desc.inputs[1:]), (desc.outputs[0], 1.0)]  # the input read twice
    memory = traffic(machine, moves, geo.cores)
    note = (
        f"DRAM welford group_norm: {geo.tiles} tiles a core, read twice, {geo.groups} groups a core "
        "(meshnn.perf.group_norm_dram)",
    )
    return kernel_prediction(
        arch, cycles, memory, geo.cores, fixed_ns=arch.op_launch_ns + exchange_ns, fidelity=fidelity, notes=note
    )
