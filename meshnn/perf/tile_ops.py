"""Ops that stream tiles through the math engines: eltwise unary and binary, reductions, softmax,
layer_norm / rms_norm and typecast.

Each reads its DRAM inputs once and writes its outputs once; its compute is a per-tile cost (the
operand tiles fed from L1, FPU cycles at the fidelity, SFPU passes) over the tiles of the busiest
core; L1-sharded tensors are the op's own cores' and cross no NoC link.  Ops that work on whole
rows (reductions over the last dim, softmax, norms) split rows of tiles
across cores.  These per-tile costs are estimates from the engines' published throughputs; no
published op-level measurement calibrates them, so on DRAM tensors the DRAM time decides.  A norm on an
interleaved input is held by its reader's serial DRAM waits (:mod:`meshnn.perf.norm_reader`), then its
last block's multiply and write.
"""

from __future__ import annotations

import dataclasses
import math
from enum import Enum

from meshnn.perf.bcast_rows import legacy_cycles, legacy_rows, legacy_split
from meshnn.perf.desc import TILE, BufferType, MemoryLayout, OpDesc, OpFamily
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.norm_reader import is_interleaved_norm, reader_cycles, tail_cycles
from meshnn.perf.norm_stats import sharded_stats_ns
from meshnn.perf.page_programs import landing_cycles, launch_cycles, write_cycles
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, operand_cycles, sfpu_cycles_per_tile, traffic

ROW_OPS = frozenset({OpFamily.REDUCTION, OpFamily.SOFTMAX, OpFamily.NORM})
PAGE_WRITERS = frozenset({OpFamily.UNARY, OpFamily.TYPECAST})
"""Families whose program writes its output with the unary writer (``writer_unary_interleaved_start_id.cpp``:
each page flushed before the next), timed at the page-write rate (:func:`meshnn.perf.traffic.traffic`)."""
TYPECAST_PROGRAM_ATTRIBUTE = "typecast_program"
"""The op-desc attribute naming the typecast program a figure ran (absent: today's)."""


class TypecastProgram(Enum):
    """Which of tt-metal's typecast programs times an op."""

    SUBGRID_BLOCK = "2025-07"  # TypecastSubgridProgramFactory before #41547 (2026-04-10): a core's tiles one block


def _per_tile_cycles(desc: OpDesc, arch: ArchPerf, fidelity: MathFidelity) -> float:
    """Cycles one core spends on one input tile of ``desc``."""
    first = desc.inputs[0].tile_bytes
    fpu = arch.fpu_eltwise_cycles_per_tile
    reduce = arch.reduce_cycles_per_tile * fidelity.phases
    fused = sfpu_cycles_per_tile(arch, desc.unary_ops) if desc.unary_ops else 0.0
    family = desc.family
    if family is OpFamily.UNARY:
        return operand_cycles(arch, first) + (fused or sfpu_cycles_per_tile(arch, ["unknown"]))
    if family is OpFamily.TYPECAST:
        return operand_cycles(arch, first) + sfpu_cycles_per_tile(arch, ["typecast"])
    if family is OpFamily.BINARY:
        second = desc.inputs[1].tile_bytes if len(desc.inputs) > 1 else 0
        return operand_cycles(arch, first + second) + fpu * fidelity.phases + fused
    if family is OpFamily.REDUCTION:
        return operand_cycles(arch, first) + reduce
    if family is OpFamily.SOFTMAX:  # max pass, then exp, sum, scale: two reads of each tile
        return 2 * operand_cycles(arch, first) + sfpu_cycles_per_tile(arch, ["exp"]) + 3 * fpu + 2 * reduce
    # NORM: statistics pass and normalise pass; square, subtract, scale, shift on the FPU
    return 2 * operand_cycles(arch, first) + 4 * fpu * fidelity.phases + 2 * reduce


