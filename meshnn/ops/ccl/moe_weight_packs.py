"""The expert-weight packers of tt-metal's fused MoE compute (``moe_compute_utils``' torch helpers
and their ``ttnn.experimental`` device ports): the byte order its ring matmul kernels read.

Facts carried from tt-metal's helper module (its layout is the contract):

- the ring: the DRAM banks' workers (``get_optimal_dram_bank_to_logical_worker_assignment``)
  sorted by ``(y, x)`` descending; ring position ``p`` holds the Euclidean-rhythm share of the
  gate / up weights' ``Nt`` column tiles and of the down weights' ``Ht`` hidden tiles (in groups of
  4 tiles, the last group padded), :func:`~meshnn.ops.ccl.moe_compute_utils._shard_tiles`;
- gate / up ``(L, E, K, N)``: ``K`` padded with zero rows to whole 7-tile reads; every column tile
  of w0 beside the same tile of w1 (64 columns); each core's tiles padded with zero tiles to the
  largest share rounded up to even; two tiles side by side make a 128-column group:
  ``(cores, L, E, groups, Kp, 128)``;
- down ``(L, E, N, K)``: each core's hidden columns (its groups of 4 tiles, zero tiles after its
  last); its ``N`` rows in the gate / up cores' chunks, core ``i`` starting with its own chunk and
  then going down the ring (``i, i-1, ...``); ``N`` padded with zero rows to 7-tile reads:
  ``(cores, L, E, groups, Np, 128)``.

torch is imported when a packer runs.  The device ports are :mod:`meshnn.ops.ccl.moe_weight_ports`'.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.tensor` and the MoE helper module.
"""

from __future__ import annotations

import math
from typing import Any

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnValueError
from meshnn.ops.ccl.moe_compute_utils import (
    BLOCK_TILES_H,
    W0_W1_BLOCK_TILES_W,
    W2_TILES_PER_A2A_ITER_W,
    _shard_tiles,
    _w2_shard_tiles,
)
from meshnn.tensor.spec import MemoryConfig

TILE = 32


def _tiles(name: str, value: int) -> int:
    if value % TILE:
        raise MeshnnValueError(f"{name} dimension ({value}) must be divisible by ttnn.TILE_SIZE ({TILE})")
    return value // TILE


def _padded_rows(tiles: int) -> int:
    """Rows of ``tiles`` tiles padded up to whole 7-tile DRAM reads."""
    return math.ceil(tiles / BLOCK_TILES_H) * BLOCK_TILES_H * TILE


def get_weight_core_shard_maps(mesh_device: Any, hidden_size: int, intermediate_size: int):
    """``(w0_w1_shard_map, w2_shard_map, dram_core_range_set)``: each ring position's gate / up
    tiles, its down weights' ``(last group tiles, last group pad tiles)``, and the DRAM banks in
    ring order (a CoreRangeSet of ``(bank, 0)`` cores)."""
    workers = mesh_device.get_optimal_dram_bank_to_logical_worker_assignment(0)
    bank_of = {core: bank for bank, core in enumerate(workers)}
    ring = sorted(workers, key=lambda c: (c.y, c.x), reverse=True)
    n, nt, ht = len(workers), intermediate_size // TILE, hidden_size // TILE
    groups = math.ceil(math.ceil(ht / n) / W2_TILES_PER_A2A_ITER_W)
    w0_w1, w2 = [], []
    for position in range(n):
        w0_w1.append(_shard_tiles(nt, position, n))
        tiles = _w2_shard_tiles(ht, position, nt, n)
        last = tiles - (groups - 1) * W2_TILES_PER_A2A_ITER_W
        w2.append((last, groups * W2_TILES_PER_A2A_ITER_W - tiles))
    banks = CoreRangeSet([CoreRange(CoreCoord(bank_of[c], 0), CoreCoord(bank_of[c], 0)) for c in ring])
    return w0_w1, w2, banks


def _w0_w1_index(shard_map: list[int]):
    """Each core's column tiles (``Nt`` marks a zero tile) and the padded share (even)."""
    top = max(shard_map) + max(shard_map) % 2
    if any(size not in (top, top - 1, top - 2) for size in shard_map):
        raise MeshnnValueError(f"W0W1 shard sizes must be in [{top - 2}, {top}] (after rounding max to even), got: "
                               f"{shard_map}")  # fmt: skip
    nt, start, rows = sum(shard_map), 0, []
    for size in shard_map:
        rows.append(list(range(start, start + size)) + [nt] * (top - size))
        start += size
    import torch

    return torch.tensor(rows), top


