"""``ttnn.experimental.all_gather_async``: ``ttnn.all_gather``'s result (exactly), with the fabric
op's arguments: two global semaphores, an optional barrier semaphore, an optional persistent output
buffer (written in place, at its own address, and returned; one narrower along ``dim`` takes the
gather's leading part, :mod:`.narrow_gather`), ``num_links``, ``topology`` (Ring by
default), ``cluster_axis``, ``chunks_per_sync``, ``num_workers_per_link``,
``num_buffers_per_channel``, ``subdevice_id`` and the rest, checked (:mod:`.async_arguments`) and
recorded.  Its three ttnn overloads are accepted:
``(input_tensor, dim, multi_device_global_semaphore, *, ...)``,
``(input_tensor, persistent_output_buffer=None, dim, multi_device_global_semaphore, *, ...)`` and
``(input_tensor, dim, cluster_axis, mesh_device, topology, multi_device_global_semaphore, *, ...)``,
and the binding of June 2025 that tt-metal's prefill tests still call,
``(input_tensor, persistent_intermediate_buffer, persistent_output_buffer, dim,
multi_device_global_semaphore, *, ...)`` (the intermediate checked and recorded).

``ttnn.experimental.all_gather_async_reversed`` takes the same three overloads and gathers the
group's shards in reversed device order: along a group of ``n`` devices, the output's piece ``i``
of ``dim`` is the shard of the group's device ``n - 1 - i``.  tt-metal refuses it with the llama
sharded variant (``use_optimal_ccl_for_llama`` on a sharded input); so does meshnn.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks and
the collectives' modules.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.all_gather import gathered_spec, run_all_gather
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.async_arguments import (
    bind_overload,
    link_options,
    optional_semaphore,
    persistent,
    ring_size,
    same_mesh_device,
    semaphores,
)
from meshnn.ops.ccl.narrow_gather import copy_leading, narrower_buffer
from meshnn.ops.checks import device_input
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_OPTIONS = dict(
    num_links=1,
    memory_config=None,
    topology=Topology.Ring,
    subdevice_id=None,
    cluster_axis=None,
    use_optimal_ccl_for_llama=False,
    use_broadcast=False,
    barrier_semaphore=None,
    chunks_per_sync=None,
    num_workers_per_link=None,
    num_buffers_per_channel=None,
    sub_core_grids=None,
)


def _plain(input_tensor, dim, multi_device_global_semaphore, *, num_links=1, memory_config=None,
           topology=Topology.Ring, subdevice_id=None, use_optimal_ccl_for_llama=False, barrier_semaphore=None,
           sub_core_grids=None, num_workers_per_link=None, num_buffers_per_channel=None):  # fmt: skip
    """(input_tensor, dim, multi_device_global_semaphore, *, ...)"""


def _persistent(input_tensor, persistent_output_buffer=None, dim=None, multi_device_global_semaphore=None, *,
                num_links=1, memory_config=None, topology=Topology.Ring, subdevice_id=None, cluster_axis=None,
                use_optimal_ccl_for_llama=False, use_broadcast=False, barrier_semaphore=None, chunks_per_sync=None,
                num_workers_per_link=None, num_buffers_per_channel=None, sub_core_grids=None):  # fmt: skip
    """(input_tensor, persistent_output_buffer=None, dim, multi_device_global_semaphore, *, ...)"""


def _axis(input_tensor, dim, cluster_axis, mesh_device, topology, multi_device_global_semaphore, *,
          persistent_output_tensor=None, num_links=None, memory_config=None, subdevice_id=None,
          use_optimal_ccl_for_llama=False, use_broadcast=False, barrier_semaphore=None, sub_core_grids=None,
          num_workers_per_link=None, num_buffers_per_channel=None):  # fmt: skip
    """(input_tensor, dim, cluster_axis, mesh_device, topology, multi_device_global_semaphore, *, ...)"""


def _intermediate(input_tensor, persistent_intermediate_buffer, persistent_output_buffer, dim,
                  multi_device_global_semaphore, *, num_links=1, memory_config=None, topology=Topology.Ring,
                  subdevice_id=None, cluster_axis=None):  # fmt: skip
    """(input_tensor, persistent_intermediate_buffer, persistent_output_buffer, dim, multi_device_global_semaphore,
    *, ...): the binding of June 2025 (a ring's packet buffer beside the output), which tt-metal's prefill tests
    still call"""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_OVERLOADS = (
    (_plain, lambda a: _is_int(a["dim"]) and not _is_int(a["multi_device_global_semaphore"])),
    (_persistent, lambda a: _is_int(a["dim"]) and not _is_int(a["persistent_output_buffer"])),
    (_axis, lambda a: _is_int(a["dim"]) and _is_int(a["cluster_axis"])),
    (_intermediate, lambda a: _is_int(a["dim"]) and not _is_int(a["persistent_output_buffer"])),
)


@register("experimental.all_gather_async", kind=OpKind.COLLECTIVE, family=OpFamily.ALL_GATHER)
def all_gather_async(input_tensor: Tensor, *args: object, **kwargs: object) -> Tensor:
    """``ttnn.all_gather(input_tensor, dim, cluster_axis)`` with the fabric op's arguments; a
    persistent output buffer, when given, is the output (written in place and returned)."""
    op = "experimental.all_gather_async"
    tensor, mesh, axis_dim, given, options = _bound(op, input_tensor, args, kwargs)
    return gather_async(op, tensor, mesh, axis_dim, given, options)


@register("experimental.all_gather_async_reversed", kind=OpKind.COLLECTIVE, family=OpFamily.ALL_GATHER)
def all_gather_async_reversed(input_tensor: Tensor, *args: object, **kwargs: object) -> Tensor:
    """``all_gather_async`` (the same overloads and arguments) with the shards in reversed device
    order along each group: device ``n - 1 - i``'s shard is the output's piece ``i`` of ``dim``."""
    op = "experimental.all_gather_async_reversed"
    tensor, mesh, axis_dim, given, options = _bound(op, input_tensor, args, kwargs)
    if options["use_optimal_ccl_for_llama"] and tensor.spec.memory_config.is_sharded():
        raise MeshnnValueError(
            f"ttnn.{op}: use_optimal_ccl_for_llama on a sharded input selects the llama sharded variant, which "
            "has no reversed form (tt-metal: use all_gather_async there)"
        )
    return gather_async(op, tensor, mesh, axis_dim, given, options, reverse=True)


def _bound(
    op: str, input_tensor: Tensor, args: tuple[object, ...], kwargs: dict[str, object]
) -> tuple[Tensor, MeshDevice, int, dict, dict[str, object]]:
    """The call bound to one of the three overloads and checked: the input, its mesh, the gather's
    dim, the bound arguments (the persistent buffer under one name) and the options with their
    defaults (the third overload's positional topology among them)."""
    overloads = _OVERLOADS if op == "experimental.all_gather_async" else _OVERLOADS[:3]  # June 2025's: not reversed
    form, given = bind_overload(op, overloads, (input_tensor, *args), kwargs)
    options = {**_OPTIONS, **{k: v for k, v in given.items() if k in _OPTIONS}}
    if form == 2:
        options["topology"] = given["topology"]
        given["persistent_output_buffer"] = given.pop("persistent_output_tensor")
    tensor, mesh, axis_dim = checked_input(op, given["input_tensor"], given["dim"], partial=True)
    if form == 2:
        same_mesh_device(op, given["mesh_device"], mesh)
    if form == 3:
        options["persistent_intermediate_buffer"] = packet_buffer(op, given["persistent_intermediate_buffer"], tensor)
    return tensor, mesh, axis_dim, given, options


def gather_async(
    op: str,
    tensor: Tensor,
    mesh: MeshDevice,
    axis_dim: int,
    given: dict,
    options: dict[str, object],
    reverse: bool = False,
) -> Tensor:
    """The checked async gather of ``tensor`` along ``axis_dim`` (shared with all_gather_matmul_async,
    all_gather_async_reversed and the strided gathers: ``reverse`` gathers in reversed device order)."""
    cluster_axis = options["cluster_axis"]
    ring_size(op, mesh, cluster_axis, tensor)
    sems = semaphores(op, "multi_device_global_semaphore", given["multi_device_global_semaphore"], mesh, 2)
    barrier = optional_semaphore(op, "barrier_semaphore", options["barrier_semaphore"], mesh)
    attrs = link_options(op, mesh, options, links_required=False)
    if len(tensor.shape) < 2:
        raise MeshnnTypeError(f"ttnn.{op}: input_tensor needs rank >= 2, got {list(tensor.shape)}")
    broadcast = options.get("use_broadcast", False)  # 2026's gather by broadcasts: the same bytes, recorded
    if not isinstance(broadcast, bool):
        raise MeshnnTypeError(f"ttnn.{op}: use_broadcast must be a bool, got {broadcast!r}")
    memory_config = options["memory_config"]
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    # tt-metal's output is the input's LOGICAL shape times the ring along dim (its compute_output_specs
    # since 2026-01; the padded shape before): a tiled dim's padding rows are not gathered
    spec = gathered_spec(op, tensor, mesh, axis_dim, cluster_axis, memory_config)  # type: ignore[arg-type]
    buffer = given.get("persistent_output_buffer")
    narrow = None if buffer is None else narrower_buffer(op, buffer, tensor, spec, axis_dim)
    into = (
        None if buffer is None or narrow is not None else persistent(op, "persistent_output_buffer", buffer, mesh, spec)
    )
    attrs.update(dim=axis_dim, multi_device_global_semaphore=sems, barrier_semaphore=barrier)
    attrs["persistent_output_buffer"] = into or narrow
    where = (axis_dim, cluster_axis)
    out = run_all_gather(op, tensor, mesh, where, spec, attrs, into=into, reverse=reverse)  # type: ignore[arg-type]
    return out if narrow is None else copy_leading(op, out, narrow, axis_dim)


def packet_buffer(op: str, value: object, tensor: Tensor) -> Tensor:
    """The June 2025 binding's ``persistent_intermediate_buffer`` (the ring's packet staging
    buffer, of a size its kernels chose): a live device tensor of the input's mesh, as tt-metal
    checked it (its shape is the kernels' business); recorded, never written by the simulation."""
    buffer = device_input(op, "persistent_intermediate_buffer", value)
    if buffer.storage.mesh_buffer.mesh_id != tensor.storage.mesh_buffer.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{op}: persistent_intermediate_buffer is on another mesh device than input_tensor")
    return buffer
