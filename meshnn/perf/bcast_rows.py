"""A binary op broadcasting one row of tiles down its other operand, as tt-metal ran it before #23626.

Until tt-metal #23626 landed for good (60f878c90e, 2025-08-04: "Binary_ng row subtile broadcast using LLK"), ttnn's
binary ops sent any operand pair with a row broadcast (one operand's logical height 1, the other's more:
binary.cpp's ``any_row_broadcasted`` in ``is_legacy_only``) to the legacy ``BinaryDeviceOperation``, whose
``select_program_factory`` picked ``BroadcastHeightMultiCore`` for an interleaved ``a`` and a ``b`` of height 1
(broadcast_height_multi_core_program_factory.cpp at e57c2123f3, 2025-06-03):

- the work is split over ``a``'s tile rows alone (``split_work_to_cores(grid, Ht)``): a 128-row prefill's
  QKV output runs on 4 cores, each with its whole row of ``Wt`` tiles (times the batch ``NC``);
- its reader (reader_bcast_h_interleaved_input_rows_partitioned.cpp) reads a tile of ``a`` and waits for it, then
  the matching tile of ``b`` and waits for it, once for every output tile;
- its compute kernel (bcast_h.cpp) takes one tile at a time; its writer
  (writer_unary_interleaved_input_cols_batched.cpp) writes each tile and waits for it to land;
- its circular buffers hold 2 tiles each, so the three engines overlap by a tile: a core's time is its tiles
  times the slowest engine's per-tile time, then the last tile's compute and write.

tt_transformers' Qwen2 attention adds its QKV bias so in prefill (attention.py: ``xqkv_fused + wqkv_bias_prefill``,
a [1, 1, 1, qkv] bias on [1, 1, seq, qkv]), which is the op this times.  Ops are timed so only when marked
(:func:`marked`): the figures measured before 2025-08-04; unmarked ops run today's binary_ng program
(:mod:`meshnn.perf.tile_ops`).  Units: cycles of the chip clock.
"""

from __future__ import annotations

import math
from enum import Enum

from meshnn.perf.desc import TILE, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc
from meshnn.perf.latency import op_latency
from meshnn.perf.page_programs import landing_cycles, write_cycles
from meshnn.perf.systems import Machine

BINARY_PROGRAM_ATTRIBUTE = "binary_program"
"""The op-desc attribute naming the binary program a figure ran (absent: today's)."""


class BinaryProgram(Enum):
    """Which of tt-metal's binary programs times an op."""

    BCAST_H_ROWS = "2025-07"  # BroadcastHeightMultiCore, the legacy row broadcast, before #23626 (2025-08-04)


def row_broadcast(desc: OpDesc) -> bool:
    """Whether ``desc`` is a binary op the legacy program ran as BroadcastHeightMultiCore: two interleaved tiled
    operands of one width, the second's logical height 1 and the first's more."""
    if desc.family is not OpFamily.BINARY or len(desc.inputs) != 2:
        return False
    a, b = desc.inputs
    if any(t.layout is not Layout.TILE or t.memory is not MemoryLayout.INTERLEAVED for t in (a, b)):
        return False
    a_rows = (a.logical_shape or a.shape)[-2]
    b_rows = (b.logical_shape or b.shape)[-2]
    return b_rows == 1 and a_rows > 1 and a.shape[-1] == b.shape[-1]


def marked(desc: OpDesc, program: BinaryProgram) -> OpDesc:
    """``desc`` marked as run by ``program`` when it is a row broadcast (:func:`row_broadcast`), else as it is."""
    if not row_broadcast(desc):
        return desc
    return desc.with_attribute(BINARY_PROGRAM_ATTRIBUTE, program.value)


def legacy_rows(desc: OpDesc) -> bool:
    """Whether ``desc`` is marked as run by the legacy row-broadcast program."""
    return dict(desc.attributes).get(BINARY_PROGRAM_ATTRIBUTE) == BinaryProgram.BCAST_H_ROWS.value


def legacy_split(desc: OpDesc, cores: int) -> tuple[int, int]:
    """(cores used, output tiles on the busiest core): ``a``'s tile rows over at most ``cores`` cores, each
    core's rows whole, times the batch."""
    a = desc.inputs[0]
    rows = math.ceil(a.shape[-2] / TILE)
    batch = math.prod(a.shape[:-2]) if len(a.shape) > 2 else 1
    used = max(1, min(cores, rows))
    return used, batch * math.ceil(rows / used) * math.ceil(a.shape[-1] / TILE)


def _read_cycles(machine: Machine, tensor: TensorDesc) -> float:
    """One tile of ``tensor`` read and waited for: the round trip, then its bytes at a core's NoC rate."""
    arch = machine.system.arch
    return op_latency(arch.arch).read_trip_cycles(tensor.in_dram) + tensor.tile_bytes / arch.noc_bytes_per_cycle


def legacy_cycles(desc: OpDesc, machine: Machine, tiles: int, compute_per_tile: float) -> float:
    """The busiest core's cycles for ``tiles`` output tiles: each the slowest of its reader (a tile of ``a`` and
    one of ``b``, each waited for), its compute (``compute_per_tile``) and its writer (a write waited for), then
    the last tile's compute and write."""
    a, b = desc.inputs
    out = desc.outputs[0]
    reader = _read_cycles(machine, a) + _read_cycles(machine, b)
    writer = write_cycles(machine, out) + landing_cycles(machine, out)
    return tiles * max(reader, compute_per_tile, writer) + compute_per_tile + writer
