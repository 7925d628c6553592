"""N-D sharding (``ttnn.NdShardSpec``): a tensor cut into N-D shards dealt to cores, and where
each page of such a buffer lives.

A shard is a box of ``shard_shape`` (elements) over the tensor's padded shape; in pages (the last
dim divided by the page width, the one before by the page height) the tensor is a grid of shards,
numbered row-major (the last dim fastest).  Edge shards are clipped.  ROUND_ROBIN_1D deals shard
``i`` to core ``i % cores`` (cores in the grid's ROW_MAJOR / COL_MAJOR order); GRID_2D (2-D shards
only) gives a 2-D grid of shards one core each, the grid trimmed to the shards' rows and columns
(swapped for COL_MAJOR).  On its core, the ``k``-th shard of that core starts at device page
``k * shard volume`` and holds its pages row-major over the full (unclipped) shard shape; the
clipped positions are padding.  Every core reserves ``ceil(shards / cores) * shard volume`` pages.

Before dealing, the tensor and shard shapes are squeezed: trailing dims where the shard spans the
tensor merge into one, a shard dim of 1 over a dim the next one divides merges, and tensor dims
beyond the shard's rank fold into the shard's first dim; this changes no page's place, only the
arithmetic (tt-metal's ``squeeze_shape_ranks``).

Layer: device.  Imports errors, :mod:`meshnn.device.core` and :mod:`meshnn.device.buffer`.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from meshnn.device.buffer import ShardOrientation
from meshnn.device.core import CoreCoord, CoreRangeSet
from meshnn.device.grid_2d import trimmed_cores
from meshnn.errors import MeshnnTypeError, MeshnnValueError


class ShardDistributionStrategy(enum.Enum):
    """How an N-D sharded buffer deals its shards to cores (``ttnn.ShardDistributionStrategy``)."""

    __hash__ = object.__hash__  # members are singletons compared by identity

    ROUND_ROBIN_1D = 0
    GRID_2D = 1

    def __str__(self) -> str:
        return f"ShardDistributionStrategy.{self.name}"


@dataclass(frozen=True, slots=True, init=False)
class NdShardSpec:
    """``ttnn.NdShardSpec(shard_shape, grid, orientation, shard_distribution_strategy)``: the shard
    shape in elements (rank 1 up to the tensor's), the cores and the dealing order."""

    shard_shape: tuple[int, ...]
    grid: CoreRangeSet
    orientation: ShardOrientation
    shard_distribution_strategy: ShardDistributionStrategy

    def to_json(self) -> str:
        """ttnn's JSON text of this object (:mod:`meshnn.device.json_forms`)."""
        from meshnn.device import json_forms

        return json_forms.dumps(json_forms.nd_shard_spec_form(self))

    @staticmethod
    def from_json(json_string: str) -> NdShardSpec:
        """The object a :meth:`to_json` text (or ttnn's) describes."""
        from meshnn.device import json_forms

        return json_forms.nd_shard_spec_from(json_forms.loads(json_string, "NdShardSpec"))

    def __init__(
        self,
        shard_shape: Sequence[int],
        grid: CoreRangeSet,
        orientation: ShardOrientation = ShardOrientation.ROW_MAJOR,
        shard_distribution_strategy: ShardDistributionStrategy = ShardDistributionStrategy.ROUND_ROBIN_1D,
    ) -> None:
        try:
            dims = tuple(shard_shape)
        except TypeError:
            raise MeshnnTypeError(f"NdShardSpec shard_shape must be a sequence of ints, got {shard_shape!r}") from None
        if not dims or any(isinstance(d, bool) or not hasattr(d, "__index__") or int(d) <= 0 for d in dims):
            raise MeshnnValueError(f"NdShardSpec shard_shape must be positive ints, rank >= 1, got {list(dims)}")
        if not isinstance(grid, CoreRangeSet):
            raise MeshnnTypeError(f"NdShardSpec grid must be a CoreRangeSet, got {grid!r}")
        if not isinstance(orientation, ShardOrientation):
            raise MeshnnTypeError(f"NdShardSpec orientation must be a ShardOrientation, got {orientation!r}")
        if not isinstance(shard_distribution_strategy, ShardDistributionStrategy):
            raise MeshnnTypeError(
                f"shard_distribution_strategy must be a ShardDistributionStrategy, got {shard_distribution_strategy!r}"
            )
        object.__setattr__(self, "shard_shape", tuple(int(d) for d in dims))
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "orientation", orientation)
        object.__setattr__(self, "shard_distribution_strategy", shard_distribution_strategy)

    def num_cores(self) -> int:
        return self.grid.num_cores()

    def __repr__(self) -> str:
        return (
            f"NdShardSpec(shard_shape={list(self.shard_shape)}, grid={self.grid!r}, "
            f"orientation={self.orientation}, shard_distribution_strategy={self.shard_distribution_strategy})"
        )


