"""The interleaved layer_norm / rms_norm program's reader: the DRAM waits that hold each core's tile rows.

tt-metal runs ``layer_norm`` / ``rms_norm`` on an input that is not sharded with its multi-core program
(ttnn/cpp/ttnn/operations/normalization/layernorm/device/layernorm_op_multi_core.cpp): tile rows split
over the grid (``split_work_to_cores``: a 32-row prompt is one core, 128 rows four), three kernels a core.

- The reader (reader_unary_interleaved_ln.cpp, or reader_unary_interleaved_ln_rm_gb.cpp when gamma or
  beta is row-major, as tt_transformers' and DeepSeek's norm weights are) reads a row's tiles in blocks
  of ``block_size`` (8, or 4 with ``fp32_dest_acc_en``): it issues a block's reads and waits for them
  (``noc.async_read_barrier``) before the next block, the residual ``b`` of a fused pre-add read the same
  way.  After the first row's input it reads gamma and beta once: tile-layout weights by the same blocks; a
  row-major weight one 32-element stick a tile, each read waited for alone (then its second half moved
  within the core's L1 to the tile's second face), so a stick costs a DRAM round trip.
- The compute kernel (layernorm.cpp) squares, reduces, takes the rsqrt and scales each block while the
  reader moves on, then waits, block by block, for gamma's tiles before its gamma multiply; the writer
  (writer_unary_interleaved_start_id_blocked.cpp) writes a block and waits for it before the next.

The distributed norms' interleaved programs (layernorm_distributed/device: the pre- and post-all-gather
program factories, a tile row a core) wait on every input tile alone (the pre reader,
reader_unary_interleaved_ln_rm_gb_pre_allgather.cpp: block size 1, a fused residual's tile in the same
wait; the post reader: a row's stats tiles in one wait, then each input tile, then, on the first row, each
gamma / beta tile's 64 B rows, each waited for).

So a core's time is its reader's chain of waits, each a DRAM round trip
(:attr:`~meshnn.perf.latency.OpLatency.tile_round_trip_cycles`, fitted on nlp_concat_heads' 1088 B bfloat8_b
tile reads, whose bank's serving of those bytes it holds: a read of another page size takes its own page's
bank time instead, at the bank's share of the DRAM's spec rate, so a 64 B stick's trip is 43 cycles shorter
and a 2 KB tile's 40 longer on Wormhole) and its transfer at the NoC's rate for its size, when it exceeds
the compute; then the last block's gamma
(and beta) multiply and its write.  Nothing here is fitted to a norm figure: the DeepSeek rms_norm
module targets (tests/perf/published_deepseek_modules.py) check it.  Units: chip cycles.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, BufferType, Layout, OpDesc, TensorDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.traffic import operand_cycles, page_bytes, transfer_efficiency

PLAIN = "LayerNormDeviceOperation"
PRE, POST = "LayerNormPreAllGatherDeviceOperation", "LayerNormPostAllGatherDeviceOperation"
INTERLEAVED_NORM_CODES = frozenset({PLAIN, PRE, POST})
"""Op codes run by an interleaved program when their input is not sharded."""
FP32_ACC = ("fp32_dest_acc_en", "True")
"""The attribute a norm run with ``fp32_dest_acc_en`` carries (meshnn.ops.costs): blocks of 4 tiles, not 8."""
FITTED_PAGE_BYTES = 1088
"""The page the DRAM round trip (``tile_round_trip_cycles``) was fitted on: a bfloat8_b tile."""
STICK_BYTES = 64
"""A gamma / beta read of the distributed post-all-gather reader: 32 bfloat16 values."""


def is_interleaved_norm(desc: OpDesc) -> bool:
    """Whether ``desc`` is a layer_norm / rms_norm (or a distributed norm's half) that runs an interleaved program."""
    return desc.op_code in INTERLEAVED_NORM_CODES and not desc.inputs[0].sharded


def block_size(desc: OpDesc) -> int:
    """Input tiles a wait: the distributed halves 1; else 4 with ``fp32_dest_acc_en`` (half the destination
    registers), else 8."""
    if desc.op_code != PLAIN:
        return 1
    return 4 if FP32_ACC in desc.attributes else 8


def _logical(tensor: TensorDesc) -> tuple[int, ...]:
    return tensor.logical_shape or tensor.shape


def _split(desc: OpDesc) -> tuple[TensorDesc, tuple[TensorDesc, ...], tuple[TensorDesc, ...], tuple[TensorDesc, ...]]:
    """(input, residuals, stats, weights): an operand shaped as the input is the fused pre-add's ``b``; a
    post-all-gather's tile operand of the input's rows and another width is its gathered stats; the
    others are gamma and beta."""
    first = desc.inputs[0]
    residuals, stats, weights = [], [], []
    for tensor in desc.inputs[1:]:
        if _logical(tensor) == _logical(first):
            residuals.append(tensor)
        elif (
            desc.op_code == POST
            and tensor.layout is Layout.TILE
            and tensor.shape[-2] == first.shape[-2]
            and tensor.shape[-1] != first.shape[-1]
        ):
            stats.append(tensor)
        else:
            weights.append(tensor)
    return first, tuple(residuals), tuple(stats), tuple(weights)


def bank_cycles(arch: ArchPerf, page: int) -> float:
    """Cycles a DRAM bank takes to serve one ``page`` of bytes, at its share of the DRAM's spec rate."""
    return page / (arch.dram_spec_bytes_per_s / arch.num_dram_banks) * arch.clock_hz


def read_wait_cycles(arch: ArchPerf, tensor: TensorDesc, size: int) -> float:
    """One read of ``size`` bytes of ``tensor`` issued and waited for: a DRAM round trip (an L1 tensor's
    banks: tt-npe's NoC latency of a transfer) and the transfer at the NoC's rate for its size.  The DRAM
    round trip was fitted on reads of :data:`FITTED_PAGE_BYTES`, whose bank served those bytes within it:
    a read of another page size (a 64 B gamma stick, a 2 KB bfloat16 tile; the pages of one wait spread
    over the banks, served side by side) takes its own page's bank time instead."""
    transfer = size / (arch.noc_bytes_per_cycle * transfer_efficiency(arch, size))
    latency = op_latency(arch.arch)
    if tensor.buffer is not BufferType.DRAM:
        return latency.noc_write_latency_cycles + transfer
    page = min(size, page_bytes(tensor))
    bank = bank_cycles(arch, page) - bank_cycles(arch, FITTED_PAGE_BYTES)
    return latency.tile_round_trip_cycles + bank + transfer


def reader_cycles(desc: OpDesc, arch: ArchPerf, rows: int) -> float:
    """Cycles the reader of a core with ``rows`` tile rows spends waiting on its reads."""
    first, residuals, stats, weights = _split(desc)
    width = max(1, math.ceil(first.shape[-1] / TILE))
    block = min(block_size(desc), width)
    blocks = math.ceil(width / block)
    if desc.op_code == PRE:  # each input tile and its residual's in one wait
        per_row = width * read_wait_cycles(arch, first, first.tile_bytes + sum(t.tile_bytes for t in residuals))
    else:
        per_row = sum(blocks * read_wait_cycles(arch, t, block * t.tile_bytes) for t in (first, *residuals))
    for tensor in stats:
        per_row += read_wait_cycles(arch, tensor, math.ceil(tensor.shape[-1] / TILE) * tensor.tile_bytes)
    once = 0.0
    for weight in weights:
        if desc.op_code == POST or weight.layout is Layout.ROW_MAJOR:  # 64 B rows a tile, each waited for
            once += width * read_wait_cycles(arch, weight, STICK_BYTES if desc.op_code == POST else page_bytes(weight))
        else:
            once += blocks * read_wait_cycles(arch, weight, block * weight.tile_bytes)
    return rows * per_row + once


def tail_cycles(desc: OpDesc, arch: ArchPerf, fidelity: MathFidelity) -> float:
    """What follows the reader's last wait: the last block's gamma (and beta) multiply, from two operand
    tiles on the FPU at the fidelity, and its write, issued and waited for."""
    first, _, _, weights = _split(desc)
    width = max(1, math.ceil(first.shape[-1] / TILE))
    tiles = min(block_size(desc), width)
    out = desc.outputs[0] if desc.outputs else first
    multiply = 2 * operand_cycles(arch, first.tile_bytes) + arch.fpu_eltwise_cycles_per_tile * fidelity.phases
    write = tiles * out.tile_bytes / arch.noc_bytes_per_cycle + op_latency(arch.arch).noc_write_latency_cycles
    return tiles * multiply * max(1, len(weights)) + write
