"""A 2-D multicast matmul whose per-core output is computed in several output blocks.

tt-metal's 2-D program (matmul_multicore_reuse_mcast_2d_program_factory.cpp) splits a core's ``per_core_M x
per_core_N`` tiles into ``out_block_h x out_block_w`` blocks when its circular buffers would not fit L1 whole:
the benchmark's manual configs set the blocks themselves, and ttnn's own choice for an all-DRAM-interleaved
matmul given no program config takes them from ``get_multi_dim_per_core_factor`` (matmul_program_config.cpp
at tt-metal 62931bdb59): the whole block with ``in0_block_w = Kt / gx`` where its buffers fit (``in0`` and
``in1`` blocks double-buffered, the output and its intermediate whole), else, keeping the largest K-block that
divides ``in0_block_w``, the largest output block (the squarest of equal size) of divisors of ``per_core_M``
and ``per_core_N`` that fits (:func:`multi_dim_factor`).

Each core runs every K-block for one output block before the next (bmm_large_block_zm_fused_bias_activation's
``bh`` / ``bw`` loops), so per output block:

- its in1 reader is also its writer (reader_bmm_tile_layout_in1_sender_writer_padding.cpp and the receiver's
  twin): after the block's last K-block it writes the block's tiles, a subblock at a time as the packer pushes
  them, and only then reads (or, a receiver, asks for) the next block's first in1 K-block, which its column's
  sender multicasts after its own writes; the compute kernel waits for that K-block, and its first partial packs
  wait for the written tiles' space (the partials share the output buffer);
- so at each of the ``n - 1`` block boundaries the math waits for what of the block's writes outlasts the last
  K-block's multiplies they run beside (the writes at ``matmul_drain_bytes_per_s``, the grid's rate for its
  output, over the block's share of the output), then for one in1 K-block's read at a sender's rate and its
  multicast (:func:`boundary_cycles`); after the last block only that block's share of the output is left to
  drain (:func:`drain_share`);
- the senders read in0 again for each block column and in1 again for each block row (:func:`reread_factors`).

Facts, not fits: the block choice is ttnn's, the rates are the model's own figures.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import MatmulConfig, MatmulProgram, OpDesc, TensorDesc
from meshnn.perf.systems import Machine

BUFFERING = 2
"""matmul_utilities' MCAST_INPUT_BUFFERING_DEPTH: in0 and in1 blocks double-buffered."""
PARTIAL_TILE_BYTES = 2048
"""``estimate_interm_tile_size`` without float32 accumulation: a Float16_b tile (packer L1 accumulation)."""


def cb_bytes(m: int, n: int, k: int, a: TensorDesc, b: TensorDesc, interm: int) -> int:
    """ttnn's ``get_estimated_size_of_cbs`` (interleaved in0, no bias): in0 and in1 K-blocks double-buffered,
    the output block in in0's tile size and its intermediate in ``interm`` bytes a tile."""
    return m * k * BUFFERING * a.tile_bytes + n * k * BUFFERING * b.tile_bytes + m * n * (a.tile_bytes + interm)


