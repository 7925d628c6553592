"""``ttnn.SlidingWindowParallelConfig`` (tt-metal's sliding-window ``ParallelConfig``: the core
grid, shard scheme and orientation a conv-like op's activations are sharded by) and
``ttnn._ttnn.operations.conv.create_sharded_memory_config_from_parallel_config``, the L1 sharded
MemoryConfig of an ``[1, 1, N*H*W, C]`` tensor under such a config.

The cores a config gives the N*H*W rows and the channels (tt-metal's conv2d utils): HEIGHT
sharding puts every core on rows, WIDTH on channels; BLOCK puts a grid's rows on N*H*W and its
columns on channels (ROW_MAJOR), or the other way round (COL_MAJOR).  Rows are padded to a
multiple of the row cores times ``tile_size`` (not for WIDTH), channels must divide evenly.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device` and :mod:`meshnn.tensor`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.tensor.spec import MemoryConfig

_SCHEMES = (TensorMemoryLayout.HEIGHT_SHARDED, TensorMemoryLayout.WIDTH_SHARDED, TensorMemoryLayout.BLOCK_SHARDED)


@dataclass(frozen=True, kw_only=True)
class SlidingWindowParallelConfig:
    """A sliding-window op's sharding: ``grid`` (the cores), ``shard_scheme`` (HEIGHT, WIDTH or
    BLOCK sharded) and ``shard_orientation``; keyword-only, as ttnn binds it."""

    grid: CoreRangeSet
    shard_scheme: TensorMemoryLayout
    shard_orientation: ShardOrientation

    def __post_init__(self) -> None:
        owner = "ttnn.SlidingWindowParallelConfig"
        if not isinstance(self.grid, CoreRangeSet):
            raise MeshnnTypeError(f"{owner}: grid must be a ttnn.CoreRangeSet, got {type(self.grid).__name__}")
        if self.shard_scheme not in _SCHEMES:
            raise MeshnnValueError(f"{owner}: shard_scheme must be HEIGHT, WIDTH or BLOCK: {self.shard_scheme!r}")
        if not isinstance(self.shard_orientation, ShardOrientation):
            raise MeshnnTypeError(f"{owner}: shard_orientation must be a ShardOrientation: {self.shard_orientation!r}")
        if self.grid.num_cores() == 0:
            raise MeshnnValueError(f"{owner}: grid has no cores")

    def cores(self) -> tuple[int, int]:
        """The cores across the N*H*W rows and across the channels: HEIGHT puts every core on
        rows, WIDTH on channels; BLOCK puts the grid's rows on N*H*W and its columns on channels
        (ROW_MAJOR), the other way round for COL_MAJOR."""
        count = self.grid.num_cores()
        if self.shard_scheme is TensorMemoryLayout.HEIGHT_SHARDED:
            return count, 1
        if self.shard_scheme is TensorMemoryLayout.WIDTH_SHARDED:
            return 1, count
        box = self.grid.bounding_box().grid_size()
        return (box.x, box.y) if self.shard_orientation is ShardOrientation.COL_MAJOR else (box.y, box.x)


def create_sharded_memory_config_from_parallel_config(
    tensor_shape: Sequence[int], parallel_config: SlidingWindowParallelConfig, tile_size: int
) -> MemoryConfig:
    """The L1 sharded MemoryConfig of a ``[N, H, W, C]`` tensor (N and H 1: the rows flattened)
    under ``parallel_config``: shards of ``(padded rows / row cores, C / channel cores)``."""
    op = "create_sharded_memory_config_from_parallel_config"
    if not isinstance(parallel_config, SlidingWindowParallelConfig):
        raise MeshnnTypeError(f"{op}: parallel_config must be a ttnn.SlidingWindowParallelConfig")
    shape = [int(d) for d in tensor_shape]
    if len(shape) != 4 or shape[0] != 1 or shape[1] != 1:
        raise MeshnnValueError(f"{op}: tensor_shape must be [1, 1, N*H*W, C], got {shape}")
    if isinstance(tile_size, bool) or not isinstance(tile_size, int) or tile_size < 1:
        raise MeshnnValueError(f"{op}: tile_size must be a positive int, got {tile_size!r}")
    rows_cores, channel_cores = parallel_config.cores()
    rows, channels = math.prod(shape[:3]), shape[3]
    if parallel_config.shard_scheme is not TensorMemoryLayout.WIDTH_SHARDED:
        rows = math.ceil(rows / (rows_cores * tile_size)) * rows_cores * tile_size
    if channels % channel_cores:
        raise MeshnnValueError(f"{op}: Channels: {channels}, num core channels: {channel_cores}")
    shard = (rows // rows_cores, channels // channel_cores)
    spec = ShardSpec(parallel_config.grid, shard, parallel_config.shard_orientation)
    return MemoryConfig(parallel_config.shard_scheme, BufferType.L1, spec)
