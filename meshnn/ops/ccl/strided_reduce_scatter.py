"""``ttnn.experimental.strided_reduce_scatter_async``: the reduce-scatter that reads a matmul's
output block by block (``models/tt_dit``; the half of
``minimal_matmul_strided_reduce_scatter_async`` that runs after a separate matmul).  Its result is
``ttnn.experimental.reduce_scatter_minimal_async``'s exactly: the stride is the order the hardware
reads the blocks in.

tt-metal's checks (``strided_reduce_scatter_async_op_device_operation.cpp``) beyond the minimal
reduce-scatter's: a Ring; dim 3; a rank-4 input with ``C`` 1; ``mm_block_ht`` and ``mm_block_wt``
(the matmul's block in tiles, required) positive; ``mm_cores_y``, ``mm_N_full_block_wt`` and
``chunk_width_in_mm_blocks`` positive when given.  They are recorded with the launch.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' registry and the collectives' modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.errors import MeshnnValueError
from meshnn.ops.ccl.arguments import Topology
from meshnn.ops.ccl.reduce_scatter_async import fabric_reduce_scatter
from meshnn.ops.ccl.strided_blocks import checked_blocking
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "experimental.strided_reduce_scatter_async"


@register(
    OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.REDUCE_SCATTER,
    device_operation="StridedReduceScatterAsyncDeviceOperation",
)
def strided_reduce_scatter_async(
    input_tensor: Tensor,
    persistent_output_buffers: Sequence[Tensor] | None = None,
    dim: int | None = None,
    multi_device_global_semaphore: object = None,
    *,
    mm_block_ht: int,
    mm_block_wt: int,
    barrier_semaphore: object = None,
    num_links: int = 1,
    memory_config: MemoryConfig | None = None,
    intermediate_memory_config: MemoryConfig | None = None,
    topology: Topology = Topology.Ring,
    subdevice_id: object = None,
    cluster_axis: int | None = None,
    num_workers_per_link: int | None = None,
    num_buffers_per_channel: int | None = None,
    mm_cores_y: int | None = None,
    mm_N_full_block_wt: int | None = None,
    chunk_width_in_mm_blocks: int | None = None,
) -> Tensor:
    """``reduce_scatter_minimal_async(input_tensor, ...)`` along dim 3, the matmul's blocking recorded."""
    if topology is not Topology.Ring:
        raise MeshnnValueError(f"ttnn.{OP} only supports Ring topology, got {topology!r}")
    if dim != 3:
        raise MeshnnValueError(f"ttnn.{OP} only supports dim=3 (W), but got dim={dim}")
    shape = tuple(input_tensor.shape) if isinstance(input_tensor, Tensor) else None
    if shape is not None and (len(shape) != 4 or shape[1] != 1):
        raise MeshnnValueError(f"ttnn.{OP} requires a 4D tensor with C=1, but got shape {list(shape)}")
    blocking = {"mm_block_ht": mm_block_ht, "mm_block_wt": mm_block_wt, "mm_cores_y": mm_cores_y}
    blocking.update(mm_N_full_block_wt=mm_N_full_block_wt, chunk_width_in_mm_blocks=chunk_width_in_mm_blocks)
    checked_blocking(OP, blocking, required=("mm_block_ht", "mm_block_wt"))
    options = dict(num_links=num_links, topology=topology, cluster_axis=cluster_axis, chunks_per_sync=None)
    options.update(num_workers_per_link=num_workers_per_link, num_buffers_per_channel=num_buffers_per_channel)
    options.update(subdevice_id=subdevice_id, barrier_semaphore=barrier_semaphore)
    given = (input_tensor, persistent_output_buffers, dim, multi_device_global_semaphore)
    return fabric_reduce_scatter(OP, given, options, (memory_config, intermediate_memory_config, None), blocking)
