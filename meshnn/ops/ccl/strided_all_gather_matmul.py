"""``ttnn.experimental.strided_all_gather_minimal_matmul_async``: the strided all-gather of the
activation's width (``K``) along ``cluster_axis`` fused with the minimal matmul that reads the
gathered blocks as they land (``models/tt_dit``'s column-parallel linears).  It returns
``[gathered, product]`` as ttnn does: the gather exactly ``strided_all_gather_async``'s (written
into ``persistent_output_buffer`` when one is given), the product exactly
``ttnn.experimental.minimal_matmul(gathered, weight_tensor, bias_tensor=bias, ...)``'s.  The
gather's blocking is the matmul config's (``mm_cores_y`` its grid's rows, ``mm_block_ht`` its
``M_block_size``, ``mm_block_wt`` its ``K_block_size``); ``read_local_slice_from_input`` (the
matmul reads the device's own slice from the input, so the hardware may leave that slice of the
gathered output unwritten) is recorded: meshnn writes the whole gathered output either way.

tt-metal's checks, before anything is allocated: dim 3; an input of batch 1 (``[1, 1, M, K]``);
a ``config`` and a ``compute_kernel_config`` (tt-metal reads both unconditionally: meshnn refuses
their absence instead of crashing); the minimal matmul's operand and config checks; the gathered
``K * ring`` matching the weight's rows; the core grid offset a CoreCoord; then the strided
gather's own (:mod:`.strided_all_gather`).  The gather launches as this op (the all-gather family
of the performance model), the product as ``experimental.minimal_matmul``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' activation, registry and minimal
matmul modules, and the collectives' modules.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.ops.activation_arg import activation_arg
from meshnn.ops.ccl.all_gather_matmul import grid_offset
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.async_arguments import ring_size
from meshnn.ops.ccl.strided_all_gather import strided_gather
from meshnn.ops.minimal_matmul import _checked, minimal_matmul
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "experimental.strided_all_gather_minimal_matmul_async"


@register(
    OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.ALL_GATHER,
    device_operation="StridedAllGatherMinimalMatmulAsync",
)
def strided_all_gather_minimal_matmul_async(
    input_tensor: Tensor,
    weight_tensor: Tensor,
    persistent_output_buffer: Tensor | None,
    dim: int,
    multi_device_global_semaphore: object,
    strided_all_gather_core_grid_offset: object,
    *,
    num_links: int = 1,
    memory_config_ag: MemoryConfig | None = None,
    topology: Topology = Topology.Ring,
    cluster_axis: int | None = None,
    bias: Tensor | None = None,
    fused_activation: object = None,
    config: object = None,
    memory_config_mm: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    num_workers_per_link: int | None = None,
    num_buffers_per_channel: int | None = None,
    read_local_slice_from_input: bool | None = None,
) -> list[Tensor]:
    """``[strided_all_gather_async(input_tensor, dim=3), minimal_matmul(that, weight_tensor)]``."""
    tensor, w = _operands(input_tensor, weight_tensor, bias, dim, (config, compute_kernel_config, cluster_axis))
    activation = activation_arg(f"ttnn.{OP}", "fused_activation", fused_activation)
    _options(memory_config_ag, memory_config_mm, read_local_slice_from_input)
    offset = grid_offset(OP, "strided_all_gather_core_grid_offset", strided_all_gather_core_grid_offset)
    options = dict(num_links=num_links, memory_config=memory_config_ag, topology=topology, cluster_axis=cluster_axis)
    options.update(num_workers_per_link=1 if num_workers_per_link is None else num_workers_per_link)
    options.update(num_buffers_per_channel=num_buffers_per_channel, core_grid_offset=offset)
    options["read_local_slice_from_input"] = bool(read_local_slice_from_input)
    blocking = {"mm_cores_y": config.compute_with_storage_grid_size.y, "mm_block_ht": config.M_block_size}  # type: ignore[attr-defined]
    blocking["mm_block_wt"] = config.K_block_size  # type: ignore[attr-defined]
    given = {"persistent_output_buffer": persistent_output_buffer}
    given["multi_device_global_semaphore"] = multi_device_global_semaphore
    gathered = strided_gather(OP, (tensor, dim), given, options, blocking)
    product = minimal_matmul(
        gathered, w, bias_tensor=bias, fused_activation=activation, config=config, memory_config=memory_config_mm,
        compute_kernel_config=compute_kernel_config,
    )  # fmt: skip
    return [gathered, product]


def _operands(input_tensor: object, weight: object, bias: object, dim: object, given: tuple) -> tuple[Tensor, Tensor]:
    """The input and weight checked in tt-metal's order: dim 3, a batch-1 input, the config and
    compute kernel config given, the minimal matmul's operands, ``K * ring`` the weight's rows."""
    config, compute_kernel_config, cluster_axis = given
    tensor, mesh, _ = checked_input(OP, input_tensor, dim, partial=True)
    if dim != 3:
        raise MeshnnValueError(f"ttnn.{OP}: StridedAllGatherMinimalMatmulAsync requires dim=3, got {dim}")
    if len(tensor.shape) != 4 or tuple(tensor.spec.padded_shape[:2]) != (1, 1):
        raise MeshnnValueError(f"ttnn.{OP}: requires an input of batch size 1, [1, 1, M, K]; got {list(tensor.shape)}")
    if config is None:
        raise MeshnnTypeError(
            f"ttnn.{OP}: config (a ttnn.MinimalMatmulConfig) is required: it sets the gather's blocks"
        )
    if compute_kernel_config is None:
        raise MeshnnTypeError(f"ttnn.{OP}: compute_kernel_config is required (ttnn gives it no default)")
    _, w = _checked(OP, tensor, weight, bias, config)
    ring = ring_size(OP, mesh, cluster_axis, tensor)
    if w.shape[-2] != tensor.shape[-1] * ring:
        raise MeshnnValueError(
            f"ttnn.{OP}: inner dimensions must match; the gathered input has K={tensor.shape[-1] * ring} "
            f"({ring} x {tensor.shape[-1]}), weight_tensor {list(w.shape)}"
        )
    return tensor, w


def _options(memory_config_ag: object, memory_config_mm: object, read_local: object) -> None:
    """The memory configs (ttnn.MemoryConfig or None) and ``read_local_slice_from_input`` (a bool or None)."""
    for name, value in (("memory_config_ag", memory_config_ag), ("memory_config_mm", memory_config_mm)):
        if value is not None and not isinstance(value, MemoryConfig):
            raise MeshnnTypeError(f"ttnn.{OP}: {name} must be a ttnn.MemoryConfig, got {value!r}")
    if read_local is not None and not isinstance(read_local, bool):
        raise MeshnnTypeError(f"ttnn.{OP}: read_local_slice_from_input must be a bool, got {read_local!r}")
