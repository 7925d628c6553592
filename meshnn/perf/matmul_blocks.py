"""The weight stream of a 1-D matmul that multicasts in0, block by block, at decode sizes.

In tt-metal's 1-D multicast program with ``mcast_in0`` (matmul_multicore_reuse_mcast_1d_program_factory.cpp),
every core of the grid reads its own ``per_core_N`` columns of an interleaved in1 from DRAM; its reader
(reader_bmm_tile_layout_in1_sender_writer_padding.cpp) issues one block's reads, ``in0_block_w x per_core_N``
tiles, and waits for them all (``async_read_barrier``) before it pushes the block and issues the next.  So a
core's blocks stream one after another, each costing a read round trip (``tile_round_trip_cycles``:
:mod:`meshnn.perf.latency`) and its bytes at one core's DRAM read rate (:func:`meshnn.perf.matmul.sender_read_cycles`).
The in0 multicast hands every core the same K-block at a time, so the grid's cores read their blocks of one
K-step together: a step's bytes from all cores cannot leave the banks faster than the interleaved rate
(:func:`meshnn.perf.traffic.interleaved_rate`), whichever is longer of the two, after the round trip.

With few rows (a decode step: ``per_core_M`` of one tile) the math of a block is a few hundred cycles at
most, so this stream, not the DRAM's aggregate rate, sets the op's time: a weight of ``Kt / in0_block_w``
small blocks a core is latency-bound.  No constant is fitted here: the round trip, the core's rate and
the banks' rate are the model's own figures.

The config ttnn picks for a width-sharded in0 given no program config (matmul_program_config.cpp's
``get_matmul_program_config``): the 1-D program over the shard grid, ``mcast_in0``, ``per_core_N =
ceil(Nt / cores)``, ``in0_block_w = gcd(shard width in tiles, Kt)``: :func:`width_sharded_config`.
"""

from __future__ import annotations

import math
from dataclasses import replace

from meshnn.perf.desc import TILE, MatmulConfig, MatmulProgram, MemoryLayout, OpDesc
from meshnn.perf.latency import op_latency
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import interleaved_rate, page_bytes


def mcast_1d_block_w(k_tiles: int) -> int:
    """``in0_block_w`` of the 1-D config ttnn builds itself (``get_mcast_1d_config``): 2 K tiles a block
    where ``Kt`` is even, else 1."""
    return 2 if k_tiles % 2 == 0 else 1


