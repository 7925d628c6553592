"""matmul / linear: tile multiplies at the op's fidelity over the cores of its program config, and
the DRAM it streams.

Compute, per core: its output tiles x K tiles x (16 cycles x fidelity phases + the cycles of
feeding the two operand tiles); a 2-D program with a sharded output runs one-row subblocks, and on
Wormhole the unpack of the in1 tile each of their multiplies streams outlasts a short multiply
(:func:`math_cycles_per_multiply`).  The feeding term (operand bytes over ``operand_bytes_per_cycle``)
is what makes bfloat16 slower than bfloat8_b at the same fidelity; one constant per arch fits every
peak in Tenstorrent's GEMM tables.  Rows shorter than a tile still cost a whole tile (the engine
works on 8x16 faces; M is padded to 32).  With a single row of tiles (a decode step) no weight tile
is reused, and a multiply costs at least ``single_use_weight_tile_cycles``
(:mod:`meshnn.perf.latency`): the weight tile's unpack is no longer hidden behind other multiplies.

Memory: each DRAM tensor is read once (multicast programs read a block once and send it along the
grid's rows or columns); the output is written once.  The senders issue a block of reads before they
wait, so the banks serve them at the interleaved rate whatever the tile's size, and, where that figure
is one reader a bank's (Blackhole's), more readers than banks (:func:`dram_readers`) at the banks' own
rate for a tile whose transfers reach it (a bfloat16 tile: :func:`meshnn.perf.traffic.interleaved_rate`), and at
that rate where it is slower (a bfloat4_b tile: :mod:`meshnn.perf.matmul_banks`); a small
tile's lower per-transfer rate limits each sender's own stream (:func:`sender_read_cycles`).  A DRAM-sharded
program streams its weight at the bank-adjacent rate and computes on one core per DRAM bank.  In a
2-D multicast program only the grid's top row reads in1, so the DRAM side lasts at least as long as
one such sender takes to read its columns at a single core's rate (:func:`in1_sender_cycles`): what
bounds a short-M prefill matmul whose large weight only 8 cores read.  On Blackhole a 2-D program's
senders also wait for each block they multicast to leave before they read the next (tt-metal's sender
kernels flush under ARCH_BLACKHOLE only: :func:`multicast_flush_cycles`), which bounds the smallest
bfloat4_b blocks, whose multiplies are short.  A 1-D program that multicasts in0 streams each core's
weight columns block by block, a read round trip a block (:mod:`meshnn.perf.matmul_blocks`: what sets a
decode linear's time on an interleaved weight), and ttnn's plain multi-core program reads one tile of
each operand at a time (the same module).  (The 2-D senders' per-block round trips are not added: the
fitted sender rate and pipeline fill already hold them for the GEMM tables' blocks.)

Partial sums: a 1-D, 2-D or DRAM-sharded program whose K runs in more than one inner block
(``in0_block_w`` tiles each) keeps its partial sums in L1 between blocks (:func:`partials_cycles`),
as its compute-kernel config says (:func:`accumulates`: ``packer_l1_acc``, ``fp32_dest_acc_en``, else
ttnn's defaults): accumulated by the packer into a bfloat16 (or float32) partial in L1, a pack the math
waits for where it outlasts the block's multiplies, and reloaded into the dest registers before the
last block; without L1 accumulation (and in a 2-D program with two blocks) spilled and reloaded after
every block.  The DRAM-sharded program kept its partials in bfloat16 whatever the config until tt-metal #36177
(2026-01-21): an op marked so (:func:`float16_partials`, for a figure of an earlier date) is timed with them.

A matmul given no program config (nor core grid) runs the program ttnn would pick
(:mod:`meshnn.perf.matmul_auto`).  A 2-D program whose per-core block runs in several output blocks (ttnn's
choice where the whole block's buffers do not fit L1, or ``out_block_h`` / ``out_block_w`` given) reads its
inputs again for each, waits at each block boundary for the block's writes and the next in1 block, and drains
only the last block after its math (:mod:`meshnn.perf.matmul_out_blocks`).

Fixed cost: the launch, plus the multicast pipeline fill (first blocks read and sent) for every
program but the DRAM-sharded one, whose readers sit next to their banks.  A 2-D program whose output
is DRAM-interleaved also drains it after its math (:func:`output_drain_ns`, the prediction's
``drain_ns``): each core writes its
output block only once its last K-block is done, and the grid's writes reach DRAM at
``matmul_drain_bytes_per_s``.  GEMM_FLOPS.md shows the split: its out-of-box tables give each row's
host-timed time and its device utilisation from the math thread's (TRISC1) kernel duration; the math
thread's time is the tile multiplies (the in0 and in1 streams run behind them), and what the host
times beyond it grows with the output's bytes, the same per byte in bfloat16, bfloat8_b and
bfloat4_b.
"""

