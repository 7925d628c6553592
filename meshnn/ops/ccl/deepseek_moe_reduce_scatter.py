"""``ttnn.experimental.deepseek_moe_reduce_scatter``: DeepSeek-V3's MoE reduce-scatter over a ring of 8.

Its input is one logical tensor per device handed over as the 8 pieces of its last dim (what
``deepseek_moe_fast_reduce_nc`` returns): ``input_tensors[i]`` is columns ``i`` of
``concat(input_tensors, -1)``.  The ring's 8 devices sum that tensor and member ``m`` keeps slice
``m``: its output is ``input_tensors[m]`` summed over the ring's devices (in member order, as
:func:`~meshnn.ops.ccl.reduce_scatter.reduce_scatter` sums), one piece's shape, in
``output_memory_config``.

tt-metal's checks, with its words: 8 input tensors alike (dtype, layout, shape, memory config, N-D
shard spec), in L1, TILE, elements of at most 2 bytes, rank 2 or more whose upper dims make one tile
row (32), N-D sharded in shards of an even number of tiles, at most two shards a link; 8 devices on
the cluster axis; ``dim`` the last; a Ring topology.  As tt-metal's program does, it allocates eight
intermediate tensors of the input's spec (freed when it returns) before its output, so addresses
and peak memory are the hardware's.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' launch,
outputs, registry and values modules and the collectives' arguments and groups.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.ccl.arguments import Topology, group_grid
from meshnn.ops.ccl.groups import from_groups, group_size, summed_in_order, to_groups
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.deepseek_moe_reduce_scatter"
RING = 8
"""The ring size tt-metal's program is written for: 8 input tensors, 8 devices on the axis."""

_NARROW = (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.BFLOAT4_B, DataType.UINT16, DataType.UINT8)
"""Dtypes of at most 2 bytes an element (the program writes with scatter writes of such elements)."""


@register(
    OP,
    kind=OpKind.COLLECTIVE,
    family=OpFamily.REDUCE_SCATTER,
    device_operation="DeepseekMoEReduceScatterDeviceOperation",
)
def deepseek_moe_reduce_scatter(
    input_tensors: Sequence[Tensor],
    output_memory_config: MemoryConfig,
    dim: int,
    *,
    num_links: int | None = None,
    topology: Topology | None = Topology.Ring,
    cluster_axis: int | None = None,
) -> Tensor:
    """The 8 pieces of each device's tensor summed over the ring; member ``m`` keeps piece ``m``
    (see the module docstring)."""
    tensors = _inputs(input_tensors)
    mesh = same_mesh(OP, {f"input_tensors[{i}]": t for i, t in enumerate(tensors)})
    first = tensors[0]
    rank = len(first.shape)
    axis_dim = dim + rank if isinstance(dim, int) and not isinstance(dim, bool) and dim < 0 else dim
    if not isinstance(output_memory_config, MemoryConfig):
        raise MeshnnTypeError(
            f"ttnn.{OP}: output_memory_config must be a ttnn.MemoryConfig, got {output_memory_config!r}"
        )
    if topology is not None and topology is not Topology.Ring:
        raise MeshnnValueError(
            f"ttnn.{OP}: deepseek_moe_reduce_scatter is hardcoded for Topology.Ring, but has usable topology {topology}"
        )
    links = _links(num_links)
    _check_pieces(tensors, links)
    shape, axis = group_grid(mesh, cluster_axis, OP)
    if group_size(shape, axis) != RING:
        raise MeshnnValueError(
            f"ttnn.{OP}: deepseek_moe_reduce_scatter is hardcoded for 8 devices, but has {group_size(shape, axis)} "
            f"(cluster_axis {cluster_axis} of the {list(mesh.shape)} mesh)"
        )
    if axis_dim != rank - 1:
        raise MeshnnValueError(f"ttnn.{OP}: only supports scattering on the last dim, but has dim {dim}")
    inner = first.spec
    out = out_spec_like(first, memory_config=output_memory_config, op=OP)
    kernel = _kernel(inner, out, shape, axis)
    attrs = {"dim": dim, "num_links": links, "topology": Topology.Ring, "cluster_axis": cluster_axis}
    attrs["memory_config"] = output_memory_config
    made = launch(OP, mesh, tensors, [*(Output(inner) for _ in range(RING)), Output(out)], kernel, attrs=attrs)
    return made[RING]  # (the intermediates go when they are dropped here, as tt-metal's wrapper drops them)


