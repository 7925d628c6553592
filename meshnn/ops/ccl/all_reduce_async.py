"""``ttnn.experimental.all_reduce_async``: ``ttnn.all_reduce``'s result (exactly: the sum over the
group), with the fabric op's arguments in any of ttnn's three forms:
``(input_tensor, num_devices, barrier_semaphores, rs_global_semaphores, ag_global_semaphores,
math_op, *, ...)`` (the whole mesh), ``(input_tensor, cluster_axis=None, mesh_device,
barrier_semaphores=None, rs_global_semaphores=None, ag_global_semaphores=None, math_op, *, ...)``
and the Llama form ``(input_tensor, buffer_tensor, cluster_axis, mesh_device,
multi_device_global_semaphore, *, dtype=None, ...)`` whose ``buffer_tensor`` is the op's own
scratch (checked, left as it is).  ``math_op`` must be ``ttnn.ReduceType.Sum``; topology defaults
to Linear.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks and
outputs, and the collectives' modules.
"""

from __future__ import annotations

from meshnn.errors import MeshnnValueError, WrongMeshError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.all_reduce import run_all_reduce
from meshnn.ops.ccl.arguments import ReduceType, Topology, checked_input
from meshnn.ops.ccl.async_arguments import (
    bind_overload,
    link_options,
    ring_size,
    same_mesh_device,
    semaphores,
)
from meshnn.ops.checks import device_input
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor

_UNSET = object()


def _whole_mesh(input_tensor, num_devices, barrier_semaphores, rs_global_semaphores, ag_global_semaphores, math_op,
                *, memory_config=None, topology=Topology.Linear, num_links=None, subdevice_id=None):  # fmt: skip
    """(input_tensor, num_devices, barrier_semaphores, rs_global_semaphores, ag_global_semaphores, math_op, *, ...)"""


def _axis(input_tensor, cluster_axis=None, mesh_device=_UNSET, barrier_semaphores=None, rs_global_semaphores=None,
          ag_global_semaphores=None, math_op=_UNSET, *, memory_config=None, topology=Topology.Linear, num_links=None,
          subdevice_id=None):  # fmt: skip
    """(input_tensor, cluster_axis=None, mesh_device, barrier_semaphores=None, ..., math_op, *, ...)"""


def _buffered(input_tensor, buffer_tensor, cluster_axis, mesh_device, multi_device_global_semaphore, *, dtype=None,
              memory_config=None, topology=Topology.Linear, num_links=None, subdevice_id=None, use_noc1_only=False,
              use_optimal_ccl_for_llama=False):  # fmt: skip
    """(input_tensor, buffer_tensor, cluster_axis, mesh_device, multi_device_global_semaphore, *, ...)"""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_OVERLOADS = (
    (_whole_mesh, lambda a: _is_int(a["num_devices"])),
    (_axis, lambda a: a["mesh_device"] is not _UNSET and a["math_op"] is not _UNSET),
    (_buffered, lambda a: isinstance(a["buffer_tensor"], Tensor)),
)


@register("experimental.all_reduce_async", kind=OpKind.COLLECTIVE, family=OpFamily.ALL_REDUCE)
def all_reduce_async(input_tensor: Tensor, *args: object, **kwargs: object) -> Tensor:
    """The sum of the group's shards on every device of the group, with the fabric op's arguments."""
    op = "experimental.all_reduce_async"
    form, given = bind_overload(op, _OVERLOADS, (input_tensor, *args), kwargs)
    tensor, mesh, _ = checked_input(op, given["input_tensor"], None, partial=True)
    cluster_axis = given.get("cluster_axis")
    populated = len(tensor.storage.coords)  # type: ignore[union-attr]
    if form == 0 and given["num_devices"] != populated:
        raise MeshnnValueError(
            f"ttnn.{op}: num_devices {given['num_devices']} is not the {populated} devices input_tensor populates "
            f"(of the mesh's {mesh.get_num_devices()})"
        )
    if form > 0:
        same_mesh_device(op, given["mesh_device"], mesh)
    ring_size(op, mesh, cluster_axis, tensor)
    attrs = link_options(
        op, mesh, {k: given[k] for k in ("num_links", "topology", "subdevice_id")}, links_required=False
    )
    attrs.update(_semaphores(op, form, given, mesh))
    if form < 2 and given["math_op"] is not ReduceType.Sum:
        raise MeshnnValueError(f"ttnn.{op}: math_op must be ttnn.ReduceType.Sum, got {given['math_op']!r}")
    if form == 2:
        buffer = device_input(op, "buffer_tensor", given["buffer_tensor"])
        if buffer.storage.mesh_buffer.mesh_id != mesh.mesh_id:  # type: ignore[union-attr]
            raise WrongMeshError(f"ttnn.{op}: buffer_tensor is on another mesh device than input_tensor")
        attrs["buffer_tensor"] = buffer
    spec = out_spec_like(tensor, dtype=given.get("dtype"), memory_config=given["memory_config"], op=op)
    attrs.update(cluster_axis=cluster_axis, subdevice_id=given["subdevice_id"])
    return run_all_reduce(op, tensor, mesh, cluster_axis, spec, attrs)


def _semaphores(op: str, form: int, given: dict, mesh: MeshDevice) -> dict[str, object]:
    if form == 2:
        return {"multi_device_global_semaphore": semaphores(op, "multi_device_global_semaphore", given[
            "multi_device_global_semaphore"], mesh, 1)}  # fmt: skip
    names = ("barrier_semaphores", "rs_global_semaphores", "ag_global_semaphores")
    return {name: semaphores(op, name, given[name], mesh, None) for name in names if given[name] is not None}