from __future__ import annotations

import math
from dataclasses import replace
from enum import Enum

from meshnn.perf.desc import TILE, MatmulConfig, MatmulProgram, OpDesc, OpFamily
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.matmul_auto import auto_matmul_config
from meshnn.perf.matmul_banks import tile_reads_extra_ns
from meshnn.perf.matmul_blocks import (
    in1_block_stream_cycles,
    is_plain_program,
    plain_reads_cycles,
    plain_weight_banks_ns,
    width_sharded_config,
)
from meshnn.perf.matmul_out_blocks import boundary_cycles, drain_share, reread_factors
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import (
    grid_cores,
    kernel_prediction,
    operand_cycles,
    sfpu_cycles_per_tile,
    traffic,
    transfer_efficiency,
)

SENDER_REFERENCE_TILE_BYTES = 2048
"""The transfer size ``dram_activation_bytes_per_cycle`` holds at: a bfloat16 tile."""


def _tiles(n: int) -> int:
    return max(1, math.ceil(n / TILE))


def matmul_cores(desc: OpDesc, machine: Machine, row_tiles: int, col_tiles: int) -> int:
    """Cores that hold output blocks: one per DRAM bank for a DRAM-sharded program, else the
    program's grid (or the op's core grid, or the whole compute grid) cut to the blocks there are."""
    config = desc.matmul or MatmulConfig()
    if config.program is MatmulProgram.DRAM_SHARDED:
        return machine.system.arch.num_dram_banks
    available = grid_cores(machine, config.grid or desc.core_grid)
    if config.per_core_m and config.per_core_n:
        blocks = math.ceil(row_tiles / config.per_core_m) * math.ceil(col_tiles / config.per_core_n)
    elif config.per_core_n:
        blocks = math.ceil(col_tiles / config.per_core_n)
    elif config.per_core_m:
        blocks = math.ceil(row_tiles / config.per_core_m)
    else:
        blocks = row_tiles * col_tiles
    return max(1, min(available, blocks))


def sender_read_cycles(machine: Machine, tiles: float, tile_bytes: int) -> float:
    """Cycles one core takes to read ``tiles`` tiles of ``tile_bytes`` each from DRAM, one NoC read
    a tile: ``dram_activation_bytes_per_cycle`` for a 2 KB (bfloat16) tile, slower per byte for the
    smaller tiles of the block-float formats as tt-npe's per-transfer bandwidth falls with the
    transfer's size (a bfloat8_b tile of 1088 B at 82% of a 2 KB one's byte rate, a bfloat4_b tile
    of 576 B at 63%)."""
    arch = machine.system.arch
    scale = transfer_efficiency(arch, tile_bytes) / transfer_efficiency(arch, SENDER_REFERENCE_TILE_BYTES)
    return tiles * tile_bytes / (arch.dram_activation_bytes_per_cycle * scale)


def multicast_flush_cycles(machine: Machine, tiles: float, tile_bytes: int) -> float:
    """Cycles a 2-D program's sender waits, on an arch whose senders flush their multicasts
    (``sender_flushes_multicast``: Blackhole), for ``tiles`` tiles it multicast to leave it: each block
    leaves at the NoC link's rate before the sender sets the receivers' flag and reads its next block,
    so the wait adds to the sender's reads (0 where the senders do not flush: Wormhole)."""
    arch = machine.system.arch
    return tiles * tile_bytes / arch.noc_bytes_per_cycle if arch.sender_flushes_multicast else 0.0


