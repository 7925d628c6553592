"""``ttnn.experimental.ring_attention_all_gather_async``: ring attention's gather of its K and V
(or any list of tensors) along the sequence, each input gathered along ``dim`` over the groups of
``cluster_axis``, in group order, as ``ttnn.all_gather`` gathers one tensor; one program for the
whole list.  Every output holds its gathered tensor exactly but for the device's own slice,
which the op leaves unwritten as tt-metal's kernels do (ring attention reads it from its input): a
persistent output keeps its old values there, a fresh one holds zeros (:mod:`.remote_gather`).
Over a mesh split between ranks it is refused (``NotImplementedByMeshnn``).

tt-metal's checks (``ring_attention_all_gather_async_device_operation.cpp``), all before anything
is allocated: at least one input; every input TILE, on the device, of the first's dtype and
memory config, which is interleaved; ``num_links`` positive (None: 1); ``dim`` within the rank;
the persistent outputs (none, or one per input) TILE, on the device, of the inputs' dtype and of
the output memory config (``memory_config``, else the first input's), every dim but ``dim`` the
gathered shape's and ``dim`` no smaller.  An output wider along ``dim`` than the gather (which
tt-metal accepts) is refused (``NotImplementedByMeshnn``).  As the other async collectives check
them (:mod:`.async_arguments`): two semaphores, more than one device along ``cluster_axis``,
``mesh_device`` the inputs' mesh, ``topology`` Ring or Linear, ``subdevice_id``.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor`, the ops' checks and registry modules and the collectives' modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn, WrongMeshError
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.all_gather import gathered_spec
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.async_arguments import link_options, persistent, ring_size, same_mesh_device, semaphores
from meshnn.ops.ccl.remote_gather import check_local, gather_remote
from meshnn.ops.checks import device_input
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.ring_attention_all_gather_async"


@register(
    OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.ALL_GATHER,
    device_operation="RingAttentionAllGatherAsyncDeviceOperation",
)
def ring_attention_all_gather_async(
    input_tensor: Sequence[Tensor],
    persistent_output_buffer: Sequence[Tensor],
    dim: int,
    *,
    multi_device_global_semaphore: object,
    num_links: int | None = None,
    cluster_axis: int,
    mesh_device: MeshDevice,
    memory_config: MemoryConfig | None = None,
    topology: Topology,
    subdevice_id: object = None,
) -> list[Tensor]:
    """Each of ``input_tensor`` gathered along ``dim`` over ``cluster_axis`` (into its persistent
    output when given), as a list in the inputs' order."""
    tensors, mesh, axis_dim = _inputs(input_tensor, dim)
    same_mesh_device(OP, mesh_device, mesh)
    check_local(OP, mesh, tensors[0])
    if isinstance(cluster_axis, bool) or not isinstance(cluster_axis, int):
        raise MeshnnTypeError(f"ttnn.{OP}: cluster_axis must be an int (0 or 1), got {cluster_axis!r}")
    ring_size(OP, mesh, cluster_axis, tensors[0])
    sems = semaphores(OP, "multi_device_global_semaphore", multi_device_global_semaphore, mesh, 2)
    options = dict(num_links=1 if num_links is None else num_links, topology=topology, subdevice_id=subdevice_id)
    attrs = link_options(OP, mesh, options, links_required=True)
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    specs = [gathered_spec(OP, t, mesh, axis_dim, cluster_axis, memory_config) for t in tensors]
    outputs = _outputs(persistent_output_buffer, mesh, specs, axis_dim)
    attrs.update(dim=axis_dim, cluster_axis=cluster_axis, multi_device_global_semaphore=sems, inputs=len(tensors))
    return gather_remote(OP, tensors, (axis_dim, cluster_axis), specs, outputs, attrs)


def _inputs(value: object, dim: object) -> tuple[list[Tensor], MeshDevice, int]:
    """The inputs checked (a non-empty list of TILE device tensors of one mesh, one dtype and one
    interleaved memory config) with their mesh and ``dim`` made non-negative."""
    if not isinstance(value, list | tuple):
        raise MeshnnTypeError(f"ttnn.{OP}: input_tensor must be a list of ttnn.Tensor, got {type(value).__name__}")
    if not value:
        raise MeshnnValueError(f"ttnn.{OP}: Error, Input tensor size should be greater than 0 but has 0")
    first, mesh, axis_dim = checked_input(OP, value[0], dim, partial=True)  # type: ignore[arg-type]
    tensors = [first]
    for i, item in enumerate(value[1:], start=1):
        tensor = device_input(OP, f"input_tensor[{i}]", item)
        if tensor.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
            raise WrongMeshError(f"ttnn.{OP}: input_tensor[{i}] is on another mesh device than input_tensor[0]")
        if len(tensor.shape) != len(first.shape):
            raise MeshnnValueError(
                f"ttnn.{OP}: input_tensor[{i}] has rank {len(tensor.shape)}, input_tensor[0] {len(first.shape)}"
            )
        tensors.append(tensor)
    for i, tensor in enumerate(tensors):
        if tensor.layout is not Layout.TILE:
            raise MeshnnValueError(f"ttnn.{OP}: Input tensor {i} must be tiled (input_tensor[{i}] is ROW_MAJOR)")
        if tensor.dtype != first.dtype:
            raise MeshnnValueError(
                f"ttnn.{OP}: All input tensors must have the same dtype. input_tensor[{i}] has dtype {tensor.dtype} "
                f"but expected {first.dtype}"
            )
        if tensor.memory_config() != first.memory_config():
            raise MeshnnValueError(
                f"ttnn.{OP}: All input tensors must have the same memory config; input_tensor[{i}] differs"
            )
    if first.memory_config().memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(
            f"ttnn.{OP}: Unsupported memory layout {first.memory_config().memory_layout} of input_tensor "
            "(interleaved only)"
        )
    return tensors, mesh, axis_dim  # type: ignore[return-value]


def _outputs(value: object, mesh: MeshDevice, specs: list[TensorSpec], dim: int) -> list[Tensor | None]:
    """The persistent outputs checked against the gathered ``specs`` (none: fresh outputs)."""
    name = "persistent_output_buffer"
    if not isinstance(value, list | tuple):
        raise MeshnnTypeError(f"ttnn.{OP}: {name} must be a list of ttnn.Tensor (empty for none), got {value!r}")
    if not value:
        return [None] * len(specs)
    if len(value) != len(specs):
        raise MeshnnValueError(
            f"ttnn.{OP}: Number of output tensors ({len(value)}) must match number of input tensors ({len(specs)})"
        )
    checked: list[Tensor | None] = []
    for i, (item, spec) in enumerate(zip(value, specs, strict=True)):
        where = f"{name}[{i}]"
        buffer = device_input(OP, where, item)
        have, want = tuple(buffer.shape), tuple(spec.shape)
        if len(have) != len(want) or any(h != w for d, (h, w) in enumerate(zip(have, want, strict=False)) if d != dim):
            raise MeshnnValueError(
                f"ttnn.{OP}: {where} has shape {list(have)}; every dim but {dim} should be {list(want)}'s"
            )
        if have[dim] < want[dim]:
            raise MeshnnValueError(
                f"ttnn.{OP}: {where} gather dim {dim} too small: got {have[dim]}, expected >= {want[dim]} "
                "(the input's times the ring size)"
            )
        if have[dim] > want[dim]:
            raise NotImplementedByMeshnn(
                f"ttnn.{OP}: {where} wider along dim {dim} ({have[dim]}) than the gather ({want[dim]})"
            )
        checked.append(persistent(OP, where, buffer, mesh, spec))
    return checked
