"""``ttnn.mesh_partition``: all_gather's inverse, with no traffic: the device at index ``i`` of
its group keeps part ``i`` of ``N`` equal parts of its own shard along ``dim``.

``N`` is the mesh's extent along ``cluster_axis`` (rows for 0, columns for 1; every device of the
mesh with None, then ``i`` is the device's row-major index), read from the mesh, as tt-metal's
``get_cluster_axis_size`` reads its view; a group of one returns the input itself.  Checked as
tt-metal checks it: ``cluster_axis`` None, 0 or 1; ``dim`` in range (counted from the end when
negative); ``N`` divides the input's ``dim``; a TILE input's part along a tile dim is whole tiles.
The output keeps the input's dtype and layout, in ``memory_config`` (the input's by default).  On a
device it is a slice program per device (``MeshPartitionDeviceOperation``; timed as a slice).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks,
launch, outputs and values.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "mesh_partition"


@register(kind=OpKind.COLLECTIVE, family=OpFamily.SLICE, device_operation="MeshPartitionDeviceOperation")
def mesh_partition(
    input_tensor: Tensor, dim: int, cluster_axis: int | None = None, *, memory_config: MemoryConfig | None = None
) -> Tensor:
    """Each device keeps part ``i`` of ``N`` of its shard along ``dim`` (``i``: its index along
    ``cluster_axis``, ``N`` the mesh's extent there; the whole mesh, row-major, for None)."""
    tensor = device_input(OP, "input_tensor", input_tensor)
    mesh = same_mesh(OP, {"input_tensor": tensor})
    if cluster_axis is not None and (isinstance(cluster_axis, bool) or not isinstance(cluster_axis, int)):
        raise MeshnnTypeError(f"ttnn.{OP}: cluster_axis must be an int or None, got {cluster_axis!r}")
    if cluster_axis is not None and cluster_axis not in (0, 1):
        raise MeshnnValueError(f"ttnn.{OP}: Only support cluster axis of None, 0 or 1 (got {cluster_axis})")
    rank = len(tensor.shape)
    d = int_arg(OP, "dim", dim)
    d = d + rank if d < 0 else d
    if not 0 <= d < rank:
        raise MeshnnValueError(f"ttnn.{OP}: dim must be less than the rank of the input tensor ({dim} for rank {rank})")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    shape = tuple(mesh.shape)
    n = int(np.prod(shape)) if cluster_axis is None else shape[cluster_axis]
    if n == 1:
        return tensor
    size = tensor.shape[d]
    if size % n:
        raise MeshnnValueError(
            f"ttnn.{OP}: input shape {list(tensor.shape)} must be divisible by cluster axis size {n} (dim {d})"
        )
    tile = tensor.spec.tile.tile_shape[d - rank + 2] if tensor.layout is Layout.TILE and d >= rank - 2 else 1
    if (size // n) % tile:
        raise MeshnnValueError(
            f"ttnn.{OP}: for tiled inputs, partitioning along dim {d} should not create padding ({size // n} "
            f"is not whole {tile}-wide tiles)"
        )
    out_shape = tuple(size // n if i == d else s for i, s in enumerate(tensor.shape))
    spec = out_spec_like(tensor, shape=out_shape, memory_config=memory_config, op=OP)
    in_spec, width = tensor.spec, size // n

    def index(coord: MeshCoordinate) -> int:
        c = tuple(coord)
        return int(np.ravel_multi_index(c, shape)) if cluster_axis is None else c[cluster_axis]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], in_spec, as_float=False)
        starts = [index(c) * width for c in coords]
        parts = [np.take(values[k], np.arange(s, s + width), axis=d) for k, s in enumerate(starts)]
        write_values(out_rows[0], np.stack(parts), spec, exact=True)

    attrs = {"dim": d, "cluster_axis": cluster_axis, "memory_config": spec.memory_config}
    out = Output(spec, topology=tensor.tensor_topology())
    (made,) = launch(OP, mesh, [tensor], [out], kernel, reads_memos=True, attrs=attrs)
    return made