def width_sharded_config(desc: OpDesc) -> OpDesc | None:
    """``desc`` with the 1-D config ttnn derives from a width-sharded in0 over ``desc.core_grid`` when the
    op was given no program config nor core grid (None otherwise, or where in1 is not interleaved, which
    that path refuses): ``mcast_in0``, ``per_core_M`` all of M's tiles (batch fused), ``per_core_N =
    ceil(Nt / cores)``, ``in0_block_w = gcd(Kt / cores, Kt)``; the op's accumulation flags kept."""
    a, b = desc.inputs[0], desc.inputs[1]
    config = desc.matmul or MatmulConfig()
    if config.program is not MatmulProgram.DEFAULT or config.user_core_grid or config.grid:
        return None
    if a.memory is not MemoryLayout.WIDTH_SHARDED or b.sharded or desc.core_grid is None:
        return None
    cores = desc.core_grid[0] * desc.core_grid[1]
    k_tiles, n_tiles = math.ceil(a.shape[-1] / TILE), math.ceil(b.shape[-1] / TILE)
    rows = math.prod(a.shape[:-1]) // TILE if len(a.shape) > 1 else 1
    if cores < 2 or k_tiles % cores:
        return None
    block_w = math.gcd(k_tiles // cores, k_tiles)
    chosen = replace(
        config,
        program=MatmulProgram.MULTICAST_1D,
        grid=desc.core_grid,
        per_core_m=max(1, rows),
        per_core_n=math.ceil(n_tiles / cores),
        in0_block_w=block_w,
        mcast_in0=True,
    )
    return replace(desc, matmul=chosen)


def output_block_write_cycles(desc: OpDesc, machine: Machine, block_tiles: int, per_multiply: float) -> float:
    """Cycles a 1-D in1 reader waits after an output block's last weight block before it reads the next
    output block's weight, where the output is interleaved (0 for a sharded output, which the cores keep):
    the reader is the output's writer too (reader_bmm_tile_layout_in1_sender_writer_padding.cpp: ``cb_out
    .wait_front``, the tiles written, ``async_write_barrier``), so it waits for the block's last multiplies
    (``in0_block_w`` a tile, ``per_multiply`` cycles each), their pack (``packer_bytes_per_cycle``) and its
    writes to land (``noc_write_latency_cycles`` and the bytes at ``noc_bytes_per_cycle``)."""
    out = desc.outputs[0]
    config = desc.matmul or MatmulConfig()
    if out.sharded:
        return 0.0
    arch = machine.system.arch
    tiles = config.per_core_m * block_tiles if config.per_core_m else block_tiles
    math_cycles = tiles * (config.in0_block_w or 1) * per_multiply
    written = tiles * out.tile_bytes
    pack = written / arch.packer_bytes_per_cycle
    return math_cycles + pack + op_latency(arch.arch).noc_write_latency_cycles + written / arch.noc_bytes_per_cycle


def in1_block_stream_cycles(desc: OpDesc, machine: Machine, tiles: tuple[int, int, int], per_multiply: float) -> float:
    """Cycles the in1 readers of a 1-D program that multicasts in0 take to stream their weight blocks from
    an interleaved DRAM in1 (0 for other programs, an in1 in L1 or sharded, or an unknown ``in0_block_w``);
    ``tiles``: the op's (row, K, column) tiles, batch included in the rows.  Per block: a read round trip,
    then the longer of the core's own ``in0_block_w x per_core_N`` tiles at one core's rate and the
    K-step's tiles of every reading core at the banks' interleaved rate; ``ceil(Kt / in0_block_w)`` blocks
    an output block, and a core's output blocks one per ``per_core_M`` rows (an unfused batch re-reads the
    weight for each of its matrices), each followed by its write where the output is interleaved
    (:func:`output_block_write_cycles`)."""
    from meshnn.perf.matmul import sender_read_cycles  # the core's per-tile read rate lives with the matmul

    row_tiles, k_tiles, col_tiles = tiles
    b = desc.inputs[1]
    config = desc.matmul or MatmulConfig()
    if config.program is not MatmulProgram.MULTICAST_1D or not config.mcast_in0 or config.gather_in0:
        return 0.0
    if not b.in_dram or b.sharded or not config.in0_block_w or not config.per_core_n:
        return 0.0
    arch = machine.system.arch
    block_w = min(config.in0_block_w, k_tiles)
    per_n = min(config.per_core_n, col_tiles)
    readers = math.ceil(col_tiles / per_n)
    own = sender_read_cycles(machine, block_w * per_n, b.tile_bytes)
    step_bytes = block_w * col_tiles * b.tile_bytes
    banks = step_bytes / interleaved_rate(machine, page_bytes(b), readers) * arch.clock_hz
    per_block = op_latency(arch.arch).tile_round_trip_cycles + max(own, banks)
    output_blocks = math.ceil(row_tiles / (config.per_core_m or row_tiles))
    written = output_block_write_cycles(desc, machine, per_n, per_multiply)
    return output_blocks * (math.ceil(k_tiles / block_w) * per_block + written)


def is_plain_program(desc: OpDesc) -> bool:
    """Whether ``desc`` (after :func:`meshnn.perf.matmul.chosen_config`) runs ttnn's plain multi-core program:
    no program config, core grid nor sharded in0, and no multicast config ttnn would pick
    (``create_simple_matmul_program_config``'s fallback, ``MatmulMultiCoreProgramConfig``)."""
    config = desc.matmul or MatmulConfig()
    if config.program is not MatmulProgram.DEFAULT or config.user_core_grid or config.grid or desc.core_grid:
        return False
    return not desc.inputs[0].sharded


def plain_reads_cycles(desc: OpDesc, machine: Machine, out_tiles: int, k_tiles: int) -> float:
    """Cycles the reader of ttnn's plain multi-core program (matmul_multicore_program_factory.cpp, its reader
    reader_bmm_8bank_output_tiles_partitioned.cpp) takes on a core's ``out_tiles`` output tiles: for every
    output tile and every K tile it reads one in0 tile and waits for it, then one in1 tile and waits for it,
    so each read costs a round trip and the tile at one core's read rate, the weight read again for every
    output tile (a batch's matrices included).  A DRAM tile's round trip is ``tile_round_trip_cycles``; an
    L1 tile's (in0 interleaved in L1) the NoC's far-end read latency, ``dram_read_latency_cycles`` (tt-npe's
    latency without a DRAM bank's access)."""
    from meshnn.perf.matmul import sender_read_cycles  # the core's per-tile read rate lives with the matmul

    latency = op_latency(machine.system.arch.arch)
    per_k = 0.0
    for tensor in desc.inputs[:2]:
        trip = latency.read_trip_cycles(tensor.in_dram)
        per_k += trip + sender_read_cycles(machine, 1, tensor.tile_bytes)
    return out_tiles * k_tiles * per_k


def plain_weight_banks_ns(desc: OpDesc, machine: Machine, cores: int) -> float:
    """Nanoseconds the DRAM banks need for the weight reads of ttnn's plain multi-core program when the weight
    is shared by every batch (``bcast_B``: in1 of rank 2, or its batch dims all 1) and DRAM-interleaved.

    The reader (reader_bmm_8bank_output_tiles_partitioned.cpp) reads in1 tile ``kt * Nt + n`` for each K step
    ``kt`` of output column ``n``, waiting for it, and reads the weight again for every output tile: the
    weight's tiles are read ``Mt x batch`` times in all.  Every core walks K at the same pace, so at any one
    K step the reads in flight are of one weight row's columns, whose pages (page p on bank p mod banks) lie
    on at most ``min(Nt, banks, cores)`` banks: the other banks idle, and the reads take at least their bytes
    at that many banks' rate (a bank's share of the interleaved figure, ``dram_interleaved_bytes_per_s``:
    readers anywhere on the grid, as here).  0 where the weight is per batch (its batches' offsets spread the
    reads), in L1 or sharded."""
    a, b = desc.inputs[0], desc.inputs[1]
    if not b.in_dram or b.sharded or math.prod(b.shape[:-2]) > 1:
        return 0.0
    out = desc.outputs[0]
    batch = math.prod(out.shape[:-2]) if len(out.shape) > 2 else 1
    col_tiles = -(-b.shape[-1] // TILE)
    reads = batch * -(-a.shape[-2] // TILE) * col_tiles * -(-b.shape[-2] // TILE)
    system = machine.system
    banks = min(col_tiles, system.arch.num_dram_banks, cores)
    rate = system.dram_interleaved_bytes_per_s / system.arch.num_dram_banks * banks
    return reads * b.tile_bytes / rate * 1e9
