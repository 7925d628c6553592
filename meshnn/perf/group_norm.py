"""``ttnn.group_norm`` on a sharded input, timed as tt-metal's sharded program runs it.

tt-metal (2026-06) runs a group norm whose input is sharded in L1 with
ttnn/cpp/ttnn/operations/normalization/groupnorm/device/groupnorm_sharded_program_factory.cpp: every core
holds a ``per_core_M x per_core_N`` shard (rows x channels; block sharded: the grid's rows split the
rows, its columns the channels, the shard orientation taken as ROW_MAJOR, which a description does not
carry; height sharded: every core all the channels of its rows) and normalises the ``groups_per_core``
groups its channels hold, for each image it holds in turn.  The compute kernel
(kernels/compute/groupnorm_sharded_v2.cpp) loops over those groups, and for each one works on a block
of ``block_ht`` tile rows by ``block_wt`` tiles (the most tiles a group's channels span,
``find_max_tile_span``), a pass over the whole block at a time:

1. the input times the group's input mask (the group's channels kept) into ``cb_x``;
2. the block's sum: each tile multiplied by a tile of ones into one destination register (no pack);
3. the mean: the partial reduced to a scalar, then, with the block's rows split over several cores
   (``num_cores_per_mcast_group``), gathered by the group's sender core, reduced and multicast back
   (the reader kernels: each partial read and waited for, a semaphore, a multicast);
4. the block minus the mean (a scalar broadcast), 5. times the mask again, 6. squared and summed into
   one register, 7. the variance gathered across the cores as in 3, plus epsilon, its rsqrt;
8. the block times that scale; 9. its group's tiles copied or added into the output (with a negative
   mask, ``FUSE_NEGATIVE_MASK``: the input tiles times the negative mask, then the block added in).

Then gamma's multiply and beta's add over the whole shard (when given).  A row-major input is tilized
first and the output untilized last (``TILIZE_IN`` / ``UNTILIZE_OUT``); when a shard's channels are not
whole tiles (``READER_REPACK``) the reader first copies each of the shard's rows into a tile-wide buffer
with a NoC read of its own from the core's own L1 (a tile row of 32 reads, then a barrier), and after
the untilize copies each output row back the same way.

So a core's time is: the input repack (the tilize waits on it a tile row at a time, so the slower of the
two), the group passes (each tile an unpack of its operands and an FPU operation at the op's fidelity,
HiFi4 by default (groupnorm.cpp), a multiply's phases counted, an add's not; a pass's packs overlap its
math), the two gathers a group at the cross-core statistics' cost
(:attr:`~meshnn.perf.latency.OpLatency.sharded_norm_stats_ns`, the same gather / reduce / multicast a
sharded layer norm does), gamma and beta, and the untilize or output repack.  The repacks' reads move at
the rate tt-metal's conv2d program factory measured for a core's NoC reads of its own L1
(:mod:`meshnn.perf.conv_rates`); the tilize at its measured cycles a tile (the untilize taken as the
same).  Nothing here is fitted: tests/perf/published_sdxl.py checks it.  A group norm on an interleaved
(DRAM) input runs the multi-core program (groupnorm_mcast_program_factory.cpp), which this module does
not model: it stays with the norm model of :mod:`meshnn.perf.tile_ops`.  Units: chip cycles unless named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from meshnn.perf.conv_rates import RATES
from meshnn.perf.desc import TILE, Layout, MemoryLayout, OpDesc, TensorDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import kernel_prediction, operand_cycles, traffic

GROUP_NORM_CODES = frozenset({"GroupNorm", "GroupNormDeviceOperation"})
DEFAULT_GROUPS = 32
"""Groups when a description names none (SDXL's and ttnn's tests' count)."""
GATHERS_PER_GROUP = 2
"""Cross-core statistics a group gathers: its mean, then its variance (the two-pass kernel)."""


def is_sharded_group_norm(desc: OpDesc) -> bool:
    """Whether ``desc`` is a ``group_norm`` whose input is sharded in L1 (the sharded program)."""
    return desc.op_code in GROUP_NORM_CODES and desc.inputs[0].memory in (
        MemoryLayout.BLOCK_SHARDED,
        MemoryLayout.HEIGHT_SHARDED,
    )


@dataclass(frozen=True, slots=True)
class ShardedGroupNorm:
    """One core's share of a sharded group norm: for each of its ``batches_per_core`` images, ``block_ht``
    tile rows of each of ``groups_per_core`` groups' ``block_wt``-tile blocks; ``shard_rows`` x
    ``shard_channels`` elements in all (``shard_tiles`` tiles); ``gather_cores`` cores sharing each group's
    rows (>= 1)."""

    shard_rows: int
    shard_channels: int
    batches_per_core: int
    groups_per_core: int
    block_ht: int
    block_wt: int
    gather_cores: int
    repack: bool  # the shard's channels are not whole tiles: rows copied one NoC read each
    tilize_in: bool
    untilize_out: bool
    negative_mask: bool
    gamma: bool
    beta: bool

    @property
    def shard_tiles(self) -> int:
        return math.ceil(self.shard_rows / TILE) * math.ceil(self.shard_channels / TILE)


def _attribute(desc: OpDesc, name: str) -> str | None:
    return dict(desc.attributes).get(name)


def max_tile_span(shard_channels: int, group_size: int) -> int:
    """The most tiles one group's channels touch within a shard of ``shard_channels`` (groups laid
    end to end from channel 0): tt-metal's ``find_max_tile_span``."""
    span, start = 1, 0
    while start < shard_channels:
        end = min(start + group_size, shard_channels) - 1
        span = max(span, end // TILE - start // TILE + 1)
        start += group_size
    return span


def sharded_geometry(desc: OpDesc) -> ShardedGroupNorm:
    """The per-core blocks of the sharded program for ``desc`` (see the module docstring)."""
    x = desc.inputs[0]
    batches, channels = x.shape[0], x.shape[-1]
    rows = math.prod(x.shape[:-1])
    gx, gy = desc.core_grid or (8, 8)
    if x.memory is MemoryLayout.BLOCK_SHARDED:
        shards_r, shards_c = gy, gx
    else:  # height sharded: every core holds all channels of its rows
        shards_r, shards_c = gx * gy, 1
    masks = [t for t in desc.inputs[1:] if t.layout is Layout.TILE and t.dtype != "FLOAT32"]
    weights = [t for t in desc.inputs[1:] if t.layout is Layout.ROW_MAJOR and t.dtype != "FLOAT32"]
    named = _attribute(desc, "num_groups")
    groups = int(named) if named else (masks[0].shape[1] if masks and len(masks[0].shape) == 4 else DEFAULT_GROUPS)
    shard_rows, shard_channels = max(TILE, rows // shards_r), max(1, channels // shards_c)
    batches_per_core = max(1, batches // shards_r)
    cores_per_batch = 1 if batches > shards_r else shards_r // max(1, batches)
    cores_per_group = 1 if groups > shards_c else shards_c // groups
    out = desc.outputs[0] if desc.outputs else x
    return ShardedGroupNorm(
        shard_rows=shard_rows,
        shard_channels=shard_channels,
        batches_per_core=batches_per_core,
        groups_per_core=max(1, groups // shards_c) if groups > shards_c else 1,
        block_ht=max(1, shard_rows // TILE // batches_per_core),
        block_wt=max_tile_span(shard_channels, max(1, channels // groups)),
        gather_cores=max(1, cores_per_batch * cores_per_group),
        repack=shard_channels % TILE != 0,
        tilize_in=x.layout is Layout.ROW_MAJOR,
        untilize_out=out.layout is Layout.ROW_MAJOR,
        negative_mask=len(masks) > 1,
        gamma=len(weights) > 0,
        beta=len(weights) > 1,
    )


def _tile_ops(arch: ArchPerf, fidelity: MathFidelity, x: TensorDesc, mask_bytes: int) -> dict[str, float]:
    """Cycles of one tile of each kind of FPU operation the kernel runs: its operands' unpack and the
    FPU, a multiply at the fidelity's phases, an add, subtract or copy in one."""
    tile, fpu = x.tile_bytes if x.layout is Layout.TILE else 2 * TILE * TILE, arch.fpu_eltwise_cycles_per_tile
    a = operand_cycles(arch, tile)
    return {
        "mul": 2 * a + fpu * fidelity.phases,  # the block by itself, by a tile of ones, by a broadcast scalar
        "mask": a + operand_cycles(arch, mask_bytes) + fpu * fidelity.phases,
        "add": 2 * a + fpu,  # subtract, add
        "copy": a + fpu,
    }


def group_cycles(geo: ShardedGroupNorm, ops: dict[str, float]) -> float:
    """Cycles of one group's passes over its block on one core (the gathers aside)."""
    block = geo.block_ht * geo.block_wt
    passes = ops["mask"] + ops["mul"] + ops["add"] + ops["mask"] + ops["mul"] + ops["mul"]  # 1, 2, 4, 5, 6, 8
    if geo.negative_mask:  # 9: the input's tiles times the negative mask, then the block added in
        passes += ops["mask"] + ops["add"]
    else:  # 9: copied into the output, or added where groups share a tile
        passes += ops["add"]
    return block * passes


def repack_cycles(geo: ShardedGroupNorm, arch: ArchPerf) -> float:
    """One way of the repack: each of the shard's rows, one NoC read of its channels' bytes from the
    core's own L1 (0 when the channels are whole tiles)."""
    if not geo.repack:
        return 0.0
    row_bytes = 2 * geo.shard_channels  # bfloat16 rows
    return RATES[arch.arch].local_l1.cycles(geo.shard_rows * row_bytes, row_bytes, arch.clock_hz)


def predict_sharded_group_norm(desc: OpDesc, machine: Machine) -> Prediction:
    """The kernel time of a sharded ``group_norm`` ``desc`` on ``machine`` (see the module docstring)."""
    arch = machine.system.arch
    fidelity = desc.fidelity or MathFidelity.HiFi4
    geo = sharded_geometry(desc)
    x = desc.inputs[0]
    masks = [t for t in desc.inputs[1:] if t.layout is Layout.TILE and t.dtype != "FLOAT32"]
    ops = _tile_ops(arch, fidelity, x, masks[0].tile_bytes if masks else x.tile_bytes)
    tilize = RATES[arch.arch].tilize(False, "BFLOAT16", False) * geo.shard_tiles
    repack = repack_cycles(geo, arch)
    groups = geo.batches_per_core * geo.groups_per_core  # the kernel's loop: each image's groups in turn
    cycles = groups * group_cycles(geo, ops)
    cycles += max(repack, tilize) if geo.tilize_in else 0.0
    cycles += max(repack, tilize) if geo.untilize_out else 0.0
    cycles += geo.shard_tiles * ((ops["mul"] if geo.gamma else 0.0) + (ops["add"] if geo.beta else 0.0))
    cores = math.prod(desc.core_grid or (8, 8))
    gathers = groups * GATHERS_PER_GROUP if geo.gather_cores > 1 else 0
    cycles += gathers * op_latency(arch.arch).sharded_norm_stats_ns * arch.clock_hz / 1e9  # on the core's path
    dram = [t for t in desc.inputs[1:] if t.in_dram]  # masks, gamma and beta read from DRAM once
    memory = traffic(machine, [(t, 1.0) for t in dram], cores, local_shards=True)
    note = (
        f"sharded group_norm: {groups} groups a core of {geo.block_ht}x{geo.block_wt} tiles, "
        f"{gathers} cross-core gathers (meshnn.perf.group_norm)",
    )
    return kernel_prediction(arch, cycles, memory, cores, fidelity=fidelity, notes=note)
