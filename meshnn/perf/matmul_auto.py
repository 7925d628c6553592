"""The program config ttnn picks for a matmul given none: which cores it really uses, and how.

A matmul called without a program config or a core grid, on an input that is not sharded, gets
ttnn's ``create_simple_matmul_program_config`` [tt-metal: ttnn/cpp/ttnn/operations/matmul/device/
matmul_op.cpp].  Its choice, with ``Mt``, ``Kt``, ``Nt`` the tiles of M, K, N and a grid of
``gx x gy`` cores:

- a square output block of ``f x f`` tiles, ``f`` the largest of 16, 8, 4, 2 whose circular
  buffers fit a core's L1 (``in0`` and ``in1`` blocks ``f x 2`` tiles double-buffered, the output
  and its intermediate ``f x f`` tiles each; else 1), giving ``ceil(Mt/f) x ceil(Nt/f)`` blocks;
- all operands DRAM-interleaved, or those blocks fit the grid with ``Kt`` even: one block row
  (``Mt <= f``) or a *wide* output (N over 8 times M, or M within a tile, all interleaved): the
  **1-D program that multicasts in0**, ``per_core_M = Mt`` and ``per_core_N = ceil(ceil(N/(gx*gy))/32)``,
  whose single in0 sender core reads all of in0 from DRAM; one block column or a *tall* output:
  the 1-D program that multicasts in1, ``per_core_M = ceil(ceil(M/(gx*gy))/32)``, ``per_core_N = Nt``;
  otherwise the **2-D multicast program** over the whole grid, ``per_core_M = ceil(Mt/gy)``,
  ``per_core_N = ceil(Nt/gx)`` and K in blocks of ``in0_block_w = Kt/gx`` tiles (1 where ``gx`` does not
  divide ``Kt``) when all are DRAM-interleaved, that block split into output blocks (and K-blocks) where its
  circular buffers do not fit L1 (:func:`meshnn.perf.matmul_out_blocks.multi_dim_factor`), else ``f x f``
  blocks over K blocks of the 2 (or 1) above;
- anything else: the plain multi-core program (not modelled here: the caller keeps its default).

Facts, not fits: every threshold above is ttnn's.  What the choice costs is timed by
:mod:`meshnn.perf.matmul` as for any config (the in0 sender's unhidden DRAM read among it).
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, BufferType, MatmulConfig, MatmulProgram, MemoryLayout, OpDesc, TensorDesc
from meshnn.perf.matmul_blocks import mcast_1d_block_w
from meshnn.perf.matmul_out_blocks import multi_dim_factor
from meshnn.perf.systems import Machine

NARROW_RATIO = 8
"""matmul_op.cpp's NARROW_SHAPE_RATIO_THRESHOLD: an output this many times wider than tall is narrow."""
BUFFERING = 2
"""matmul_op.hpp's MCAST_INPUT_BUFFERING_DEPTH: in0 and in1 blocks are double-buffered."""


def _interleaved(t: TensorDesc) -> bool:
    return t.memory is MemoryLayout.INTERLEAVED


def _block_factor(a: TensorDesc, b: TensorDesc, out: TensorDesc, l1_bytes: int, fp32_acc: bool) -> int:
    """ttnn's ``get_per_core_factor``: the largest square output block (16, 8, 4, 2 tiles a side)
    whose circular buffers fit ``l1_bytes`` with ``in0_block_w = 2``; else 1."""
    interm = 4096 if fp32_acc else out.tile_bytes
    for f in (16, 8, 4, 2):
        size = f * 2 * BUFFERING * (a.tile_bytes + b.tile_bytes) + f * f * (a.tile_bytes + interm)
        if size < l1_bytes:
            return f
    return 1


def auto_matmul_config(desc: OpDesc, machine: Machine, *, fp32_acc: bool = False) -> MatmulConfig | None:
    """The config ttnn would pick for ``desc`` (no program config, no core grid, in0 not sharded),
    or None where ttnn falls back to its plain multi-core program (the model's default timing)."""
    a, b, out = desc.inputs[0], desc.inputs[1], desc.outputs[0]
    gx, gy = machine.system.spec.compute_grid
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    mt, kt, nt = math.ceil(m / TILE), math.ceil(k / TILE), math.ceil(n / TILE)
    l1_bytes = machine.system.spec.arch_spec.l1_bank_size
    f = _block_factor(a, b, out, l1_bytes, fp32_acc)
    rows, cols = math.ceil(mt / f), math.ceil(nt / f)
    all_interleaved = _interleaved(a) and _interleaved(b) and _interleaved(out)
    all_dram = all(t.buffer is BufferType.DRAM for t in (a, b, out))
    dram_interleaved = all_interleaved and all_dram
    narrow = max(m, n) // max(1, min(m, n)) > NARROW_RATIO or (all_dram and min(m, n) <= TILE)
    wide = all_interleaved and narrow and n > m
    tall = all_interleaved and narrow and not wide
    block_w = 1 if (rows > 1 or cols > 1) and kt % 2 else 2
    if not (dram_interleaved or (rows * cols <= gx * gy and kt % block_w == 0)):
        return None
    fits = not (rows == 1 and cols == 1) and rows <= gy and cols <= gx
    range_x, range_y = (cols, rows) if fits else (0, 0)
    if range_y == 1 or wide:
        per_n = math.ceil(math.ceil(n / (gx * gy)) / TILE)
        return MatmulConfig(
            MatmulProgram.MULTICAST_1D, (gx, gy), per_core_m=mt, per_core_n=per_n, in0_block_w=mcast_1d_block_w(kt)
        )
    if range_x == 1 or tall:
        per_m = math.ceil(math.ceil(m / (gx * gy)) / TILE)
        return MatmulConfig(
            MatmulProgram.MULTICAST_1D,
            (gx, gy),
            per_core_m=per_m,
            per_core_n=nt,
            mcast_in0=False,
            in0_block_w=mcast_1d_block_w(kt),
        )
    if dram_interleaved:  # K split over the grid's columns: Kt / gx tiles a block where that divides, else 1
        inner = kt // gx if kt % gx == 0 else 1
        per_m, per_n = math.ceil(mt / gy), math.ceil(nt / gx)
        h, w, inner = multi_dim_factor(desc, per_m, per_n, inner, l1_bytes, fp32_acc)
        blocks = {} if (h, w) == (per_m, per_n) else {"out_block_h": h, "out_block_w": w}
        return MatmulConfig(MatmulProgram.MULTICAST_2D, (gx, gy), per_m, per_n, in0_block_w=inner, **blocks)
    if range_y > 0:
        return MatmulConfig(MatmulProgram.MULTICAST_2D, (gx, gy), per_core_m=f, per_core_n=f, in0_block_w=block_w)
    return None
