"""``ttnn.experimental.nlp_create_qkv_heads`` of a width-sharded input: tt-metal's sharded program,
which reads the fused columns a KV group at a time.

Each shard of a fused input holds one or more KV groups, each ``[its q_heads / kv_heads q heads |
its k head | its v head]`` (a shard width of ``(q_heads / kv_heads + 2) x head_dim`` a group);
with a separate KV input, the q input's shards hold the groups' q heads and the KV input's shards
each ``[k | v]`` of its groups.  The outputs are sharded a head a core: q on the first ``q_heads``
cores of the compute grid (row-major), k and v on the first ``kv_heads``, shards of ``[32,
head_dim]`` whatever shard spec ``memory_config`` names (ttnn derives its own).  The checks are the
device operation's.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and
the ops' launch, outputs and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import num_cores_to_corerangeset
from meshnn.errors import MeshnnValueError
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.values import logical_values, write_values
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_TILE = 32


def _check(op: str, x: Tensor, kv: Tensor | None, dims: tuple[int, int, int], transpose: bool, config: object) -> None:
    heads, kv_heads, d = dims
    spec = x.memory_config().shard_spec
    if spec is None:
        raise MeshnnValueError(f"ttnn.{op}: a sharded input needs a shard spec")
    if spec.orientation is not ShardOrientation.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor shard orientation must be ROW_MAJOR, got {spec.orientation}")
    if not isinstance(config, MemoryConfig) or not config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Output memory config must be sharded and not WIDTH_SHARDED, got {config}")
    if config.memory_layout is TensorMemoryLayout.WIDTH_SHARDED:
        raise MeshnnValueError(f"ttnn.{op}: Output memory config must be sharded and not WIDTH_SHARDED, got {config}")
    if transpose:
        raise MeshnnValueError(f"ttnn.{op}: Transpose K heads must be false for a sharded input")
    per_group = heads // kv_heads
    width = per_group * d if kv is not None else (per_group + 2) * d
    if spec.shape[1] != width:
        raise MeshnnValueError(f"ttnn.{op}: the input's shard width {spec.shape[1]} must be {width} (one KV group)")
    if kv is not None:
        kv_spec = kv.memory_config().shard_spec
        if kv_spec is None or kv_spec.grid != spec.grid or kv_spec.orientation is not spec.orientation:
            raise MeshnnValueError(f"ttnn.{op}: the KV input must be sharded on the q input's grid and orientation")
        if kv_spec.shape[1] != 2 * d:
            raise MeshnnValueError(f"ttnn.{op}: the KV input's shard width {kv_spec.shape[1]} must be 2 x {d}")


def sharded_split(
    op: str,
    mesh: MeshDevice,
    x: Tensor,
    kv: Tensor | None,
    shape: tuple[int, int, int, int, int],
    transpose: bool,
    config: object,
) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v of a width-sharded fused input (``shape``: b, s, q heads, kv heads, head dim)."""
    b, s, heads, kv_heads, d = shape
    _check(op, x, kv, (heads, kv_heads, d), transpose, config)
    grid = mesh.compute_with_storage_grid_size()
    specs = []
    for count in (heads, kv_heads, kv_heads):
        shard = ShardSpec(num_cores_to_corerangeset(count, grid, True), (_TILE, d), ShardOrientation.ROW_MAJOR)
        out_config = MemoryConfig(config.memory_layout, config.buffer_type, shard)  # type: ignore[union-attr]
        specs.append(TensorSpec((b, count, s, d), x.dtype, Layout.TILE, memory_config=out_config))
    in_specs = [x.spec] if kv is None else [x.spec, kv.spec]
    per_group, exact = heads // kv_heads, not x.dtype.is_block_float
    fused = kv is None  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        parts = [logical_values(r, sp, as_float=False)[:, :, 0] for r, sp in zip(in_rows, in_specs, strict=True)]
        n = parts[0].shape[0]
        if fused:
            groups = parts[0].reshape(n, b, s, kv_heads, per_group + 2, d)
            q, k, v = groups[..., :per_group, :], groups[..., per_group, :], groups[..., per_group + 1, :]
        else:
            q = parts[0].reshape(n, b, s, kv_heads, per_group, d)
            pairs = parts[1].reshape(n, b, s, kv_heads, 2, d)
            k, v = pairs[..., 0, :], pairs[..., 1, :]
        for out, values, count, spec in zip(out_rows, (q, k, v), (heads, kv_heads, kv_heads), specs, strict=True):
            moved = values.reshape(n, b, s, count, d).transpose(0, 1, 3, 2, 4)
            write_values(out, np.ascontiguousarray(moved), spec, exact=exact)

    inputs = [x] if kv is None else [x, kv]
    attrs = {"memory_config": specs[0].memory_config}
    q_out, k_out, v_out = launch(op, mesh, inputs, [Output(sp) for sp in specs], kernel, rowwise=True, attrs=attrs)
    return q_out, k_out, v_out
