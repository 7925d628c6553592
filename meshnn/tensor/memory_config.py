"""Where a device tensor lives: ``ttnn.MemoryConfig`` (DRAM or L1, interleaved, HEIGHT / WIDTH /
BLOCK sharded with a ShardSpec or N-D sharded with an NdShardSpec), ttnn's named configs, and
``create_sharded_memory_config`` (cutting a shape over a core grid).

Layer: tensor.  Imports errors and device only.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreGrid, CoreRange, CoreRangeSet
from meshnn.device.nd_shard import NdShardSpec, ShardDistributionStrategy
from meshnn.errors import MeshnnTypeError, MeshnnValueError


class ShardStrategy(enum.Enum):
    """How ``create_sharded_memory_config`` cuts a tensor over cores."""

    HEIGHT = 0
    WIDTH = 1
    BLOCK = 2


@dataclass(frozen=True, slots=True, init=False)
class MemoryConfig:
    """Where a device tensor lives: DRAM or L1, interleaved or sharded (``ttnn.MemoryConfig``).

    Two forms, as ttnn's: ``MemoryConfig(memory_layout, buffer_type, shard_spec)`` (2-D sharding)
    and ``MemoryConfig(buffer_type, nd_shard_spec)`` (N-D sharding: ND_SHARDED, or INTERLEAVED
    when ``nd_shard_spec`` is None).  A tensor's spec fills in the 2-D form of an N-D spec when
    one exists (its layout then reads HEIGHT / WIDTH / BLOCK_SHARDED, with a ``shard_spec``);
    equality compares the spec a config was made with (both, when the two forms meet), so a
    tensor's config equals the one it was asked for.
    """

    memory_layout: TensorMemoryLayout
    buffer_type: BufferType
    shard_spec: ShardSpec | None
    given_nd_shard_spec: NdShardSpec | None
    """The N-D spec this config was made with or given by a tensor spec, else None."""
    created_with_nd_shard_spec: bool

    def __init__(
        self,
        memory_layout: TensorMemoryLayout | BufferType = TensorMemoryLayout.INTERLEAVED,
        buffer_type: BufferType | NdShardSpec = BufferType.DRAM,
        shard_spec: ShardSpec | None = None,
        nd_shard_spec: NdShardSpec | None = None,
        *,
        created_with_nd_shard_spec: bool | None = None,
    ) -> None:
        if isinstance(memory_layout, BufferType):  # MemoryConfig(buffer_type, nd_shard_spec)
            if isinstance(buffer_type, NdShardSpec) and nd_shard_spec is None:
                nd_shard_spec = buffer_type
            elif buffer_type is not BufferType.DRAM or shard_spec is not None:
                raise MeshnnTypeError(
                    f"MemoryConfig(buffer_type, nd_shard_spec) takes a BufferType and an NdShardSpec, got "
                    f"{memory_layout!r}, {buffer_type!r}"
                )
            memory_layout, buffer_type = TensorMemoryLayout.INTERLEAVED, memory_layout
        if nd_shard_spec is not None and not isinstance(nd_shard_spec, NdShardSpec):
            raise MeshnnTypeError(f"nd_shard_spec must be an NdShardSpec, got {nd_shard_spec!r}")
        if created_with_nd_shard_spec is None:  # a form ttnn's users write
            created_with_nd_shard_spec = nd_shard_spec is not None
            if nd_shard_spec is not None:
                if memory_layout is not TensorMemoryLayout.INTERLEAVED or shard_spec is not None:
                    raise MeshnnValueError("an nd_shard_spec is given as MemoryConfig(buffer_type, nd_shard_spec)")
                memory_layout = TensorMemoryLayout.ND_SHARDED
        object.__setattr__(self, "memory_layout", memory_layout)
        object.__setattr__(self, "buffer_type", buffer_type)
        object.__setattr__(self, "shard_spec", shard_spec)
        object.__setattr__(self, "given_nd_shard_spec", nd_shard_spec)
        object.__setattr__(self, "created_with_nd_shard_spec", bool(created_with_nd_shard_spec))
        self._validate()

    def _validate(self) -> None:
        if not isinstance(self.memory_layout, TensorMemoryLayout):
            raise MeshnnTypeError(f"memory_layout must be a TensorMemoryLayout, got {self.memory_layout!r}")
        if not isinstance(self.buffer_type, BufferType) or self.buffer_type is BufferType.SYSTEM_MEMORY:
            raise MeshnnTypeError(f"buffer_type must be DRAM, L1, L1_SMALL or TRACE, got {self.buffer_type!r}")
        if self.shard_spec is not None and not isinstance(self.shard_spec, ShardSpec):
            raise MeshnnTypeError(f"shard_spec must be a ShardSpec, got {self.shard_spec!r}")
        if self.shard_spec is not None and not self.memory_layout.is_sharded:
            raise MeshnnValueError("an INTERLEAVED MemoryConfig takes no shard_spec")
        if self.memory_layout is TensorMemoryLayout.ND_SHARDED and self.given_nd_shard_spec is None:
            raise MeshnnValueError("an ND_SHARDED MemoryConfig needs an nd_shard_spec")
        if self.memory_layout is TensorMemoryLayout.ND_SHARDED and self.shard_spec is not None:
            raise MeshnnValueError("an ND_SHARDED MemoryConfig takes no 2-D shard_spec")

    @property
    def nd_shard_spec(self) -> NdShardSpec | None:
        """The N-D spec: the one given, else the 2-D shard spec's own (its shape as a 2-D shard;
        BLOCK_SHARDED deals it GRID_2D), else None."""
        if self.given_nd_shard_spec is not None or self.shard_spec is None:
            return self.given_nd_shard_spec
        spec = self.shard_spec
        block = self.memory_layout is TensorMemoryLayout.BLOCK_SHARDED
        strategy = ShardDistributionStrategy.GRID_2D if block else ShardDistributionStrategy.ROUND_ROBIN_1D
        return NdShardSpec(spec.shape, spec.grid, spec.orientation, strategy)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryConfig):
            return NotImplemented
        if self.buffer_type is not other.buffer_type or self.memory_layout is not other.memory_layout:
            return False
        if self.created_with_nd_shard_spec and other.created_with_nd_shard_spec:
            return self.given_nd_shard_spec == other.given_nd_shard_spec
        if not self.created_with_nd_shard_spec and not other.created_with_nd_shard_spec:
            return self.shard_spec == other.shard_spec
        return self.shard_spec == other.shard_spec and self.nd_shard_spec == other.nd_shard_spec

    def __hash__(self) -> int:
        authority = self.given_nd_shard_spec if self.created_with_nd_shard_spec else self.shard_spec
        grid = None if authority is None else (authority.grid, authority.orientation)
        return hash((self.memory_layout, self.buffer_type, grid))

    def to_json(self) -> str:
        """tt-metal's JSON text of this config (:mod:`meshnn.tensor.memory_config_json`)."""
        from meshnn.tensor.memory_config_json import to_json

        return to_json(self)

    @staticmethod
    def from_json(json_string: str) -> MemoryConfig:
        """The config a :meth:`to_json` text (or ttnn's) describes."""
        from meshnn.tensor.memory_config_json import from_json

        return from_json(json_string)

    def is_sharded(self) -> bool:
        return self.memory_layout.is_sharded

    @property
    def interleaved(self) -> bool:
        return not self.memory_layout.is_sharded

    def __repr__(self) -> str:
        spec = "std::nullopt" if self.shard_spec is None else repr(self.shard_spec)
        text = (
            f"MemoryConfig(memory_layout=TensorMemoryLayout::{self.memory_layout.name},"
            f"buffer_type=BufferType::{self.buffer_type.name},shard_spec={spec}"
        )
        if self.given_nd_shard_spec is None:
            return text + ")"
        created = int(self.created_with_nd_shard_spec)
        return f"{text},nd_shard_spec={self.given_nd_shard_spec!r},created_with_nd_shard_spec={created})"


