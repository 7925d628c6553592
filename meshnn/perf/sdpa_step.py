"""One K-chunk step of the flash (prefill) attention kernel, and the circular buffers a core holds for
it, counted from tt-metal's program (sdpa_program_factory.cpp and kernels/compute/sdpa.cpp at the
FlashAttention report's commit 0f7aa9b, 2024-09-04; the same kinds of work in today's kernel).

A step of a ``q_rows x d_t`` Q chunk against a ``k_t``-tile K chunk:

- two matmuls (QK^T, then the scores by V) of ``q_rows x k_t x d_t`` tile multiplies each, at the
  engine's phases for the fidelity, plus each operand tile's feed: the factory splits each output into
  subblocks of at most ``dst`` tiles (8, or 4 with ``fp32_dest_acc_en``; :func:`subblock`), and every
  inner step of a subblock ``h x w`` unpacks ``h`` in0 tiles and ``w`` in1 tiles for its ``h x w``
  multiplies, so a multiply is fed ``in0 / w + in1 / h`` bytes, at :attr:`OpLatency.sdpa_feed_scale`
  times a GEMM's operand rate;
- block operations, each a pass of tiles from L1 through the engine and back
  (:attr:`OpLatency.sdpa_pass_cycles` a tile): per score tile, the QK product's pack, the scale, the row
  maximum's reduce, subtract-exp and the row sum's reduce (:data:`SCORE_PASSES`), plus the exp on the
  SFPU; per output tile, the second product's pack, the accumulator's rescale and the add
  (:data:`OUTPUT_PASSES`); per row of statistics, the running maximum, the exp of the maxima's
  difference, the sum's rescale and add and two copies (:data:`ROW_PASSES`), plus that exp.  The passes
  that multiply (:data:`SCORE_MULTIPLIES`...) take the FPU's element-wise cycles at the fidelity's
  phases; with ``fp32_dest_acc_en`` each pass that packs a tile (:data:`SCORE_PACKS`...) moves 32-bit
  datums out of the destination registers, taken at the packers' rate on those bytes (an estimate: the
  packers' 64 B a cycle is their L1 side's figure, no figure of their Dst side was found).

Larger chunks share the per-output and per-row passes among more score tiles; which chunks a call can
take is bounded by its circular buffers (:func:`circular_buffer_bytes`), which must fit a core's L1.
"""

from __future__ import annotations

from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.latency import op_latency
from meshnn.perf.traffic import sfpu_cycles_per_tile

SCORE_PASSES = 5
SCORE_MULTIPLIES = 2
SCORE_PACKS = 3
OUTPUT_PASSES = 3
OUTPUT_MULTIPLIES = 1
OUTPUT_PACKS = 3
ROW_PASSES = 6
ROW_MULTIPLIES = 1
ROW_PACKS = 6

INTERMEDIATE_TILE_BYTES = 2048
"""The kernel's intermediate tiles (scores, the output accumulator, its statistics): bfloat16 (the factory's
``im_df``: bfloat16 without ``fp32_dest_acc_en``, and always since tt-metal issue #13364, 2024-10)."""

DEST_DATUM_BYTES = {False: 2, True: 4}
"""Bytes of a destination-register datum: 16-bit, or 32-bit with ``fp32_dest_acc_en``."""

STATISTICS_BUFFERS = 5
"""Circular buffers of one tile a Q-chunk row: the current and previous maximum and sum, and the exp of
the maxima's difference."""


def dest_tiles(fp32_dest: bool) -> int:
    """Tiles of the destination registers a block may use (the factory's ``dst_size``)."""
    return 4 if fp32_dest else 8


def subblock(n_out: int, rows: int, dst: int, *, halve: bool) -> tuple[int, int]:
    """(w, h) of a matmul's output subblock over an output ``rows`` tiles tall and ``n_out`` wide: ``w`` as
    wide as ``dst`` allows; a full-width subblock grows to ``dst / w`` rows, else it is one row.
    ``halve``: the QK product's rule in today's factory (a ``dst``-wide one-row subblock of an even width
    becomes half as wide and two rows tall)."""
    w = min(n_out, dst)
    h = min(rows, dst // w) if w == n_out else 1
    if halve and w == dst and h == 1 and n_out % 2 == 0:
        w, h = w // 2, 2
    return w, h


def multiply_cycles(arch: ArchPerf, fidelity: MathFidelity, in0: float, in1: float, w: int, h: int) -> float:
    """Cycles of one tile multiply of a ``h x w`` subblock with operand tiles of ``in0`` and ``in1`` bytes."""
    feed = (in0 / w + in1 / h) / arch.operand_bytes_per_cycle
    return arch.lofi_cycles_per_tile * fidelity.phases + feed * op_latency(arch.arch).sdpa_feed_scale


def step_cycles(
    arch: ArchPerf,
    fidelity: MathFidelity,
    shape: tuple[int, int, int],
    tile_bytes: tuple[float, float, float],
    fp32_dest: bool,
) -> float:
    """Cycles of one K-chunk step: ``shape`` (q_rows, k_t, d_t) in tiles, ``tile_bytes`` of q, k and v."""
    q_rows, k_t, d_t = shape
    q_bytes, k_bytes, v_bytes = tile_bytes
    dst = dest_tiles(fp32_dest)
    qk = multiply_cycles(arch, fidelity, q_bytes, k_bytes, *subblock(k_t, q_rows, dst, halve=True))
    out = multiply_cycles(arch, fidelity, INTERMEDIATE_TILE_BYTES, v_bytes, *subblock(d_t, q_rows, dst, halve=False))
    latency = op_latency(arch.arch)
    pass_, multiply = latency.sdpa_pass_cycles, arch.fpu_eltwise_cycles_per_tile * fidelity.phases
    pack = (DEST_DATUM_BYTES[fp32_dest] - DEST_DATUM_BYTES[False]) * 1024 / arch.packer_bytes_per_cycle
    exp = sfpu_cycles_per_tile(arch, ["exp"])
    score = SCORE_PASSES * pass_ + SCORE_MULTIPLIES * multiply + SCORE_PACKS * pack + exp
    output = OUTPUT_PASSES * pass_ + OUTPUT_MULTIPLIES * multiply + OUTPUT_PACKS * pack
    row = ROW_PASSES * pass_ + ROW_MULTIPLIES * multiply + ROW_PACKS * pack + exp
    return q_rows * k_t * d_t * (qk + out) + q_rows * k_t * score + q_rows * d_t * output + q_rows * row


def circular_buffer_bytes(
    shape: tuple[int, int, int], tile_bytes: tuple[int, int, int, int, int], q_double: bool
) -> int:
    """Bytes of a core's circular buffers (the factory's): ``shape`` (q_rows, k_t, d_t) in tiles,
    ``tile_bytes`` of q, k, v, the mask (0 without one) and the output; Q double-buffered where a core
    holds more than one Q chunk (``q_double``), K, V and the mask always; the scores, the product and
    the accumulator and the statistics in :data:`INTERMEDIATE_TILE_BYTES`; the two scalar tiles."""
    q_rows, k_t, d_t = shape
    q, k, v, mask, out = tile_bytes
    inputs = q_rows * d_t * q * (2 if q_double else 1) + 2 * k_t * d_t * (k + v) + 2 * q_rows * k_t * mask
    intermediates = (q_rows * k_t + 2 * q_rows * d_t + STATISTICS_BUFFERS * q_rows) * INTERMEDIATE_TILE_BYTES
    return inputs + intermediates + q_rows * d_t * out + 2 * 2048
