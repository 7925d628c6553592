"""``ttnn.experimental.minimal_matmul_strided_reduce_scatter_async``: the minimal matmul fused with
a reduce-scatter that reads the product's blocks as the matmul finishes them (``models/tt_dit``'s
row-parallel linears).  It returns ``[product, scattered]`` as ttnn does: ``input @ weight (+ bias,
then the activation)`` on each device, exactly ``ttnn.experimental.minimal_matmul``'s, and those
products summed over ``cluster_axis`` and sliced along dim 3, exactly
``ttnn.experimental.reduce_scatter_minimal_async``'s (the stride is the order the hardware reads
blocks in, not a different result); with ``fused_ternary_scalar``, the slice ``s`` becomes
``addcmul_input_tensor1 + scalar * s * addcmul_input_tensor2`` (``ttnn.addcmul``'s, the second
tensor one row or the slice's rows).

tt-metal's checks (``minimal_matmul_strided_reduce_scatter_async_op.cpp``), before anything is
allocated: dim 3; an input of batch 1 (``[1, 1, M, K]``); a Ring; the minimal matmul's operand and
config checks; the addcmul tensors both or neither, with the scalar, TILE, on the input's mesh, of
bfloat16 / bfloat8_b / bfloat4_b / float32, shaped ``[M, N / ring]`` and ``[1 or M, N / ring]``;
``num_links`` positive; three semaphores; the product's width in tiles a multiple of the ring; an
RS output not block sharded in DRAM.  ``compute_kernel_config`` is required (ttnn gives it no
default).  The hardware arguments (core grid offset, barrier semaphore, worker and buffer counts,
``chunk_width_in_mm_blocks``, ``using_persistent_buffers``, the intermediate memory config) are
checked and recorded; ``optional_rs_output_tensor`` receives the scattered result.  The parts
launch as ``experimental.minimal_matmul``, this op (the reduce-scatter family of the performance
model) and, with the scalar, ``addcmul``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor`, the ops' checks, outputs, minimal matmul and ternary modules, and the
collectives' modules.
"""

from __future__ import annotations

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.all_gather_matmul import grid_offset
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.async_arguments import link_options, optional_semaphore, persistent, ring_size, semaphores
from meshnn.ops.ccl.reduce_scatter import run_reduce_scatter
from meshnn.ops.checks import same_mesh
from meshnn.ops.eltwise.ternary_ops import addcmul
from meshnn.ops.minimal_matmul import _checked, _operand, minimal_matmul
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.lifetime import deallocate
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_OP = "experimental.minimal_matmul_strided_reduce_scatter_async"
_ADDCMUL_DTYPES = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B, DataType.FLOAT32)
TILE = 32


