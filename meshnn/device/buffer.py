"""How one device lays a buffer out over its banks, and where every page of it lives.

A buffer is ``size`` bytes cut into pages of ``page_size`` bytes.  Interleaved buffers deal their
pages round-robin over all banks of their type: page ``p`` lives in bank ``p % num_banks`` at
``address + bank_offset[bank] + aligned_page_size * (p // num_banks)``.  Sharded buffers give each
core of a :class:`ShardSpec` one shard (a block of the buffer's 2-D page grid), stored row-major
in shard-page order at ``address + aligned_page_size * position_in_shard``; N-D sharded buffers
(:mod:`meshnn.device.nd_shard`) deal N-D shards to cores, several a core when there are more
shards than cores.

The bytes of a buffer live elsewhere (the mesh layer's slab) in host page order; this module only
says where tt-metal would put each page.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from meshnn.device.core import CoreCoord, CoreRangeSet
from meshnn.device.grid_2d import fits, trimmed_cores
from meshnn.errors import DeallocatedError, MeshnnTypeError, MeshnnValueError

if TYPE_CHECKING:
    from meshnn.device.nd_shard import NdShardSpecBuffer


class BufferType(enum.Enum):
    """Which memory of a chip a buffer lives in (``ttnn.BufferType``)."""

    __hash__ = object.__hash__  # members are singletons compared by identity; enum's own hash is Python code

    DRAM = 0
    L1 = 1
    SYSTEM_MEMORY = 2
    L1_SMALL = 3
    TRACE = 4

    @property
    def is_dram(self) -> bool:
        return self in (BufferType.DRAM, BufferType.TRACE)

    @property
    def is_l1(self) -> bool:
        return self in (BufferType.L1, BufferType.L1_SMALL)

    def __str__(self) -> str:
        return f"BufferType.{self.name}"


class TensorMemoryLayout(enum.Enum):
    """How a buffer's pages spread over banks (``ttnn.TensorMemoryLayout``)."""

    __hash__ = object.__hash__  # members are singletons compared by identity; enum's own hash is Python code

    INTERLEAVED = 0
    HEIGHT_SHARDED = 2
    WIDTH_SHARDED = 3
    BLOCK_SHARDED = 4
    ND_SHARDED = 5  # an N-D shard spec no 2-D layout can express (ttnn.NdShardSpec)

    @property
    def is_sharded(self) -> bool:
        return self is not TensorMemoryLayout.INTERLEAVED

    def __str__(self) -> str:
        return f"TensorMemoryLayout.{self.name}"


class ShardOrientation(enum.Enum):
    """Order in which shards are dealt to cores: ROW_MAJOR walks x fastest."""

    __hash__ = object.__hash__  # members are singletons compared by identity; enum's own hash is Python code

    ROW_MAJOR = 0
    COL_MAJOR = 1

    def __str__(self) -> str:
        return f"ShardOrientation.{self.name}"


@dataclass(frozen=True, slots=True, init=False)
class ShardSpec:
    """One shard per core of ``grid``; ``shape`` is (height, width) in elements of the 2-D view
    of the tensor (all dims but the last folded into the height).  Made as ttnn's binding names its
    arguments, ``ShardSpec(grid, shard_shape, shard_orientation)``, or by the attributes' names
    ``shape`` / ``orientation``."""

    grid: CoreRangeSet
    shape: tuple[int, int]
    orientation: ShardOrientation

    def to_json(self) -> str:
        """ttnn's JSON text of this object (:mod:`meshnn.device.json_forms`)."""
        from meshnn.device import json_forms

        return json_forms.dumps(json_forms.shard_spec_form(self))

    @staticmethod
    def from_json(json_string: str) -> ShardSpec:
        """The object a :meth:`to_json` text (or ttnn's) describes."""
        from meshnn.device import json_forms

        return json_forms.shard_spec_from(json_forms.loads(json_string, "ShardSpec"))

    def __init__(
        self,
        grid: CoreRangeSet,
        shard_shape: Sequence[int] | None = None,
        shard_orientation: ShardOrientation | None = None,
        *,
        shape: Sequence[int] | None = None,
        orientation: ShardOrientation | None = None,
    ) -> None:
        if (shard_shape is None) == (shape is None) or (shard_orientation is not None and orientation is not None):
            raise MeshnnTypeError("ShardSpec takes its shape once (shard_shape or shape), its orientation at most once")
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "shape", shard_shape if shape is None else shape)
        chosen = shard_orientation if orientation is None else orientation
        object.__setattr__(self, "orientation", ShardOrientation.ROW_MAJOR if chosen is None else chosen)
        self._check()

    def _check(self) -> None:
        if not isinstance(self.grid, CoreRangeSet):
            raise MeshnnTypeError(f"ShardSpec grid must be a CoreRangeSet, got {self.grid!r}")
        shape = tuple(self.shape)
        if len(shape) != 2 or not all(isinstance(v, int) and v > 0 for v in shape):
            raise MeshnnValueError(f"ShardSpec shape must be two positive ints, got {self.shape!r}")
        object.__setattr__(self, "shape", shape)
        if not isinstance(self.orientation, ShardOrientation):
            raise MeshnnTypeError(f"ShardSpec orientation must be a ShardOrientation, got {self.orientation!r}")
        if self.grid.num_cores() == 0:
            raise MeshnnValueError("ShardSpec grid has no cores")

    def num_cores(self) -> int:
        return self.grid.num_cores()

    def cores(self) -> list[CoreCoord]:
        """The cores in the order shards are dealt to them."""
        return self.grid.cores(row_wise=self.orientation is ShardOrientation.ROW_MAJOR)


