"""Shard specs an op derives for a sharded output memory config that has none, as ttnn does for
``ttnn.L1_WIDTH_SHARDED_MEMORY_CONFIG`` and its kin: the input's own shard spec when the input is
sharded alike and the output has its shape, else the output cut over the device's compute grid
(:func:`derive_shard_spec`).  A matmul derives its spec from its program config instead
(:func:`meshnn.ops.matmul_config.output_shard_spec`).

Units: shard shapes are elements of the 2-D (height, width) view; grids are cores (x, y).  The
derived spec uses only the cores that hold a shard: HEIGHT and WIDTH row-wise from core (0, 0),
BLOCK as a rectangle from (0, 0).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.tensor`.
"""

from __future__ import annotations

import math

from meshnn.device.buffer import ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRange, CoreRangeSet, num_cores_to_corerangeset
from meshnn.errors import MeshnnError
from meshnn.tensor.spec import MemoryConfig, TensorSpec


def needs_shard_spec(config: object) -> bool:
    """Whether ``config`` is a sharded MemoryConfig without a shard spec (2-D or N-D)."""
    return (
        isinstance(config, MemoryConfig)
        and config.is_sharded()
        and config.shard_spec is None
        and config.given_nd_shard_spec is None
    )


def derive_shard_spec(
    config: MemoryConfig, spec: TensorSpec, grid: CoreCoord, like: ShardSpec | None = None
) -> MemoryConfig:
    """``config`` with the shard spec a ``spec``-shaped output takes: ``like`` (an input's) when the
    output fits it, else the output's 2-D view cut over ``grid``."""
    if like is not None:
        candidate = MemoryConfig(config.memory_layout, config.buffer_type, like)
        if _fits(spec, candidate):
            return candidate
    plain = spec.with_memory_config(MemoryConfig(buffer_type=config.buffer_type))
    (h, w), (ph, pw) = plain.physical_shape, plain.page_shape
    rows, cols = max(1, math.ceil(h / ph)), max(1, math.ceil(w / pw))
    layout = config.memory_layout
    if layout is TensorMemoryLayout.BLOCK_SHARDED:
        gx, gy = min(grid.x, cols), min(grid.y, rows)
        shard = (math.ceil(rows / gy) * ph, math.ceil(cols / gx) * pw)
        gx, gy = math.ceil(cols / (shard[1] // pw)), math.ceil(rows / (shard[0] // ph))
        cores = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(gx - 1, gy - 1))])
    else:
        units = rows if layout is TensorMemoryLayout.HEIGHT_SHARDED else cols
        per = math.ceil(units / (grid.x * grid.y))
        cores = num_cores_to_corerangeset(math.ceil(units / per), grid, True)
        shard = (per * ph, w) if layout is TensorMemoryLayout.HEIGHT_SHARDED else (h, per * pw)
    return MemoryConfig(layout, config.buffer_type, ShardSpec(cores, shard, ShardOrientation.ROW_MAJOR))


def _fits(spec: TensorSpec, config: MemoryConfig) -> bool:
    try:
        spec.with_memory_config(config)
    except MeshnnError:
        return False
    return True
