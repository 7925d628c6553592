"""``ttnn.fused_rms_1_1_32_8192`` (tt-metal's RMSAllGather, Llama-70B's decode norm on a Galaxy; bound as
``ttnn.fused_rms_minimal`` by tt-metal of 2026, the same arguments):
an RMS norm over a row split across the devices of ``cluster_axis``, its statistics all-gathered
inside the op.

Each device holds its part ``x`` of ``(1, 1, 32, width)`` rows, width sharded in L1 (TILE,
float32 / bfloat16 / bfloat8_b).  With ``residual_input_tensor`` the op first adds it, and the
residual tensor holds ``x + residual`` afterwards (written in place, in its own dtype, as the
fused kernel does); the sum is what is normalised.  Every device gets
``x / sqrt(sum over the group of sum(x**2) / (width x devices) + epsilon) * weight`` for its part
(sums in float32, members added in member order), ``weight`` being its part of gamma, row major
``(1, 1, width / 32, 32)``.  The output takes ``memory_config`` (default the input's) and ``dtype``
(default the input's); when its shard spec is not the input's, its padded width is the output
shard width times its cores (ttnn's ``compute_output_specs``), the logical width unchanged.
``stats`` (the gathered statistics' scratch) and ``persistent_output_tensor`` are checked and left
as they are; ``global_semaphore``, ``num_links``, ``topology``, ``subdevice_id`` and
``use_noc1_only`` change no value, each checked and recorded.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
config, launch, outputs, values, normalization and registry modules and the collectives' modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import ShardOrientation, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.global_semaphore import check_semaphore
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.arguments import Topology
from meshnn.ops.ccl.async_arguments import link_options, ring_size, same_mesh_device
from meshnn.ops.ccl.llama_arguments import scattered_sums
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import LayerNormShardedMultiCoreProgramConfig
from meshnn.ops.launch import launch
from meshnn.ops.normalization import norm_attrs
from meshnn.ops.outputs import Output, allocate_outputs, output_tensors
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.identity import operation_on
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_DTYPES = (DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B)


@register(kind=OpKind.COLLECTIVE, family=OpFamily.NORM, device_operation="RMSAllGather", aliases=("fused_rms_minimal",))
def fused_rms_1_1_32_8192(
    input_tensor: Tensor,
    program_config: object,
    cluster_axis: int,
    mesh_device: MeshDevice,
    global_semaphore: object,
    *,
    persistent_output_tensor: Tensor | None = None,
    num_links: int | None = None,
    topology: Topology = Topology.Linear,
    subdevice_id: object = None,
    dtype: DataType | None = None,
    compute_kernel_config: object = None,
    memory_config: MemoryConfig | None = None,
    residual_input_tensor: Tensor | None = None,
    epsilon: float = 1e-12,
    weight: Tensor | None = None,
    stats: Tensor | None = None,
    use_noc1_only: bool = False,
) -> Tensor:
    """The group-wide RMS norm of each device's part of the rows (a residual added first)."""
    op = "fused_rms_1_1_32_8192"
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    same_mesh_device(op, mesh_device, mesh)
    ring_size(op, mesh, cluster_axis)
    attrs = norm_attrs(op, tensor, mesh, program_config, compute_kernel_config)
    attrs.update(link_options(op, mesh, {"num_links": num_links, "topology": topology, "subdevice_id": subdevice_id},
                              links_required=False))  # fmt: skip
    attrs.update(global_semaphore=check_semaphore(op, "global_semaphore", global_semaphore, mesh))
    _check_input(op, tensor, attrs["program_config"])
    residual = None if residual_input_tensor is None else _residual(op, residual_input_tensor, tensor, mesh)
    gamma = _weight(op, weight, tensor, mesh)
    for name, value in (("stats", stats), ("persistent_output_tensor", persistent_output_tensor)):
        if value is not None and device_input(op, name, value).storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
            raise WrongMeshError(f"ttnn.{op}: {name} is on another mesh device than input_tensor")
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float):
        raise MeshnnTypeError(f"ttnn.{op}: epsilon must be a float, got {epsilon!r}")
    if not isinstance(use_noc1_only, bool):
        raise MeshnnTypeError(f"ttnn.{op}: use_noc1_only must be a bool, got {use_noc1_only!r}")
    spec = _out_spec(op, tensor, memory_config, dtype)
    attrs.update(cluster_axis=cluster_axis, memory_config=spec.memory_config, dtype=spec.dtype, epsilon=epsilon,
                 use_noc1_only=use_noc1_only, stats=stats)  # fmt: skip
    return _run(op, (tensor, residual, gamma), mesh, cluster_axis, (spec, float(epsilon)), attrs)


def _check_input(op: str, tensor: Tensor, config: object) -> None:
    """A TILE, width-sharded (row-major orientation) input of 32 rows in a format the kernel reads,
    with a sharded program config whose blocks are its shards."""
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor layout must be TILE but got {tensor.layout}")
    if tensor.dtype not in _DTYPES:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor dtype must be FLOAT32, BFLOAT16, or BFLOAT8_B, got {tensor.dtype}"
        )
    padded = tuple(tensor.spec.padded_shape)
    if len(padded) != 4 or padded[-2] != 32 or int(np.prod(padded[:-1])) != 32:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be (1, 1, 32, N) activations, got {list(padded)}")
    memory = tensor.memory_config()
    if not isinstance(config, LayerNormShardedMultiCoreProgramConfig):
        raise MeshnnValueError(f"ttnn.{op}: Fused RMS Allgather only supports Sharded (a sharded program_config)")
    if memory.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED or memory.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be width or block sharded, got {memory.memory_layout}")
    shard = memory.shard_spec
    if shard.orientation is not ShardOrientation.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor's shards need row major orientation")
    if config.block_h != 1 or config.block_w * 32 != shard.shape[1]:
        raise MeshnnValueError(
            f"ttnn.{op}: program_config block_h ({config.block_h}) must be 1 and block_w ({config.block_w}) x 32 must "
            f"equal the shard width {shard.shape[1]}"
        )