def activation_stream_cycles(desc: OpDesc, machine: Machine, row_tiles: int, k_tiles: int) -> float:
    """Cycles the in0 stream takes when in0 streams from interleaved DRAM: each in0 tile a core
    receives costs its bytes over ``dram_activation_bytes_per_cycle`` (0 for an in0 in L1 or sharded
    in DRAM).  A 2-D program's math runs behind it (the time is the larger of the two); in the other
    programs it adds to the math."""
    a = desc.inputs[0]
    config = desc.matmul or MatmulConfig()
    if not a.in_dram or a.sharded or config.program is MatmulProgram.DRAM_SHARDED:
        return 0.0
    grid = config.grid or desc.core_grid or machine.system.spec.compute_grid
    tiles = (config.per_core_m or math.ceil(row_tiles / max(1, grid[1]))) * k_tiles * reread_factors(config)[0]
    flush = multicast_flush_cycles(machine, tiles, a.tile_bytes) if config.program is MatmulProgram.MULTICAST_2D else 0
    return sender_read_cycles(machine, tiles, a.tile_bytes) + flush


def in0_multicast_cycles(desc: OpDesc, machine: Machine, cores: int) -> float:
    """Cycles the single in0 sender of a 1-D program that multicasts in0 (ttnn's
    ``mcast_in0=True``) spends multicasting it: block by block, after reading each block, it writes
    the block to every core of the program and waits for the writes to land; the time grows with the
    receivers, ``in0 bytes x cores / multicast_byte_dests_per_cycle`` (0 for other programs and for
    an in0 that does not stream from interleaved DRAM)."""
    a = desc.inputs[0]
    config = desc.matmul or MatmulConfig()
    if config.program is not MatmulProgram.MULTICAST_1D or not config.mcast_in0:
        return 0.0
    if not a.in_dram or a.sharded:
        return 0.0
    return a.nbytes * cores / machine.system.arch.multicast_byte_dests_per_cycle


def in1_sender_cycles(desc: OpDesc, machine: Machine, k_tiles: int) -> float:
    """Cycles the busiest in1 sender of a 2-D multicast program spends reading its share of an
    interleaved in1 from DRAM: in a 2-D program only the top row of cores reads in1 (each its
    ``per_core_N`` columns x ``K`` tiles) and multicasts it down its column, one core reading at
    ``dram_activation_bytes_per_cycle`` (interleaved or width-sharded in DRAM alike: the sender reads
    its columns' pages wherever the banks hold them); the op cannot finish before that read does (0
    for other programs, whose cores each read their own in1, and for an in1 in L1)."""
    b = desc.inputs[1]
    config = desc.matmul or MatmulConfig()
    if config.program is not MatmulProgram.MULTICAST_2D or not b.in_dram:
        return 0.0
    columns = config.per_core_n or math.ceil(_tiles(b.shape[-1]) / (config.grid or (8, 8))[0])
    tiles = columns * k_tiles * reread_factors(config)[1]
    return sender_read_cycles(machine, tiles, b.tile_bytes) + multicast_flush_cycles(machine, tiles, b.tile_bytes)


def dram_readers(desc: OpDesc, machine: Machine, cores: int) -> int:
    """The cores of ``desc``'s program that read its DRAM inputs, each with a block of reads in
    flight: a 2-D multicast program's senders (its grid's left column reads in0, its top row in1: x +
    y - 1 cores), every core of the other programs (each reads its own block of one operand at least)."""
    config = desc.matmul or MatmulConfig()
    if config.program is not MatmulProgram.MULTICAST_2D:
        return cores
    x, y = config.grid or desc.core_grid or machine.system.spec.compute_grid
    return min(cores, x + y - 1)


def output_drain_ns(desc: OpDesc, machine: Machine) -> float:
    """Nanoseconds a 2-D multicast program spends writing its DRAM-interleaved output after its math:
    the output's bytes on one device over the arch's ``matmul_drain_bytes_per_s`` (0 for other
    programs and for an output in L1 or sharded, which the cores keep where they computed it)."""
    out = desc.outputs[0]
    config = desc.matmul or MatmulConfig()
    if config.program is not MatmulProgram.MULTICAST_2D or not out.in_dram or out.sharded:
        return 0.0
    return out.nbytes * drain_share(config) / machine.system.arch.matmul_drain_bytes_per_s * 1e9


