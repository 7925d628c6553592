"""The decode forms of the head moves: ``ttnn.experimental.nlp_create_qkv_heads_decode`` (a fused
``[1, 1, users, (q + 2 kv) x d]`` projection into q ``[1, users, q heads, d]`` and k, v ``[1,
users, kv heads, d]``, each user's heads padded to whole tiles, height-sharded one user per core)
and ``nlp_concat_heads_decode`` (``[1, users, heads (32), d]`` back to ``[1, 1, users (32),
heads x d]``, width-sharded one head per core).  Values are moved, not computed.

The shard grids are tt-metal's: the first ``users`` cores of the compute grid, row by row (k on
the next ``users`` cores when ``overlap_qk_coregrid`` is False); the concat's the first
``heads`` cores.  A given memory config's buffer type and layout are kept, its shard spec made.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`,
the ops' launch, checks, outputs and values and :mod:`meshnn.ops.transformer.checks`.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.ops.checks import int_arg, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.transformer.checks import tile_input
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

TILE = 32


def first_cores(count: int, grid: CoreCoord, start: int = 0) -> CoreRangeSet:
    """The ``count`` cores after the first ``start`` of a ``grid.x`` x ``grid.y`` grid, row by row
    (tt-metal's ``num_cores_to_corerangeset(..., row_wise=True)``)."""
    if start + count > grid.x * grid.y:
        raise MeshnnValueError(f"{start + count} cores do not fit a {grid.x}x{grid.y} grid")
    ranges, index, end = [], start, start + count
    while index < end:
        y, x = divmod(index, grid.x)
        stop = min(end, (y + 1) * grid.x)
        ranges.append(CoreRange(CoreCoord(x, y), CoreCoord(x + stop - index - 1, y)))
        index = stop
    return CoreRangeSet(ranges)


def _padded(n: int) -> int:
    return -(-n // TILE) * TILE


def _sharded(memory_config: MemoryConfig, layout: TensorMemoryLayout, grid: CoreRangeSet, shard: tuple[int, int]):
    return MemoryConfig(layout, memory_config.buffer_type, ShardSpec(grid, shard, ShardOrientation.ROW_MAJOR))


@register(
    "experimental.nlp_create_qkv_heads_decode",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.HEADS_DECODE,
)
def nlp_create_qkv_heads_decode(
    input_tensor: Tensor,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    overlap_qk_coregrid: bool = True,
    batch_offset: int | None = None,
    slice_size: int | None = None,
    memory_config: MemoryConfig | None = None,
    queue_id: int = 0,
) -> tuple[Tensor, Tensor, Tensor]:
    """Split each user's fused row (q's heads, then k's, then v's, ``d`` wide each) into q, k, v
    ``[1, users, heads, d]`` (users ``batch_offset .. + slice_size`` when given)."""
    op = "experimental.nlp_create_qkv_heads_decode"
    x = tile_input(op, "input_tensor", input_tensor, (DataType.FLOAT32, DataType.BFLOAT16))
    mesh = same_mesh(op, {"input_tensor": x})
    heads, kv_heads = _head_counts(op, x, num_heads, num_kv_heads, overlap_qk_coregrid)
    shape = tuple(x.shape)
    _check_input_sharding(op, x)
    first, users = _slice(op, batch_offset, slice_size, shape[2])
    d = shape[3] // (heads + 2 * kv_heads)
    config = (
        memory_config if memory_config is not None else MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1)
    )
    if not isinstance(config, MemoryConfig) or config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: memory_config must be HEIGHT_SHARDED, got {config!r}")
    grid = mesh.compute_with_storage_grid_size()
    if grid.x * grid.y < (users if overlap_qk_coregrid else 2 * users):
        raise MeshnnValueError(f"ttnn.{op}: Need at least {users} cores (twice that without overlap_qk_coregrid)")
    q_grid = first_cores(users, grid)
    k_grid = q_grid if overlap_qk_coregrid else first_cores(users, grid, start=users)
    grids = ((heads, q_grid), (kv_heads, k_grid), (kv_heads, q_grid))
    specs = [_head_spec(x, config, g, n, users, d) for n, g in grids]

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows, out_rows, coords) -> None:
        values = logical_values(in_rows[0], x_spec, as_float=False)[:, 0, 0, first : first + users]
        k = values.shape[0]
        split = values.reshape(k, 1, users, heads + 2 * kv_heads, d)
        parts = (split[:, :, :, :heads], split[:, :, :, heads : heads + kv_heads], split[:, :, :, heads + kv_heads :])
        for out, part, spec in zip(out_rows, parts, specs, strict=True):
            write_values(out, np.ascontiguousarray(part), spec, exact=True)

    attrs = {
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "overlap_qk_coregrid": overlap_qk_coregrid,
        "memory_config": config,
    }
    outputs = [Output(s) for s in specs]
    q, k, v = launch(op, mesh, [x], outputs, kernel, queue_id=queue_id, rowwise=True, reads_memos=True, attrs=attrs)
    return q, k, v


