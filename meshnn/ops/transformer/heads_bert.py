"""``ttnn.experimental.split_query_key_value_and_split_heads``: BERT-large's split of a fused
``[b, 1, s, 3 * num_heads * d]`` QKV projection into q ``[b, h, s, d]``, k transposed
``[b, h, d, s]`` and v ``[b, h, s, d]``.

Two programs, as tt-metal has them, and they read the fused columns differently:

- an interleaved input (a batch of 7 to 9, BERT-large's) holds q's heads, then k's, then v's;
- a BLOCK_SHARDED input (one grid range inside ``compute_with_storage_grid_size``) holds, in each of
  its ``g`` shard columns (``g`` = the grid's width in the shard orientation), that column's
  ``num_heads / g`` heads of q, then of k, then of v (the layout the model's fused weight was made
  in); its outputs are sharded over the same cores, ``num_heads / g`` heads a core.

Checks and the derived output specs are the device operation's; the values only move (bytes equal,
block-float outputs re-encoded from their tiles' own values).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, launch, outputs, registry, values and transformer checks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

OP = "experimental.split_query_key_value_and_split_heads"


def _sharded_groups(x: Tensor, grid: CoreCoord) -> tuple[int, ShardSpec]:
    """The shard columns of a sharded input (its heads' groups) after ttnn's checks."""
    config = x.memory_config()
    spec = config.shard_spec
    if config.memory_layout is not TensorMemoryLayout.BLOCK_SHARDED or spec is None:
        raise MeshnnValueError(f"ttnn.{OP}: a sharded input must be BLOCK_SHARDED, got {config.memory_layout}")
    if len(spec.grid.ranges()) != 1:
        raise MeshnnValueError(f"ttnn.{OP}: the input's shard grid must be one core range, got {spec.grid}")
    box = spec.grid.bounding_box()
    if box.end.x >= grid.x or box.end.y >= grid.y:
        raise MeshnnValueError(
            f"ttnn.{OP}: the input's shard grid ends at ({box.end.x}, {box.end.y}), outside "
            f"compute_with_storage_grid_size {grid}"
        )
    row_major = spec.orientation is ShardOrientation.ROW_MAJOR
    return (box.end.x if row_major else box.end.y) + 1, spec


def _outputs(x: Tensor, config: MemoryConfig, heads: int, groups: int, spec: ShardSpec | None) -> list[TensorSpec]:
    b, _, s, width = (int(v) for v in x.spec.padded_shape)
    d = width // 3 // heads
    shapes = ((b, heads, s, d), (b, heads, d, s), (b, heads, s, d))
    if spec is None:
        return [TensorSpec(shape, x.dtype, Layout.TILE, memory_config=config) for shape in shapes]
    per_core = heads // groups
    qv = MemoryConfig(
        config.memory_layout, config.buffer_type, ShardSpec(spec.grid, (per_core * s, d), spec.orientation)
    )
    k = MemoryConfig(
        config.memory_layout, config.buffer_type, ShardSpec(spec.grid, (per_core * d, s), spec.orientation)
    )
    return [
        TensorSpec(shape, x.dtype, Layout.TILE, memory_config=c) for shape, c in zip(shapes, (qv, k, qv), strict=True)
    ]


def _checked(input_tensor: object, grid: object, num_heads: object, memory_config: object) -> tuple[Tensor, CoreCoord]:
    """The input (TILE, bfloat16 or bfloat8_b) and the grid, after the binding's argument checks."""
    x = tile_input(OP, "input_tensor", input_tensor)
    if x.dtype not in (DataType.BFLOAT16, DataType.BFLOAT8_B):
        raise MeshnnValueError(f"ttnn.{OP}: Unsupported data format {x.dtype} (BFLOAT16 or BFLOAT8_B)")
    if isinstance(grid, tuple) and len(grid) == 2:
        grid = CoreCoord(*grid)
    if not isinstance(grid, CoreCoord):
        raise MeshnnTypeError(f"ttnn.{OP}: compute_with_storage_grid_size must be a CoreCoord, got {grid!r}")
    if isinstance(num_heads, bool) or not isinstance(num_heads, int | np.integer) or num_heads < 1:
        raise MeshnnValueError(f"ttnn.{OP}: num_heads must be a positive int, got {num_heads!r}")
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    return x, grid


@register(
    OP,
    kind=OpKind.TRANSFORMER,
    family=OpFamily.COPY,
    device_operation="SplitFusedQKVAndSplitHeadsDeviceOperation",
)
def split_query_key_value_and_split_heads(
    input_tensor: Tensor,
    compute_with_storage_grid_size: CoreCoord,
    *,
    memory_config: MemoryConfig | None = None,
    num_heads: int = 16,
    output_tensors: Sequence[Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """q, k (transposed) and v heads of BERT-large's fused QKV (see the module's text)."""
    x, grid = _checked(input_tensor, compute_with_storage_grid_size, num_heads, memory_config)
    padded = tuple(int(v) for v in x.spec.padded_shape)
    if len(padded) != 4 or padded[1] != 1 or padded[3] % (3 * num_heads):
        raise MeshnnValueError(
            f"ttnn.{OP}: input_tensor must be [b, 1, s, 3 x num_heads x d], got {list(x.shape)} for {num_heads} heads"
        )
    spec: ShardSpec | None = None
    groups = 1
    if x.memory_config().is_sharded():
        groups, spec = _sharded_groups(x, grid)
        if num_heads % groups:
            raise MeshnnValueError(f"ttnn.{OP}: {num_heads} heads do not split over the input's {groups} shard columns")
    elif not 7 <= padded[0] <= 9:
        raise MeshnnValueError(
            f"ttnn.{OP}: Input batch size must be between 7 to 9 for bert large TM ops, got {padded[0]}"
        )
    config = memory_config if memory_config is not None else x.memory_config()
    specs = _outputs(x, config, int(num_heads), groups, spec)
    into = None
    if output_tensors is not None:
        if len(output_tensors) != 3:
            raise MeshnnValueError(f"ttnn.{OP}: Must have 3 output tensors, got {len(output_tensors)}")
        into = [device_input(OP, f"output_tensors[{i}]", t) for i, t in enumerate(output_tensors)]
        specs = [t.spec for t in into]
    b, _, s, width = padded
    heads, d = int(num_heads), width // 3 // int(num_heads)
    in_spec, exact = x.spec, not x.dtype.is_block_float

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        fused = logical_values(in_rows[0], in_spec, as_float=False)[:, :, 0]  # (dev, b, s, width)
        parts = fused.reshape(fused.shape[0], b, s, groups, 3, heads // groups, d)
        q, k, v = (
            parts[:, :, :, :, i].reshape(fused.shape[0], b, s, heads, d).transpose(0, 1, 3, 2, 4) for i in range(3)
        )
        for out, values, out_spec in zip(out_rows, (q, k.swapaxes(-1, -2), v), specs, strict=True):
            write_values(out, np.ascontiguousarray(values), out_spec, exact=exact)

    mesh = same_mesh(OP, {"input_tensor": x})
    attrs = {"compute_with_storage_grid_size": grid, "num_heads": heads, "memory_config": config}
    q, k, v = launch(OP, mesh, [x], [Output(s) for s in specs], kernel, rowwise=True, into=into, attrs=attrs)
    return q, k, v
