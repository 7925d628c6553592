"""``ttnn.experimental.all_to_all_async_generic``: an all-to-all over the devices of a group.

Each device of a group of ``N`` (the mesh, or a row / column with ``cluster_axis``) cuts its input
into ``N`` equal chunks along ``out_dim`` and sends chunk ``i`` to member ``i``; member ``i``'s
output is the chunks it received, in member order, concatenated along ``in_dim``: the output's
``in_dim`` is ``N`` times the input's and its ``out_dim`` ``1/N`` of it.  (ttnn's docstring names
the two the other way round; its shapes and kernels are as here.)  Checked as tt-metal 2026's
device operation checks it: TILE inputs, both dims in ``[0, rank)`` (not counted from the end),
``out_dim`` divisible by ``N``, a tile row dim (``rank-2``) a multiple of 16 before and after, a tile
column dim a multiple of 32; a persistent output buffer in DRAM, TILE, of the input's dtype, the
output's memory config and shape.  ``num_links``, ``topology``, ``subdevice_id`` are checked and
recorded; the program makes its own two barrier semaphores.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' layers below
and the collectives' arguments, groups and ranks.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.arguments import Topology, checked_input, tensor_grid
from meshnn.ops.ccl.async_arguments import link_options, persistent, ring_size
from meshnn.ops.ccl.groups import from_groups, launch_grouped, to_groups
from meshnn.ops.ccl.ranks import gathered_over_ranks, local_indices
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.identity import operation_on
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.all_to_all_async_generic"
SEMAPHORES = 2
"""The global semaphores the program makes for itself (an initial and a final barrier)."""


@register(OP, kind=OpKind.COLLECTIVE, family=OpFamily.ALL_TO_ALL)
def all_to_all_async_generic(
    input_tensor: Tensor,
    in_dim: int,
    out_dim: int,
    *,
    persistent_output_buffer: Tensor | None = None,
    num_links: int | None = None,
    memory_config: MemoryConfig | None = None,
    topology: Topology | None = None,
    subdevice_id: object = None,
    cluster_axis: int | None = None,
) -> Tensor:
    """Member ``i`` of each group gets chunk ``i`` (along ``out_dim``) of every member's input,
    concatenated along ``in_dim`` in member order (written into ``persistent_output_buffer`` when given)."""
    tensor, mesh, _ = checked_input(OP, input_tensor, None, partial=True)
    n = ring_size(OP, mesh, cluster_axis, tensor)
    dims = _dims(tensor, in_dim, out_dim)
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{OP}: Unsupported input layout {tensor.layout}.")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    options = {"num_links": num_links, "topology": topology, "subdevice_id": subdevice_id, "cluster_axis": cluster_axis}
    attrs = link_options(OP, mesh, options, links_required=False)
    spec = _output_spec(tensor, dims, n, memory_config)
    into = None
    if persistent_output_buffer is not None:
        into = persistent(OP, "persistent_output_buffer", persistent_output_buffer, mesh, spec)
        if into.memory_config().buffer_type is not BufferType.DRAM:
            raise MeshnnValueError(
                f"ttnn.{OP}: Output tensor for all_to_all_async must be in DRAM, but is in "
                f"{into.memory_config().buffer_type}"
            )
    attrs.update(in_dim=dims[0], out_dim=dims[1], memory_config=spec.memory_config)
    return _run(tensor, mesh, dims, spec, attrs, into)


def _dims(tensor: Tensor, in_dim: object, out_dim: object) -> tuple[int, int]:
    rank = len(tensor.shape)
    for name, value in (("in_dim", in_dim), ("out_dim", out_dim)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise MeshnnTypeError(f"ttnn.{OP}: {name} must be an int, got {value!r}")
        if not 0 <= value < rank:
            raise MeshnnValueError(f"ttnn.{OP}: {name} out of range ({value} for a rank-{rank} input)")
    return int(in_dim), int(out_dim)  # type: ignore[arg-type]


def _output_spec(tensor: Tensor, dims: tuple[int, int], n: int, memory_config: object) -> TensorSpec:
    """The output's spec, after tt-metal's shape checks (divisibility and the tile dims' padding)."""
    in_dim, out_dim = dims
    shape = list(tensor.shape)
    if shape[out_dim] % n:
        raise MeshnnValueError(
            f"ttnn.{OP}: AllToAllAsync: input tensor dimension {shape[out_dim]} must be divisible by num_devices {n}"
        )
    out = list(shape)
    out[in_dim] *= n
    out[out_dim] //= n
    rank = len(shape)
    for dim, sizes, which in ((in_dim, shape, "Input"), (out_dim, out, "Output")):
        step = 16 if dim == rank - 2 else 32 if dim == rank - 1 else 1
        if sizes[dim] % step:
            raise MeshnnValueError(
                f"ttnn.{OP}: {dim} dimension must be divisible by {step}: {which} tensor shape {sizes} has "
                f"{sizes[dim] % 32} padding"
            )
    return out_spec_like(tensor, shape=tuple(out), memory_config=memory_config, op=OP)


def _run(
    tensor: Tensor,
    mesh: MeshDevice,
    dims: tuple[int, int],
    spec: TensorSpec,
    attrs: dict[str, object],
    into: Tensor | None,
) -> Tensor:
    shape, axis = tensor_grid(OP, tensor, mesh, attrs["cluster_axis"])  # type: ignore[arg-type]
    in_spec = tensor.spec  # the kernel holds specs, never the tensor (a trace must not keep it)
    label = operation_on(f"ttnn.{OP}", tensor)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_spec, as_float=False)
        if not mesh.all_local:
            values = gathered_over_ranks(mesh, values, coords, op=label)
        result = from_groups(exchanged(to_groups(values, shape, axis), dims), shape, axis)
        if not mesh.all_local:
            result = result[local_indices(mesh, coords)]
        write_values(out_rows[0], np.ascontiguousarray(result), spec, exact=True)

    result, repeat = (spec, axis, None), (OP, in_spec, spec, shape, axis, dims)
    return launch_grouped(OP, mesh, tensor, result, kernel, attrs, into=into, repeat=repeat, semaphores=SEMAPHORES)


def exchanged(grouped: np.ndarray, dims: tuple[int, int]) -> np.ndarray:
    """``(groups, members, *shape)`` values after the all-to-all: member ``i``'s result is chunk
    ``i`` along ``out_dim`` of each member's values, concatenated along ``in_dim`` in member order."""
    in_dim, out_dim = dims[0] + 1, dims[1] + 1  # (the members' axis is gone in a member's values)
    n = grouped.shape[1]
    chunks = [np.split(grouped[:, j], n, axis=out_dim) for j in range(n)]  # [source][destination]
    return np.stack([np.concatenate([chunks[j][i] for j in range(n)], axis=in_dim) for i in range(n)], axis=1)
