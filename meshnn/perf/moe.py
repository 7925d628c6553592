"""The time of ``ttnn.experimental.moe_gpt`` (gpt-oss's fused decode experts) on one device, and of
``moe_compute`` (DeepSeek's, any sizes, :func:`predict_moe_compute`).

The kernel streams each active expert's packed bfloat4_b weights (``w0_w1`` and ``w2``, inputs 4
and 5) bank by bank: every one of the 12 matmul cores reads its own bank's shard, once per chunk of
32 tokens an expert holds.  The token counts are known only when the kernel runs, so the model
times gpt-oss's decode load: every local expert busy with one chunk (128 tokens of the line, top 4
of 128 experts: about 4 tokens an expert), that is each weight byte read once.  Compute: per expert
and chunk one row of tiles times the weights' tile columns (gate and up 2 x 91 x 90 tile multiplies,
down 91 x 90) at LoFi over the 12 cores, each weight tile used once (a decode matmul's single-use
rate).  The ring all-to-all between the 12 cores rides the NoC beside the reads (not timed apart).

May import: :mod:`meshnn.perf` modules.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, OpDesc, OpFamily
from meshnn.perf.exchange import predict_exchange
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import kernel_prediction, operand_cycles, traffic

RING_CORES = 12


def predict_moe_gpt(desc: OpDesc, machine: Machine) -> Prediction:
    """``desc``: moe_gpt's six inputs (tokens, ids, scores, mapping, w0_w1, w2) and its outputs."""
    arch = machine.system.arch
    w01, w2 = desc.inputs[4], desc.inputs[5]
    experts = w01.shape[2]
    k_tiles = math.ceil(w01.shape[4] / TILE)  # 91: the weights' rows and the bias tile row
    col_tiles = 2 * (w2.shape[4] // TILE - 1)  # gate and up: 180 tile columns of the 90-tile output
    multiplies = experts * (k_tiles * col_tiles + k_tiles * col_tiles // 2)
    per_multiply = max(
        arch.lofi_cycles_per_tile + operand_cycles(arch, w01.tile_bytes),
        op_latency(arch.arch).single_use_weight_tile_cycles,
    )
    cycles = math.ceil(multiplies / RING_CORES) * per_multiply
    memory = traffic(machine, [(w01, 1.0), (w2, 1.0)], RING_CORES, dram_sharded=True, blocks_in_flight=True)
    flops = 2.0 * TILE**3 * multiplies
    return kernel_prediction(arch, cycles, memory, RING_CORES, fidelity=MathFidelity.LoFi, flops=flops)


def predict_moe_compute(desc: OpDesc, machine: Machine) -> Prediction:
    """``ttnn.experimental.moe_compute`` (DeepSeek's fused experts): inputs (tokens, ids, scores,
    mapping, w0_w1 ``(ring, L, E, groups, K', 128)``, w2); outputs 4 (``compute_only``) or 5 (the
    last the combine's ``[K, T/G, H]``).  One layer's weights read once, each of its tiles
    multiplied once (one chunk of 32 tokens an expert: decode's load) over the ring's cores at
    LoFi; with the combine, all_to_all_combine's line transfer of the output
    (:func:`meshnn.perf.exchange.predict_exchange`) added as link time and its fixed cost."""
    arch = machine.system.arch
    w01, w2 = desc.inputs[4], desc.inputs[5]
    ring, layers = w01.shape[0], w01.shape[1]
    multiplies = math.ceil((math.prod(w01.shape) + math.prod(w2.shape)) / (layers * TILE * TILE))
    per_multiply = max(
        arch.lofi_cycles_per_tile + operand_cycles(arch, w01.tile_bytes),
        op_latency(arch.arch).single_use_weight_tile_cycles,
    )
    cycles = math.ceil(multiplies / ring) * per_multiply
    memory = traffic(machine, [(w01, 1.0 / layers), (w2, 1.0 / layers)], ring, dram_sharded=True, blocks_in_flight=True)
    flops = 2.0 * TILE**3 * multiplies
    if len(desc.outputs) < 5:
        return kernel_prediction(arch, cycles, memory, ring, fidelity=MathFidelity.LoFi, flops=flops)
    combine = OpDesc(OpFamily.ALL_TO_ALL_COMBINE, (desc.outputs[3],), (desc.outputs[4],), collective=desc.collective)
    link = predict_exchange(combine, machine)
    return kernel_prediction(arch, cycles, memory, ring, fixed_ns=arch.op_launch_ns + link.fixed_ns,
                             link_ns=link.link_ns, link_bytes=link.link_bytes, fidelity=MathFidelity.LoFi,
                             flops=flops)  # fmt: skip