def _residual(op: str, value: object, tensor: Tensor, mesh: MeshDevice) -> Tensor:
    residual = device_input(op, "residual_input_tensor", value)
    if residual.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: residual_input_tensor is on another mesh device than input_tensor")
    if residual.layout is not Layout.TILE or residual.spec.padded_shape != tensor.spec.padded_shape:
        raise MeshnnValueError(
            f"ttnn.{op}: residual_input_tensor must be TILE of input_tensor's padded shape "
            f"{list(tensor.spec.padded_shape)}, got {residual.layout} {list(residual.spec.padded_shape)}"
        )
    if residual.memory_config() != tensor.memory_config():
        raise MeshnnValueError(f"ttnn.{op}: residual_input_tensor and input_tensor should have the same memory config")
    return residual


def _weight(op: str, value: object, tensor: Tensor, mesh: MeshDevice) -> Tensor:
    """gamma: required, row major, 32 wide, as many rows as the input's width has tiles."""
    if value is None:
        raise MeshnnValueError(f"ttnn.{op}: RMS all gather requires a weight which is row major")
    gamma = device_input(op, "weight", value)
    if gamma.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: weight is on another mesh device than input_tensor")
    width = tensor.spec.padded_shape[-1]
    volume = int(np.prod(gamma.spec.padded_shape))
    if gamma.layout is not Layout.ROW_MAJOR or gamma.spec.padded_shape[-1] != 32 or volume != width:
        raise MeshnnValueError(
            f"ttnn.{op}: weight must be row major, 32 wide and hold the input's width {width}; got "
            f"{gamma.layout} {list(gamma.spec.padded_shape)}"
        )
    if gamma.dtype not in (DataType.FLOAT32, DataType.BFLOAT16):
        raise MeshnnValueError(f"ttnn.{op}: weight dtype must be FLOAT32 or BFLOAT16 but got {gamma.dtype}")
    return gamma


def _out_spec(op: str, tensor: Tensor, memory_config: object, dtype: object) -> TensorSpec:
    """ttnn's output spec: padded to the output shards' width when they are not the input's."""
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    memory = memory_config or tensor.memory_config()
    if not memory.is_sharded() or memory.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: sharded inputs require width sharded outputs, got {memory.memory_layout}")
    if memory.buffer_type is not tensor.memory_config().buffer_type:
        raise MeshnnValueError(f"ttnn.{op}: the output's buffer type must be the input's {tensor.memory_config()}")
    shard = memory.shard_spec or tensor.memory_config().shard_spec
    memory = MemoryConfig(memory.memory_layout, memory.buffer_type, shard)
    padded = list(tensor.spec.padded_shape)
    if shard != tensor.memory_config().shard_spec:
        padded[-1] = shard.shape[1] * shard.num_cores()  # type: ignore[union-attr]
        if padded[-1] < tensor.shape[-1]:
            raise MeshnnValueError(f"ttnn.{op}: the output shards hold {padded[-1]} columns of {tensor.shape[-1]}")
    kind = dtype or tensor.dtype
    return TensorSpec(tensor.shape, kind, Layout.TILE, memory_config=memory, padded_shape=padded)


def _run(op: str, tensors: tuple, mesh: MeshDevice, axis: int, out: tuple[TensorSpec, float], attrs: dict) -> Tensor:
    tensor, residual, gamma = tensors
    spec, epsilon = out
    inputs = [t for t in (tensor, residual, gamma) if t is not None]
    specs = [t.spec for t in inputs]
    width = tensor.shape[-1] * mesh.shape[axis]
    label = operation_on(f"ttnn.{op}", tensor)
    pad = spec.padded_shape[-1] - tensor.shape[-1] if spec.explicit_padded_shape is not None else 0

    with_residual = residual is not None  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], specs[0])
        if with_residual:
            x = x + logical_values(in_rows[1], specs[1])
            write_values(out_rows[1], x, specs[1])
        squares = np.square(x, dtype=np.float32).sum(axis=-1, keepdims=True, dtype=np.float32)
        totals = scattered_sums(mesh, squares, coords, axis, label, lambda total, member: total)
        scale = 1.0 / np.sqrt(totals / np.float32(width) + np.float32(epsilon), dtype=np.float32)
        g = logical_values(in_rows[-1], specs[-1]).reshape(len(coords), 1, 1, 1, -1)[..., : x.shape[-1]]
        normed = (x * scale * g).astype(np.float32)
        if pad:  # an explicit padded shape: the spec holds the padded array, zeros past the logical width
            normed = np.pad(normed, [(0, 0)] * (normed.ndim - 1) + [(0, pad)])
        write_values(out_rows[0], normed, spec)

    outputs = [Output(spec)]
    into = None
    if residual is not None:
        outputs.append(Output(residual.spec))
        made = output_tensors(mesh, [Output(spec)], allocate_outputs(mesh, [spec]), tensor, tensor.storage.coords)  # type: ignore[union-attr]
        into = [made[0], residual]
    return launch(op, mesh, inputs, outputs, kernel, into=into, reads_memos=True, attrs=attrs)[0]
