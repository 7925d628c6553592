"""``rotary_embedding_llama`` in prefill mode (an interleaved input): the cores its program uses and
the work of one tile.

tt-metal's program (rotary_embedding_llama_program_factory.cpp) splits a prefill over batch and
sequence tiles only: ``min(batch, cores)`` groups of users, each split over
``min(cores // groups, sequence tiles)`` cores; every head of a core's rows of sequence tiles stays on
that core.  A 128-token prompt of one user runs on 4 cores whatever its head count (the model had
spread its tiles over the whole grid).  Each tile (compute kernel rotary_embedding_llama.cpp) is a
tile multiply by the transformation matrix (``x @ T``), two element-wise multiplies (by sin, by cos)
and an add, each fed its two operand tiles, at the op's fidelity (HiFi4 by default), and each of the four
results packed to L1 (:func:`stage_pack_cycles`): the kernel hands a row's rotated tiles to the sin product,
and both products to the add, through circular buffers of one row, so each stage waits for the one before it
to be packed whole and the packs add to the tile's time.  Each of the four is a call on one tile
(``matmul_tiles``, ``mul_tiles``, ``add_tiles`` with its ``pack_tile``), and each call costs
:data:`TILE_CALL_CYCLES` beyond its engines' busy time.  A core reads sin and cos
once for its sequence rows, unless it holds more than :data:`RELOAD_ROWS` rows of tiles (sequence rows x
heads) or sin and cos vary by head: then its reader re-reads them for every row (the program's
``RELOAD_IMPL``), once per head.  Kept, they gate the compute: it waits for all of a user's sequence rows of sin
and cos before its first row (:func:`gate_rows`), which every core with work reads at once, so those rows take
the grid's bytes at the memory's rate before any compute (:func:`grid_cycles`).

Every core of the grid runs the reader, those without rows too (the program places its kernels on the
whole compute grid and gives the idle cores empty ranges), and the reader's first act is to read the
one-tile transformation matrix.  When that matrix is DRAM-interleaved (the prefill form: one page, in
one bank) the whole grid's reads of the same page queue at that bank: ``cores x tile bytes`` through one
bank's share of the DRAM rate (:func:`shared_page_ns`) before the busiest core's rows can start.  Of the
matrix the reader reads one tile, whatever the tensor's size.

Since 2026-03 (tt-metal #39572: rotary_embedding_llama_multi_core_prefill_sharded_program_factory.cpp) sin,
cos and the matrix may be L1 height-sharded while the input stays interleaved: a sharded matrix's circular
buffer is placed on each core's shard (read in place, no NoC), and sharded sin and cos likewise when each core
holds one sequence row (the program's fast path; with more it reads each row through the NoC, and sharded sin
and cos always take the reload path): :func:`in_place`.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, OpDesc, TensorDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.movement_programs import waited_read_cycles, waited_write_cycles
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, operand_cycles, traffic

OP_CODE = "RotaryEmbeddingLlamaDeviceOperation"
OP_CODES = frozenset({OP_CODE, "RotaryEmbeddingIndexedDeviceOperation"})
"""The ops of this program: rotary_embedding_llama, and DeepSeek's prefill rotary_embedding_indexed (its
reader forked to start at a per-device row of sin and cos; its compute and writer kernels and work split
the same)."""
RELOAD_ROWS = 8
"""The most rows of tiles a core keeps sin and cos for; beyond it the reader re-reads them every row."""
MULTIPLIES, ADDS = 2, 1
"""x * cos and (x @ T) * sin (at the fidelity's phases), and their sum: one tile's element-wise FPU work."""
STAGES = 1 + MULTIPLIES + ADDS
"""The tile operations of one input tile (x @ T, the two products, the sum), each a call of its own."""
TILE_CALL_CYCLES = 53.73
"""Cycles (chip clock) one single-tile call of the compute kernel costs beyond its engines' busy time: the kernel calls
``matmul_tiles`` / ``mul_tiles`` / ``add_tiles`` and ``pack_tile`` one tile at a time, each call programming its
unpacker, math and packer for that tile and handing the tile on between them, which the engine rates (operand feed,
math, pack) do not hold. Fitted: tt-metal PR #39572's all-sharded row (3.96 us, one row of 2 tiles, nothing read but
the input: tests/perf/published_rotary.py), whose residual over this model without it (3.53 us: launch, the row's
read, compute and write) is 2 tiles x 4 calls x 53.7 cycles; checked on the same table's three other rows and on the
70B prefill's q against k (7 further rows of 4 tiles a core: 2.30 us a row measured, 1.52 counted without it, 2.38
with). A cost per stage of a row instead (the same fit, 107 cycles a stage) would give those 7 rows 1.95 us each:
the 2-tile rows and the 4-tile rows together tell a tile's calls from a stage's."""


def shared_page_ns(desc: OpDesc, machine: Machine) -> float:
    """ns for every core of the grid to read the transformation matrix's one page from its one bank:
    0 when the matrix is not DRAM-interleaved (a sharded one is in each core's L1)."""
    if len(desc.inputs) < 4 or not desc.inputs[3].in_dram or desc.inputs[3].sharded:
        return 0.0
    system = machine.system
    bank_bytes_per_s = system.dram_sharded_bytes_per_s / system.arch.num_dram_banks
    return system.compute_cores * desc.inputs[3].tile_bytes / bank_bytes_per_s * 1e9


def stage_pack_cycles(desc: OpDesc, machine: Machine) -> float:
    """Cycles one tile's four results take to pack to L1 at ``packer_bytes_per_cycle``: the rotated tile
    (x @ T, in the input's format), the sin and cos products (each in sin's / cos's format: the program's
    intermediate buffers take their formats) and the output tile."""
    x = desc.inputs[0]
    cos = desc.inputs[1] if len(desc.inputs) > 1 else x
    sin = desc.inputs[2] if len(desc.inputs) > 2 else cos
    out = desc.outputs[0] if desc.outputs else x
    packed = x.tile_bytes + sin.tile_bytes + cos.tile_bytes + out.tile_bytes
    return packed / machine.system.arch.packer_bytes_per_cycle


def is_rotary_prefill(desc: OpDesc) -> bool:
    """Whether ``desc`` is ``rotary_embedding_llama`` in prefill mode (its input interleaved), or
    ``rotary_embedding_indexed``."""
    return desc.op_code in OP_CODES and bool(desc.inputs) and not desc.inputs[0].sharded


def rotary_prefill_split(desc: OpDesc, machine: Machine) -> tuple[int, int]:
    """(cores with work, tiles on the busiest core): ``batch x heads x seq_tiles x head_dim_tiles`` input
    tiles over ``min(batch, cores)`` user groups times ``min(cores // groups, seq_tiles)`` cores, each
    group's sequence tiles in equal runs (the last cores of a group may get none)."""
    batch, heads, seq_tiles, width_tiles, _ = _shape(desc)
    batch_groups, seq_per_core = _split(desc, machine)
    cores = batch_groups * math.ceil(seq_tiles / seq_per_core)
    return cores, math.ceil(batch / batch_groups) * seq_per_core * heads * width_tiles


def sin_cos_reads(desc: OpDesc, machine: Machine) -> int:
    """How many times the program reads sin and cos whole: once per user, or once per user and head
    when a core holds more than :data:`RELOAD_ROWS` rows of tiles (its sequence rows x heads) or sin
    and cos vary by head."""
    batch, heads, _, _, _ = _shape(desc)
    return batch * (heads if reloads(desc, machine) else 1)


def reloads(desc: OpDesc, machine: Machine) -> bool:
    """Whether the reader re-reads sin and cos every row (``RELOAD_IMPL``): a core holds more than
    :data:`RELOAD_ROWS` rows of tiles (its sequence rows x heads), sin and cos vary by head, or they are
    sharded (the sharded program's rule)."""
    _, heads, _, _, per_head = _shape(desc)
    return per_head or _sin_cos_sharded(desc) or _split(desc, machine)[1] * heads > RELOAD_ROWS


def in_place(desc: OpDesc, machine: Machine) -> tuple[bool, bool]:
    """(sin and cos, the transformation matrix) read in place from the core's own L1 shard: the matrix when
    it is sharded; sin and cos when they are sharded and each core holds one sequence row (the sharded
    program's fast path; the shards are taken to cover the cores with work, as a row a core needs)."""
    trans = len(desc.inputs) > 3 and desc.inputs[3].sharded and not desc.inputs[3].in_dram
    return _sin_cos_sharded(desc) and _split(desc, machine)[1] == 1, trans


def _sin_cos_sharded(desc: OpDesc) -> bool:
    return len(desc.inputs) > 1 and desc.inputs[1].sharded and not desc.inputs[1].in_dram


def _split(desc: OpDesc, machine: Machine) -> tuple[int, int]:
    """(user groups, sequence tiles a core) of the program's split."""
    batch, _, seq_tiles, _, _ = _shape(desc)
    grid = grid_cores(machine, desc.core_grid)
    batch_groups = max(1, min(batch, grid))
    return batch_groups, math.ceil(seq_tiles / max(1, min(grid // batch_groups, seq_tiles)))


def _shape(desc: OpDesc) -> tuple[int, int, int, int, bool]:
    """(batch, heads, sequence tiles, head_dim tiles, sin / cos per head) of ``desc``'s input."""
    x = desc.inputs[0]
    batch, heads, seq, width = x.shape[-4:] if len(x.shape) >= 4 else (1, 1, 1, TILE)
    cos = desc.inputs[1].shape if len(desc.inputs) > 1 else ()
    per_head = len(cos) >= 3 and heads > 1 and cos[-3] == heads
    return batch, heads, max(1, math.ceil(seq / TILE)), max(1, math.ceil(width / TILE)), per_head


def tile_cycles(desc: OpDesc, machine: Machine, fidelity: MathFidelity) -> float:
    """Compute cycles of one input tile: the tile multiply by the transformation matrix, the two multiplies and
    the add at ``fidelity``, each fed its two operand tiles, the four results packed (:func:`stage_pack_cycles`),
    and the four single-tile calls' own cost (:data:`TILE_CALL_CYCLES`)."""
    arch = machine.system.arch
    fpu = arch.fpu_eltwise_cycles_per_tile
    per_tile = arch.lofi_cycles_per_tile * fidelity.phases + (MULTIPLIES * fidelity.phases + ADDS) * fpu
    per_tile += STAGES * (operand_cycles(arch, 2 * desc.inputs[0].tile_bytes) + TILE_CALL_CYCLES)
    return per_tile + stage_pack_cycles(desc, machine)


def gate_rows(desc: OpDesc, machine: Machine) -> int:
    """Rows of the busiest core read before its compute starts: where sin and cos are kept (no reload) the compute
    first waits for all of its user's sequence rows of them (``cb_wait_front`` of ``my_cos_sin_tiles``), which the
    reader brings with that user's first head's rows; reloading, it waits for its first row only."""
    if reloads(desc, machine):
        return 1
    _, tiles = rotary_prefill_split(desc, machine)
    return min(max(1, tiles // _shape(desc)[3]), _split(desc, machine)[1])


def grid_cycles(desc: OpDesc, machine: Machine, rows_in: int, rows_out: int) -> float:
    """Cycles for every core with work to read ``rows_in`` rows (each with sin's and cos's row unless they are read
    in place) and write ``rows_out`` rows at once: their bytes over the grid at the memory's rate (:func:`traffic`),
    the bound on a step the cores all take together."""
    x, out = desc.inputs[0], desc.outputs[0] if desc.outputs else desc.inputs[0]
    cores, _ = rotary_prefill_split(desc, machine)
    share = cores * _shape(desc)[3]  # tiles of one row on every core

    def part(tensor: TensorDesc, rows: int) -> float:
        return rows * share / max(1, tensor.tiles)

    moves = [(x, part(x, rows_in)), (out, part(out, rows_out))]
    if not in_place(desc, machine)[0]:
        moves += [(t, part(t, rows_in)) for t in desc.inputs[1:3]]
    return traffic(machine, moves, cores).ns * machine.system.arch.clock_hz / 1e9


def pipeline_cycles(desc: OpDesc, machine: Machine, fidelity: MathFidelity) -> float:
    """Cycles of the busiest core's rows through the reader / compute / writer pipeline: the waited reads of the rows
    its compute waits for (:func:`gate_rows`), or the grid's reads of them if longer, then per row the slowest of its
    compute, its waited write and the waited read of the row as many rows ahead, then the last row's write (or the
    grid's last rows if longer).  A row is ``head_dim / 32`` tiles of one head; it brings sin's and cos's row with
    it where the program reloads them (every row: :func:`reloads`), else on a user's first head only (the
    reader's ``done_sin_cos``: its sequence rows of that head)."""
    x = desc.inputs[0]
    cos = desc.inputs[1] if len(desc.inputs) > 1 else x
    sin = desc.inputs[2] if len(desc.inputs) > 2 else cos
    out = desc.outputs[0] if desc.outputs else x
    batch, _, _, width_tiles, _ = _shape(desc)
    batch_groups, seq_per_core = _split(desc, machine)
    _, tiles = rotary_prefill_split(desc, machine)
    rows = max(1, tiles // width_tiles)
    users = math.ceil(batch / batch_groups)
    with_sin_cos = rows if reloads(desc, machine) else min(rows, users * seq_per_core)
    row_in = width_tiles * x.tile_bytes
    sin_cos = 0 if in_place(desc, machine)[0] else width_tiles * (sin.tile_bytes + cos.tile_bytes)
    read_with, read_without = (waited_read_cycles(machine, row_in + b) for b in (sin_cos, 0))
    row_write = waited_write_cycles(machine, width_tiles * out.tile_bytes)
    row_compute = width_tiles * tile_cycles(desc, machine, fidelity)
    reads = [read_with] * with_sin_cos + [read_without] * (rows - with_sin_cos)  # in the program's row order
    gate = gate_rows(desc, machine)
    start = max(sum(reads[:gate]), grid_cycles(desc, machine, gate, 0))
    ahead = [*reads[gate:], *[0.0] * gate]
    steps = sum(max(row_compute, row_write, ahead[i]) for i in range(rows))
    return start + steps + max(row_write, grid_cycles(desc, machine, 0, 1))


def predict_rotary_prefill(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of ``rotary_embedding_llama`` on an interleaved input (prefill) on ``machine``: its busiest
    core's row pipeline (:func:`pipeline_cycles`) or the DRAM's time for every core's reads and writes, whichever
    is longer, after the launch and the grid's reads of the transformation matrix."""
    arch = machine.system.arch
    fidelity = desc.fidelity or MathFidelity.HiFi4
    cores, _ = rotary_prefill_split(desc, machine)
    sin_cos_local, trans_local = in_place(desc, machine)
    reads = 0.0 if sin_cos_local else float(sin_cos_reads(desc, machine))
    moves = [(t, reads if i in (1, 2) else 1.0) for i, t in enumerate(desc.inputs[:3])]
    if len(desc.inputs) > 3:  # one tile of the matrix, or none from its own shard
        trans = desc.inputs[3]
        moves.append((trans, 0.0 if trans_local else 1.0 / max(1, trans.tiles)))
    memory = traffic(machine, moves + [(t, 1.0) for t in desc.outputs], cores)
    fixed = arch.op_launch_ns + shared_page_ns(desc, machine)
    cycles = pipeline_cycles(desc, machine, fidelity)
    return kernel_prediction(arch, cycles, memory, cores, fixed_ns=fixed, fidelity=fidelity)
