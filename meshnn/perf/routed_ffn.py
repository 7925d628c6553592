"""The time of ``ttnn.experimental.deepseek_prefill.unified_routed_expert_ffn``: one expert's SwiGLU
feed-forward in one program on an 11x8 grid of Blackhole cores.

Inputs (x ``[M, K]``, gate and up ``[K, N]``, down ``[N, K]``, the tables).  The token count that
bounds the rows computed is read by the kernel when it runs, so the model times every row of ``x`` (the
most the program can do: a full expert).  Compute: ``M x K x N`` tile multiplies for each of gate, up
and down over the 88 cores at LoFi (the program sets it, whatever the compute-kernel config), each fed
its weight tile; memory: each core row of the
grid streams the weights once per chunk of rows (the weights read ``ceil(M / chunk)`` times, chunks of
at most 64 tile rows), ``x`` read and the output written once.

May import: :mod:`meshnn.perf` modules.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, OpDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import kernel_prediction, operand_cycles, traffic

OP_CODE = "UnifiedRoutedExpertFfnDeviceOperation"
CORES = 11 * 8
CHUNK_TILE_ROWS = 64
"""The most tile rows of ``x`` one pass of the kernel over the weights serves."""


def is_unified_ffn(desc: OpDesc) -> bool:
    return desc.op_code == OP_CODE and len(desc.inputs) >= 4


def predict_unified_ffn(desc: OpDesc, machine: Machine) -> Prediction:
    """See the module's text."""
    arch = machine.system.arch
    x, gate, up, down = desc.inputs[:4]
    m, k, n = (math.ceil(d / TILE) for d in (x.shape[-2], x.shape[-1], gate.shape[-1]))
    multiplies = 3 * m * k * n
    fidelity = MathFidelity.LoFi
    per_multiply = arch.lofi_cycles_per_tile * fidelity.phases + operand_cycles(arch, gate.tile_bytes)
    cycles = math.ceil(multiplies / CORES) * per_multiply
    passes = math.ceil(m / CHUNK_TILE_ROWS) if m else 1
    moves = [(gate, passes), (up, passes), (down, passes), (x, 1.0), *((out, 1.0) for out in desc.outputs[:1])]
    memory = traffic(machine, moves, CORES)
    return kernel_prediction(arch, cycles, memory, CORES, fidelity=fidelity, flops=2.0 * TILE**3 * multiplies)
