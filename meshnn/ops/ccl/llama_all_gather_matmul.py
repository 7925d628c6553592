"""``ttnn.experimental.llama_all_gather_matmul_async``: the Llama-70B Galaxy decode step's fused
all-gather + matmul (its FF2 and the like).  ``input_tensor0`` is gathered along ``dim`` over the
devices of ``cluster_axis`` into ``intermediate_tensor`` (the caller's buffer, written in place at
its own address: it must hold the gathered shape, dtype and layout), and the gathered rows are
multiplied by ``input_tensor1``: the result is exactly ``ttnn.matmul(gathered, input_tensor1)``
with the op's ``mm_memory_config`` (default: input_tensor0's), ``dtype`` (default: input_tensor0's)
and ``compute_kernel_config``, and it is the one tensor returned, as ttnn returns it (ttnn frees its
internal replicated copy of the gathered rows before returning).

ttnn's binding: ``(input_tensor0, input_tensor1, intermediate_tensor, dim, cluster_axis,
mesh_device, topology, multi_device_global_semaphore, *, num_links=None, ag_memory_config=None,
mm_memory_config=None, subdevice_id=None, program_config=None, compute_kernel_config=None,
dtype=None, global_cb=None)``; one global semaphore; ``num_links`` (default 1) at most the compute
grid's rows.  ``program_config`` (a matmul program config; a ``fused_activation`` in it is refused)
and ``global_cb`` place the product's work: ttnn's fused op builds its matmul from them without
the matmul's own validation (its gather_in0 ring config with no global CB is valid here), so they
are checked for their type, recorded, and change no value.  ``ag_memory_config``, when given, must
be the intermediate's memory config (the gather writes there).  Every argument is checked before
the gather runs; the links, semaphore, sub-device and configs are recorded.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks, matmul
and config modules, and the collectives' modules.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.global_circular_buffer import check_global_cb
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.all_gather import gathered_spec, run_all_gather
from meshnn.ops.ccl.arguments import Topology, checked_input, group_grid
from meshnn.ops.ccl.async_arguments import link_options, persistent, ring_size, same_mesh_device, semaphores
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.matmul import matmul
from meshnn.ops.matmul_config import check_matmul_program_config
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_OP = "experimental.llama_all_gather_matmul_async"


@register(
    _OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.COPY,
    device_operation="LlamaAllGatherMatmulAsyncDeviceOperation",
    modelled=False,
)
def llama_all_gather_matmul_async(
    input_tensor0: Tensor,
    input_tensor1: Tensor,
    intermediate_tensor: Tensor,
    dim: int,
    cluster_axis: int,
    mesh_device: MeshDevice,
    topology: Topology,
    multi_device_global_semaphore: object,
    *,
    num_links: int | None = None,
    ag_memory_config: MemoryConfig | None = None,
    mm_memory_config: MemoryConfig | None = None,
    subdevice_id: object = None,
    program_config: object = None,
    compute_kernel_config: object = None,
    dtype: object = None,
    global_cb: object = None,
) -> Tensor:
    """``matmul(all_gather(input_tensor0, dim, cluster_axis), input_tensor1)``, the gather written
    into ``intermediate_tensor``."""
    tensor, mesh, axis_dim = checked_input(_OP, input_tensor0, dim)
    weight = device_input(_OP, "input_tensor1", input_tensor1)
    middle = device_input(_OP, "intermediate_tensor", intermediate_tensor)
    same_mesh(_OP, {"input_tensor0": tensor, "input_tensor1": weight, "intermediate_tensor": middle})
    same_mesh_device(_OP, mesh_device, mesh)
    if isinstance(cluster_axis, bool) or not isinstance(cluster_axis, int):
        raise MeshnnTypeError(f"ttnn.{_OP}: cluster_axis must be an int, got {cluster_axis!r}")
    group_grid(mesh, cluster_axis, _OP)
    if not isinstance(topology, Topology):
        raise MeshnnTypeError(f"ttnn.{_OP}: topology must be a ttnn.Topology, got {topology!r}")
    ring_size(_OP, mesh, cluster_axis)
    (sem,) = semaphores(_OP, "multi_device_global_semaphore", multi_device_global_semaphore, mesh, 1)
    options = dict(num_links=1 if num_links is None else num_links, topology=topology, subdevice_id=subdevice_id)
    attrs = link_options(_OP, mesh, options, links_required=True)
    configs = (ag_memory_config, mm_memory_config, dtype)
    spec, into = _gather_target(tensor, weight, middle, configs, (axis_dim, cluster_axis))
    config = check_matmul_program_config(_OP, program_config)
    if getattr(config, "fused_activation", None) is not None:
        raise MeshnnValueError(f"ttnn.{_OP}: program_config.fused_activation is not supported by meshnn's fused op")
    check_compute_kernel_config(_OP, compute_kernel_config)
    cb = None if global_cb is None else check_global_cb(_OP, global_cb, mesh)
    attrs.update(dim=axis_dim, cluster_axis=cluster_axis, multi_device_global_semaphore=(sem,))
    attrs.update(program_config=config, global_cb=cb)
    attrs["persistent_output_buffer"] = into
    gathered = run_all_gather(_OP, tensor, mesh, (axis_dim, cluster_axis), spec, attrs, into=into)
    # the program config and global CB place the product's work (recorded above): ttnn's fused op builds its
    # matmul from them without the matmul's own validation, so they are not the matmul's arguments here
    with mesh.parts_of_one_program():  # ttnn runs the gather and the product as one program
        return matmul(
            gathered,
            weight,
            memory_config=mm_memory_config or tensor.spec.memory_config,
            dtype=tensor.dtype if dtype is None else dtype,
            compute_kernel_config=compute_kernel_config,
        )


def _gather_target(
    tensor: Tensor, weight: Tensor, middle: Tensor, configs: tuple[object, object, object], where: tuple[int, int]
) -> tuple[TensorSpec, Tensor]:
    """The gathered spec (in ``middle``'s memory config) and ``middle`` checked to hold it; the
    gathered rows checked to multiply ``weight``; ``configs``: the two memory configs and the
    product's dtype, checked for their types."""
    ag_memory_config, mm_config, dtype = configs
    mesh = tensor.device()
    for name, value in (("ag_memory_config", ag_memory_config), ("mm_memory_config", mm_config)):
        if value is not None and not isinstance(value, MemoryConfig):
            raise MeshnnTypeError(f"ttnn.{_OP}: {name} must be a ttnn.MemoryConfig, got {value!r}")
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{_OP}: dtype must be a ttnn.DataType, got {dtype!r}")
    if ag_memory_config is not None and ag_memory_config != middle.spec.memory_config:
        raise MeshnnValueError(
            f"ttnn.{_OP}: ag_memory_config {ag_memory_config} is not intermediate_tensor's memory config "
            f"{middle.spec.memory_config}; the gather writes into intermediate_tensor"
        )
    spec = gathered_spec(_OP, tensor, mesh, where[0], where[1], middle.spec.memory_config)
    into = persistent(_OP, "intermediate_tensor", middle, mesh, spec)
    if spec.shape[-1] != weight.shape[-2]:
        raise MeshnnValueError(
            f"ttnn.{_OP}: the gathered input {list(spec.shape)} and input_tensor1 {list(weight.shape)} do not "
            "multiply (their inner dimensions differ)"
        )
    return spec, into