def chosen_config(desc: OpDesc, machine: Machine) -> OpDesc:
    """``desc`` with the program config ttnn picks when it was given none (no core grid either, in0
    not sharded: :func:`meshnn.perf.matmul_auto.auto_matmul_config`, its L1 budget with the op's
    float32 accumulation), the op's accumulation flags kept; else ``desc`` itself."""
    config = desc.matmul or MatmulConfig()
    sharded = width_sharded_config(desc)
    if sharded is not None:
        return sharded
    if config.program is not MatmulProgram.DEFAULT or config.user_core_grid or config.grid or desc.core_grid:
        return desc
    if desc.inputs[0].sharded:
        return desc
    auto = auto_matmul_config(desc, machine, fp32_acc=accumulates(desc)[1])
    if auto is None:
        return desc
    return replace(desc, matmul=replace(auto, packer_l1_acc=config.packer_l1_acc, fp32_acc=config.fp32_acc))


def math_cycles_per_multiply(desc: OpDesc, arch: ArchPerf, fidelity: MathFidelity) -> float:
    """Cycles of one tile multiply's math (16 a fidelity phase), or of unpacking its streamed operand where
    that is longer: a 2-D program whose output is sharded runs one-row output subblocks (ttnn's matmul
    validation: ``out_subblock_h == 1`` unless a subblock spans ``per_core_N``; the GEMM benchmark's
    ``get_subblock_sizes`` always takes 1 x w), for which the unpacker keeps the in0 tile and streams
    one in1 tile into SrcA per multiply (``llk_unpack_AB_matmul.h``: ``reuse_a = ct_dim >= rt_dim``).
    On Wormhole that unpack, ``row_subblock_unpack_bytes_per_cycle``, outlasts a bfloat16 tile's HiFi2
    math (2048 B / 54 = 38 cycles against 32) and a bfloat8_b tile's LoFi (20 against 16)."""
    math_cycles = float(arch.lofi_cycles_per_tile * fidelity.phases)
    rate = arch.row_subblock_unpack_bytes_per_cycle
    config = desc.matmul or MatmulConfig()
    if rate is None or config.program is not MatmulProgram.MULTICAST_2D or not desc.outputs[0].sharded:
        return math_cycles
    return max(math_cycles, desc.inputs[1].tile_bytes / rate)


PARTIAL_TILE_BYTES = 2048
"""A partial-sum tile accumulated in L1 without float32 accumulation: Float16_b (tt-metal's 1-D, 2-D and
DRAM-sharded matmul program factories: ``interm0_data_format`` under ``packer_l1_acc_en``)."""
FP32_PARTIAL_TILE_BYTES = 4096
"""A partial-sum tile with ``fp32_dest_acc_en``: Float32, accumulated in L1 or spilled (the same factories)."""
PARTIALS_ATTRIBUTE = "matmul_partials"
"""The op-desc attribute naming the DRAM-sharded program of a figure's date (absent: today's)."""


class DramShardedPartials(Enum):
    """The partial-sum tile of tt-metal's DRAM-sharded matmul program at a figure's date."""

    FLOAT16_B = "before #36177"
    """Before tt-metal #36177 (2026-01-21), matmul_op_multi_core_reuse_mcast_dram_sharded_program_factory.cpp set
    ``interm0_data_format = Float16_b`` after choosing it (a debugging leftover, its commit says): every partial a
    2 KB bfloat16 tile, ``fp32_dest_acc_en`` or not, L1 accumulation or not."""


def float16_partials(desc: OpDesc) -> OpDesc:
    """``desc`` marked as run by the DRAM-sharded program before #36177 when it is a matmul, else as it is."""
    if desc.family is not OpFamily.MATMUL:
        return desc
    return desc.with_attribute(PARTIALS_ATTRIBUTE, DramShardedPartials.FLOAT16_B.value)


