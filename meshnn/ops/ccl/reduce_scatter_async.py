"""``ttnn.experimental.reduce_scatter_minimal_async``: ``ttnn.reduce_scatter``'s result (exactly),
with the fabric op's arguments: three global semaphores, an optional barrier semaphore,
``persistent_output_buffers`` ([intermediate, output]: the output written in place and returned,
the intermediate checked), ``num_links``, ``memory_config``, ``intermediate_memory_config``,
``topology`` (Ring by default), ``cluster_axis``, the chunk and worker counts, ``subdevice_id`` and
``compute_kernel_config``, checked (:mod:`.async_arguments`) and recorded.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks and
config, and the collectives' modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.async_arguments import link_options, optional_semaphore, persistent, ring_size, semaphores
from meshnn.ops.ccl.reduce_scatter import run_reduce_scatter, scattered_spec
from meshnn.ops.checks import device_input
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


@register("experimental.reduce_scatter_minimal_async", kind=OpKind.COLLECTIVE, family=OpFamily.REDUCE_SCATTER)
def reduce_scatter_minimal_async(
    input_tensor: Tensor,
    persistent_output_buffers: Sequence[Tensor] | None = None,
    dim: int | None = None,
    multi_device_global_semaphore: object = None,
    *,
    barrier_semaphore: object = None,
    num_links: int = 1,
    memory_config: MemoryConfig | None = None,
    intermediate_memory_config: MemoryConfig | None = None,
    topology: Topology = Topology.Ring,
    subdevice_id: object = None,
    cluster_axis: int | None = None,
    chunks_per_sync: int | None = None,
    num_workers_per_link: int | None = None,
    num_buffers_per_channel: int | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """``ttnn.reduce_scatter(input_tensor, dim, cluster_axis)`` with the fabric op's arguments."""
    options = dict(num_links=num_links, topology=topology, cluster_axis=cluster_axis, chunks_per_sync=chunks_per_sync)
    options.update(num_workers_per_link=num_workers_per_link, num_buffers_per_channel=num_buffers_per_channel)
    options.update(subdevice_id=subdevice_id, barrier_semaphore=barrier_semaphore)
    configs = (memory_config, intermediate_memory_config, compute_kernel_config)
    given = (input_tensor, persistent_output_buffers, dim, multi_device_global_semaphore)
    return fabric_reduce_scatter("experimental.reduce_scatter_minimal_async", given, options, configs, {})


def fabric_reduce_scatter(op: str, given: tuple, options: dict, configs: tuple, extra: dict) -> Tensor:
    """The reduce-scatter of ``given = (input_tensor, persistent_output_buffers, dim, semaphores)``
    with the fabric ops' ``options`` and ``configs = (memory_config, intermediate_memory_config,
    compute_kernel_config)`` checked, ``extra`` recorded beside them; launched as ``op``."""
    input_tensor, persistent_output_buffers, dim, multi_device_global_semaphore = given
    memory_config, intermediate_memory_config, compute_kernel_config = configs
    if dim is None:
        raise MeshnnTypeError(f"ttnn.{op}: dim must be an int, got None")
    tensor, mesh, axis_dim = checked_input(op, input_tensor, dim)
    cluster_axis = options["cluster_axis"]
    ring_size(op, mesh, cluster_axis)
    sems = semaphores(op, "multi_device_global_semaphore", multi_device_global_semaphore, mesh, 3)
    barrier = optional_semaphore(op, "barrier_semaphore", options["barrier_semaphore"], mesh)
    attrs = link_options(op, mesh, options, links_required=True)
    if len(tensor.shape) < 2:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor needs rank >= 2, got {list(tensor.shape)}")
    for name, config in (("memory_config", memory_config), ("intermediate_memory_config", intermediate_memory_config)):
        if config is not None and not isinstance(config, MemoryConfig):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.MemoryConfig, got {config!r}")
    spec = scattered_spec(op, tensor, mesh, (dim, axis_dim), cluster_axis, memory_config)
    into = _output_buffer(op, persistent_output_buffers, mesh, tensor, intermediate_memory_config, spec)
    attrs.update(dim=axis_dim, multi_device_global_semaphore=sems, barrier_semaphore=barrier, **extra)
    attrs.update(
        intermediate_memory_config=intermediate_memory_config, persistent_output_buffers=persistent_output_buffers
    )
    attrs["compute_kernel_config"] = check_compute_kernel_config(op, compute_kernel_config)
    return run_reduce_scatter(op, tensor, mesh, (axis_dim, cluster_axis), spec, attrs, into=into)


def _output_buffer(
    op: str, buffers: object, mesh: MeshDevice, tensor: Tensor, intermediate_config: object, spec: object
) -> Tensor | None:
    """The output of ``persistent_output_buffers = [intermediate, output]`` (checked), or None."""
    if buffers is None:
        return None
    if isinstance(buffers, Tensor) or not isinstance(buffers, Sequence):
        raise MeshnnTypeError(f"ttnn.{op}: persistent_output_buffers must be a list [intermediate, output] of tensors")
    items = list(buffers)
    if items:
        middle = device_input(op, "persistent_output_buffers[0]", items[0])
        if middle.layout is not tensor.layout or middle.dtype is not tensor.dtype:
            raise MeshnnValueError(
                f"ttnn.{op}: persistent_output_buffers[0] (the intermediate) must have input_tensor's layout and dtype"
            )
        if intermediate_config is not None and middle.memory_config() != intermediate_config:
            raise MeshnnValueError(
                f"ttnn.{op}: persistent_output_buffers[0]'s memory config must be intermediate_memory_config"
            )
    if len(items) < 2:
        return None
    return persistent(op, "persistent_output_buffers[1]", items[1], mesh, spec)  # type: ignore[arg-type]
