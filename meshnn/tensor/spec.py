"""What a tensor is, independent of where it lives: its :class:`Shape`, and the :class:`TensorSpec`
(shape, dtype, layout, memory config) with all the byte-size arithmetic (pages, packed size, the
buffer layout a device gives it).

All sizes are bytes.  A :class:`TensorSpec` describes ONE shard of a (possibly distributed)
tensor, as in ttnn: ``tensor.shape`` of a tensor sharded over a mesh is the per-shard shape.

Pages (ttnn's page config): a TILE tensor has one tile per page; a ROW_MAJOR tensor has one row
per page, ``(1, physical width)`` when interleaved or height-sharded and ``(1, shard width)`` when
width- or block-sharded.  The packed buffer size is ``pages x page size``.

Layer: tensor.  Imports errors, device, the byte formats (dtypes, layout) and
:mod:`meshnn.tensor.memory_config`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from meshnn.device.buffer import (
    BufferLayout,
    ShardSpecBuffer,
    TensorMemoryLayout,
)
from meshnn.device.nd_shard import NdShardSpecBuffer, shape_in_pages
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import DEFAULT_TILE, Layout, Tile, padded_shape, physical_shape
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.nd_sharding import ShardingMethods, check_nd_shard, legacy_form, spec_form

EMPTY_PAGE_SIZE = 4  # bytes of the one page a zero-volume tensor reports


class Shape(tuple):
    """A tensor shape (``ttnn.Shape``): a tuple of ints that compares equal to lists too."""

    def __new__(cls, dims: Iterable[int] = ()) -> Shape:
        if isinstance(dims, str):
            raise MeshnnTypeError(f"a Shape needs a sequence of ints, got {dims!r}")
        try:
            values = tuple(dims)
        except TypeError:
            raise MeshnnTypeError(f"a Shape needs a sequence of ints, got {dims!r}") from None
        for d in values:
            if isinstance(d, bool) or not hasattr(d, "__index__"):
                raise MeshnnTypeError(f"a Shape needs ints, got {list(values)!r}")
            if int(d) < 0:
                raise MeshnnValueError(f"a Shape needs non-negative ints, got {list(values)!r}")
        return super().__new__(cls, (int(d) for d in values))

    @property
    def rank(self) -> int:
        return len(self)

    def volume(self) -> int:
        return math.prod(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            other = tuple(other)
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return tuple.__hash__(self)

    def __getitem__(self, index):
        result = tuple.__getitem__(self, index)
        return Shape(result) if isinstance(index, slice) else result

    def __repr__(self) -> str:
        return f"Shape({list(self)})"

    __str__ = __repr__


@dataclass(frozen=True, slots=True, init=False)
class TensorSpec(ShardingMethods):
    """One shard's logical shape, dtype, layout (with its tile) and memory config; frozen."""

    shape: Shape
    dtype: DataType
    layout: Layout
    tile: Tile
    memory_config: MemoryConfig
    explicit_padded_shape: Shape | None
    """A padded shape other than the layout's own (host ``Tensor.pad`` / ``pad_to_tile``), else None."""
    _derived: dict = dataclasses.field(compare=False, repr=False, hash=False)
    """Derived figures (padded shape, pages, sizes), computed once: a spec never changes."""

    def __init__(
        self,
        shape: Sequence[int],
        dtype: DataType,
        layout: Layout = Layout.ROW_MAJOR,
        *given: object,
        padded_shape: Sequence[int] | None = None,
        **named: object,
    ) -> None:
        """``given`` / ``named``: ttnn's constructors' arguments after the layout (``spec_form``):
        ``buffer_type=DRAM, tile=None`` (and meshnn's ``memory_config``), or ``memory_layout,
        shard_spec=None, buffer_type=DRAM, tile=None``, or ``nd_shard_spec, buffer_type=DRAM, tile=None``."""
        buffer_type, tile, memory_config = spec_form(given, named)
        if not isinstance(dtype, DataType):
            raise MeshnnTypeError(f"dtype must be a DataType, got {dtype!r}")
        if not isinstance(layout, Layout):
            raise MeshnnTypeError(f"layout must be a Layout, got {layout!r}")
        if tile is not None and not isinstance(tile, Tile):
            raise MeshnnTypeError(f"tile must be a Tile, got {tile!r}")
        if memory_config is None:
            memory_config = MemoryConfig(TensorMemoryLayout.INTERLEAVED, buffer_type)
        elif not isinstance(memory_config, MemoryConfig):
            raise MeshnnTypeError(f"memory_config must be a MemoryConfig, got {memory_config!r}")
        if dtype.is_block_float and layout is not Layout.TILE:
            raise MeshnnValueError("Layout must be Layout::TILE for bfloat8_b or bfloat4_b!")
        object.__setattr__(self, "shape", Shape(shape))
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "layout", layout)
        object.__setattr__(self, "tile", tile or DEFAULT_TILE)
        object.__setattr__(self, "memory_config", memory_config)
        object.__setattr__(self, "_derived", {})
        object.__setattr__(self, "explicit_padded_shape", self._checked_padding(padded_shape or self._aligned()))
        self._validate_sharding()
        if memory_config.memory_layout is TensorMemoryLayout.ND_SHARDED:
            filled = legacy_form(memory_config, self.padded_shape, self.physical_shape)
            if filled is not None:  # an N-D spec a 2-D layout expresses reads as that layout
                object.__setattr__(self, "memory_config", filled)
                self._derived.clear()

    # ------------------------------------------------------------------------------ shapes

    def _aligned(self) -> tuple[int, ...] | None:
        """ttnn's default alignment of a sharded ROW_MAJOR tensor: its width padded to a multiple of
        the shard width (tt-metal's RowMajorPageConfig alignment); None when it already is one."""
        config = self.memory_config
        shard_width = config.shard_spec.shape[1] if config.shard_spec is not None else None
        if shard_width is None and config.given_nd_shard_spec is not None:
            shard_width = config.given_nd_shard_spec.shard_shape[-1]
        if self.layout is not Layout.ROW_MAJOR or shard_width is None or len(self.shape) == 0:
            return None
        width = self.shape[-1]
        if shard_width <= 0 or width % shard_width == 0:
            return None
        return (*self.shape[:-1], -(-width // shard_width) * shard_width)

    def _checked_padding(self, padded: Sequence[int] | None) -> Shape | None:
        """``padded`` as a Shape, or None when it is the layout's own padding of ``shape``."""
        if padded is None:
            return None
        dims, own = Shape(padded), Shape(padded_shape(self.shape, self.layout, self.tile))
        if dims == own:
            return None
        if len(dims) != len(own) or any(p < o for p, o in zip(dims, own, strict=True)):
            raise MeshnnValueError(
                f"padded shape {list(dims)} must have the rank of {list(own)} and hold the logical shape "
                f"{list(self.shape)} in every dim"
            )
        th, tw = self.tile.tile_shape
        if self.layout is Layout.TILE and (dims[-2] % th or dims[-1] % tw):
            raise MeshnnValueError(f"a TILE padded shape {list(dims)} must be a multiple of the tile {[th, tw]}")
        return dims

    def __hash__(self) -> int:
        """The fields' hash, computed once (specs key the caches of every op call)."""
        derived = self._derived
        if "hash" not in derived:
            derived["hash"] = hash(
                (self.shape, self.dtype, self.layout, self.tile, self.memory_config, self.explicit_padded_shape)
            )
        return derived["hash"]

    def _once(self, key: str, compute):
        derived = self._derived
        if key not in derived:
            derived[key] = compute()
        return derived[key]

    @property
    def padded_shape(self) -> Shape:
        return self._once("padded_shape", self._padded_shape)

    def _padded_shape(self) -> Shape:
        if self.explicit_padded_shape is not None:
            return self.explicit_padded_shape
        return Shape(padded_shape(self.shape, self.layout, self.tile))

    @property
    def encoded_shape(self) -> Shape:
        """The shape whose values the bytes encode: the explicit padded shape when there is one (its
        padding is stored data), else the logical shape (the layout pads it itself)."""
        return self.shape if self.explicit_padded_shape is None else self.explicit_padded_shape

    @property
    def physical_shape(self) -> tuple[int, int]:
        """The 2-D (height, width) the buffer holds: all padded dims but the last folded."""
        return self._once("physical_shape", self._physical_shape)

    def _physical_shape(self) -> tuple[int, int]:
        if len(self.shape) == 0 and self.layout is Layout.ROW_MAJOR:
            return (1, 1)
        return physical_shape(self.encoded_shape, self.layout, self.tile)  # (a TILE scalar: one tile)

    def logical_volume(self) -> int:
        return math.prod(self.shape)

    def volume(self) -> int:
        return math.prod(self.padded_shape)

    # ------------------------------------------------------------------------------- pages

    @property
    def page_shape(self) -> tuple[int, int]:
        return self._once("page_shape", self._page_shape)

    def _page_shape(self) -> tuple[int, int]:
        if self.layout is Layout.TILE:
            return tuple(self.tile.tile_shape)  # type: ignore[return-value]
        config = self.memory_config
        if config.shard_spec is not None and config.memory_layout in (
            TensorMemoryLayout.WIDTH_SHARDED,
            TensorMemoryLayout.BLOCK_SHARDED,
        ):
            return (1, config.shard_spec.shape[1])
        if config.is_sharded() and config.nd_shard_spec is not None:
            return (1, config.nd_shard_spec.shard_shape[-1])
        return (1, self.physical_shape[1])

    @property
    def page_size(self) -> int:
        """Bytes of one page (``buffer_page_size``)."""
        return self._once("page_size", self._page_size)

    def _page_size(self) -> int:
        if self.logical_volume() == 0 and self.layout is Layout.ROW_MAJOR:
            return EMPTY_PAGE_SIZE
        if self.layout is Layout.TILE:
            return self.tile.get_tile_size(self.dtype)
        return self.page_shape[1] * self.dtype.row_major_element_size

    @property
    def num_pages(self) -> int:
        return self._once("num_pages", self._num_pages)

    def _num_pages(self) -> int:
        (h, w), (ph, pw) = self.physical_shape, self.page_shape
        if h == 0 or w == 0:
            return 0
        if h % ph or w % pw:
            raise MeshnnValueError(f"Physical size ({h}, {w}) must be multiple of page size ({ph}, {pw})")
        return (h // ph) * (w // pw)

    def compute_packed_buffer_size_bytes(self) -> int:
        return self._once("packed", lambda: self.num_pages * self.page_size)

    packed_size = property(compute_packed_buffer_size_bytes)

    def shard_spec_buffer(self) -> ShardSpecBuffer | NdShardSpecBuffer | None:
        config = self.memory_config
        if config.memory_layout is TensorMemoryLayout.ND_SHARDED:
            assert config.given_nd_shard_spec is not None
            pages = shape_in_pages(self.padded_shape or (1,), self.page_shape)
            return NdShardSpecBuffer(config.given_nd_shard_spec, self.page_shape, pages)
        spec = config.shard_spec
        if spec is None:
            return None
        (h, w), (ph, pw) = self.physical_shape, self.page_shape
        shards = ShardSpecBuffer(spec, (ph, pw), (-(-h // ph), -(-w // pw)))
        if config.memory_layout is TensorMemoryLayout.BLOCK_SHARDED and shards.fits_grid_2d():
            return dataclasses.replace(shards, grid_2d=True)  # dealt GRID_2D, as tt-metal's tensor layout deals it
        return shards

    def buffer_layout(self) -> BufferLayout:
        """How one device lays out this shard's bytes (a Replicated MeshBuffer's device-local layout)."""
        return self._once("buffer_layout", self._buffer_layout)

    def _buffer_layout(self) -> BufferLayout:
        config = self.memory_config
        page = self.page_size
        size = self.compute_packed_buffer_size_bytes()
        return BufferLayout(size, page, config.buffer_type, config.memory_layout, self.shard_spec_buffer())

    # --------------------------------------------------------------------------- sharding

    def _validate_sharding(self) -> None:
        config = self.memory_config
        if not config.is_sharded():
            return
        if config.given_nd_shard_spec is not None and config.created_with_nd_shard_spec:
            check_nd_shard(config.given_nd_shard_spec, self.padded_shape, self.layout, self.tile)
            self.shard_spec_buffer()  # raises when the shards cannot be dealt (GRID_2D)
            self.num_pages  # noqa: B018 - raises when the physical size is not a whole number of pages
            return
        spec = config.shard_spec
        if spec is None:
            raise MeshnnValueError(
                f"a {config.memory_layout.name} memory config needs a shard spec (see create_sharded_memory_config)"
            )
        (h, w), (sh, sw), (ph, pw) = self.physical_shape, spec.shape, self.page_shape
        if sh % ph or sw % pw:
            raise MeshnnValueError(
                f"shard shape {list(spec.shape)} must be a multiple of the page shape ({ph}, {pw}) of a "
                f"{self.layout} tensor"
            )
        if config.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED and sw != w:
            raise MeshnnValueError(f"a HEIGHT_SHARDED shard must span the width {w}, got shard {list(spec.shape)}")
        if config.memory_layout is TensorMemoryLayout.WIDTH_SHARDED and sh != h:
            raise MeshnnValueError(f"a WIDTH_SHARDED shard must span the height {h}, got shard {list(spec.shape)}")
        needed = -(-h // sh) * -(-w // sw) if h and w else 0
        if needed > spec.num_cores():
            raise MeshnnValueError(
                f"a {h}x{w} tensor cut into {list(spec.shape)} shards needs {needed} cores, but the shard "
                f"grid has {spec.num_cores()}"
            )
        self.num_pages  # noqa: B018 - raises when the physical size is not a whole number of pages

    def with_memory_config(self, memory_config: MemoryConfig) -> TensorSpec:
        return TensorSpec(
            self.shape,
            self.dtype,
            self.layout,
            tile=self.tile,
            memory_config=memory_config,
            padded_shape=self.explicit_padded_shape,
        )

    def replace(self, **changes: object) -> TensorSpec:
        """This spec with some fields changed; a new ``shape`` drops an explicit padded shape unless
        ``padded_shape=`` is given too."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)} | changes
        padded = changes.get("padded_shape", None if "shape" in changes else self.explicit_padded_shape)
        return TensorSpec(
            fields["shape"],
            fields["dtype"],
            fields["layout"],
            tile=fields["tile"],  # type: ignore[arg-type]
            memory_config=fields["memory_config"],  # type: ignore[arg-type]
            padded_shape=padded,  # type: ignore[arg-type]
        )

    def __repr__(self) -> str:
        tile = f", tile={list(self.tile.tile_shape)}" if self.layout is Layout.TILE else ""
        if self.explicit_padded_shape is not None:
            tile += f", padded_shape={self.explicit_padded_shape!r}"
        return (
            f"TensorSpec(shape={self.shape!r}, dtype={self.dtype}, layout={self.layout}{tile}, "
            f"memory_config={self.memory_config!r})"
        )