def partial_tile_bytes(desc: OpDesc, l1_acc: bool, fp32: bool) -> int:
    """Bytes of one partial-sum tile: Float32 with ``fp32_dest_acc_en``, else Float16_b with L1 accumulation,
    else the output's format (tt-metal's factories); a 2 KB Float16_b tile for a DRAM-sharded program marked
    as before #36177 (:class:`DramShardedPartials`)."""
    config = desc.matmul or MatmulConfig()
    marked = dict(desc.attributes).get(PARTIALS_ATTRIBUTE) == DramShardedPartials.FLOAT16_B.value
    if marked and config.program is MatmulProgram.DRAM_SHARDED:
        return PARTIAL_TILE_BYTES
    return FP32_PARTIAL_TILE_BYTES if fp32 else PARTIAL_TILE_BYTES if l1_acc else desc.outputs[0].tile_bytes


_BLOCKED = (MatmulProgram.MULTICAST_2D, MatmulProgram.MULTICAST_1D, MatmulProgram.DRAM_SHARDED)


def accumulates(desc: OpDesc) -> tuple[bool, bool]:
    """The op's ``packer_l1_acc`` and ``fp32_dest_acc_en``: its compute-kernel config's, else ttnn's
    matmul default (matmul_device_operation.cpp: float32 accumulation for a float32 output, else L1
    accumulation)."""
    config = desc.matmul or MatmulConfig()
    fp32_out = desc.outputs[0].dtype.upper() == "FLOAT32"
    l1_acc = (not fp32_out) if config.packer_l1_acc is None else config.packer_l1_acc
    return l1_acc, fp32_out if config.fp32_acc is None else config.fp32_acc


def partials_cycles(desc: OpDesc, machine: Machine, out_tiles: int, k_tiles: int, per_multiply: float) -> float:
    """Cycles one core of a 1-D, 2-D or DRAM-sharded program spends on its partial sums beyond the
    multiplies, when its K runs in ``n = ceil(k_tiles / in0_block_w)`` inner blocks (tt-metal's
    bmm_large_block_zm_fused_bias_activation compute kernel; 0 with one block, for other programs, and
    where ``in0_block_w`` is not known).  After each block but the last the packer writes every output
    tile's partial to L1 beside the next subblock's math (the dest registers' two halves): the math
    waits where a pack outlasts the block's ``in0_block_w`` multiplies of a tile.  The partial is
    float32 (:data:`FP32_PARTIAL_TILE_BYTES`) with ``fp32_dest_acc_en``, else bfloat16 when accumulated
    in L1 (:data:`PARTIAL_TILE_BYTES`), else in the output's format (:func:`partial_tile_bytes`: bfloat16 in a
    DRAM-sharded program of before tt-metal #36177).

    With L1 accumulation (``packer_l1_acc``, :func:`accumulates`; the factories enable it above one block
    (1-D, DRAM-sharded) or above two (2-D)): the first block's partial is written at
    ``packer_bytes_per_cycle``, the next ``n - 2`` added into it at ``packer_accumulate_bytes_per_cycle``
    (half the write rate: each 16 B read, added to and written back), and before the last block each
    tile's partial is reloaded, unpacked (``operand_bytes_per_cycle``) and copied into dest (an FPU copy,
    ``fpu_eltwise_cycles_per_tile``).  Without it: each of the first ``n - 1`` blocks spills its
    partial (written) and the next block reloads it."""
    config = desc.matmul or MatmulConfig()
    if config.program not in _BLOCKED or not config.in0_block_w:
        return 0.0
    blocks = math.ceil(k_tiles / config.in0_block_w)
    if blocks < 2:
        return 0.0
    arch = machine.system.arch
    l1_acc, fp32 = accumulates(desc)
    l1_acc = l1_acc and (blocks > 2 or config.program is not MatmulProgram.MULTICAST_2D)
    partial = partial_tile_bytes(desc, l1_acc, fp32)
    reload = partial / arch.operand_bytes_per_cycle + arch.fpu_eltwise_cycles_per_tile
    block_math = config.in0_block_w * per_multiply
    written = max(0.0, partial / arch.packer_bytes_per_cycle - block_math)
    if not l1_acc:
        return out_tiles * (blocks - 1) * (written + reload)
    added = max(0.0, partial / arch.packer_accumulate_bytes_per_cycle - block_math)
    return out_tiles * (written + (blocks - 2) * added + reload)


