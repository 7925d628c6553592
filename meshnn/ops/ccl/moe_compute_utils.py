"""``ttnn.experimental.moe_compute_utils``: tt-metal's host helpers of its fused MoE compute op
(the pure ones: device distances along a cluster axis, shared-expert routing, the per-core tile
counts of the packed expert weights, the ring size and output width shard the op derives, the
drain core of its tilize stage).

Facts carried from tt-metal (its Python helper module and ``moe_ring_common.h``):

- a tile count ``n`` over a ring of ``c`` cores is spread by the Euclidean rhythm: every core
  gets ``n // c`` tiles, and core ``i`` one more when ``(i * (n % c)) % c < n % c``;
- the down projection's hidden tiles ``Ht`` use the complement of the gate / up pattern when
  ``Nt % c + Ht % c == c`` (a core big in one is small in the other), else the same rhythm;
- the matmul ring is the DRAM bank count on Wormhole (12); on Blackhole 8, 12 or 16 (default 8);
- the output width shard is the largest ``d <= max_dim`` dividing the hidden tiles (and the ring);
- the tilize drain core is (6, 9) on Wormhole, (10, 9) on Blackhole.

The weight packers (``get_weight_core_shard_maps``, ``get_weight_mem_configs``,
``prepare_w0_w1_tensor_for_moe_compute``, ``prepare_w2_tensor_for_moe_compute``) are
:mod:`meshnn.ops.ccl.moe_weight_packs`', exported here when first asked for (they need torch).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from meshnn.device.arch import Arch
from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnValueError
from meshnn.mesh.cluster import get_arch_name

W0_W1_BLOCK_TILES_W = 4
"""Width in tiles of one gate / up weight read block."""
W2_TILES_PER_A2A_ITER_W = 4
"""Width in tiles of the down weights one ring step moves."""
BLOCK_TILES_H = 7
"""Tiles of height one DRAM read takes."""
WORMHOLE_RING = 12
"""The matmul ring on Wormhole: its DRAM banks."""
BLACKHOLE_RINGS = (8, 12, 16)
"""The matmul rings Blackhole supports."""


def cluster_distance(d0: int, d1: int, mesh_shape: tuple[int, int], cluster_axis: int) -> int | None:
    """Hops between row-major device indices ``d0`` and ``d1`` along ``cluster_axis``, or None when
    they are not on one line of that axis (their other coordinate differs)."""
    c0 = divmod(d0, mesh_shape[1])
    c1 = divmod(d1, mesh_shape[1])
    if c0[1 - cluster_axis] != c1[1 - cluster_axis]:
        return None
    return abs(c0[cluster_axis] - c1[cluster_axis])


def get_shared_experts_per_device(shared_expert_ids_to_devices: dict[int, list[int]], devices: int) -> list[int]:
    """How many shared experts each of ``devices`` devices holds."""
    counts = [0] * devices
    for holders in shared_expert_ids_to_devices.values():
        for device in holders:
            counts[device] += 1
    return counts


def map_shared_experts(
    expert_mapping_tensor: Any,
    shared_expert_ids_to_devices: dict[int, list[int]],
    mesh_shape: Sequence[int],
    cluster_axis: int,
) -> Any:
    """``[devices, routed + shared]``: the routed mapping (a torch tensor ``[devices, routed]`` of
    owning devices) extended by one column per shared expert, each dispatching device sending it to
    the nearest holder on its line of ``cluster_axis`` (the first holder when none is on it)."""
    import torch

    if len(expert_mapping_tensor.shape) != 2:
        raise MeshnnValueError(f"Invalid shape of mapping tensor. Expected: 2. Got: {len(expert_mapping_tensor.shape)}")
    devices, routed = expert_mapping_tensor.shape
    if len(set(get_shared_experts_per_device(shared_expert_ids_to_devices, devices))) != 1:
        raise MeshnnValueError(
            "Shared Experts must be distributed such that all devices have an equal number of experts"
        )
    shared = sorted(shared_expert_ids_to_devices)
    if shared != list(range(routed, routed + len(shared))):
        raise MeshnnValueError("Shared expert IDs should be a contiguous continuation of routed expert IDs ")
    extra = torch.zeros((devices, len(shared)), dtype=expert_mapping_tensor.dtype)
    mapping = torch.cat([expert_mapping_tensor, extra], dim=1)
    shape = (int(mesh_shape[0]), int(mesh_shape[1]))
    for sender in range(devices):
        for expert, holders in shared_expert_ids_to_devices.items():
            near = [(d, cluster_distance(sender, d, shape, cluster_axis)) for d in holders]
            on_line = [(dist, i) for i, (_, dist) in enumerate(near) if dist is not None]
            mapping[sender, expert] = holders[min(on_line)[1]] if on_line else holders[0]
    return mapping


def _shard_tiles(n_tiles: int, core_id: int, n_cores: int) -> int:
    """Tiles of ``n_tiles`` that ring position ``core_id`` of ``n_cores`` holds (Euclidean rhythm)."""
    extra = n_tiles % n_cores
    big = extra > 0 and (core_id * extra) % n_cores < extra
    return n_tiles // n_cores + int(big)


def _w2_shard_tiles(Ht: int, core_id: int, Nt: int, n_cores: int) -> int:
    """Down-projection hidden tiles of ring position ``core_id``: the complement of the gate / up
    rhythm of ``Nt`` when the two remainders fill the ring, else the rhythm of ``Ht``."""
    extra_n = Nt % n_cores
    if extra_n + Ht % n_cores == n_cores:
        big_in_n = extra_n > 0 and (core_id * extra_n) % n_cores < extra_n
        return Ht // n_cores + int(not big_in_n)
    return _shard_tiles(Ht, core_id, n_cores)


def effective_matmul_ring_size(mesh_device: Any, bh_ring_size: int = 8) -> int:
    """The matmul ring ``moe_compute`` uses on ``mesh_device``'s chips: 12 on Wormhole,
    ``bh_ring_size`` (8, 12 or 16) on Blackhole."""
    if mesh_device.arch() is Arch.BLACKHOLE:
        if bh_ring_size not in BLACKHOLE_RINGS:
            raise MeshnnValueError(f"bh_ring_size={bh_ring_size} is not supported (must be one of {BLACKHOLE_RINGS})")
        return bh_ring_size
    return WORMHOLE_RING


def auto_output_width_shard_dim(
    hidden_size: int, tile_size: int = 32, max_dim: int = 4, matmul_ring_size: int | None = None
) -> int:
    """The largest ``d <= max_dim`` dividing ``hidden_size // tile_size`` (and ``matmul_ring_size``
    when given); 1 when none does."""
    tiles = hidden_size // tile_size
    for d in range(max_dim, 0, -1):
        if tiles % d == 0 and (matmul_ring_size is None or matmul_ring_size % d == 0):
            return d
    return 1


def get_tilize_drain_core() -> CoreCoord:
    """The core ``moe_compute`` drains its tilize stage on, for the open system's architecture."""
    arch = get_arch_name()
    if arch == Arch.BLACKHOLE.value:
        return CoreCoord(10, 9)
    if arch == Arch.WORMHOLE_B0.value:
        return CoreCoord(6, 9)
    raise MeshnnValueError(f"MoE compute tilize drain core is only defined for WH and BH; got arch {arch!r}")


def __getattr__(name: str) -> Any:
    """The weight packers, from :mod:`meshnn.ops.ccl.moe_weight_packs` (imported on first use)."""
    from meshnn.ops.ccl import moe_weight_packs  # it imports this module: imported here, at first use

    if name in moe_weight_packs.PACKERS:
        return getattr(moe_weight_packs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