@register(
    _OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.REDUCE_SCATTER,
    device_operation="MinimalMatmulStridedReduceScatterAsync",
)
def minimal_matmul_strided_reduce_scatter_async(
    input_tensor: Tensor,
    weight_tensor: Tensor,
    dim: int,
    multi_device_global_semaphore: object,
    reduce_scatter_core_grid_offset: object,
    *,
    compute_kernel_config: object,
    num_links: int = 1,
    memory_config_mm: MemoryConfig | None = None,
    rs_output_mem_config: MemoryConfig | None = None,
    rs_intermediate_mem_config: MemoryConfig | None = None,
    topology: Topology = Topology.Ring,
    cluster_axis: int | None = None,
    bias: Tensor | None = None,
    fused_activation: object = None,
    config: object = None,
    barrier_semaphore: object = None,
    using_persistent_buffers: bool = False,
    sub_device_id: object = None,
    num_workers_per_link: int | None = None,
    num_buffers_per_channel: int | None = None,
    chunk_width_in_mm_blocks: int | None = None,
    optional_rs_output_tensor: Tensor | None = None,
    fused_ternary_scalar: float | None = None,
    addcmul_input_tensor1: Tensor | None = None,
    addcmul_input_tensor2: Tensor | None = None,
    dtype: DataType | None = None,
) -> list[Tensor]:
    """``[minimal_matmul(input, weight), its reduce-scatter along dim 3 over cluster_axis]`` (the
    second through the fused addcmul when ``fused_ternary_scalar`` is given)."""
    mesh, x, w, ring = _operands((input_tensor, weight_tensor, bias), dim, topology, config, cluster_axis)
    sems = semaphores(_OP, "multi_device_global_semaphore", multi_device_global_semaphore, mesh, 3)
    options = dict(num_links=num_links, topology=topology, cluster_axis=cluster_axis, subdevice_id=sub_device_id)
    options.update(num_workers_per_link=num_workers_per_link, num_buffers_per_channel=num_buffers_per_channel)
    options["chunk_width_in_mm_blocks"] = chunk_width_in_mm_blocks
    attrs = link_options(_OP, mesh, options, links_required=True)
    attrs.update(
        dim=3, multi_device_global_semaphore=sems,
        barrier_semaphore=optional_semaphore(_OP, "barrier_semaphore", barrier_semaphore, mesh),
        core_grid_offset=grid_offset(_OP, "reduce_scatter_core_grid_offset", reduce_scatter_core_grid_offset),
        using_persistent_buffers=_flag(using_persistent_buffers),
        intermediate_memory_config=_memory_config("rs_intermediate_mem_config", rs_intermediate_mem_config),
    )  # fmt: skip
    product = out_spec_like(x, shape=(1, 1, x.shape[2], w.shape[-1]), dtype=dtype, op=_OP)
    spec = _scattered(x, product, ring, rs_output_mem_config)
    scalar = _addcmul(mesh, x, (fused_ternary_scalar, addcmul_input_tensor1, addcmul_input_tensor2), spec)
    given = optional_rs_output_tensor
    into = None if given is None else persistent(_OP, "optional_rs_output_tensor", given, mesh, spec)
    out = minimal_matmul(
        x, w, bias_tensor=bias, fused_activation=fused_activation, config=config, memory_config=memory_config_mm,
        dtype=dtype, compute_kernel_config=compute_kernel_config,
    )  # fmt: skip
    if scalar is None:
        return [out, run_reduce_scatter(_OP, out, mesh, (3, cluster_axis), spec, attrs, into=into)]
    scattered = run_reduce_scatter(_OP, out, mesh, (3, cluster_axis), spec, attrs)
    return [out, _then_addcmul(scattered, scalar, (addcmul_input_tensor1, addcmul_input_tensor2), into)]


def _then_addcmul(scattered: Tensor, scalar: float, tensors: tuple, into: Tensor | None) -> Tensor:
    """``tensors[0] + scalar * scattered * tensors[1]`` (the fused ternary of the reduce-scatter's
    last write), into ``into`` when given; the scattered slice is freed."""
    try:
        return addcmul(tensors[0], scattered, tensors[1], value=scalar, memory_config=scattered.memory_config(),
                       output_tensor=into)  # fmt: skip
    finally:
        deallocate(scattered)


