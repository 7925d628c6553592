"""``ttnn.topk`` as its two programs run (tt-metal reduction/topk/device: topk_device_operation.cpp picks
the program, topk_utils.cpp's ``find_topk_core_config`` splits the row, the compute kernels topk.cpp,
topk_local.cpp and topk_final.cpp sort it).

The multi-core program, which ttnn runs for a reduced dim of 8192 to 65535 values (its indices are uint16)
with ``k`` up to 64 where its split finds cores, gives each of its local cores a power-of-two share of the
row and then one final core the local cores' top ``k`` each; otherwise one core sorts the whole row (the
single-core program).  The two sort differently (:mod:`meshnn.perf.topk_sfpu` counts their SFPU work): a
local core sorts its tiles in pairs to 32-value runs, then merges them in log2(tiles) bitonic rounds (the
final core only merges); the single core inserts every tile into the kept ``k``, each insertion a full sort
of the 64 values of a tile pair, and with uint16 indices (a row below 65,535 values) each tile's moves
besides (:attr:`OpLatency.topk_insertion_tile_cycles`, fitted: they are not counted).  The busiest path's
counted SFPU instructions cost :attr:`OpLatency.topk_instruction_cycles` each (fitted: the tile moves
between them folded in).  Tensors: ``inputs[0]`` the values ``[..., rows, width]``.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, OpDesc
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.topk_sfpu import bitonic_instructions, insertion_instructions
from meshnn.perf.traffic import kernel_prediction, traffic

OP_CODE = "TopKDeviceOperation"
MULTI_CORE_MIN_WIDTH = 8192  # topk_constants.hpp
MIN_DIM_PER_CORE = 64
UINT16_INDICES = 1 << 16  # the multi-core program writes uint16 indices: a reduced dim below this
UINT16_MAX = (1 << 16) - 1  # the single-core program writes uint16 indices below this, uint32 from it


def is_topk(desc: OpDesc) -> bool:
    return desc.op_code == OP_CODE


def multicore_split(width: int, k: int, grid: tuple[int, int]) -> tuple[int, int] | None:
    """(local cores, values a local core sorts) of the multi-core program for a row of ``width`` values
    on a core range of ``grid`` (x, y) cores, or None where ttnn runs the single-core program.  As
    ``find_topk_core_config`` searches: power-of-two multiples of a first share (the row over the
    largest power of two of the range's cores, whole tiles), up to half the row, for a share that divides
    the row into more than one core and at least 64 values, on a block of cores the range holds.  The
    range's x span and its y span less one bound it, as that function counts them (an 8x8 grid: 7 x 6)."""
    if not MULTI_CORE_MIN_WIDTH <= width < UINT16_INDICES or k > 64:
        return None
    max_x, max_y = grid[0] - 1, grid[1] - 2
    max_cores = max_x * max_y
    if max_cores < 2:
        return None
    split = max(TILE, width // TILE // (1 << (max_cores.bit_length() - 1)) * TILE)
    while split <= width // 2:
        cores = math.ceil(width / split)
        block = any(cores % y == 0 and cores // y <= max_x for y in range(1, max_y + 1))
        if width % split == 0 and 1 < cores <= max_cores and split >= MIN_DIM_PER_CORE and block:
            return cores, split
        split *= 2
    return None


def sfpu_instructions(width: int, k: int, grid: tuple[int, int]) -> tuple[int, int]:
    """(SFPU instructions of a tile row on the busiest path, cores used): a local core's share (pair sorts,
    then bitonic rounds) then the final core's ``cores x k`` (rounds only) in the multi-core program; the
    whole row inserted tile by tile on one core otherwise."""
    split = multicore_split(width, k, grid)
    if split is None:
        return insertion_instructions(math.ceil(width / TILE), k), 1
    cores, share = split
    local = bitonic_instructions(share // TILE, k, presort=True)
    return local + bitonic_instructions(cores * math.ceil(k / TILE), k, presort=False), cores + 1


def sorted_tiles(width: int, k: int, grid: tuple[int, int]) -> tuple[int, int]:
    """(tiles of a row the busiest path sorts, cores used): a local core's share then the final core's
    ``cores x k`` (k in whole tiles) in the multi-core program; the whole row on one core otherwise."""
    split = multicore_split(width, k, grid)
    if split is None:
        return math.ceil(width / TILE), 1
    cores, share = split
    return share // TILE + cores * math.ceil(k / TILE), cores + 1


def predict_topk(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of ``ttnn.topk`` ``desc`` (k: its first output's width) on ``machine``."""
    values = desc.inputs[0]
    width, k = values.shape[-1], desc.outputs[0].shape[-1] if desc.outputs else TILE
    rows = math.ceil(math.prod(values.shape[:-1]) / TILE)
    grid = desc.core_grid or machine.system.spec.compute_grid
    instructions, cores = sfpu_instructions(width, k, grid)
    latency = op_latency(machine.system.arch.arch)
    cycles = rows * instructions * latency.topk_instruction_cycles
    if multicore_split(width, k, grid) is None and width < UINT16_MAX:  # the single core's moves of its tiles
        cycles += rows * math.ceil(width / TILE) * latency.topk_insertion_tile_cycles
    memory = traffic(machine, [(t, 1.0) for t in (*desc.inputs, *desc.outputs)], cores)
    return kernel_prediction(machine.system.arch, cycles, memory, cores)
