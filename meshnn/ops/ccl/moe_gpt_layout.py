"""Where ``ttnn.experimental.moe_gpt``'s kernels find their weights and leave their results: the
ring of DRAM-bank matmul cores, the packed weights' inverse, and the combine cores' L1 shards.

tt-metal's kernels are written for gpt-oss's experts alone (``moe_gpt_ring_common.h``): hidden and
intermediate sizes 2880 (``K_TILES`` = 90 tiles), 12 matmul cores (one per Wormhole DRAM bank)
taking ``TILES`` = 8, 8, 7, 7, ... of the 90 tile columns each, bfloat4_b weights with one bias
tile row appended (``K + 32`` rows; a ones tile times it adds the 32 rows' column sums).

- Ring: the banks' workers (``get_optimal_dram_bank_to_logical_worker_assignment``) sorted by
  ``(y, x)`` descending; position ``p`` computes tile columns ``START[p] .. START[p] + TILES[p]``.
- ``w0_w1`` ``(12, L, E, 4, K+32, 128)``: core ``p``'s group ``g`` holds gate / up columns of tiles
  ``START[p] + 2g`` and ``+ 1`` as ``[gate, up, gate, up]`` 32-column blocks (zeros past
  ``TILES[p]``).
- ``w2`` ``(12, L, E, 2, N+32, 128)``: core ``p``'s two groups are output tile columns
  ``START[p] + 4g ..`` (up to ``TILES[p]``); its rows are the activation's tile rows in the order the
  ring brings them (step ``s``: the slice of core ``(p - s) mod 12``), then the bias tile row.
- Which shard a core reads: the one on its own bank (shard ``i`` on the ``i``-th core of the
  tensor's DRAM shard grid, ``CoreCoord(bank, 0)``).
- Combine cores: the first ``W x H`` rectangle of the worker grid, scanned from (0, 0) by rows,
  with no matmul core in it, sorted by ``(y, x)``; core ``h*W + w`` holds token part ``h`` and
  hidden part ``w``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh` (:mod:`meshnn.tensor` for types).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnValueError
from meshnn.mesh.mesh_device import MeshDevice

if TYPE_CHECKING:
    from meshnn.tensor.tensor import Tensor

TILE = 32
K_TILES = 90  # the kernels' hidden / intermediate size in tiles (2880)
RING_CORES = 12
TILES = (8, 8, 7, 7) * 3  # tile columns each ring position computes (tiles_per_core_table)
START = tuple(int(s) for s in np.cumsum((0, *TILES[:-1])))
BLOCK = 4 * TILE  # a packed row's width (dim 5)


def ring_cores(mesh: MeshDevice) -> list[CoreCoord]:
    """The DRAM-bank workers by bank id (the matmul cores)."""
    return list(mesh.get_optimal_dram_bank_to_logical_worker_assignment(0))


def ring_position_of_bank(mesh: MeshDevice) -> dict[int, int]:
    """Each bank's ring position: banks sorted by their worker's ``(y, x)``, descending."""
    cores = ring_cores(mesh)
    order = sorted(range(len(cores)), key=lambda b: (cores[b].y, cores[b].x), reverse=True)
    return {bank: pos for pos, bank in enumerate(order)}


def ring_of_shards(mesh: MeshDevice, t: Tensor) -> list[int]:
    """Each weight shard's ring position (shard ``i`` lies on the bank of the grid's ``i``-th core)."""
    position = ring_position_of_bank(mesh)
    return [position[c.x] for c in t.spec.memory_config.shard_spec.grid.cores()]


def combine_cores(mesh: MeshDevice, width: int, height: int) -> list[CoreCoord]:
    """The ``width x height`` combine rectangle clear of the matmul cores, cores by ``(y, x)``."""
    taken = {(c.x, c.y) for c in ring_cores(mesh)}
    grid = mesh.compute_with_storage_grid_size()
    for sy in range(grid.y - height + 1):
        for sx in range(grid.x - width + 1):
            if all((sx + dx, sy + dy) not in taken for dy in range(height) for dx in range(width)):
                return [CoreCoord(sx + dx, sy + dy) for dy in range(height) for dx in range(width)]
    raise MeshnnValueError(
        f"ttnn.experimental.moe_gpt: Could not find a {width}x{height} combine core range that avoids matmul cores"
    )


def w0_w1_of(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(gate [K, N], gate bias [N], up, up bias)`` of one expert's packed ``(12, 4, K+32, 128)``
    values, indexed by ring position (dim 0)."""
    rows = packed.shape[2] - TILE
    gate = np.empty((packed.shape[2], K_TILES * TILE), np.float32)
    up = np.empty_like(gate)
    for p in range(RING_CORES):
        for t in range(TILES[p]):
            g, j = divmod(t, 2)
            cols = slice((START[p] + t) * TILE, (START[p] + t + 1) * TILE)
            gate[:, cols] = packed[p, g, :, 2 * j * TILE : (2 * j + 1) * TILE]
            up[:, cols] = packed[p, g, :, (2 * j + 1) * TILE : (2 * j + 2) * TILE]
    return gate[:rows], gate[rows:].sum(axis=0), up[:rows], up[rows:].sum(axis=0)


def w2_of(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(down [N, K], bias [K])`` of one expert's packed ``(12, 2, N+32, 128)`` values, indexed
    by ring position."""
    down = np.empty((K_TILES * TILE + TILE, K_TILES * TILE), np.float32)
    for p in range(RING_CORES):
        order = [t for s in range(RING_CORES) for t in _slice_tiles((p - s) % RING_CORES)] + [K_TILES]
        source = packed[p].reshape(2, K_TILES + 1, TILE, BLOCK)
        rows = np.empty((2, K_TILES + 1, TILE, BLOCK), np.float32)
        rows[:, order] = source
        cols = rows.reshape(2, -1, BLOCK).transpose(1, 0, 2).reshape(K_TILES * TILE + TILE, 2 * BLOCK)
        down[:, START[p] * TILE : (START[p] + TILES[p]) * TILE] = cols[:, : TILES[p] * TILE]
    return down[:-TILE], down[-TILE:].sum(axis=0)


def _slice_tiles(position: int) -> range:
    return range(START[position], START[position] + TILES[position])


def clamped_swiglu(gate: np.ndarray, up: np.ndarray, alpha: float = 1.702, limit: float = 7.0) -> np.ndarray:
    """gpt-oss's activation as the kernel's SFPU computes it: ``(clamp(up, -l, l) + 1) * g *
    sigmoid(alpha * g)`` with ``g = min(gate, l)`` (float32)."""
    g = np.minimum(gate, np.float32(limit))
    u = np.clip(up, -np.float32(limit), np.float32(limit)) + np.float32(1.0)
    return (u * g / (np.float32(1.0) + np.exp(-np.float32(alpha) * g))).astype(np.float32)
