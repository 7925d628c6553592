"""``ttnn.all_reduce``: every device of a group gets the sum of the group's shards (float32, or
the integer type), the members added in member order (the same bits in one process and on any
number of ranks).  Across ranks the sum runs element-wise in storage order, tile padding and
all, each rank handing on one running sum per group.

May import: :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch, outputs, memo and values
modules and the collectives' arguments, groups and ranks.
"""

from __future__ import annotations

import numpy as np

from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.ccl.arguments import FABRIC_KEYWORDS, Topology, check_options, checked_input, group_grid, tensor_grid
from meshnn.ops.ccl.groups import from_groups, output_topology, summed_in_order, to_groups
from meshnn.ops.ccl.ranks import summed_over_ranks
from meshnn.ops.config import COMPUTE_KERNEL_CONFIG
from meshnn.ops.launch import launch
from meshnn.ops.memo import settled
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, store_elements, stored_elements, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.identity import operation_on
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate


@register(kind=OpKind.COLLECTIVE, family=OpFamily.ALL_REDUCE)
@ttnn_keywords(**FABRIC_KEYWORDS, compute_kernel_config=COMPUTE_KERNEL_CONFIG)
def all_reduce(
    input_tensor: Tensor,
    cluster_axis: int | None = None,
    mesh_device: MeshDevice | None = None,
    *,
    num_links: int | None = None,
    topology: Topology | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """Every device of a group gets the sum of the group's shards."""
    tensor, mesh, _ = checked_input("all_reduce", input_tensor, None)
    check_options("all_reduce", mesh, mesh_device, num_links, topology, memory_config)
    group_grid(mesh, cluster_axis, "all_reduce")
    spec = out_spec_like(tensor, memory_config=memory_config, op="all_reduce")
    attrs = {"cluster_axis": cluster_axis, "num_links": num_links, "topology": topology}
    return run_all_reduce("all_reduce", tensor, mesh, cluster_axis, spec, attrs)


def run_all_reduce(
    op: str, tensor: Tensor, mesh: MeshDevice, cluster_axis: int | None, spec: TensorSpec, attrs: dict[str, object]
) -> Tensor:
    """Launch the all-reduce of ``tensor`` over the groups of ``cluster_axis`` into an output of ``spec``
    (of the devices ``tensor`` populates: :func:`~meshnn.ops.ccl.arguments.tensor_grid`)."""
    shape, axis = tensor_grid(op, tensor, mesh, cluster_axis)
    label = operation_on(f"ttnn.{op}", tensor)  # what the ranks compare before they exchange
    in_spec = tensor.spec  # the kernel holds specs, never the tensor: a trace must not keep the input allocated

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        if not mesh.all_local:  # element-wise: summed in storage order, tile padding and all
            rows, out_row = settled(in_rows[0]), out_rows[0]
            elements = stored_elements(rows, in_spec)
            direct = (spec.dtype is DataType.FLOAT32 or spec.dtype.is_integer) and rows.shape == out_row.shape
            target = out_row.view(elements.dtype) if direct else None
            totals, members = summed_over_ranks(mesh, elements, coords, shape, axis, out=target, op=label)
            if totals is not target:
                store_elements(totals[[group for group, _ in members]], spec, out_row[:, : rows.shape[1]])
            return
        grouped = to_groups(logical_values(in_rows[0], in_spec), shape, axis)
        total = summed_in_order(grouped, keepdims=True)
        if total.shape[0] == 1:  # one group: every device gets the one sum (written once, to each)
            write_values(out_rows[0], total[0], spec)
            return
        result = from_groups(np.broadcast_to(total, grouped.shape), shape, axis)
        write_values(out_rows[0], np.ascontiguousarray(result), spec)

    out = Output(spec, topology=output_topology(tensor, axis, PlacementReplicate()))
    attrs["memory_config"] = spec.memory_config
    return launch(op, mesh, [tensor], [out], kernel, reads_memos=True, attrs=attrs)[0]
