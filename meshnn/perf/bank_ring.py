"""The time of DeepSeek-V3's DRAM-bank ring matmuls on Wormhole: ``moe_gate_mm`` (``MoEGateMMDeviceOperation``)
and ``matmul_wo`` (``MatmulWODeviceOperation``), tt-metal 2026-06's ttnn/cpp/ttnn/operations/experimental/deepseek
``moe/moe_gate_mm`` and ``mla/matmul_wo`` (their program factories and kernels).

Both run on the 12 DRAM-bank cores, each streaming one layer's block of its own bank's weight shard into
its own L1 input shard's K slice (32 tokens: one tile row, so each weight tile feeds one multiply), at
LoFi (the factories' own compute config).  A tensor as captured is every bank's shard side by side
and every layer's rows, so the time here is counted from the kernels' tables, not from the tensors'
sizes (the generic matmul saw a batched product of the stacked shards: ~3x the flops on 7 or 2 cores):

- ``matmul_wo`` (``matmul_wo_ring_common.h``): K 16384 = 512 tiles over the banks, 42 or 44 a bank
  (``K_TILES_PER_CORE_A``), N 896 = 28 tiles, read 7 tiles a transfer; the busiest bank reads 44 x 28
  weight tiles and does as many multiplies; the 7 collectors sum the 12 banks' partial tiles of each
  7-tile block (``compute_collector.cpp``): after the last block, 12 tile adds behind one NoC hop.
- ``moe_gate_mm`` (``compute.cpp``): K 7168 = 224 tiles, N 256 = 8 tiles; 8 receivers read 2 x 76
  weight tiles and the bias tile (153, bfloat16) and multiply 152; 4 senders read 2 x 72 (144) for
  two receivers each.  After the multiplies a dependent tail on one tile: the sender's partial hop
  and add, sigmoid, bias, the groups' top-2 sums to the collector, its top-4 back to the receivers,
  their top-8 to the collector and its merge: four one-tile NoC hops and the SFPU passes counted
  (sigmoid, the bias add).  The kernel's own top-2 / top-4 / top-8 / merge SFPU sorts
  (``top2_sum_sfpu.h``, ``top4_sfpu.h``, ``top8_sfpu.h``, ``top8_merge_sfpu.h``) are not counted.

The bank rate is the DRAM-sharded figure over the banks (one bank-adjacent reader each); a weight
tile's multiply costs its math and operand feed at LoFi, at least ``single_use_weight_tile_cycles``
(a decode matmul's unreused weight tile).  Uncalibrated: no constant is set from these ops' figures.

May import: :mod:`meshnn.perf` modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from meshnn.perf.desc import OpDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Bound, Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import Traffic, kernel_prediction, operand_cycles, sfpu_cycles_per_tile

BANKS = 12
WO_K_TILES_PER_BANK = (44, 44, 42, 42, 42, 42, 42, 42, 44, 44, 42, 42)
"""``matmul_wo_ring_common.h``'s ``K_TILES_PER_CORE_A``: 512 K tiles over the 12 banks."""
WO_N_TILES = 28
GATE_RECEIVER_TILES, GATE_SENDER_TILES = 2 * 76 + 1, 2 * 72
"""``moe_gate_mm``'s weight tiles a receiver (with its bias tile) and a sender read."""
GATE_RECEIVERS, GATE_SENDERS = 8, 4
GATE_HOPS = 4
"""The tail's dependent one-tile transfers: partial to receiver, top-2 sums to the collector, top-4
back, top-8 to the collector."""
GATE_K, GATE_N, WO_K, WO_N, TOKENS = 7168, 256, 16384, 896, 32


def _bank_rate(machine: Machine) -> float:
    """Bytes/s one bank serves its adjacent reader: the DRAM-sharded figure over the banks."""
    return machine.system.dram_sharded_bytes_per_s / machine.system.arch.num_dram_banks


def _multiply_cycles(machine: Machine, weight_tile_bytes: int) -> float:
    """One LoFi tile multiply whose weight tile is used once: math and operand feed, at least the
    decode figure."""
    arch = machine.system.arch
    feed = operand_cycles(arch, (2048 + weight_tile_bytes) / 2)
    return max(arch.lofi_cycles_per_tile * MathFidelity.LoFi.phases + feed,
               op_latency(arch.arch).single_use_weight_tile_cycles)  # fmt: skip


def _prediction(machine: Machine, bank_bytes: int, total_bytes: int, cycles: float, tail_ns: float,
                flops: float) -> Prediction:  # fmt: skip
    arch = machine.system.arch
    read_ns = bank_bytes / _bank_rate(machine) * 1e9
    memory = Traffic(total_bytes, read_ns, 0, 0.0)
    notes = ("uncalibrated: the ring's busiest bank read and multiplies counted from the kernels' tables",)
    p = kernel_prediction(arch, cycles, memory, BANKS, fidelity=MathFidelity.LoFi, flops=flops, notes=notes)
    return replace(p, fixed_ns=p.fixed_ns + tail_ns, memory=Bound.DRAM)


def predict_matmul_wo(desc: OpDesc, machine: Machine) -> Prediction:
    """``matmul_wo``'s time (see the module's text); ``desc.inputs[1]`` is the weight (its dtype read)."""
    arch = machine.system.arch
    tile = desc.inputs[1].tile_bytes
    busiest = max(WO_K_TILES_PER_BANK) * WO_N_TILES
    total = sum(WO_K_TILES_PER_BANK) * WO_N_TILES * tile
    cycles = busiest * _multiply_cycles(machine, tile)
    hop = op_latency(arch.arch).dram_read_latency_cycles
    tail = arch.cycles_ns(hop + BANKS * (arch.fpu_eltwise_cycles_per_tile + operand_cycles(arch, 2 * 2048)))
    return _prediction(machine, busiest * tile, total, cycles, tail, 2.0 * TOKENS * WO_K * WO_N)


def predict_moe_gate_mm(desc: OpDesc, machine: Machine) -> Prediction:
    """``moe_gate_mm``'s time (see the module's text); ``desc.inputs[1]`` is the weight."""
    arch = machine.system.arch
    tile = desc.inputs[1].tile_bytes
    total = (GATE_RECEIVERS * GATE_RECEIVER_TILES + GATE_SENDERS * GATE_SENDER_TILES) * tile
    cycles = (GATE_RECEIVER_TILES - 1) * _multiply_cycles(machine, tile)
    hops = GATE_HOPS * op_latency(arch.arch).dram_read_latency_cycles
    tail = arch.cycles_ns(
        hops + arch.fpu_eltwise_cycles_per_tile + sfpu_cycles_per_tile(arch, ("sigmoid", "add_scalar"))
    )
    return _prediction(machine, GATE_RECEIVER_TILES * tile, total, cycles, tail, 2.0 * TOKENS * GATE_K * GATE_N)


PREDICTORS: dict[str, Callable[[OpDesc, Machine], Prediction]] = {
    "MatmulWODeviceOperation": predict_matmul_wo,
    "MoEGateMMDeviceOperation": predict_moe_gate_mm,
}
"""These ops' predictors by tt-metal's device-operation name."""

__all__ = ["PREDICTORS", "predict_matmul_wo", "predict_moe_gate_mm"]