DRAM_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)


L1_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1)


L1_HEIGHT_SHARDED_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1)


L1_WIDTH_SHARDED_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.WIDTH_SHARDED, BufferType.L1)


L1_BLOCK_SHARDED_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.BLOCK_SHARDED, BufferType.L1)


def grid_of(core_grid: CoreGrid | CoreRangeSet | CoreRange) -> CoreRangeSet:
    if isinstance(core_grid, CoreGrid):
        return core_grid.to_core_range_set()
    if isinstance(core_grid, CoreRange):
        return CoreRangeSet([core_grid])
    if isinstance(core_grid, CoreRangeSet):
        return core_grid
    raise MeshnnTypeError(f"core_grid must be a CoreGrid, CoreRange or CoreRangeSet, got {core_grid!r}")


def create_sharded_memory_config(
    shape: Sequence[int],
    core_grid: CoreGrid | CoreRangeSet | CoreRange,
    strategy: ShardStrategy,
    orientation: ShardOrientation | None = None,
    use_height_and_width_as_shard_shape: bool = False,
) -> MemoryConfig:
    """An L1 sharded MemoryConfig cutting ``shape`` (its 2-D view) over ``core_grid``.

    HEIGHT: each core takes ``ceil(height / cores)`` rows; WIDTH: ``ceil(width / cores)`` columns;
    BLOCK: a grid of ``ceil(height / grid rows) x ceil(width / grid columns)`` blocks (rows and
    columns swap for COL_MAJOR).  With ``use_height_and_width_as_shard_shape`` the last two dims of
    ``shape`` are the shard shape itself, ``(height, width)`` for ROW_MAJOR and ``(width, height)``
    for COL_MAJOR, as ttnn reads them.
    """
    if not isinstance(strategy, ShardStrategy):
        raise MeshnnTypeError(f"strategy must be a ShardStrategy, got {strategy!r}")
    dims = tuple(int(d) for d in shape)
    if len(dims) < 1 or any(d <= 0 for d in dims):
        raise MeshnnValueError(f"create_sharded_memory_config needs a non-empty positive shape, got {list(dims)}")
    orientation = ShardOrientation.ROW_MAJOR if orientation is None else orientation
    grid = grid_of(core_grid)
    height, width = math.prod(dims[:-1]), dims[-1]
    layout = {
        ShardStrategy.HEIGHT: TensorMemoryLayout.HEIGHT_SHARDED,
        ShardStrategy.WIDTH: TensorMemoryLayout.WIDTH_SHARDED,
        ShardStrategy.BLOCK: TensorMemoryLayout.BLOCK_SHARDED,
    }[strategy]
    if use_height_and_width_as_shard_shape:
        if len(dims) < 2:
            raise MeshnnValueError("use_height_and_width_as_shard_shape needs a shape of rank >= 2")
        # ttnn reads the two dims as (width, height) for COL_MAJOR: callers pass them swapped
        shard = (dims[-2], dims[-1]) if orientation is ShardOrientation.ROW_MAJOR else (dims[-1], dims[-2])
    elif strategy is ShardStrategy.HEIGHT:
        shard = (math.ceil(height / grid.num_cores()), width)
    elif strategy is ShardStrategy.WIDTH:
        shard = (height, math.ceil(width / grid.num_cores()))
    else:
        box = grid.bounding_box().grid_size()
        rows, cols = (box.y, box.x) if orientation is ShardOrientation.ROW_MAJOR else (box.x, box.y)
        shard = (math.ceil(height / rows), math.ceil(width / cols))
    return MemoryConfig(layout, BufferType.L1, ShardSpec(grid, shard, orientation))


