"""``ttnn.moe_routing_remap``: a token's routing weights over all experts, ``[1, E]`` ROW_MAJOR and
the same on every device, cut into the share of its non-zero weights each device of a cluster
line takes (gpt-oss's low-latency experts on a mesh of several rows).

The ``non_zero_weight_size`` non-zero weights are split in expert order into
``expert_parallel_size`` runs of ``n = non_zero_weight_size // expert_parallel_size``; the device at
coordinate ``c`` along ``cluster_axis`` keeps run ``c`` (the weights of rank ``c * n .. c * n + n
- 1`` among the non-zero ones) and zeros everywhere else.  "Non-zero" is the element's bits, as
tt-metal's reader compares them (a ``-0.0`` counts).  The output has the input's spec (its memory
config unless ``memory_config`` says otherwise); a preallocated ``optional_output_tensor`` of that
spec is written in place.

ttnn's checks: ROW_MAJOR ``[1, E]``, ``non_zero_weight_size <= E``, ``E`` a multiple of
``expert_parallel_size``, ``cluster_axis`` 0 or 1.  (tt-metal's check that the parallel size is the
cluster line's length is always true as written, an operator-precedence slip; meshnn does not
add it.)

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' checks, launch, outputs and registry.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, output_into
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def remap_weights(bits: np.ndarray, offset: int, count: int) -> np.ndarray:
    """``bits`` (E,) unsigned element patterns with only the ``count`` non-zero ones from rank
    ``offset`` kept (in expert order); the rest zero."""
    ranks = np.cumsum(bits != 0) - 1
    keep = (bits != 0) & (ranks >= offset) & (ranks < offset + count)
    return np.where(keep, bits, 0).astype(bits.dtype)


def _checks(op: str, weights: Tensor, nonzero: int, parallel: int, axis: int) -> None:
    if weights.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: input tensor expected to be row major")
    if len(weights.shape) != 2 or weights.shape[0] != 1:
        raise MeshnnValueError(f"ttnn.{op}: expected input shape [1,E], got {list(weights.shape)}")
    if weights.dtype.is_block_float:
        raise MeshnnValueError(f"ttnn.{op}: routing weights need an element size, got {weights.dtype}")
    if not 0 < nonzero <= weights.shape[1]:
        raise MeshnnValueError(
            f"ttnn.{op}: Number of non Zero weights must be less than or equal to weights ({nonzero}, "
            f"{weights.shape[1]})"
        )
    if parallel < 1 or weights.shape[1] % parallel:
        raise MeshnnValueError(
            f"ttnn.{op}: Number of experts must be evenly divisible by cluster ({weights.shape[1]}, {parallel})"
        )
    if axis not in (0, 1):
        raise MeshnnValueError(f"ttnn.{op}: Invalid cluster axis, should be 0 (rows), or 1 (cols), got {axis}")


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="MoeRoutingRemapDeviceOperation")
def moe_routing_remap(
    routing_weights_tensor: Tensor,
    non_zero_weight_size: int,
    expert_parallel_size: int,
    cluster_axis: int,
    *,
    memory_config: MemoryConfig | None = None,
    optional_output_tensor: Tensor | None = None,
) -> Tensor:
    """Each device's share of the non-zero routing weights (see the module's text)."""
    op = "moe_routing_remap"
    weights = device_input(op, "routing_weights_tensor", routing_weights_tensor)
    mesh = same_mesh(op, {"routing_weights_tensor": weights})
    nonzero = int_arg(op, "non_zero_weight_size", non_zero_weight_size)
    parallel = int_arg(op, "expert_parallel_size", expert_parallel_size)
    axis = int_arg(op, "cluster_axis", cluster_axis)
    _checks(op, weights, nonzero, parallel, axis)
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    config = memory_config or weights.memory_config()
    spec = TensorSpec(tuple(weights.shape), weights.dtype, Layout.ROW_MAJOR, memory_config=config)
    coords = weights.storage.coords  # type: ignore[union-attr]
    into = None
    if optional_output_tensor is not None:
        into = [output_into(op, mesh, optional_output_tensor, spec, coords)]
    share = nonzero // parallel
    width, kind = weights.shape[1], _UNSIGNED[weights.dtype.row_major_element_size]

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], run: tuple[MeshCoordinate, ...]) -> None:
        size = width * np.dtype(kind).itemsize
        bits = in_rows[0][:, :size].view(kind)
        out = out_rows[0][:, :size].view(kind)
        for row, coord in enumerate(run):
            out[row] = remap_weights(bits[row], coord[axis] * share, share)

    attrs = {"non_zero_weight_size": nonzero, "expert_parallel_size": parallel, "cluster_axis": axis}
    attrs["memory_config"] = config
    return launch(op, mesh, [weights], [Output(spec, coords=coords)], kernel, coords=coords, attrs=attrs, into=into)[0]
