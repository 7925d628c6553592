"""The 1-D matmul program that gathers in0 around a ring of cores (``gather_in0=True``): the decode
matmuls of tt-metal's Llama-70B and Qwen3-32B Galaxy models.

What the program does (tt-metal ``matmul_multicore_reuse_mcast_1d_program_factory.cpp``,
``process_gather_in0_program_and_create_override_variables``, and its kernels
``reader_bmm_tile_layout_in0_ring_all_gather.cpp``, ``reader_bmm_tile_layout_in1_ring_all_gather.cpp``,
``bmm_large_block_zm_fused_bias_activation_gathered.cpp``):

- in0 is width-sharded in L1 over the ring's cores (its ``compute_with_storage_grid_size``), one shard of
  ``ceil(K tiles / ring)`` tiles each; in1 is width-sharded in L1 beside it (or read from DRAM); each core
  computes its own ``per_core_N`` output columns.
- The ring has as many steps (inner blocks) as cores: at each step a core waits on its semaphore for the
  shard its predecessor sends, writes the shard it holds on to its successor (one NoC write) and raises
  the successor's semaphore.  The shards go round one hop per step, so the last one reaches a core after
  ``ring - 1`` hops, each the shard's bytes at the NoC's rate plus a write's latency
  (``noc_write_latency_cycles``).  Hop cores (the config's ``hop_cores``, e.g. tt-metal's Llama-70B
  Galaxy prefetcher rings) sit in the ring between its first core and its last: the first core writes
  to the first hop core, each hop core waits for a shard and forwards it, the last writes to the ring's
  last core (``process_gather_in0_program_and_create_override_variables``: ``send_to_hop_core`` for ring
  index 0; the in0 kernel's ``HOP_CORE`` loop), so the shard that travels furthest takes one more
  transfer per hop core.  The multiplies of a step run as its shard lands: the op takes the
  longer of the ring and the multiplies, plus its launch.  No DRAM pipeline fills: the first block is the
  core's own shard.
- The multiplies: every output tile against every K tile (the unpadded shard widths add up to K), each
  at the op's fidelity with its operands unpacked (:func:`meshnn.perf.matmul.math_cycles_per_multiply`); with one
  tile row the output subblocks are one row and each multiply waits for its in1 tile's unpack where that is
  longer than the math (a bfloat16 weight tile at HiFi2 or LoFi on Wormhole: :func:`_math_cycles`).
  A weight held in L1 costs no more than that: the single-use floor of a decode multiply
  (``single_use_weight_tile_cycles``) is that of a weight streamed from DRAM, and applies only when in1 is
  in DRAM.
- in1 in DRAM (the LM heads: DRAM-sharded, each core reading its bank, or interleaved), no prefetcher: the in1
  reader (``reader_bmm_tile_layout_in1_ring_all_gather.cpp``) reads the ring's blocks one at a time, issuing a
  block's reads then waiting on their barrier before the next block's: the weight's bytes at the DRAM's rate plus,
  per block (``ring`` of them), a DRAM round trip (``tile_round_trip_cycles``) that nothing overlaps.
- Partial sums: the compute kernel keeps the whole output block in the destination registers across the
  ring's blocks when it is one subblock (``spill = num_blocks > 1 && out_block / out_subblock > 1``); a
  wider block (more than :data:`DEST_TILES` columns) spills and accumulates as the other 1-D programs do
  (:func:`meshnn.perf.matmul.partials_cycles`, blocks of one shard).
"""

from __future__ import annotations

import math
from dataclasses import replace

from meshnn.perf.desc import TILE, MatmulConfig, MatmulProgram, OpDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.matmul import math_cycles_per_multiply, partials_cycles
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, operand_cycles, traffic, transfer_efficiency

DEST_TILES = 8
"""Output tiles one subblock holds in the destination registers (ttnn's limit for a 16-bit dest, and for a
float32 one in full-sync mode, as the ring programs run): a wider per-core block spills its partials."""


def is_ring_matmul(desc: OpDesc) -> bool:
    """Whether ``desc`` is a 1-D matmul whose program gathers in0 around a ring of cores."""
    config = desc.matmul
    return config is not None and config.program is MatmulProgram.MULTICAST_1D and config.gather_in0


