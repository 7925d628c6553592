"""``ttnn.experimental.all_gather_concat``: the Llama-70B Galaxy decode attention's fused all-gather
of the SDPA output and ``nlp_concat_heads``.  Each device holds ``(1, 8, heads, head_dim)``: 8
users, their attention heads (the first ``num_heads`` used) and ``head_dim`` 128, height sharded
one user per core on tt-metal's 8 cores ``(1, 0)-(3, 1)`` and ``(1, 2)-(2, 2)``.  The users of the
4 devices of a group along ``cluster_axis`` are gathered in member order and each user's heads
concatenated: every device of the group gets ``(1, 1, 32, num_heads x head_dim)``, row ``8 m + b``
being user ``b`` of member ``m``, its heads side by side (heads past the input's are zero).  The
output is TILE in the input's dtype and ``memory_config`` (required).

ttnn's kernel is written for that one shape (its batch tables cover a group of 4 devices of 8
users each); its checks are made as ttnn makes them (height sharded, the 8 cores, padded shape
``[1, 8, *, 128]``), and a group of another size is refused.  ``buffer_tensor`` (the kernel's
staging buffer) is checked (a live device tensor of the mesh able to hold the gathered input) and
recorded, not written.  ``dim``, ``num_links``, ``topology``, the semaphore, ``use_noc1_only`` and
``subdevice_id`` are checked and recorded; they change no value.  The perf model times it as an
all-gather of the output's bytes.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, launch, outputs and values modules and the collectives' modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError, WrongMeshError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate, to_linear_index
from meshnn.mesh.global_semaphore import check_semaphore
from meshnn.ops.ccl.arguments import Topology, checked_input, group_grid
from meshnn.ops.ccl.async_arguments import link_options, same_mesh_device
from meshnn.ops.ccl.groups import output_topology
from meshnn.ops.ccl.ranks import gathered_over_ranks
from meshnn.ops.checks import device_input
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorMemoryLayout, TensorSpec
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementReplicate

_OP = "experimental.all_gather_concat"
_GROUP = 4
"""The devices of a group: ttnn's kernel gathers 8 users from each of 4 devices into 32 rows."""
_INPUT_CORES = CoreRangeSet([CoreRange(CoreCoord(1, 0), CoreCoord(3, 1)), CoreRange(CoreCoord(1, 2), CoreCoord(2, 2))])
"""The cores ttnn's kernel reads its input from, one user each."""


