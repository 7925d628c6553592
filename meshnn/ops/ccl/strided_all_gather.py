"""``ttnn.experimental.strided_all_gather_async``: the all-gather that sends a tensor's width in
the blocks a following minimal matmul reads it in (``models/tt_dit``'s column-parallel linears;
the gather half of ``strided_all_gather_minimal_matmul_async``).  Its values are
``ttnn.experimental.all_gather_async``'s along dim 3, exactly (its shape the input's logical one,
where all_gather_async's rounds the rows up to whole tiles): the stride (``mm_block_wt`` tiles of
width, ``mm_block_ht`` tiles of height, ``mm_cores_y`` matmul core rows) is the order the hardware
moves the blocks in, not a different result.  A persistent output buffer, when given,
is the output (written in place and returned).

tt-metal's device operation validates nothing of its own; its program only gathers a rank-4
input's width in whole tiles (it walks the output's width in blocks of ``mm_block_wt`` tiles and
divides by it) and sizes the output from the input's logical shape.  meshnn refuses, before
anything is allocated, what that program cannot run: a rank other than 4, a dim other than 3, a
ROW_MAJOR input or a width not whole tiles, ``mm_block_wt`` missing; the blocking's counts must be
positive ints; the rest are ``all_gather_async``'s checks (two semaphores, more than one device
along ``cluster_axis``, the links, the persistent buffer).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor`, the ops' registry
and the collectives' modules.
"""

from __future__ import annotations

from meshnn.errors import MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.ops.ccl.all_gather_async import gather_async
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.strided_blocks import checked_blocking
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "experimental.strided_all_gather_async"
GATHER_DIM = 3
"""The only dim the strided program gathers: the width of a rank-4 ``[B, C, M, K]`` input."""


@register(OP, kind=OpKind.COLLECTIVE, family=OpFamily.ALL_GATHER, device_operation="StridedAllGatherAsync")
def strided_all_gather_async(
    input_tensor: Tensor,
    persistent_output_buffer: Tensor | None,
    dim: int,
    multi_device_global_semaphore: object,
    *,
    num_links: int = 1,
    memory_config: MemoryConfig | None = None,
    topology: Topology = Topology.Ring,
    cluster_axis: int | None = None,
    num_workers_per_link: int | None = None,
    num_buffers_per_channel: int | None = None,
    mm_cores_y: int | None = None,
    mm_block_ht: int | None = None,
    mm_block_wt: int | None = None,
) -> Tensor:
    """``all_gather_async(input_tensor, dim=3, ...)``, the matmul's blocking checked and recorded."""
    options = dict(num_links=num_links, memory_config=memory_config, topology=topology, cluster_axis=cluster_axis)
    options.update(num_workers_per_link=num_workers_per_link, num_buffers_per_channel=num_buffers_per_channel)
    blocking = {"mm_cores_y": mm_cores_y, "mm_block_ht": mm_block_ht, "mm_block_wt": mm_block_wt}
    given = {"persistent_output_buffer": persistent_output_buffer}
    given["multi_device_global_semaphore"] = multi_device_global_semaphore
    return strided_gather(OP, (input_tensor, dim), given, options, blocking)


def strided_gather(
    op: str, source: tuple[object, object], given: dict[str, object], options: dict[str, object], blocking: dict
) -> Tensor:
    """The checked strided gather of ``source = (input_tensor, dim)`` launched as ``op``: ``given``
    holds the persistent buffer (or None) and the semaphores, ``options`` the link options (the
    defaults of ``all_gather_async`` for the rest), ``blocking`` the matmul's block counts (shared
    with ``strided_all_gather_minimal_matmul_async``)."""
    input_tensor, dim = source
    tensor, mesh, axis_dim = checked_input(op, input_tensor, dim, partial=True)  # type: ignore[arg-type]
    if len(tensor.shape) != 4 or axis_dim != GATHER_DIM:
        raise MeshnnValueError(
            f"ttnn.{op}: the strided gather moves the width of a rank-4 tensor in tiles: dim must be 3 of a 4D "
            f"input, got dim={dim} for shape {list(tensor.shape)}"
        )
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be TILE (the program moves whole tiles), it is ROW_MAJOR")
    if tensor.shape[3] % tensor.spec.tile.tile_shape[1]:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor's width {tensor.shape[3]} must be whole tiles (the program moves whole tiles)"
        )
    checked = checked_blocking(op, blocking, required=("mm_block_wt",))
    full = dict(subdevice_id=None, barrier_semaphore=None, chunks_per_sync=None, use_optimal_ccl_for_llama=False)
    full.update(options)
    full.update(checked)
    return gather_async(op, tensor, mesh, axis_dim, given, full)  # type: ignore[arg-type]
