"""``ttnn.experimental.matmul_reduce_scatter_async``: the fused matmul + reduce-scatter of a
row-parallel projection (the input sharded along its inner dimension, the weight along its rows:
each device holds a partial product), returning both results as ttnn does:
``[input @ weight (+ bias) per device, the products summed over the mesh and scattered along dim 3]``,
each exactly what ``ttnn.matmul`` and ``ttnn.experimental.reduce_scatter_minimal_async`` give.

The reduce-scatter runs over the whole mesh (tt-metal's ring is every device of the input, no
``cluster_axis``), along ``dim`` 3 only, into ``persistent_output_buffer`` (checked to be the
scattered result's spec, written in place and returned); ``persistent_intermediate_buffer`` is
checked (a live tensor of the mesh with the product's layout and dtype) and recorded.  The matmul
takes ``memory_config_mm`` (default: the input's memory config, as the fused op's), ``dtype``,
``bias``, ``activation``, ``transpose_a`` / ``transpose_b``, ``compute_kernel_config``,
``core_grid`` and a ``program_config``, which must be the 2-D multicast one when given.  The
collective's hardware arguments (three global semaphores, a barrier semaphore, ``num_links``,
``topology``, ``subdevice_id``, ``reduce_scatter_core_grid_offset``) are checked and recorded.
Everything is checked before anything is allocated; the two parts launch as ``matmul`` and as this
op (the reduce-scatter family of the performance model).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, outputs and matmul modules, and the collectives' modules.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.all_gather_matmul import grid_offset
from meshnn.ops.ccl.arguments import Topology, checked_input, group_grid
from meshnn.ops.ccl.async_arguments import link_options, optional_semaphore, persistent, ring_size, semaphores
from meshnn.ops.ccl.groups import group_size
from meshnn.ops.ccl.reduce_scatter import run_reduce_scatter
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.matmul import checked_operands, matmul
from meshnn.ops.matmul_config import MatmulMultiCoreReuseMultiCastProgramConfig, check_matmul_program_config
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_OP = "experimental.matmul_reduce_scatter_async"


@register(
    _OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.REDUCE_SCATTER,
    device_operation="MatmulReduceScatterAsyncDeviceOperation",
)
def matmul_reduce_scatter_async(
    input_tensor: Tensor,
    weight_tensor: Tensor,
    persistent_intermediate_buffer: Tensor,
    persistent_output_buffer: Tensor,
    dim: int,
    multi_device_global_semaphore: object,
    reduce_scatter_core_grid_offset: object,
    *,
    barrier_semaphore: object = None,
    bias: Tensor | None = None,
    num_links: int | None = None,
    memory_config_rs: MemoryConfig | None = None,
    intermediate_memory_config_rs: MemoryConfig | None = None,
    topology: Topology = Topology.Ring,
    subdevice_id: object = None,
    memory_config_mm: MemoryConfig | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    dtype: object = None,
    program_config: object = None,
    activation: str | None = None,
    compute_kernel_config: object = None,
    core_grid: object = None,
) -> list[Tensor]:
    """``[matmul(input_tensor, weight_tensor), reduce_scatter(that product, dim 3)]``, the second
    written into ``persistent_output_buffer``."""
    tensor, mesh, _ = checked_input(_OP, input_tensor, dim)
    if dim != 3:
        raise MeshnnValueError(f"ttnn.{_OP} requires dim=3 for its reduce-scatter, got {dim}")
    shape = _product_shape(tensor, weight_tensor, bias, (transpose_a, transpose_b), program_config)
    offset = grid_offset(_OP, "reduce_scatter_core_grid_offset", reduce_scatter_core_grid_offset)
    ring_size(_OP, mesh, None)
    sems = semaphores(_OP, "multi_device_global_semaphore", multi_device_global_semaphore, mesh, 3)
    barrier = optional_semaphore(_OP, "barrier_semaphore", barrier_semaphore, mesh)
    options = dict(num_links=num_links, topology=topology, cluster_axis=None, subdevice_id=subdevice_id)
    attrs = link_options(_OP, mesh, options, links_required=False)
    product = out_spec_like(tensor, shape=shape, dtype=dtype, op=_OP)
    spec = _scattered(tensor, mesh, product, memory_config_rs)
    _intermediate(mesh, persistent_intermediate_buffer, product, intermediate_memory_config_rs)
    into = persistent(_OP, "persistent_output_buffer", persistent_output_buffer, mesh, spec)
    attrs.update(dim=3, multi_device_global_semaphore=sems, barrier_semaphore=barrier, core_grid_offset=offset)
    attrs.update(persistent_intermediate_buffer=persistent_intermediate_buffer, persistent_output_buffer=into)
    attrs["intermediate_memory_config"] = intermediate_memory_config_rs
    mm_config = memory_config_mm if memory_config_mm is not None else tensor.memory_config()
    out = matmul(
        tensor, weight_tensor, bias=bias, transpose_a=transpose_a, transpose_b=transpose_b, memory_config=mm_config,
        dtype=dtype, activation=activation, program_config=program_config,
        compute_kernel_config=compute_kernel_config, core_grid=core_grid, sub_device_id=subdevice_id,
    )  # fmt: skip
    return [out, run_reduce_scatter(_OP, out, mesh, (3, None), spec, attrs, into=into)]


def _product_shape(
    tensor: Tensor, weight: object, bias: object, transposes: tuple[bool, bool], program_config: object
) -> tuple[int, ...]:
    """The matmul's operands checked by this op's names (weight_tensor and bias on the input's
    mesh), its program config (None or the 2-D multicast one), and the product's shape."""
    named = {"input_tensor": tensor, "weight_tensor": device_input(_OP, "weight_tensor", weight)}
    if bias is not None:
        named["bias"] = device_input(_OP, "bias", bias)
    same_mesh(_OP, named)
    config = check_matmul_program_config(_OP, program_config)
    if config is not None and not isinstance(config, MatmulMultiCoreReuseMultiCastProgramConfig):
        raise MeshnnValueError(
            f"ttnn.{_OP}: program_config {type(config).__name__} is not supported; the fused op needs the "
            "2-D multicast ttnn.MatmulMultiCoreReuseMultiCastProgramConfig"
        )
    return checked_operands(_OP, tensor, weight, bias, *transposes)[2]