def prepare_w0_w1_tensor_for_moe_compute(w0, w1, L: int, E: int, K: int, N: int, shard_map: list[int], k_rows=None):
    """Gate and up weights ``(L, E, K, N)`` packed ``(cores, L, E, groups, Kp, 128)`` (see the
    module's text); ``k_rows`` overrides ``Kp`` (the bias packer's)."""
    import torch

    kt, nt = _tiles("K", K), _tiles("N", N)
    kp = k_rows or _padded_rows(kt)
    pair = torch.stack([w0.reshape(L, E, K, nt, TILE), w1.reshape(L, E, K, nt, TILE)], dim=4)  # (L,E,K,Nt,2,32)
    pair = torch.nn.functional.pad(pair, (0, 0, 0, 0, 0, 1, 0, kp - K))  # a zero tile at Nt, zero rows to Kp
    index, top = _w0_w1_index(shard_map)
    cores, groups = len(shard_map), top // 2
    picked = pair[:, :, :, index]  # (L, E, Kp, cores, top, 2, 32)
    picked = picked.reshape(L, E, kp, cores, groups, 2, 2, TILE).permute(3, 0, 1, 4, 2, 5, 6, 7)
    return picked.reshape(cores, L, E, groups, kp, W0_W1_BLOCK_TILES_W * TILE)


def prepare_w2_tensor_for_moe_compute(w2, L: int, E: int, N: int, K: int, w2_shard_map, w0_w1_shard_map, n_rows=None):
    """Down weights ``(L, E, N, K)`` packed ``(cores, L, E, groups, Np, 128)`` (see the module's
    text); ``n_rows`` overrides ``Np`` and ``N`` may carry extra rows kept after the ring's (bias)."""
    import torch

    kt, nt = _tiles("K", K), sum(w0_w1_shard_map)
    cores = len(w2_shard_map)
    groups = math.ceil(kt / (cores * sum(w2_shard_map[0])))
    width = W2_TILES_PER_A2A_ITER_W * TILE
    columns, start = [], 0
    for last, pad in w2_shard_map:
        take = ((groups - 1) * W2_TILES_PER_A2A_ITER_W + last) * TILE
        columns += [w2[..., start : start + take], w2.new_zeros(L, E, w2.shape[2], pad * TILE)]
        start += take
    packed = torch.cat(columns, dim=-1).reshape(L, E, w2.shape[2], cores, groups, width).permute(3, 0, 1, 4, 2, 5)
    starts = [0, *itertools_accumulate(w0_w1_shard_map)]
    out = []
    for core in range(cores):
        order = [(core - j) % cores for j in range(cores)]
        tiles = [t for chunk in order for t in range(starts[chunk], starts[chunk + 1])]
        rows = [t * TILE + r for t in tiles for r in range(TILE)] + list(range(nt * TILE, w2.shape[2]))
        out.append(packed[core][:, :, :, rows])
    stacked = torch.stack(out)
    total = n_rows or _padded_rows(nt)
    return torch.nn.functional.pad(stacked, (0, 0, 0, total - stacked.shape[4]))


def _bias_tile(bias, L: int, E: int):
    """A bias ``(L, E, W)`` as one tile row ``(L, E, 32, W)``: row 0 the bias, the rest zeros."""
    tile = bias.new_zeros(L, E, TILE, bias.shape[-1])
    tile[:, :, 0] = bias
    return tile


def prepare_w0_w1_tensor_with_bias(w0, w1, b0, b1, L: int, E: int, K: int, N: int, shard_map: list[int]):
    """Gate and up weights with their biases ``(L, E, N)`` as one more tile row of ``K`` (packed
    as :func:`prepare_w0_w1_tensor_for_moe_compute` with ``K + 32``)."""
    import torch

    _tiles("K", K)
    w0b = torch.cat([w0, _bias_tile(b0, L, E)], dim=2)
    w1b = torch.cat([w1, _bias_tile(b1, L, E)], dim=2)
    return prepare_w0_w1_tensor_for_moe_compute(w0b, w1b, L, E, K + TILE, N, shard_map)