def _divisors(n: int) -> list[int]:
    """``per_core`` itself, 1, then its divisors from ``n // 2`` down to 2 (ttnn's candidate order)."""
    return [n, 1] + [f for f in range(n // 2, 1, -1) if n % f == 0]


def multi_dim_factor(
    desc: OpDesc, per_m: int, per_n: int, block_w: int, l1_bytes: int, fp32_acc: bool
) -> tuple[int, int, int]:
    """``(out_block_h, out_block_w, in0_block_w)`` as ttnn's ``get_multi_dim_per_core_factor`` picks them with
    ``adjust_in0_block_w`` for ``desc``'s operands: the whole block where its buffers fit ``l1_bytes``; else for
    each K-block dividing ``block_w`` (largest first) the largest output block that fits, of equal sizes the one
    nearest a square (the first found where two are as square); (1, 1, 1) where none fits."""
    a, b, out = desc.inputs[0], desc.inputs[1], desc.outputs[0]
    interm = 4096 if fp32_acc else max(PARTIAL_TILE_BYTES, out.tile_bytes)
    if cb_bytes(per_m, per_n, block_w, a, b, interm) < l1_bytes:
        return per_m, per_n, block_w
    squarest: dict[int, tuple[int, int]] = {}
    for fm in _divisors(per_m):
        for fn in _divisors(per_n):
            ratio = max(fm, fn) / min(fm, fn)
            kept = squarest.get(fm * fn)
            if kept is None or max(kept) / min(kept) >= ratio:
                squarest[fm * fn] = (fm, fn)
    for k in range(block_w, 0, -1):
        if block_w % k:
            continue
        for size in sorted(squarest, reverse=True):
            fm, fn = squarest[size]
            if cb_bytes(fm, fn, k, a, b, interm) < l1_bytes:
                return fm, fn, k
    return 1, 1, 1


def split_block(block: object, whole: object) -> int | None:
    """A program config's ``out_block_h`` (or ``_w``) as :class:`MatmulConfig` keeps it: a positive tile count
    smaller than its ``per_core_M`` (or ``_N``), else None (the whole block: ttnn's default)."""
    valid = isinstance(block, int) and not isinstance(block, bool) and block > 0
    return block if valid and (not isinstance(whole, int) or block < whole) else None


def _blocked(config: MatmulConfig) -> bool:
    return (
        config.program is MatmulProgram.MULTICAST_2D
        and bool(config.per_core_m and config.per_core_n)
        and bool(config.out_block_h or config.out_block_w)
    )


def reread_factors(config: MatmulConfig) -> tuple[int, int]:
    """How many times a 2-D program's senders read in0 and in1: once per output block column (in0) and
    per output block row (in1); (1, 1) for a whole per-core block or another program."""
    if not _blocked(config):
        return 1, 1
    rows = math.ceil(config.per_core_m / (config.out_block_h or config.per_core_m))
    cols = math.ceil(config.per_core_n / (config.out_block_w or config.per_core_n))
    return cols, rows


def block_count(config: MatmulConfig) -> int:
    """Output blocks a core computes one after another (1 for a whole per-core block)."""
    cols, rows = reread_factors(config)
    return cols * rows


def drain_share(config: MatmulConfig) -> float:
    """The share of the output still to be written after the math: the last output block's."""
    return 1.0 / block_count(config)


def boundary_cycles(desc: OpDesc, machine: Machine, per_multiply: float) -> float:
    """Cycles a core's math waits at its ``n - 1`` output-block boundaries (0 for one block): at each, the
    block's writes (its share of the output at ``matmul_drain_bytes_per_s``) beyond the last K-block's
    ``out_block_h x out_block_w x in0_block_w`` multiplies of ``per_multiply`` cycles, then the next block's
    first in1 K-block read at a sender's rate and, on Blackhole, its multicast waited out."""
    from meshnn.perf.matmul import multicast_flush_cycles, sender_read_cycles  # the senders' rates live there

    config = desc.matmul or MatmulConfig()
    blocks = block_count(config)
    if blocks < 2 or not config.in0_block_w:
        return 0.0
    arch = machine.system.arch
    out, b = desc.outputs[0], desc.inputs[1]
    h, w = config.out_block_h or config.per_core_m, config.out_block_w or config.per_core_n
    writes = out.nbytes / blocks / arch.matmul_drain_bytes_per_s * arch.clock_hz
    last_k_block = h * w * config.in0_block_w * per_multiply
    tiles = w * config.in0_block_w
    refill = sender_read_cycles(machine, tiles, b.tile_bytes) + multicast_flush_cycles(machine, tiles, b.tile_bytes)
    return (blocks - 1) * (max(0.0, writes - last_k_block) + refill)