def _scattered(tensor: Tensor, mesh: MeshDevice, product: TensorSpec, memory_config: object) -> TensorSpec:
    """The spec of the product's slice along dim 3 over the whole mesh (whole tiles each when
    tiled), in ``memory_config`` (default: the input's, as the fused op's)."""
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{_OP}: memory_config_rs must be a ttnn.MemoryConfig, got {memory_config!r}")
    shape, axis = group_grid(mesh, None, _OP)
    n = group_size(shape, axis)
    if len(product.shape) != 4:
        raise MeshnnValueError(f"ttnn.{_OP}: the product {list(product.shape)} must have rank 4 (dim 3 is scattered)")
    width = product.shape[3]
    unit = n * (product.tile.tile_shape[1] if product.layout is Layout.TILE else 1)
    if width % unit:
        raise MeshnnValueError(
            f"ttnn.{_OP}: dim 3 of the product {list(product.shape)} ({width}) must be divisible by {unit} "
            f"({n} devices{' x the tile width' if unit != n else ''})"
        )
    config = memory_config if memory_config is not None else tensor.memory_config()
    out_shape = (*product.shape[:3], width // n)
    return out_spec_like(tensor, shape=out_shape, dtype=product.dtype, memory_config=config, op=_OP)


def _intermediate(mesh: MeshDevice, value: object, product: TensorSpec, memory_config: object) -> None:
    """``persistent_intermediate_buffer`` checked: a live tensor of ``mesh`` with the product's
    layout and dtype (in ``memory_config`` when one is given)."""
    middle = device_input(_OP, "persistent_intermediate_buffer", value)
    if middle.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{_OP}: persistent_intermediate_buffer is on another mesh device than input_tensor")
    if middle.layout is not product.layout or middle.dtype is not product.dtype:
        raise MeshnnValueError(
            f"ttnn.{_OP}: persistent_intermediate_buffer must have the product's layout and dtype "
            f"({product.layout}, {product.dtype}), got ({middle.layout}, {middle.dtype})"
        )
    if memory_config is not None and middle.memory_config() != memory_config:
        raise MeshnnValueError(
            f"ttnn.{_OP}: persistent_intermediate_buffer's memory config must be intermediate_memory_config_rs"
        )
