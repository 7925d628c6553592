"""The time of ``ttnn.experimental.deepseek_prefill.masked_bincount`` (tt-metal 2026-06:
masked_bincount_program_factory.cpp and its reader kernel) on one device.

Every core of the ids' shard grid reads its shard's rows, split between its two data-movement RISCs,
and counts each of the row's ids (the model counts the shard's width) with an atomic increment (a scalar step of
:attr:`OpLatency.riscv_cycles_per_element` each: argmax's loop figure, uncalibrated); the cores' histograms
are then summed over a binary tree, ``ceil(log2(cores))`` levels, each a NoC read of a child's
``n``-word histogram (one DRAM-read latency, the far end) and ``n`` scalar adds.  The bytes: the ids,
the mask and the histogram, over the grid.  Tensors: ``inputs[0]`` the ids ``[rows, width]``, the
output ``[n]``.

May import: :mod:`meshnn.perf` modules.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import OpDesc
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, traffic

OP_CODE = "MaskedBincountDeviceOperation"


def is_masked_bincount(desc: OpDesc) -> bool:
    return desc.op_code == OP_CODE


def predict_masked_bincount(desc: OpDesc, machine: Machine) -> Prediction:
    """``desc``: the ids (height-sharded over its grid), the mask, and the ``[n]`` histogram."""
    arch = machine.system.arch
    latency = op_latency(arch.arch)
    ids = desc.inputs[0]
    rows = max(1, ids.volume // max(ids.shape[-1], 1))
    cores = min(grid_cores(machine, desc.core_grid), rows)
    width = ids.shape[-1]  # (the ids a row: num_experts_per_token or a padded shard width; an upper bound)
    experts = desc.outputs[0].shape[-1] if desc.outputs else 1
    counting = math.ceil(math.ceil(rows / cores) / 2) * width * latency.riscv_cycles_per_element
    levels = math.ceil(math.log2(cores)) if cores > 1 else 0
    tree = levels * (latency.dram_read_latency_cycles + experts * latency.riscv_cycles_per_element)
    memory = traffic(machine, [(t, 1.0) for t in (*desc.inputs, *desc.outputs)], cores)
    notes = (f"masked_bincount on {cores} core(s), {levels} tree level(s)",)
    return kernel_prediction(arch, counting + tree, memory, cores, notes=notes)