@dataclass(frozen=True, slots=True)
class ShardSpecBuffer:
    """A shard spec in units of pages: ``page_shape`` and the buffer's 2-D page grid.  ``grid_2d``
    (a BLOCK_SHARDED buffer's, as tt-metal's tensor layout deals it GRID_2D): the shards go to the
    grid trimmed to their own rows x columns from its start (COL_MAJOR: shard rows along x), not
    dealt over the whole grid.  A BLOCK_SHARDED ``BufferLayout`` sets it when GRID_2D can place the
    shards (:meth:`fits_grid_2d`)."""

    spec: ShardSpec
    page_shape: tuple[int, int]  # elements per page (height, width)
    tensor2d_shape_in_pages: tuple[int, int]
    grid_2d: bool = False

    def __post_init__(self) -> None:
        (sh, sw), (ph, pw) = self.spec.shape, self.page_shape
        if ph <= 0 or pw <= 0 or sh % ph or sw % pw:
            raise MeshnnValueError(
                f"shard shape {self.spec.shape} must be a multiple of the page shape {self.page_shape}"
            )
        if self.grid_2d:
            self.dealt_cores()  # raises when the shards do not fit the grid

    @property
    def shape_in_pages(self) -> tuple[int, int]:
        (sh, sw), (ph, pw) = self.spec.shape, self.page_shape
        return sh // ph, sw // pw

    @property
    def pages_per_shard(self) -> int:
        h, w = self.shape_in_pages
        return h * w

    @property
    def pages_per_core(self) -> int:
        """Device pages every shard core reserves (one shard each)."""
        return self.pages_per_shard

    @property
    def num_cores(self) -> int:
        """The cores shards are dealt to (GRID_2D: one per shard)."""
        return len(self.dealt_cores()) if self.grid_2d else self.spec.num_cores()

    def fits_grid_2d(self) -> bool:
        """Whether GRID_2D can place these shards (one grid range at least as wide and tall)."""
        row_wise = self.spec.orientation is ShardOrientation.ROW_MAJOR
        return fits(self.spec.grid, row_wise, self.tensor2d_shape_in_pages, self.shape_in_pages)

    def dealt_cores(self) -> tuple[CoreCoord, ...]:
        """The cores in the order shards are dealt to them."""
        if not self.grid_2d:
            return tuple(self.spec.cores())
        row_wise = self.spec.orientation is ShardOrientation.ROW_MAJOR
        return trimmed_cores(self.spec.grid, row_wise, self.tensor2d_shape_in_pages, self.shape_in_pages)


@dataclass(frozen=True, slots=True)
class BufferLayout:
    """Everything one device needs to allocate a buffer and place its pages."""

    size: int
    page_size: int
    buffer_type: BufferType = BufferType.DRAM
    memory_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED
    shard: ShardSpecBuffer | NdShardSpecBuffer | None = None

    def __post_init__(self) -> None:
        for name in ("size", "page_size"):
            value = getattr(self, name)
            if not isinstance(value, int | np.integer) or value < 0:
                raise MeshnnValueError(f"buffer {name} must be a non-negative int, got {value!r}")
        if not isinstance(self.buffer_type, BufferType):
            raise MeshnnTypeError(f"buffer_type must be a BufferType, got {self.buffer_type!r}")
        if self.size and (self.page_size == 0 or self.size % self.page_size):
            raise MeshnnValueError(f"buffer size {self.size} B must be a multiple of its page size {self.page_size} B")
        if self.memory_layout.is_sharded and self.shard is None:
            raise MeshnnValueError(f"a {self.memory_layout.name} buffer needs a shard spec")
        if not self.memory_layout.is_sharded and self.shard is not None:
            raise MeshnnValueError("an INTERLEAVED buffer takes no shard spec")
        block = self.memory_layout is TensorMemoryLayout.BLOCK_SHARDED
        if block and isinstance(self.shard, ShardSpecBuffer) and not self.shard.grid_2d and self.shard.fits_grid_2d():
            object.__setattr__(self, "shard", dataclasses.replace(self.shard, grid_2d=True))  # GRID_2D, as tt-metal

    @property
    def num_pages(self) -> int:
        return self.size // self.page_size if self.page_size else 0

    @property
    def num_shards(self) -> int | None:
        """Cores the buffer is sharded over (its banks), or None when interleaved."""
        return self.shard.num_cores if self.shard is not None else None


