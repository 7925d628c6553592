"""Where a device puts things, tt-metal 2026-06's two queries: ``ttnn.get_allocator_base_address``
(the lowest address an allocator gives) and ``ttnn.get_optimal_worker_cores_for_sharded_tensor``
(the worker cores a program on a sharded device tensor should run on, in shard-orientation order).

tt-metal's answer to the second is its buffer distribution spec's ``cores_with_data``:
- an ND-sharded tensor: its dealt cores (ROUND_ROBIN_1D: the grid in orientation order; GRID_2D: the
  grid trimmed to the shard grid), the first ``min(cores, shards)`` of them;
- a legacy HEIGHT or WIDTH sharded tensor: ROUND_ROBIN_1D over its shard spec's grid, the same way;
- a legacy BLOCK sharded tensor: GRID_2D (the grid trimmed to shard rows x columns, swapped for
  COL_MAJOR).
An L1-sharded tensor gets those cores; a DRAM-sharded one gets, for each DRAM core with data (its x
is the DRAM channel), the optimal worker of that channel on ``noc``
(``get_optimal_dram_bank_to_logical_worker_assignment``).

Layers: imports :mod:`meshnn.errors`, the device layer's specs, the mesh device and the tensor.
"""

from __future__ import annotations

from meshnn.device.buffer import BufferType, ShardSpecBuffer
from meshnn.device.core import CoreCoord
from meshnn.device.dram_workers import NOC
from meshnn.device.nd_shard import NdShardSpec, NdShardSpecBuffer, ShardDistributionStrategy
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.storage import StorageType
from meshnn.tensor.tensor import Tensor


def _cores_with_data(tensor: Tensor) -> list[CoreCoord]:
    """The cores (logical worker or DRAM) that hold at least one shard, in dealing order."""
    spec = tensor.spec
    buffer = spec.shard_spec_buffer()
    if isinstance(buffer, ShardSpecBuffer):
        legacy = buffer.spec
        strategy = ShardDistributionStrategy.GRID_2D if buffer.grid_2d else ShardDistributionStrategy.ROUND_ROBIN_1D
        nd = NdShardSpec(legacy.shape, legacy.grid, legacy.orientation, strategy)
        buffer = NdShardSpecBuffer(nd, buffer.page_shape, buffer.tensor2d_shape_in_pages)
    assert isinstance(buffer, NdShardSpecBuffer)
    return list(buffer.dealt_cores()[: buffer.num_cores])


def get_optimal_worker_cores_for_sharded_tensor(tensor: Tensor, noc: NOC = NOC.RISCV_0_default) -> list[CoreCoord]:
    """The worker cores a program on the sharded device ``tensor`` runs on best, in shard
    orientation order: the cores holding its shards (L1), or the optimal worker of each DRAM bank
    holding its shards (DRAM, on ``noc``)."""
    if not isinstance(tensor, Tensor):
        raise MeshnnTypeError(
            f"get_optimal_worker_cores_for_sharded_tensor: tensor must be a ttnn.Tensor, got {type(tensor).__name__}"
        )
    if not isinstance(noc, NOC):
        raise MeshnnTypeError(f"get_optimal_worker_cores_for_sharded_tensor: noc must be a ttnn.NOC, got {noc!r}")
    if tensor.storage_type() is not StorageType.DEVICE:
        raise MeshnnValueError("Tensor must be on device to compute optimal worker cores.")
    if not tensor.is_sharded():
        raise MeshnnValueError("Tensor must be sharded to compute optimal worker cores.")
    cores = _cores_with_data(tensor)
    if tensor.memory_config().buffer_type is not BufferType.DRAM:
        return cores
    workers = tensor.device().get_optimal_dram_bank_to_logical_worker_assignment(noc)
    return [workers[core.x] for core in cores]


def get_allocator_base_address(device: MeshDevice, buffer_type: BufferType) -> int:
    """``ttnn.get_allocator_base_address``: the lowest address (bytes) the allocator gives in
    ``buffer_type``'s region, DRAM's unreserved base for DRAM, worker L1's for L1, L1_SMALL and
    TRACE (ttnn maps those three to L1's memory type)."""
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"get_allocator_base_address: device must be a MeshDevice, got {type(device).__name__}")
    if not isinstance(buffer_type, BufferType):
        raise MeshnnTypeError(f"get_allocator_base_address: buffer_type must be a ttnn.BufferType, got {buffer_type!r}")
    if buffer_type not in (BufferType.DRAM, BufferType.L1, BufferType.L1_SMALL, BufferType.TRACE):
        raise MeshnnValueError(f"GetAllocatorBaseAddress: unsupported buffer_type={buffer_type}")
    return device.allocator.base_address(BufferType.DRAM if buffer_type is BufferType.DRAM else BufferType.L1)


def get_optimal_dram_bank_to_logical_worker_assignment(device: MeshDevice, noc: object) -> list[CoreCoord]:
    """``ttnn.get_optimal_dram_bank_to_logical_worker_assignment(device, noc)``: the device's method
    (the worker next to each DRAM bank), as ttnn's module-level binding calls it."""
    if not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"device must be a ttnn.MeshDevice, got {type(device).__name__}")
    return device.get_optimal_dram_bank_to_logical_worker_assignment(noc)