@register(_OP, kind=OpKind.COLLECTIVE, family=OpFamily.ALL_GATHER, device_operation="AllGatherConcat")
def all_gather_concat(
    input_tensor: Tensor,
    buffer_tensor: Tensor,
    dim: int,
    cluster_axis: int,
    mesh_device: object,
    multi_device_global_semaphore: object,
    num_heads: int,
    memory_config: MemoryConfig,
    *,
    use_noc1_only: bool = False,
    num_links: int = 1,
    topology: Topology = Topology.Linear,
    subdevice_id: object = None,
) -> Tensor:
    """Every device of a group gets its group's users, each user's first ``num_heads`` heads
    concatenated: ``(1, 1, 32, num_heads x head_dim)``."""
    tensor, mesh, axis_dim = checked_input(_OP, input_tensor, dim)
    same_mesh_device(_OP, mesh_device, mesh)
    if isinstance(cluster_axis, bool) or not isinstance(cluster_axis, int):
        raise MeshnnTypeError(f"ttnn.{_OP}: cluster_axis must be an int, got {cluster_axis!r}")
    shape, axis = group_grid(mesh, cluster_axis, _OP)
    if shape[axis] != _GROUP:  # type: ignore[index]
        raise MeshnnValueError(
            f"ttnn.{_OP}: the kernel gathers 8 users from each of {_GROUP} devices; cluster_axis {cluster_axis} "
            f"of the {list(shape)} mesh has {shape[axis]}"  # type: ignore[index]
        )
    if isinstance(num_heads, bool) or not isinstance(num_heads, int):
        raise MeshnnTypeError(f"ttnn.{_OP}: num_heads must be an int, got {num_heads!r}")
    if num_heads < 1:
        raise MeshnnValueError(f"ttnn.{_OP}: num_heads must be positive, got {num_heads}")
    if not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{_OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    semaphore = check_semaphore(_OP, "multi_device_global_semaphore", multi_device_global_semaphore, mesh)
    if not isinstance(use_noc1_only, bool):
        raise MeshnnTypeError(f"ttnn.{_OP}: use_noc1_only must be a bool, got {use_noc1_only!r}")
    options = dict(num_links=num_links, topology=topology, subdevice_id=subdevice_id)
    attrs = link_options(_OP, mesh, options, links_required=True)
    _check_input(tensor, mesh.compute_with_storage_grid_size())
    buffer = _check_buffer(buffer_tensor, tensor)
    padded = tuple(tensor.spec.padded_shape)
    width = num_heads * padded[3]
    spec = TensorSpec((padded[0], 1, max(padded[1], 32), width), tensor.dtype, Layout.TILE,
                      tile=tensor.spec.tile, memory_config=memory_config)  # fmt: skip
    attrs.update(dim=axis_dim, cluster_axis=cluster_axis, multi_device_global_semaphore=semaphore,
                 num_heads=num_heads, memory_config=memory_config, use_noc1_only=use_noc1_only,
                 buffer_tensor=buffer)  # fmt: skip
    return _launch(tensor, spec, (tuple(mesh.shape), axis, num_heads), attrs)  # type: ignore[arg-type]


def _check_input(tensor: Tensor, grid: CoreCoord) -> None:
    """ttnn's checks of the input: height sharded on the kernel's 8 cores, ``[1, 8, *, 128]``."""
    config = tensor.memory_config()
    if config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{_OP}: Unsupported memory layout {config.memory_layout} (HEIGHT_SHARDED only)")
    if config.shard_spec is None or set(config.shard_spec.grid.cores()) != set(_INPUT_CORES.cores()):
        raise MeshnnValueError(
            f"ttnn.{_OP}: Unsupported input core ranges: the input must be sharded on cores (1, 0)-(3, 1) and "
            "(1, 2)-(2, 2)"
        )
    if grid.x < 3 or grid.y < 3:
        raise MeshnnValueError(f"ttnn.{_OP}: Input core grid out of bound (the grid is {grid.x}x{grid.y})")
    padded = tuple(tensor.spec.padded_shape)
    if len(padded) != 4 or padded[0] != 1 or padded[1] != 8 or padded[3] != 128:
        raise MeshnnValueError(
            f"ttnn.{_OP}: Unsupported input shape {list(padded)} (padded), should be [1, 8, 32, 128] or [1, 8, 8, 128]"
        )


def _check_buffer(value: object, tensor: Tensor) -> Tensor:
    """The staging buffer: a live device tensor of the input's mesh that holds the gathered input."""
    buffer = device_input(_OP, "buffer_tensor", value)
    if buffer.storage.mesh_buffer.mesh_id != tensor.storage.mesh_buffer.mesh_id:  # type: ignore[union-attr]
        raise WrongMeshError(f"ttnn.{_OP}: buffer_tensor is on another mesh device than input_tensor")
    need = _GROUP * int(np.prod(tensor.spec.padded_shape))
    have = int(np.prod(buffer.spec.padded_shape))
    if have < need:
        raise MeshnnValueError(
            f"ttnn.{_OP}: buffer_tensor {list(buffer.spec.padded_shape)} cannot hold the gathered input "
            f"({_GROUP} x {list(tensor.spec.padded_shape)})"
        )
    return buffer


def _launch(tensor: Tensor, spec: TensorSpec, grid: tuple[tuple[int, ...], int, int], attrs: dict) -> Tensor:
    """The gather and concatenation as one program over every device."""
    mesh = tensor.device()
    shape, axis, heads = grid
    in_spec = tensor.spec
    label = f"ttnn.{_OP}"

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_spec)  # (k, 1, 8, h, d)
        if mesh.all_local:
            full = np.empty((int(np.prod(shape)), *values.shape[1:]), values.dtype)
            for index, coord in enumerate(coords):
                full[to_linear_index(mesh.shape, coord)] = values[index]
        else:
            full = gathered_over_ranks(mesh, values, coords, op=label)
        out = np.zeros((len(coords), *spec.shape), np.float32)
        for index, coord in enumerate(coords):
            for member in range(_GROUP):
                other = MeshCoordinate(*(member if i == axis else c for i, c in enumerate(coord)))
                users = full[to_linear_index(mesh.shape, other)][0, :, :heads]  # (8, <= heads, d)
                rows = users.reshape(users.shape[0], -1)
                out[index, 0, 0, member * 8 : member * 8 + 8, : rows.shape[1]] = rows
        write_values(out_rows[0], out, spec)

    output = Output(spec, topology=output_topology(tensor, axis, PlacementReplicate()))
    return launch(_OP, mesh, [tensor], [output], kernel, reads_memos=True, attrs=attrs)[0]