def prepare_w2_tensor_with_bias(w2, b2, L: int, E: int, N: int, K: int, w2_shard_map, w0_w1_shard_map):
    """Down weights with their bias ``(L, E, K)``: the bias tile row after the ring-ordered rows
    (not rotated), ``N + 32`` padded to whole 7-tile reads."""
    import torch

    nt = _tiles("N", N)
    w2b = torch.cat([w2, _bias_tile(b2, L, E)], dim=2)
    return prepare_w2_tensor_for_moe_compute(w2b, L, E, N, K, w2_shard_map, w0_w1_shard_map, _padded_rows(nt + 1))


def add_shared_expert_weights(routed_w0, routed_w1, routed_w2, shared_w0, shared_w1, shared_w2,
                              shared_expert_ids_to_device, num_devices: int):  # fmt: skip
    """Each device's routed experts (in order, ``E / num_devices`` a device), then the shared
    experts it holds (ascending ids): ``(layers, num_devices * experts_per_device, ...)`` each."""
    import torch

    from meshnn.ops.ccl.moe_compute_utils import get_shared_experts_per_device

    get_shared_experts_per_device(shared_expert_ids_to_device, num_devices)
    per = routed_w0.shape[1] // num_devices
    held: list[list[int]] = [[] for _ in range(num_devices)]
    for expert in sorted(shared_expert_ids_to_device):
        for device in shared_expert_ids_to_device[expert]:
            held[device].append(expert)
    outs = []
    for routed, shared in ((routed_w0, shared_w0), (routed_w1, shared_w1), (routed_w2, shared_w2)):
        parts = []
        for d in range(num_devices):
            parts.append(routed[:, d * per : (d + 1) * per])
            parts += [shared[expert] for expert in held[d]]
        outs.append(torch.cat(parts, dim=1))
    return tuple(outs)


def itertools_accumulate(values: list[int]) -> list[int]:
    """Running sums of ``values``."""
    sums, total = [], 0
    for v in values:
        total += v
        sums.append(total)
    return sums


def get_weight_mem_configs(
    num_layers, experts_per_device, hidden_size, intermediate_size, w0_w1_shard_map, w2_shard_map,
    dram_core_range_set, has_bias=False,
):  # fmt: skip
    """``(w0_w1_mem_config, w2_mem_config, K_for_shard, w2_N_total)``: DRAM HEIGHT_SHARDED over the
    banks, the packed tensors' rows split evenly (a bias adds one tile row before the 7-tile padding)."""
    kt, nt, ht = _tiles("hidden_size", hidden_size), _tiles("intermediate_size", intermediate_size), hidden_size // TILE
    k_rows, n_rows = _padded_rows(kt + int(has_bias)), _padded_rows(nt + int(has_bias))
    cores, banks = len(w0_w1_shard_map), dram_core_range_set.num_cores()
    top = max(w0_w1_shard_map)
    w2_groups = math.ceil(ht / (len(w2_shard_map) * sum(w2_shard_map[0])))
    configs = []
    for name, rows, width in (("w0_w1", (top + top % 2) // 2 * k_rows, W0_W1_BLOCK_TILES_W),
                              ("w2", w2_groups * n_rows, W2_TILES_PER_A2A_ITER_W)):  # fmt: skip
        total = num_layers * experts_per_device * cores * rows
        if total % banks:
            raise MeshnnValueError(
                f"get_weight_mem_configs: {name} total rows {total} not divisible by num_banks {banks}"
            )
        shard = ShardSpec(dram_core_range_set, (total // banks, width * TILE), ShardOrientation.ROW_MAJOR)
        configs.append(MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.DRAM, shard))
    return configs[0], configs[1], k_rows, n_rows


PACKERS = (
    "get_weight_core_shard_maps",
    "get_weight_mem_configs",
    "prepare_w0_w1_tensor_for_moe_compute",
    "prepare_w2_tensor_for_moe_compute",
    "prepare_w0_w1_tensor_with_bias",
    "prepare_w2_tensor_with_bias",
    "add_shared_expert_weights",
)
"""The torch helpers ``ttnn.experimental.moe_compute_utils`` exports from here."""