def _head_counts(op: str, x: Tensor, num_heads, num_kv_heads, overlap_qk_coregrid) -> tuple[int, int]:
    """``(q heads, kv heads)``, checked against the input's shape."""
    heads = int_arg(op, "num_heads", num_heads)
    kv_heads = heads if num_kv_heads is None else int_arg(op, "num_kv_heads", num_kv_heads)
    if not isinstance(overlap_qk_coregrid, bool):
        raise MeshnnTypeError(f"ttnn.{op}: overlap_qk_coregrid must be a bool, got {overlap_qk_coregrid!r}")
    shape = tuple(x.shape)
    if len(shape) != 4 or shape[:2] != (1, 1) or shape[2] > 32:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be [1, 1, users <= 32, width], got {list(shape)}")
    if not 1 <= kv_heads <= heads <= 32:
        raise MeshnnValueError(f"ttnn.{op}: need 1 <= num_kv_heads ({kv_heads}) <= num_heads ({heads}) <= 32")
    if shape[3] % (heads + 2 * kv_heads) or (shape[3] // (heads + 2 * kv_heads)) % TILE:
        raise MeshnnValueError(
            f"ttnn.{op}: width {shape[3]} must split into {heads} + 2 x {kv_heads} heads of a multiple of 32"
        )
    return heads, kv_heads


def _head_spec(x: Tensor, config: MemoryConfig, grid: CoreRangeSet, heads: int, users: int, d: int) -> TensorSpec:
    """``[1, users, heads, d]``, each user's heads (padded to tiles) one shard on ``grid``."""
    sharded = _sharded(config, config.memory_layout, grid, (_padded(heads), d))
    return TensorSpec((1, users, heads, d), x.dtype, x.layout, tile=x.spec.tile, memory_config=sharded)


def _check_input_sharding(op: str, x: Tensor) -> None:
    config = x.spec.memory_config
    if not config.is_sharded():
        return
    shard = config.shard_spec
    height = int(np.prod(tuple(x.padded_shape)[:-1]))
    if config.memory_layout is not TensorMemoryLayout.WIDTH_SHARDED or shard is None or shard.shape[0] != height:
        raise MeshnnValueError(f"ttnn.{op}: a sharded input_tensor must be WIDTH_SHARDED with shard height {height}")
    if shard.orientation is not ShardOrientation.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: a sharded input_tensor must be sharded ROW_MAJOR")


def _slice(op: str, batch_offset: object, slice_size: object, users: int) -> tuple[int, int]:
    if batch_offset is None and slice_size is None:
        return 0, users
    if batch_offset is None or slice_size is None:
        raise MeshnnValueError(f"ttnn.{op}: batch_offset and slice_size go together")
    first, size = int_arg(op, "batch_offset", batch_offset), int_arg(op, "slice_size", slice_size)
    if first < 0 or size < 1 or first + size > users:
        raise MeshnnValueError(
            f"ttnn.{op}: Batch offset + slice size should be less than or equal to num_users ({users})"
        )
    return first, size


@register(
    "experimental.nlp_concat_heads_decode",
    kind=OpKind.TRANSFORMER,
    family=OpFamily.CONCAT_HEADS_DECODE,
)
def nlp_concat_heads_decode(
    input_tensor: Tensor,
    *,
    num_heads: int,
    memory_config: MemoryConfig | None = None,
    sub_core_grids: CoreRangeSet | None = None,
    queue_id: int = 0,
) -> Tensor:
    """``[1, users, heads (padded), d]`` to ``[1, 1, users, num_heads x d]``: each user's first
    ``num_heads`` heads side by side, width-sharded (one head of every user per core)."""
    op = "experimental.nlp_concat_heads_decode"
    x = tile_input(op, "input_tensor", input_tensor, (DataType.FLOAT32, DataType.BFLOAT16))
    mesh = same_mesh(op, {"input_tensor": x})
    heads = int_arg(op, "num_heads", num_heads)
    shape, padded = tuple(x.shape), tuple(x.padded_shape)
    if len(shape) != 4 or shape[0] != 1 or shape[1] > 32:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be [1, users <= 32, heads, d], got {list(shape)}")
    if x.spec.memory_config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be HEIGHT_SHARDED (one user per core)")
    if not 1 <= heads <= padded[2]:
        raise MeshnnValueError(
            f"ttnn.{op}: num_heads {heads} must be between 1 and the input's {padded[2]} padded heads"
        )
    users, d = shape[1], shape[3]
    grid = mesh.compute_with_storage_grid_size()
    cores = first_cores(heads, grid) if sub_core_grids is None else sub_core_grids
    if not isinstance(cores, CoreRangeSet) or cores.num_cores() < heads:
        raise MeshnnValueError(f"ttnn.{op}: sub_core_grids must be a CoreRangeSet of at least {heads} cores")
    config = (
        memory_config if memory_config is not None else MemoryConfig(TensorMemoryLayout.WIDTH_SHARDED, BufferType.L1)
    )
    out = _sharded(config, TensorMemoryLayout.WIDTH_SHARDED, first_cores(heads, grid), (_padded(users), d))
    spec = TensorSpec((1, 1, users, heads * d), x.dtype, x.layout, tile=x.spec.tile, memory_config=out)
    # the heads read by the input's own spec when its logical shape holds them (its producer's memo
    # then serves them), else by the padded shape (the same values: the logical window is its corner)
    src = x.spec if shape[2] >= heads and padded[-1] == d else TensorSpec(padded, x.dtype, x.layout, tile=x.spec.tile)

    def kernel(in_rows, out_rows, coords) -> None:
        values = logical_values(in_rows[0], src, as_float=False)[:, 0, :users, :heads]  # (k, users, heads, d)
        moved = np.ascontiguousarray(values).reshape(values.shape[0], 1, 1, users, heads * d)
        write_values(out_rows[0], moved, spec, exact=True, owned=True)

    attrs = {"num_heads": heads, "memory_config": out}
    return launch(
        op, mesh, [x], [Output(spec)], kernel, queue_id=queue_id, rowwise=True, reads_memos=True, attrs=attrs
    )[0]
