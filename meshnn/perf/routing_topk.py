"""The time of tt-metal 2026-06's routing and top-k ops on one device: gpt-oss's fused router
(``TopkRouterGptDeviceOperation``), the long-row top-k indices (``TopkLargeIndicesDeviceOperation``)
and DeepSeek-V3.2's indexer scores (``IndexerScoreDeviceOperation``).  None is calibrated against a
measured run: each is the busiest core's counted work at the arch's figures, beside its bytes.

- router (``topk_router_gpt_program_factory.cpp``): 12 DRAM-aligned cores, four groups of three, each
  core one 32-expert tile column of a third of the hidden dim's tiles (the weight read bank by bank),
  the worker's two partial adds and the bias, then the collector's top-k of the four groups' tiles
  (:func:`~meshnn.perf.topk_sfpu.insertion_instructions` of 4 tiles, k 32) and a one-tile softmax; its
  products at HiFi2, the fidelity the program sets itself.
  Tensors: ``inputs`` the hidden states ``[32, hidden]``, the weight, the bias.
- large indices (``topk_large_indices_program_factory.cpp``): the rows dealt over the grid; per row
  ``ceil(n / window)`` windows (``window``: ``k`` snapped up to 512, 1024 or 2048), each a bitonic sort
  of the window's values on the SFPU (``s (s + 1) / 2`` stages of ``window / 32`` instructions,
  ``s = log2(window)``) at ``topk_instruction_cycles`` an instruction.  Tensors: ``inputs[0]`` the rows.
- indexer (``IndexerScoreDeviceOperation::create_op_performance_model``): per causal-visible output
  tile and head, ``D / 32`` tile multiplies at the fidelity's phases and one gate multiply, over
  ``min(work units, grid)`` cores; the query window is taken as the fullest (``chunk_start_idx = T - Sq``,
  the deployment's last ring position) and the work units as the default config's (one tile each): the
  OpDesc carries neither.  Tensors: ``inputs`` q ``[B, Hi, Sq, D]``, k ``[B, 1, T, D]``, the weights.

May import: :mod:`meshnn.perf` modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from meshnn.perf.desc import TILE, OpDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.topk_sfpu import insertion_instructions
from meshnn.perf.traffic import grid_cores, kernel_prediction, sfpu_cycles_per_tile, traffic

ROUTER_CORES = 12
ROUTER_GROUPS = 4
WINDOWS = (512, 1024, 2048)


def predict_router(desc: OpDesc, machine: Machine) -> Prediction:
    """``ttnn.experimental.topk_router_gpt``'s time (see the module's text)."""
    arch = machine.system.arch
    x, weight, bias = desc.inputs[:3]
    part_tiles = math.ceil(math.ceil(x.shape[-1] / TILE) / 3)
    phases = MathFidelity.HiFi2.phases  # (the program's own compute config)
    cycles = part_tiles * arch.lofi_cycles_per_tile * phases + 3 * arch.fpu_eltwise_cycles_per_tile
    sort = insertion_instructions(ROUTER_GROUPS, TILE) * op_latency(arch.arch).topk_instruction_cycles
    softmax = 2 * arch.reduce_cycles_per_tile + 3 * arch.fpu_eltwise_cycles_per_tile
    softmax += sfpu_cycles_per_tile(arch, ("exp", "recip"))
    moves = [(weight, 1.0), (x, float(ROUTER_GROUPS)), (bias, 1.0), *((t, 1.0) for t in desc.outputs)]
    memory = traffic(machine, moves, ROUTER_CORES, dram_sharded=True)
    notes = ("uncalibrated: the cores' counted work at the arch's figures",)
    return kernel_prediction(arch, cycles + sort + softmax, memory, ROUTER_CORES, flops=2.0 * x.volume * 128,
                             notes=notes)  # fmt: skip


def predict_large_indices(desc: OpDesc, machine: Machine) -> Prediction:
    """``ttnn.experimental.topk_large_indices``' time (see the module's text)."""
    arch = machine.system.arch
    values = desc.inputs[0]
    n = values.shape[-1]
    rows = max(1, math.prod(values.shape[:-1]))
    k = desc.outputs[0].shape[-1] if desc.outputs else WINDOWS[0]
    window = next((w for w in WINDOWS if w >= k), WINDOWS[-1])
    cores = min(rows, grid_cores(machine, desc.core_grid))
    stages = int(math.log2(window))
    per_window = stages * (stages + 1) // 2 * (window // TILE)
    cycles = math.ceil(rows / cores) * math.ceil(n / window) * per_window
    cycles *= op_latency(arch.arch).topk_instruction_cycles
    memory = traffic(machine, [(t, 1.0) for t in (values, *desc.outputs)], cores)
    notes = ("uncalibrated: a bitonic sort of each window counted, no measured run",)
    return kernel_prediction(arch, cycles, memory, cores, notes=notes)


def visible_tiles(query_tiles: int, key_tiles: int, start_tiles: int) -> int:
    """Output tiles a causal window holds: each query tile row sees ``start_tiles + row + 1`` key tiles
    (at most ``key_tiles``)."""
    return sum(min(key_tiles, start_tiles + row + 1) for row in range(query_tiles))


def predict_indexer(desc: OpDesc, machine: Machine) -> Prediction:
    """``ttnn.experimental.indexer_score``'s time (see the module's text)."""
    arch = machine.system.arch
    q, k = desc.inputs[0], desc.inputs[1]
    batch, heads, sq, d = q.shape
    query_tiles, key_tiles = math.ceil(sq / TILE), math.ceil(k.shape[2] / TILE)
    tiles = visible_tiles(query_tiles, key_tiles, key_tiles - query_tiles) * heads * batch
    cores = min(query_tiles * key_tiles, grid_cores(machine, desc.core_grid))
    phases = (desc.fidelity or MathFidelity.HiFi2).phases
    per_tile = math.ceil(d / TILE) * arch.lofi_cycles_per_tile * phases + arch.fpu_eltwise_cycles_per_tile
    cycles = math.ceil(tiles / cores) * per_tile
    moves = [(q, 1.0), (k, float(query_tiles)), *((t, 1.0) for t in desc.inputs[2:]), *((t, 1.0) for t in desc.outputs)]
    memory = traffic(machine, moves, cores, blocks_in_flight=True, readers=cores)
    flops = 2.0 * tiles * TILE * TILE * d
    notes = ("uncalibrated; the fullest causal window and one-tile work units assumed",)
    return kernel_prediction(arch, cycles, memory, cores, flops=flops, notes=notes)


PREDICTORS: dict[str, Callable[[OpDesc, Machine], Prediction]] = {
    "TopkRouterGptDeviceOperation": predict_router,
    "TopkLargeIndicesDeviceOperation": predict_large_indices,
    "IndexerScoreDeviceOperation": predict_indexer,
}
"""These ops' predictors by tt-metal's device-operation name."""