def _tiles(n: int) -> int:
    return max(1, math.ceil(n / TILE))


def ring_cycles(desc: OpDesc, machine: Machine, ring: int) -> float:
    """Cycles the last in0 shard takes to reach a core: ``ring - 1`` hops between the ``ring`` compute
    cores plus one per hop core, each a shard of ``ceil(K tiles / ring)`` tiles written to the next core
    at the NoC's rate for its size, plus a write's latency before the successor sees its semaphore.
    Every core but the ring's first receives its last shard through the hop cores."""
    a = desc.inputs[0]
    arch = machine.system.arch
    shard = math.ceil(_tiles(a.shape[-1]) / ring) * _tiles(a.shape[-2]) * a.tile_bytes
    rate = arch.noc_bytes_per_cycle * transfer_efficiency(arch, shard)
    hop = shard / rate + op_latency(arch.arch).noc_write_latency_cycles
    relays = desc.matmul.hop_cores if desc.matmul is not None else 0
    return (ring - 1 + relays) * hop


def _math_cycles(desc: OpDesc, arch: ArchPerf, fidelity: MathFidelity, row_tiles: int) -> float:
    """One multiply's math, or, with one tile row (the ring's output subblocks are then one row, ``out_subblock_h``
    1, as every Llama / Qwen ring config sets), the unpack of its in1 tile into SrcA where that is longer: the
    compute kernel's ``matmul_block`` keeps the in0 tile and streams in1 tile by tile (``llk_unpack_AB_matmul.h``:
    ``reuse_a = ct_dim >= rt_dim``), as a 2-D program's one-row subblocks do
    (:func:`meshnn.perf.matmul.math_cycles_per_multiply`, ``row_subblock_unpack_bytes_per_cycle``)."""
    cycles = math_cycles_per_multiply(desc, arch, fidelity)
    rate = arch.row_subblock_unpack_bytes_per_cycle
    if rate is None or row_tiles != 1:
        return cycles
    return max(cycles, desc.inputs[1].tile_bytes / rate)


def predict_ring_matmul(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a ring-gathered 1-D matmul ``desc`` (:func:`is_ring_matmul`) on ``machine``."""
    a, b = desc.inputs[0], desc.inputs[1]
    arch = machine.system.arch
    config = desc.matmul or MatmulConfig()
    fidelity = desc.fidelity or MathFidelity.HiFi2
    ring = grid_cores(machine, config.grid or desc.core_grid)
    row_tiles, k_tiles = _tiles(a.shape[-2]), _tiles(a.shape[-1])
    per_core_n = config.per_core_n or math.ceil(_tiles(b.shape[-1]) / ring)
    out_tiles = row_tiles * per_core_n
    operands = operand_cycles(arch, (a.tile_bytes + b.tile_bytes) / 2)
    per_multiply = _math_cycles(desc, arch, fidelity, row_tiles) + operands
    if b.in_dram and row_tiles == 1:  # a weight streamed from DRAM, each tile used once
        per_multiply = max(per_multiply, op_latency(arch.arch).single_use_weight_tile_cycles)
    cycles = out_tiles * k_tiles * per_multiply
    if per_core_n > DEST_TILES:  # more than one subblock: the partials spill between the ring's blocks
        blocked = replace(config, in0_block_w=math.ceil(k_tiles / ring))
        cycles += partials_cycles(replace(desc, matmul=blocked), machine, out_tiles, k_tiles, per_multiply)
    cycles = max(cycles, ring_cycles(desc, machine, ring))
    memory = traffic(machine, [(b, 1.0)] if b.in_dram else [], ring, blocks_in_flight=True, local_shards=True)
    if b.in_dram:  # each of the ring's blocks read, then waited for, before the next block's reads are issued
        waits = ring * op_latency(arch.arch).cycles_ns(op_latency(arch.arch).tile_round_trip_cycles, arch.clock_hz)
        memory = replace(memory, dram_ns=memory.dram_ns + waits)
    flops = 2.0 * row_tiles * k_tiles * _tiles(b.shape[-1]) * TILE**3
    return kernel_prediction(arch, cycles, memory, ring, fidelity=fidelity, flops=flops)