def _busiest_core_tiles(desc: OpDesc, cores: int) -> tuple[int, int]:
    """(cores used, input tiles on the busiest core); row ops keep a row of tiles on one core unless
    their input is width- or block-sharded (then each core reduces its part and partials combine)."""
    tensor = max(desc.inputs, key=lambda t: t.tiles)
    tiles = tensor.tiles
    split_rows = tensor.memory in (MemoryLayout.WIDTH_SHARDED, MemoryLayout.BLOCK_SHARDED)
    if desc.family in ROW_OPS and not split_rows:
        width = max(1, math.ceil(tensor.shape[-1] / TILE))
        rows = max(1, tiles // width)
        used = min(cores, rows)
        return used, math.ceil(rows / used) * width
    used = max(1, min(cores, tiles))
    return used, math.ceil(tiles / used)


def blocked_typecast(desc: OpDesc) -> bool:
    """Whether ``desc`` is a typecast marked as run by the sub-grid program of 2025 (one output block a core)."""
    marked = dict(desc.attributes).get(TYPECAST_PROGRAM_ATTRIBUTE) == TypecastProgram.SUBGRID_BLOCK.value
    return desc.family is OpFamily.TYPECAST and marked


def blocked_typecast_cycles(desc: OpDesc, machine: Machine, tiles: int, per_tile: float) -> float:
    """Cycles of one core of the 2025 sub-grid typecast (typecast_program_factory.cpp at 7f36e28e80): its reader
    reads each input tile and waits for it (reader_unary_interleaved_start_id.cpp), the compute kernel casts them into
    one output block of all ``tiles`` and pushes it at its end (eltwise_typecast.cpp), then the writer writes each
    tile and waits for it to land (writer_unary_interleaved_start_id.cpp of that date: a write barrier a tile)."""
    source, out = desc.inputs[0], desc.outputs[0]
    noc = machine.system.arch.noc_bytes_per_cycle
    read = op_latency(machine.system.arch.arch).read_trip_cycles(source.in_dram) + source.tile_bytes / noc
    write = write_cycles(machine, out) + landing_cycles(machine, out)
    return tiles * (max(read, per_tile) + write) + per_tile


ELTWISE_BINARY_CODES = frozenset({"", "BinaryDeviceOperation", "BinaryNgDeviceOperation"})
"""The element-wise binary programs (an op desc without a code is one); other BINARY-family programs (the fused
rotary ops) have kernels of their own."""


def is_local_binary(desc: OpDesc) -> bool:
    """Whether ``desc`` is an element-wise binary program whose inputs and output are all L1-sharded: its reader
    and writer only reserve and push the core's own shards (eltwise binary's IN0_SHARDED / IN1_SHARDED /
    OUT_SHARDED kernels), so no NoC transfer, and none of the DRAM's first bytes the generic launch holds."""
    tensors = (*desc.inputs, *desc.outputs)
    local = all(t.buffer is BufferType.L1 and t.memory is not MemoryLayout.INTERLEAVED for t in tensors)
    eltwise = desc.family is OpFamily.BINARY and desc.op_code in ELTWISE_BINARY_CODES and len(desc.inputs) <= 2
    return eltwise and local


def local_binary_launch_ns(machine: Machine, cores: int) -> float:
    """The fixed cost of a local binary program on ``cores`` cores (ns): a data-movement program's launch
    (:func:`meshnn.perf.page_programs.launch_cycles`) and what its compute kernel adds to the first-start-to-last-end
    time (:attr:`meshnn.perf.latency.OpLatency.compute_start_cycles`)."""
    arch = machine.system.arch
    return arch.cycles_ns(launch_cycles(cores) + op_latency(arch.arch).compute_start_cycles)


def tile_op_launch_ns(desc: OpDesc, machine: Machine, cores: int) -> float:
    """The launch :func:`predict_tile_op` gives ``desc`` on ``cores`` cores (ns): a local binary's own
    (:func:`local_binary_launch_ns`), else the generic :attr:`~meshnn.perf.hardware.ArchPerf.op_launch_ns`."""
    return local_binary_launch_ns(machine, cores) if is_local_binary(desc) else machine.system.arch.op_launch_ns


def predict_tile_op(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a unary, binary, reduction, softmax, norm or typecast ``desc`` on ``machine``."""
    arch = machine.system.arch
    fidelity = desc.fidelity or MathFidelity.LoFi
    cores, tiles = _busiest_core_tiles(desc, grid_cores(machine, desc.core_grid))
    cycles = tiles * _per_tile_cycles(desc, arch, fidelity)
    if blocked_typecast(desc):  # its reads, then its writes, each waited for
        cycles = blocked_typecast_cycles(desc, machine, tiles, _per_tile_cycles(desc, arch, fidelity))
    if legacy_rows(desc):  # the row broadcast of before #23626: rows over cores, each tile's reads waited for
        cores, tiles = legacy_split(desc, grid_cores(machine, desc.core_grid))
        cycles = legacy_cycles(desc, machine, tiles, _per_tile_cycles(desc, arch, fidelity))
    flushed = desc.outputs if desc.family in PAGE_WRITERS else ()
    moves = [(t, 1.0) for t in desc.inputs] + [(t, 1.0) for t in desc.outputs if not flushed]
    memory = traffic(machine, moves, cores, local_shards=True, page_writes=flushed)
    launch = tile_op_launch_ns(desc, machine, cores)
    fixed = launch + (sharded_stats_ns(desc, machine) if cores > 1 else 0.0)
    extra: dict[str, object] = {}
    if is_interleaved_norm(desc):  # its reader's waits bound it, then the last block's multiply and write
        rows = max(1, tiles // max(1, math.ceil(desc.inputs[0].shape[-1] / TILE)))
        waits = arch.cycles_ns(reader_cycles(desc, arch, rows))
        memory = dataclasses.replace(memory, dram_ns=max(memory.dram_ns, waits))
        extra = {"drain_ns": arch.cycles_ns(tail_cycles(desc, arch, fidelity)), "notes": (INTERLEAVED_NOTE,)}
    return kernel_prediction(arch, cycles, memory, cores, fixed_ns=fixed, fidelity=desc.fidelity, **extra)


INTERLEAVED_NOTE = "interleaved norm: its reader's DRAM waits (meshnn.perf.norm_reader)"