def _operands(tensors: tuple, dim: object, topology: object, config: object, cluster_axis: object):
    """``(mesh, input, weight, ring size)``, checked in tt-metal's order: dim 3, a batch-1 input,
    a Ring, the minimal matmul's operands and config, the product's width in tiles a multiple of
    the ring."""
    input_tensor, weight_tensor, bias = tensors
    tensor, mesh, _ = checked_input(_OP, input_tensor, dim)
    if dim != 3:
        raise MeshnnValueError(f"ttnn.{_OP}: MinimalMatmulStridedReduceScatterAsync requires dim=3, got {dim}")
    if len(tensor.shape) != 4 or tuple(tensor.spec.padded_shape[:2]) != (1, 1):
        raise MeshnnValueError(f"ttnn.{_OP}: requires an input of batch size 1, [1, 1, M, K]; got {list(tensor.shape)}")
    if topology is not Topology.Ring:
        raise MeshnnValueError(f"ttnn.{_OP}: only supports Ring topology, got {topology!r}")
    x, w = _checked(_OP, tensor, weight_tensor, bias, config)
    ring = ring_size(_OP, mesh, cluster_axis, tensor)
    if (w.spec.padded_shape[-1] // TILE) % ring:
        raise MeshnnValueError(
            f"ttnn.{_OP}: MM output N_tiles ({w.spec.padded_shape[-1] // TILE}) must be divisible by ring_size ({ring})"
        )
    return mesh, x, w, ring


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise MeshnnTypeError(f"ttnn.{_OP}: using_persistent_buffers must be a bool, got {value!r}")
    return value


def _memory_config(name: str, value: object) -> MemoryConfig | None:
    if value is not None and not isinstance(value, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{_OP}: {name} must be a ttnn.MemoryConfig, got {value!r}")
    return value


def _scattered(tensor: Tensor, product: TensorSpec, ring: int, memory_config: object) -> TensorSpec:
    """The spec of a device's slice of the product along dim 3, in ``rs_output_mem_config``
    (default: the input's); DRAM block sharding refused as tt-metal refuses it."""
    config = _memory_config("rs_output_mem_config", memory_config)
    config = config if config is not None else tensor.memory_config()
    if config.memory_layout is TensorMemoryLayout.BLOCK_SHARDED and config.buffer_type is not BufferType.L1:
        raise MeshnnValueError(f"ttnn.{_OP}: DRAM block sharding is not supported for RS output")
    width = product.shape[3] // ring
    return out_spec_like(tensor, shape=(*product.shape[:3], width), dtype=product.dtype, memory_config=config, op=_OP)


def _addcmul(mesh: MeshDevice, tensor: Tensor, given: tuple, spec: TensorSpec) -> float | None:
    """The fused addcmul's scalar (None: no addcmul), its two tensors checked against the
    scattered output ``[M, N / ring]`` (the second may be one row)."""
    scalar, first, second = given
    if first is None and second is None:
        return None
    if first is None or second is None:
        raise MeshnnValueError(
            f"ttnn.{_OP}: Both addcmul_input_tensor1 and addcmul_input_tensor2 must be provided together"
        )
    if scalar is None:
        raise MeshnnValueError(f"ttnn.{_OP}: fused_ternary_scalar must be set when addcmul inputs are provided")
    if isinstance(scalar, bool) or not isinstance(scalar, int | float):
        raise MeshnnTypeError(f"ttnn.{_OP}: fused_ternary_scalar must be a float, got {scalar!r}")
    named = {"addcmul_input_tensor1": _operand(_OP, "addcmul_input_tensor1", first)}
    named["addcmul_input_tensor2"] = _operand(_OP, "addcmul_input_tensor2", second)
    same_mesh(_OP, {"input_tensor": tensor, **named})
    m, n = spec.shape[2], spec.shape[3]
    for name, t in named.items():
        if t.layout is not Layout.TILE or t.dtype not in _ADDCMUL_DTYPES:
            raise MeshnnValueError(
                f"ttnn.{_OP}: {name} must be TILE of bfloat16, bfloat8_b, bfloat4_b or float32, got "
                f"{t.layout}, {t.dtype}"
            )
    if tuple(named["addcmul_input_tensor1"].shape[-2:]) != (m, n):
        raise MeshnnValueError(
            f"ttnn.{_OP}: addcmul_input_tensor1 shape must match RS output [M={m}, N/ring_size={n}], got "
            f"{list(named['addcmul_input_tensor1'].shape)}"
        )
    b = tuple(named["addcmul_input_tensor2"].shape[-2:])
    if b[-1] != n or b[0] not in (1, m):
        raise MeshnnValueError(
            f"ttnn.{_OP}: addcmul_input_tensor2 shape must be broadcast [1, N/ring_size={n}] or full [M={m}, "
            f"N/ring_size={n}], got {list(named['addcmul_input_tensor2'].shape)}"
        )
    return float(scalar)
