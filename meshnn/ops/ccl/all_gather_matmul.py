"""``ttnn.experimental.all_gather_matmul_async``: the fused all-gather + matmul of the row-parallel
projections, returning both results as ttnn does: ``[gathered input, gathered @ weight]``, each
exactly what ``all_gather_async`` and ``ttnn.matmul`` give.  The gather takes the async
collective's arguments (two semaphores, barrier, persistent buffer, links, topology, chunk and
worker counts, ``memory_config_ag``); the product the matmul's (``memory_config_mm``, program and
compute-kernel configs, dtype, activation, bias, core grid).  ``all_gather_core_grid_offset``
(where the gather's workers sit) is checked and recorded.  Everything is checked before anything is
allocated.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.tensor`, the ops' checks and
matmul modules, and the collectives' modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.ccl.all_gather_async import gather_async
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.groups import group_size
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.matmul import matmul
from meshnn.ops.matmul_config import check_matmul_program_config
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.perf.gather_matmul import FUSED_GATHER, FUSED_MATMUL
from meshnn.tensor.tensor import Tensor


@register(
    "experimental.all_gather_matmul_async",
    kind=OpKind.COLLECTIVE,
    family=OpFamily.ALL_GATHER,
    device_operation="AllGatherMatmulAsyncDeviceOperation",
)
def all_gather_matmul_async(
    input_tensor: Tensor,
    weight_tensor: Tensor,
    persistent_output_buffer: Tensor | None = None,
    dim: int | None = None,
    multi_device_global_semaphore: object = None,
    all_gather_core_grid_offset: object = None,
    *,
    bias: Tensor | None = None,
    num_links: int = 1,
    memory_config_ag: object = None,
    topology: Topology = Topology.Ring,
    barrier_semaphore: object = None,
    subdevice_id: object = None,
    memory_config_mm: object = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    dtype: object = None,
    program_config: object = None,
    activation: str | None = None,
    compute_kernel_config: object = None,
    core_grid: object = None,
    chunks_per_sync: int | None = None,
    num_workers_per_link: int | None = None,
    num_buffers_per_channel: int | None = None,
) -> list[Tensor]:
    """``[all_gather_async(input_tensor, dim), matmul(gathered, weight_tensor)]``."""
    op = "experimental.all_gather_matmul_async"
    if dim is None:
        raise MeshnnTypeError(f"ttnn.{op}: dim must be an int, got None")
    tensor, mesh, axis_dim = checked_input(op, input_tensor, dim)
    weight = device_input(op, "weight_tensor", weight_tensor)
    same_mesh(op, {"input_tensor": tensor, "weight_tensor": weight})
    offset = grid_offset(op, "all_gather_core_grid_offset", all_gather_core_grid_offset)
    gathered_k = tensor.shape[-1] * (group_size(tuple(mesh.shape), None) if axis_dim == len(tensor.shape) - 1 else 1)
    inner = weight.shape[-1] if transpose_b else weight.shape[-2]
    if (tensor.shape[-2] if transpose_a else gathered_k) != inner:
        raise MeshnnValueError(
            f"ttnn.{op}: the gathered input's inner dimension ({gathered_k}) must match weight_tensor "
            f"{list(weight.shape)} ({inner})"
        )
    options = dict(num_links=num_links, memory_config=memory_config_ag, topology=topology, cluster_axis=None)
    options.update(barrier_semaphore=barrier_semaphore, subdevice_id=subdevice_id, chunks_per_sync=chunks_per_sync)
    options.update(num_workers_per_link=num_workers_per_link, num_buffers_per_channel=num_buffers_per_channel)
    options["all_gather_core_grid_offset"] = offset
    options[FUSED_MATMUL] = True  # one program in tt-metal: the capture times it with the matmul's launch
    check_matmul_program_config(op, program_config)  # the product's configs, before the gather allocates
    check_compute_kernel_config(op, compute_kernel_config)
    given = {"multi_device_global_semaphore": multi_device_global_semaphore}
    given["persistent_output_buffer"] = persistent_output_buffer
    gathered = gather_async(op, tensor, mesh, axis_dim, given, options)
    product = matmul(
        gathered, weight, bias=bias, transpose_a=transpose_a, transpose_b=transpose_b, memory_config=memory_config_mm,
        dtype=dtype, activation=activation, program_config=program_config,
        compute_kernel_config=compute_kernel_config, core_grid=core_grid,
        recorded={FUSED_GATHER: True, "topology": topology, "num_links": num_links, "cluster_axis": None, "dim": dim},
    )  # fmt: skip
    return [gathered, product]


def grid_offset(op: str, name: str, value: object) -> CoreCoord:
    """A fused op's ``name`` (where its collective's workers sit on the grid): a ttnn.CoreCoord or
    an ``(x, y)`` pair of non-negative ints, as a CoreCoord."""
    if isinstance(value, CoreCoord):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        x, y = value
        if all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (x, y)):
            return CoreCoord(x, y)
    raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.CoreCoord or an (x, y) pair, got {value!r}")
