"""``rotary_embedding_llama`` in prefill mode (an interleaved input): the cores its program uses and
the work of one tile.

tt-metal's program (rotary_embedding_llama_program_factory.cpp) splits a prefill over batch and
sequence tiles only: ``min(batch, cores)`` groups of users, each split over
``min(cores // groups, sequence tiles)`` cores; every head of a core's rows of sequence tiles stays on
that core.  A 128-token prompt of one user runs on 4 cores whatever its head count (the model had
spread its tiles over the whole grid).  Each tile (compute kernel rotary_embedding_llama.cpp) is a
tile multiply by the transformation matrix (``x @ T``), two element-wise multiplies (by sin, by cos)
and an add, each fed its two operand tiles, at the op's fidelity (HiFi4 by default).
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, OpDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, operand_cycles, traffic

OP_CODE = "RotaryEmbeddingLlamaDeviceOperation"
MULTIPLIES, ADDS = 2, 1
"""x * cos and (x @ T) * sin (at the fidelity's phases), and their sum: one tile's element-wise FPU work."""


def is_rotary_prefill(desc: OpDesc) -> bool:
    """Whether ``desc`` is ``rotary_embedding_llama`` in prefill mode (its input interleaved)."""
    return desc.op_code == OP_CODE and bool(desc.inputs) and not desc.inputs[0].sharded


def rotary_prefill_split(desc: OpDesc, machine: Machine) -> tuple[int, int]:
    """(cores used, tiles on the busiest core): ``batch x heads x seq_tiles x head_dim_tiles`` input
    tiles over ``min(batch, cores)`` user groups times ``min(cores // groups, seq_tiles)`` cores."""
    batch, heads, seq, width = desc.inputs[0].shape[-4:] if len(desc.inputs[0].shape) >= 4 else (1, 1, 1, TILE)
    seq_tiles, width_tiles = max(1, math.ceil(seq / TILE)), max(1, math.ceil(width / TILE))
    grid = grid_cores(machine, desc.core_grid)
    batch_groups = max(1, min(batch, grid))
    seq_groups = max(1, min(grid // batch_groups, seq_tiles))
    tiles = math.ceil(batch / batch_groups) * math.ceil(seq_tiles / seq_groups) * heads * width_tiles
    return batch_groups * seq_groups, tiles


def predict_rotary_prefill(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of ``rotary_embedding_llama`` on an interleaved input (prefill) on ``machine``."""
    arch = machine.system.arch
    fidelity = desc.fidelity or MathFidelity.HiFi4
    cores, tiles = rotary_prefill_split(desc, machine)
    tile_bytes = desc.inputs[0].tile_bytes
    fpu = arch.fpu_eltwise_cycles_per_tile
    per_tile = arch.lofi_cycles_per_tile * fidelity.phases + (MULTIPLIES * fidelity.phases + ADDS) * fpu
    per_tile += (1 + MULTIPLIES + ADDS) * operand_cycles(arch, 2 * tile_bytes)  # each op's two operand tiles
    moves = [(t, 1.0) for t in desc.inputs] + [(t, 1.0) for t in desc.outputs]
    memory = traffic(machine, moves, cores)
    return kernel_prediction(arch, tiles * per_tile, memory, cores, fidelity=fidelity)