def _inputs(input_tensors: object) -> list[Tensor]:
    """The 8 device tensors of ``input_tensors`` (a list or tuple of ttnn.Tensor)."""
    if not isinstance(input_tensors, list | tuple) or not all(isinstance(t, Tensor) for t in input_tensors):
        raise MeshnnTypeError(f"ttnn.{OP}: input_tensors must be a list of ttnn.Tensor, got {input_tensors!r}")
    if len(input_tensors) != RING:
        raise MeshnnValueError(f"ttnn.{OP}: requires 8 input tensors, but has {len(input_tensors)}")
    return [device_input(OP, f"input_tensors[{i}]", t) for i, t in enumerate(input_tensors)]


def _links(num_links: object) -> int:
    """``num_links`` (None: 1, the links tt-metal's default finds on a T3000's or Galaxy's ring row)."""
    if num_links is None:
        return 1
    if isinstance(num_links, bool) or not isinstance(num_links, int) or num_links < 1:
        raise MeshnnValueError(f"ttnn.{OP}: num_links must be a positive int, got {num_links!r}")
    return num_links


def _check_pieces(tensors: list[Tensor], links: int) -> None:
    """tt-metal's checks of the input pieces (see the module docstring)."""
    first = tensors[0]
    spec, memory = first.spec, first.memory_config()
    if memory.buffer_type is not BufferType.L1:
        raise MeshnnValueError(f"ttnn.{OP}: requires input tensors allocated in L1, got {memory.buffer_type}")
    if first.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{OP}: requires tiled input tensors, got {first.layout}")
    if first.dtype not in _NARROW:
        raise MeshnnValueError(
            f"ttnn.{OP}: requires element size <= 2 bytes for scatter_write usage, got {first.dtype}"
        )
    padded = tuple(spec.padded_shape)
    if len(padded) < 2:
        raise MeshnnValueError(f"ttnn.{OP}: requires input tensor must have rank at least 2, but has {len(padded)}")
    upper = int(np.prod(padded[:-1]))
    if upper != 32:
        raise MeshnnValueError(
            f"ttnn.{OP}: requires the collapsed upper dims to be the height of a single tile, but has {upper}"
        )
    nd = memory.nd_shard_spec
    if nd is None:
        raise MeshnnValueError(f"ttnn.{OP}: requires nd sharded input tensors, got {memory}")
    pages = int(np.prod(tuple(nd.shard_shape))) // 1024
    shards = int(np.prod(padded)) // (1024 * max(pages, 1))
    if pages % 2:
        raise MeshnnValueError(f"ttnn.{OP}: requires shards have an even number pages, got {pages}")
    if shards > 2 * links:
        raise MeshnnValueError(
            f"ttnn.{OP}: requires number of shards per input tensor ({shards}) is <= num_directions_per_link (2) * "
            f"num_links ({links})"
        )
    for i, t in enumerate(tensors[1:], 1):
        if t.spec != spec:
            raise MeshnnValueError(
                f"ttnn.{OP}: requires all input tensors have the same tensor spec: input_tensors[{i}] is "
                f"{list(t.shape)} {t.dtype} {t.memory_config()}, input_tensors[0] {list(first.shape)} {first.dtype} "
                f"{memory}"
            )


def _kernel(inner: TensorSpec, out: TensorSpec, shape: tuple[int, ...], axis: int | None):
    """Every device's output: its member's piece summed over the ring (the intermediates, freed as
    the op returns and read by nothing, are left unwritten)."""

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        pieces = []
        for i in range(RING):
            pieces.append(summed_in_order(to_groups(logical_values(in_rows[i], inner), shape, axis)))  # (groups, *t)
        result = from_groups(np.stack(pieces, axis=1), shape, axis)  # member m: piece m
        write_values(out_rows[RING], np.ascontiguousarray(result), out)

    return kernel