def predict_matmul(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of ``desc`` (a MATMUL with inputs a, b[, bias] and one output) on ``machine``."""
    desc = chosen_config(desc, machine)
    a, b, out = desc.inputs[0], desc.inputs[1], desc.outputs[0]
    arch = machine.system.arch
    fidelity = desc.fidelity or MathFidelity.HiFi2
    config = desc.matmul or MatmulConfig()
    batch = math.prod(out.shape[:-2]) if len(out.shape) > 2 else 1
    row_tiles, k_tiles, col_tiles = batch * _tiles(a.shape[-2]), _tiles(a.shape[-1]), _tiles(b.shape[-1])
    cores = matmul_cores(desc, machine, row_tiles, col_tiles)
    out_tiles = math.ceil(row_tiles * col_tiles / cores)
    operands = operand_cycles(arch, (a.tile_bytes + b.tile_bytes) / 2)
    per_multiply = math_cycles_per_multiply(desc, arch, fidelity) + operands
    if row_tiles == 1:  # one row of tiles (a decode step): each weight tile feeds one multiply, unreused
        per_multiply = max(per_multiply, op_latency(arch.arch).single_use_weight_tile_cycles)
    cycles = out_tiles * k_tiles * per_multiply + out_tiles * sfpu_cycles_per_tile(arch, desc.unary_ops)
    cycles += partials_cycles(desc, machine, out_tiles, k_tiles, per_multiply)
    cycles += boundary_cycles(desc, machine, per_multiply)  # output blocks one after another: writes, in1 refill
    stream = activation_stream_cycles(desc, machine, row_tiles, k_tiles)
    multicast = in0_multicast_cycles(desc, machine, cores)
    if multicast:  # one sender reads and multicasts in0 block by block; the math runs behind it
        cycles = max(cycles, stream + multicast)
    elif config.program is MatmulProgram.MULTICAST_2D:  # the in0 senders stream behind the math
        cycles = max(cycles, stream)
    else:
        cycles += stream
    sharded = config.program is MatmulProgram.DRAM_SHARDED
    drain_ns = output_drain_ns(desc, machine)  # the output written after the math, not beside the reads
    moves = [(t, 1.0) for t in desc.inputs] + ([] if drain_ns > 0 else [(t, 1.0) for t in desc.outputs])
    readers = dram_readers(desc, machine, cores)
    memory = traffic(machine, moves, cores, dram_sharded=sharded, blocks_in_flight=True, readers=readers)
    if not sharded:  # one-tile reads: the banks' rate at the tile's transfer efficiency where that is slower
        memory = replace(memory, dram_ns=memory.dram_ns + tile_reads_extra_ns(desc, machine, readers))
    sender_ns = arch.cycles_ns(in1_sender_cycles(desc, machine, k_tiles))
    sender_ns = max(
        sender_ns, arch.cycles_ns(in1_block_stream_cycles(desc, machine, (row_tiles, k_tiles, col_tiles), per_multiply))
    )
    if is_plain_program(desc):  # one tile of each operand read and waited for at a time
        sender_ns = max(sender_ns, arch.cycles_ns(plain_reads_cycles(desc, machine, out_tiles, k_tiles)))
        sender_ns = max(sender_ns, plain_weight_banks_ns(desc, machine, cores))
    if sender_ns > memory.dram_ns:  # the busiest in1 sender's read outlasts the DRAM's share
        memory = replace(memory, dram_ns=sender_ns)
    fixed = arch.op_launch_ns + (0.0 if sharded else arch.matmul_fill_ns)
    flops = 2.0 * row_tiles * k_tiles * col_tiles * TILE**3
    extra = {"fidelity": fidelity, "flops": flops, "drain_ns": drain_ns}
    return kernel_prediction(arch, cycles, memory, cores, fixed_ns=fixed, **extra)