def shape_in_pages(shape: Sequence[int], page_shape: tuple[int, int]) -> tuple[int, ...]:
    """``shape`` with its last dim in page widths and the one before in page heights (rounded up)."""
    dims = list(shape)
    if dims:
        dims[-1] = -(-dims[-1] // page_shape[1])
    if len(dims) >= 2:
        dims[-2] = -(-dims[-2] // page_shape[0])
    return tuple(dims)


def squeeze_shape_ranks(tensor: Sequence[int], shard: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The tensor and shard shapes (in pages) at the least rank that deals the same pages to the
    same places; both results have one rank (see the module docstring)."""
    if len(tensor) < len(shard):
        raise MeshnnValueError(f"Tensor shape rank ({len(tensor)}) can't be less than shard shape rank ({len(shard)})!")
    volume, shard_volume = math.prod(tensor), math.prod(shard)
    new_tensor: list[int] = []
    new_shard: list[int] = []
    matching = divisible = False
    seen_tensor = seen_shard = 1
    for dim in range(-1, -len(shard) - 1, -1):
        size, piece = tensor[dim], shard[dim]
        if dim < -1 and (matching or (piece == 1 and divisible)):
            new_tensor[-1] *= size
            new_shard[-1] *= piece
        else:
            new_tensor.append(size)
            new_shard.append(piece)
            matching = True
        matching = matching and size == piece
        divisible = size % piece == 0
        seen_tensor, seen_shard = seen_tensor * size, seen_shard * piece
        if seen_tensor == volume and seen_shard == shard_volume:
            break
    for dim in range(-len(shard) - 1, -len(tensor) - 1, -1):
        new_tensor[-1] *= tensor[dim]
    return tuple(reversed(new_tensor)), tuple(reversed(new_shard))


@dataclass(frozen=True, slots=True)
class NdShardSpecBuffer:
    """An N-D shard spec in pages over one buffer (tt-metal's ``BufferDistributionSpec``):
    ``tensor_shape_in_pages`` is the padded tensor shape in pages, unsqueezed."""

    spec: NdShardSpec
    page_shape: tuple[int, int]
    tensor_shape_in_pages: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.tensor_shape_in_pages) < len(self.spec.shard_shape):
            raise MeshnnValueError(
                f"Tensor shape rank ({len(self.tensor_shape_in_pages)}) can't be less than shard shape rank "
                f"({len(self.spec.shard_shape)})!"
            )
        self.dealt_cores()  # raises when GRID_2D cannot place the shards

    @property
    def shard_shape_in_pages(self) -> tuple[int, ...]:
        return shape_in_pages(self.spec.shard_shape, self.page_shape)

    @functools.lru_cache(maxsize=256)  # noqa: B019 - frozen, hashable specs; a few live at once
    def squeezed(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return squeeze_shape_ranks(self.tensor_shape_in_pages, self.shard_shape_in_pages)

    @functools.lru_cache(maxsize=256)  # noqa: B019 - frozen, hashable specs; a few live at once
    def dealt_cores(self) -> tuple[CoreCoord, ...]:
        """The cores shards are dealt to, in order (GRID_2D: the grid trimmed to the shards)."""
        spec = self.spec
        row_wise = spec.orientation is ShardOrientation.ROW_MAJOR
        if spec.shard_distribution_strategy is ShardDistributionStrategy.ROUND_ROBIN_1D:
            return tuple(spec.grid.cores(row_wise=row_wise))
        return trimmed_cores(spec.grid, row_wise, self.tensor_shape_in_pages, self.shard_shape_in_pages)

    @property
    def num_cores(self) -> int:
        """Cores that hold a shard (the banks the buffer uses): the fewer of cores and shards."""
        return min(len(self.dealt_cores()), self.num_shards)

    @property
    def num_shards(self) -> int:
        tensor, shard = self.squeezed()
        if math.prod(tensor) == 0:
            return 0
        return math.prod(-(-t // s) for t, s in zip(tensor, shard, strict=True))

    @property
    def shard_volume(self) -> int:
        return math.prod(self.shard_shape_in_pages)

    @property
    def pages_per_core(self) -> int:
        """Device pages every core reserves: its most shards times the shard volume."""
        return -(-self.num_shards // len(self.dealt_cores())) * self.shard_volume

    def positions(self) -> tuple[np.ndarray, np.ndarray]:
        """For every host page (row-major over the tensor in pages): its core's index in dealing
        order and its device page on that core."""
        return self._locate(np.arange(math.prod(self.squeezed()[0]), dtype=np.int64))

    def position(self, page: int) -> tuple[int, int]:
        """(core index in dealing order, device page on that core) of host page ``page``."""
        core, where = self._locate(np.array([page], dtype=np.int64))
        return int(core[0]), int(where[0])

    def _locate(self, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tensor, shard = self.squeezed()
        coords = np.unravel_index(pages, tensor)
        grid = [-(-t // s) for t, s in zip(tensor, shard, strict=True)]
        shard_id = np.ravel_multi_index([c // s for c, s in zip(coords, shard, strict=True)], grid)
        inside = np.ravel_multi_index([c % s for c, s in zip(coords, shard, strict=True)], shard)
        cores = len(self.dealt_cores())
        return shard_id % cores, (shard_id // cores) * self.shard_volume + inside

    def core_pages(self) -> list[list[int]]:
        """For each core in dealing order, its device pages' host pages (-1: padding)."""
        per_core = self.pages_per_core
        table = np.full((len(self.dealt_cores()), per_core), -1, dtype=np.int64)
        core, where = self.positions()
        table[core, where] = np.arange(core.size)
        return [row.tolist() if per_core else [] for row in table]