def create_sharded_memory_config_(
    shape: Sequence[int],
    core_grid: CoreGrid | CoreRangeSet | Sequence[CoreGrid],
    strategy: ShardStrategy | TensorMemoryLayout,
    orientation: ShardOrientation,
    use_height_and_width_as_shard_shape: bool = False,
    tile_layout: bool = False,
) -> MemoryConfig:
    """ttnn's newer ``create_sharded_memory_config_``: an L1 sharded MemoryConfig whose shards need
    not divide ``shape`` (its 2-D view ``prod(dims[:-1]) x dims[-1]``); the last shard is short.

    ``strategy`` is a ShardStrategy or a sharded TensorMemoryLayout; ``orientation`` is required.
    ``core_grid``: a CoreGrid, a CoreRangeSet, or two CoreGrids (a full ``a.y x a.x`` box and one
    row of ``b.x`` cores under it).  HEIGHT: ``ceil(h / cores)`` rows (``h`` first rounded up to a
    multiple of the core count with ``tile_layout``); WIDTH: ``ceil(w / cores)`` columns; BLOCK (the
    grid must be its own bounding box): ``ceil(h / rows) x ceil(w / cols)`` of the bounding box (rows
    and columns swap for COL_MAJOR; ``h`` first rounded up to ``rows x 32`` with ``tile_layout``).
    With ``tile_layout`` a shard neither of whose sides is a multiple of 32 is refused."""
    op = "create_sharded_memory_config_"
    if isinstance(strategy, ShardStrategy):
        layout = _STRATEGY_LAYOUT[strategy]
    elif isinstance(strategy, TensorMemoryLayout):
        layout = strategy
    else:
        raise MeshnnTypeError(f"{op}: strategy must be a ShardStrategy or TensorMemoryLayout, got {strategy!r}")
    if not isinstance(orientation, ShardOrientation):
        raise MeshnnTypeError(f"{op}: orientation must be a ShardOrientation, got {orientation!r}")
    if isinstance(shape, str) or not isinstance(shape, Sequence) or not all(isinstance(d, int) for d in shape):
        raise MeshnnTypeError(f"{op}: shape must be a sequence of ints, got {shape!r}")
    dims = tuple(int(d) for d in shape)
    if len(dims) < 2 or any(d <= 0 for d in dims):
        raise MeshnnValueError(f"{op} needs a positive shape of rank >= 2, got {list(dims)}")
    grid = _grid_of_(op, core_grid)
    height, width = math.prod(dims[:-1]), dims[-1]
    row_major = orientation is ShardOrientation.ROW_MAJOR
    if use_height_and_width_as_shard_shape:
        shard = (dims[-2], dims[-1]) if row_major else (dims[-1], dims[-2])
    elif layout is TensorMemoryLayout.BLOCK_SHARDED:
        box = grid.bounding_box().grid_size()
        if box.x * box.y != grid.num_cores():
            raise MeshnnValueError(f"{op}: block sharding needs a rectangular grid, got {grid!r}")
        rows, cols = (box.y, box.x) if row_major else (box.x, box.y)
        padded = _roundup(height, rows * 32) if tile_layout else height
        shard = (-(-padded // rows), -(-width // cols))
    elif layout is TensorMemoryLayout.HEIGHT_SHARDED:
        cores = grid.num_cores()
        padded = _roundup(height, cores) if tile_layout else height
        shard = (-(-padded // cores), width)
    elif layout is TensorMemoryLayout.WIDTH_SHARDED:
        shard = (height, -(-width // grid.num_cores()))
    else:
        raise MeshnnValueError(f"{op}: strategy must be HEIGHT, WIDTH or BLOCK sharded, got {layout}")
    if tile_layout and shard[0] % 32 and shard[1] % 32:
        raise MeshnnValueError(f"{op}: shard {list(shard)} has no side a multiple of the tile's 32")
    return MemoryConfig(layout, BufferType.L1, ShardSpec(grid, shard, orientation))


_STRATEGY_LAYOUT = {
    ShardStrategy.HEIGHT: TensorMemoryLayout.HEIGHT_SHARDED,
    ShardStrategy.WIDTH: TensorMemoryLayout.WIDTH_SHARDED,
    ShardStrategy.BLOCK: TensorMemoryLayout.BLOCK_SHARDED,
}


def _roundup(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _grid_of_(op: str, core_grid: object) -> CoreRangeSet:
    """``create_sharded_memory_config_``'s grids: a CoreGrid, a CoreRangeSet, or two CoreGrids."""
    if isinstance(core_grid, (list, tuple)):
        if len(core_grid) != 2 or not all(isinstance(g, CoreGrid) for g in core_grid):
            raise MeshnnTypeError(f"{op}: a core_grid list must hold two CoreGrids, got {core_grid!r}")
        full, extra = core_grid
        return CoreRangeSet(
            [
                CoreRange(CoreCoord(0, 0), CoreCoord(full.x - 1, full.y - 1)),
                CoreRange(CoreCoord(0, full.y), CoreCoord(extra.x - 1, full.y)),
            ]
        )
    if isinstance(core_grid, (CoreGrid, CoreRangeSet)):
        return grid_of(core_grid)
    raise MeshnnTypeError(f"{op}: core_grid must be a CoreGrid, a CoreRangeSet or two CoreGrids, got {core_grid!r}")
