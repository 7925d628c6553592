"""Where ``ttnn.experimental.moe_compute``'s kernels run and find their weights: its cores (tilize,
matmul ring, combine), the inverse of its weight packers, and its expert activations.

Facts carried from tt-metal's program factory and kernels (2026-06):

- cores per architecture: tilize ``(6, 9), (6, 8), (5, 9), (5, 8)`` on Wormhole (``(10, 9), (10, 8),
  (9, 9), (9, 8)`` on Blackhole), those in the worker grid, the list cut until its length divides
  the hidden tiles; the matmul ring: the DRAM banks' workers (Wormhole 12; Blackhole 8 plus extras
  up to the ring size); combine: the first ``H_c * W_c`` cores of ``(5, 0)-(6, 7)`` (``(9, 0)-(10, 7)``)
  column by column, sorted by ``(x, y)``; the per-expert counts reach every core of the bounding box
  of the three sets;
- ``W_c`` (the data-parallel combine cores): the largest ``d <= 4`` dividing the hidden tiles and
  the ring size;
- weights: the packers of :mod:`meshnn.ops.ccl.moe_weight_packs` (equal to tt-metal's byte for
  byte); the kernels read them back, so their inverse is found by packing index arrays;
- a bias is one more tile row (``K + 32`` of W0 / W1, ``N + 32`` of W2) that a ones tile multiplies:
  the 32 rows' column sums;
- activations: SILU ``silu(g) * u``, GELU ``gelu_tanh(g) * u``, SWIGLU gpt-oss's clamped form;
- a shared expert (the last ``num_shared_experts_per_device`` slots) produces only the first
  ``in2_tiles_per_step_shared`` tiles of each ring core's intermediate step, the rest zero.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`, the MoE helper modules.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from meshnn.device.arch import Arch
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnValueError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.moe_gpt_layout import clamped_swiglu

TILE = 32
TOKEN_SIZE = 32  # tokens a shared-buffer slot holds per data-parallel combine core
DOUBLE_BUFFER = 2
OP = "experimental.moe_compute"
_TILIZE = {
    Arch.WORMHOLE_B0: ((6, 9), (6, 8), (5, 9), (5, 8)),
    Arch.BLACKHOLE: ((10, 9), (10, 8), (9, 9), (9, 8)),
}
_COMBINE = {Arch.WORMHOLE_B0: ((5, 0), (6, 7)), Arch.BLACKHOLE: ((9, 0), (10, 7))}
_BH_EXTRAS = ((0, 5), (0, 8), (7, 3), (7, 8), (0, 1), (0, 2), (7, 0), (7, 2))


def ring_size(mesh: MeshDevice) -> int:
    """The matmul ring: 12 on Wormhole, 8 on Blackhole (the public op's)."""
    return 8 if mesh.arch() is Arch.BLACKHOLE else 12


def data_parallel_cores(hidden: int, ring: int) -> int:
    """``W_c``: the largest ``d <= 4`` dividing ``hidden / 32`` and ``ring``."""
    return next(d for d in (4, 3, 2, 1) if (hidden // TILE) % d == 0 and ring % d == 0)


def combine_cores(mesh: MeshDevice, height: int, width: int) -> list[CoreCoord]:
    """``ttnn.experimental.get_moe_combine_cores``: the first ``height * width`` cores of the
    architecture's combine range, column by column, sorted by ``(x, y)``."""
    start, end = _COMBINE[mesh.arch()]
    cores = list(CoreRange(CoreCoord(*start), CoreCoord(*end)).cores(row_wise=False))
    if not 1 <= height * width <= len(cores):
        raise MeshnnValueError(f"ttnn.{OP}: {height} x {width} combine cores; the combine range holds {len(cores)}")
    return sorted(cores[: height * width], key=lambda c: (c.x, c.y))


def ring_cores(mesh: MeshDevice, ring: int) -> list[CoreCoord]:
    """The matmul cores: the DRAM banks' workers (Blackhole: padded with tt-metal's extras)."""
    cores = list(mesh.get_optimal_dram_bank_to_logical_worker_assignment(0))
    if mesh.arch() is Arch.BLACKHOLE:
        cores += [CoreCoord(*c) for c in _BH_EXTRAS[: ring - len(cores)]]
    return cores


def tilize_cores(mesh: MeshDevice, hidden: int) -> list[CoreCoord]:
    """The tilize cores in the worker grid, cut until their count divides the hidden tiles."""
    grid = mesh.compute_with_storage_grid_size()
    cores = [CoreCoord(x, y) for x, y in _TILIZE[mesh.arch()] if x < grid.x and y < grid.y]
    if not cores:
        raise MeshnnValueError(f"ttnn.{OP}: No tilize cores fit the device's logical worker grid")
    while len(cores) > 1 and (hidden // TILE) % len(cores):
        cores.pop()
    return cores


def worker_bounding_box(mesh: MeshDevice, height: int, width: int, hidden: int) -> CoreRange:
    """``ttnn.experimental.get_moe_worker_mcast_bounding_box``: the bounding box of the tilize,
    matmul and combine cores (the cores the per-expert counts are multicast to)."""
    cores = tilize_cores(mesh, hidden) + ring_cores(mesh, ring_size(mesh)) + combine_cores(mesh, height, width)
    return CoreRangeSet([CoreRange(c, c) for c in dict.fromkeys(cores)]).bounding_box()


@functools.lru_cache(maxsize=4)
def unpack_index(mesh_key: tuple, hidden: int, inter: int, bias: bool) -> tuple[np.ndarray, np.ndarray]:
    """For one expert's packed W0/W1 and W2 values (ring order, flattened): the flat positions of
    ``[w0 | w1]`` ``(2, K', N)`` and of ``w2`` ``(N', K)`` (``K' = K + 32``, ``N' = N + 32`` with a
    bias); -1 where the packers put nothing (cannot happen: every weight element is packed)."""
    import torch

    from meshnn.ops.ccl import moe_weight_packs as packs

    w01_map, w2_map = mesh_key[1], mesh_key[2]
    k_rows, n_rows = hidden + TILE * bias, inter + TILE * bias
    ids = torch.arange(1, 2 * k_rows * inter + 1, dtype=torch.int32).reshape(2, 1, 1, k_rows, inter)
    kp = packs._padded_rows(hidden // TILE + int(bias))
    packed01 = packs.prepare_w0_w1_tensor_for_moe_compute(ids[0], ids[1], 1, 1, k_rows, inter, list(w01_map), kp)
    ids2 = torch.arange(1, n_rows * hidden + 1, dtype=torch.int32).reshape(1, 1, n_rows, hidden)
    np_rows = packs._padded_rows(inter // TILE + int(bias))
    packed2 = packs.prepare_w2_tensor_for_moe_compute(ids2, 1, 1, inter, hidden, list(w2_map), list(w01_map), np_rows)
    return _inverse(packed01.numpy().reshape(-1), 2 * k_rows * inter), _inverse(packed2.numpy().reshape(-1),
                                                                               n_rows * hidden)  # fmt: skip


def _inverse(packed_ids: np.ndarray, count: int) -> np.ndarray:
    where = np.full(count + 1, -1, np.int64)
    where[packed_ids] = np.arange(packed_ids.size, dtype=np.int64)
    return where[1:]


def shard_maps(mesh: MeshDevice, hidden: int, inter: int) -> tuple:
    """``(ring, w0_w1 map, w2 map)`` of the packers for this mesh's ring."""
    from meshnn.ops.ccl.moe_weight_packs import get_weight_core_shard_maps

    w01, w2, _ = get_weight_core_shard_maps(mesh, hidden, inter)
    return (len(w01), tuple(w01), tuple(w2))


def expert_weights(p01: np.ndarray, p2: np.ndarray, key: tuple, sizes: tuple[int, int, bool]) -> tuple:
    """``(gate [K, N], gate bias, up, up bias, down [N, K], down bias)`` (float32; zero biases when
    there are none) from one expert's packed ring-ordered values ``p01`` / ``p2`` (flat)."""
    hidden, inter, bias = sizes
    i01, i2 = unpack_index(key, hidden, inter, bias)
    both = p01[i01].reshape(2, hidden + TILE * bias, inter)
    down = p2[i2].reshape(inter + TILE * bias, hidden)
    if bias:
        return (both[0, :hidden], both[0, hidden:].sum(0), both[1, :hidden], both[1, hidden:].sum(0),
                down[:inter], down[inter:].sum(0))  # fmt: skip
    zero_n, zero_k = np.zeros(inter, np.float32), np.zeros(hidden, np.float32)
    return both[0], zero_n, both[1], zero_n, down, zero_k


def shared_mask(key: tuple, inter: int, tp: int) -> np.ndarray:
    """A shared expert's intermediate columns that its ring cores produce (the first
    ``in2_tiles_per_step_shared`` tiles of each core's share), as 0 / 1 float32."""
    ring, w01 = key[0], key[1]
    nt = inter // TILE
    step = (math.ceil(math.ceil(nt / tp) / ring) + 1) & ~1
    mask = np.zeros(inter, np.float32)
    start = 0
    for size in w01:
        mask[start * TILE : (start + min(size, step)) * TILE] = 1.0
        start += size
    return mask


def activation(kind: str, gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The expert's activation of its gate and up products (float32)."""
    if kind == "SWIGLU":
        return clamped_swiglu(gate, up)
    if kind == "GELU":
        inner = np.float32(math.sqrt(2.0 / math.pi)) * (gate + np.float32(0.044715) * gate**3)
        return (np.float32(0.5) * gate * (np.float32(1.0) + np.tanh(inner)) * up).astype(np.float32)
    return (gate / (np.float32(1.0) + np.exp(-gate)) * up).astype(np.float32)


def check_ring(hidden: int, inter: int, ring: int) -> None:
    """The ring checks tt-metal's validation makes (a tile per core, an even step)."""
    if inter // TILE < ring:
        raise MeshnnValueError(
            f"ttnn.{OP}: intermediate_size ({inter}) must yield at least 1 tile per ring core "
            f"({inter // TILE} tiles < {ring} cores)"
        )
    width = data_parallel_cores(hidden, ring)
    if ring % width:
        raise MeshnnValueError(
            f"ttnn.{OP}: matmul_num_cores ({ring}) must be divisible by num_data_parallel_cores ({width})"
        )
