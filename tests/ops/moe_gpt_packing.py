"""Test helpers for ``ttnn.experimental.moe_gpt``: gpt-oss's weight packing written forward from
its description (interleaved gate / up tile columns, 8 / 7 tiles a ring core, the down weights'
rows in ring order), vectorized; the kernels' fixed sizes."""

from __future__ import annotations

import numpy as np

TILE, NT, CORES, HIDDEN = 32, 90, 12, 2880
TILES = np.array([8, 8, 7, 7] * 3)
STARTS = np.concatenate([[0], np.cumsum(TILES)[:-1]])


def _per_core(cols: np.ndarray, pad) -> np.ndarray:
    """``(rows, 90, w)`` tile columns -> ``(12, rows, 8, w)``: each ring core's tiles, padded to 8."""
    out = np.full((CORES, cols.shape[0], 8, cols.shape[2]), pad, dtype=cols.dtype)
    for p in range(CORES):
        out[p, :, : TILES[p]] = cols[:, STARTS[p] : STARTS[p] + TILES[p]]
    return out


def pack_w0_w1(gate: np.ndarray, up: np.ndarray, pad=0) -> np.ndarray:
    """``(K', N)`` gate and up (bias tile rows included) -> ``(12, 4, K', 128)``."""
    rows = gate.shape[0]
    pair = np.stack([gate.reshape(rows, NT, TILE), up.reshape(rows, NT, TILE)], axis=2).reshape(rows, NT, 2 * TILE)
    cores = _per_core(pair, pad)  # (12, K', 8, 64)
    return cores.reshape(CORES, rows, 4, 2, 2 * TILE).transpose(0, 2, 1, 3, 4).reshape(CORES, 4, rows, 4 * TILE)


def pack_w2(down: np.ndarray, pad=0) -> np.ndarray:
    """``(N', K)`` down weights (bias tile rows last) -> ``(12, 2, N', 128)``."""
    rows = down.shape[0]
    cores = _per_core(down.reshape(rows, NT, TILE), pad)  # (12, N', 8, 32)
    groups = cores.reshape(CORES, rows, 2, 4 * TILE).transpose(0, 2, 1, 3)  # (12, 2, N', 128)
    out = np.empty_like(groups)
    tiles = groups.reshape(CORES, 2, rows // TILE, TILE, 4 * TILE)
    for p in range(CORES):
        sources = [(p - s) % CORES for s in range(CORES)]  # step s brings ring core p - s's slice
        order = [t for q in sources for t in range(STARTS[q], STARTS[q] + TILES[q])]
        out[p] = tiles[p][:, [*order, NT]].reshape(2, rows, 4 * TILE)
    return out


def with_bias(weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """A weight with its bias tile: the bias in the tile's first row, zeros below."""
    tile = np.zeros((TILE, weight.shape[1]), weight.dtype)
    tile[0] = bias
    return np.concatenate([weight, tile])


def unpack(packed_values: np.ndarray, index_pack: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The ``shape`` matrix whose packing (``index_pack``: the packing of its flat indices, -1 for
    padding) gave ``packed_values``."""
    out = np.zeros(int(np.prod(shape)), np.float32)
    valid = index_pack >= 0
    out[index_pack[valid]] = packed_values[valid]
    return out.reshape(shape)