@dataclass(frozen=True, slots=True)
class PageLocation:
    """Where one host page lives on a device: an interleaved bank, or a sharded buffer's core."""

    page: int
    address: int
    bank_id: int | None = None
    core: CoreCoord | None = None


@dataclass(frozen=True, slots=True)
class BankFacts:
    """What page placement needs to know of the banks of one buffer type."""

    num_banks: int
    bank_offsets: tuple[int, ...]
    alignment: int  # the buffer type's page alignment


def shard_page_grid(layout: BufferLayout) -> list[list[int]]:
    """For each core (in dealing order), its shard's host pages in shard order; -1 marks a
    padding position of a clipped edge shard."""
    shard = layout.shard
    if shard is None:
        raise MeshnnValueError("an interleaved buffer has no shards")
    if not isinstance(shard, ShardSpecBuffer):
        return shard.core_pages()
    rows, cols = shard.tensor2d_shape_in_pages
    shard_h, shard_w = shard.shape_in_pages
    cores = shard.dealt_cores()
    grid: list[list[int]] = []
    if layout.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED:
        per_shard = shard_h * cols
        for i in range(len(cores)):
            first = i * per_shard
            pages = list(range(first, min(first + per_shard, rows * cols)))
            grid.append(pages + [-1] * (shard_h * shard_w - len(pages)) if pages else [])
        return grid
    shard_cols = math.ceil(cols / shard_w)
    for i in range(len(cores)):
        r0, c0 = (i // shard_cols) * shard_h, (i % shard_cols) * shard_w
        if r0 >= rows:
            grid.append([])
            continue
        grid.append(
            [
                r * cols + c if r < rows and c < cols else -1
                for r in range(r0, r0 + shard_h)
                for c in range(c0, c0 + shard_w)
            ]
        )
    return grid


def shard_position(layout: BufferLayout, page: int) -> tuple[int, int]:
    """(index of the core in dealing order, position inside its shard) of host page ``page``."""
    shard = layout.shard
    if shard is None:
        raise MeshnnValueError("an interleaved buffer has no shards")
    if not isinstance(shard, ShardSpecBuffer):
        return shard.position(page)
    cols = shard.tensor2d_shape_in_pages[1]
    shard_h, shard_w = shard.shape_in_pages
    if layout.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED:
        return divmod(page, shard_h * cols)
    row, col = divmod(page, cols)
    shard_cols = math.ceil(cols / shard_w)
    core = (row // shard_h) * shard_cols + col // shard_w
    return core, (row % shard_h) * shard_w + col % shard_w


class Buffer:
    """One device's view of a buffer: its layout, its address and (when the mesh layer gives
    them) its bytes.  A view never owns an allocation; ``is_allocated`` asks the owner."""

    def __init__(
        self,
        layout: BufferLayout,
        address: int,
        banks: BankFacts,
        *,
        device_id: int = 0,
        data: Callable[[], np.ndarray] | None = None,
        is_allocated: Callable[[], bool] = lambda: True,
    ) -> None:
        self.layout = layout
        self._address = address
        self._banks = banks
        self.device_id = device_id
        self._data = data
        self._is_allocated = is_allocated

    def is_allocated(self) -> bool:
        return self._is_allocated()

    def _check(self) -> None:
        if not self._is_allocated():
            raise DeallocatedError(f"buffer at address {self._address} on device {self.device_id} is deallocated")

    def address(self) -> int:
        self._check()
        return self._address

    def size(self) -> int:
        return self.layout.size

    def page_size(self) -> int:
        return self.layout.page_size

    def num_pages(self) -> int:
        return self.layout.num_pages

    def buffer_type(self) -> BufferType:
        return self.layout.buffer_type

    def buffer_layout(self) -> TensorMemoryLayout:
        return self.layout.memory_layout

    def aligned_page_size(self) -> int:
        return -(-self.layout.page_size // self._banks.alignment) * self._banks.alignment

    def data(self) -> np.ndarray:
        """This device's bytes, in host page order (uint8, ``size()`` long)."""
        self._check()
        if self._data is None:
            raise MeshnnValueError("this buffer view carries no bytes")
        return self._data()

    def page_location(self, page: int) -> PageLocation:
        """Bank (interleaved) or core (sharded) and device address of host page ``page``."""
        self._check()
        if not 0 <= page < self.layout.num_pages:
            raise MeshnnValueError(f"page {page} is outside a buffer of {self.layout.num_pages} pages")
        aligned = self.aligned_page_size()
        if self.layout.shard is None:
            bank = page % self._banks.num_banks
            address = self._address + self._banks.bank_offsets[bank] + aligned * (page // self._banks.num_banks)
            return PageLocation(page, address, bank_id=bank)
        core_index, position = shard_position(self.layout, page)
        core = self.layout.shard.dealt_cores()[core_index]
        return PageLocation(page, self._address + aligned * position, core=core)

    def __repr__(self) -> str:
        state = "" if self._is_allocated() else ", deallocated"
        return (
            f"Buffer(device={self.device_id}, address={self._address}, size={self.layout.size}, "
            f"{self.layout.buffer_type}, {self.layout.memory_layout}{state})"
        )
