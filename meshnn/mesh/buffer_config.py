"""The configs of a MeshBuffer and the arithmetic of its shard layout.

``ReplicatedBufferConfig`` / ``ShardedBufferConfig`` say how the global buffer spreads over the
mesh, ``DeviceLocalBufferConfig`` how one device lays its part out over its banks, and
``BufferRegion`` names a byte range of one device's part.  :func:`device_local_size` checks a
sharded config against a mesh and gives the bytes each device holds; :func:`layout_of` gives the
validated per-device :class:`~meshnn.device.buffer.BufferLayout` (made once per config).

Layers: imports :mod:`meshnn.errors` and :mod:`meshnn.device` (a MeshDevice only for types).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from meshnn.device.buffer import (
    BufferLayout,
    BufferType,
    ShardOrientation,
    ShardSpecBuffer,
    TensorMemoryLayout,
)
from meshnn.errors import MeshnnTypeError, MeshnnValueError

if TYPE_CHECKING:
    from meshnn.mesh.mesh_device import MeshDevice


class MeshBufferLayout(enum.Enum):
    REPLICATED = 0
    SHARDED = 1


@dataclass(frozen=True, slots=True)
class ReplicatedBufferConfig:
    """Every device gets ``size`` bytes."""

    size: int

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int):
            raise MeshnnTypeError(f"ReplicatedBufferConfig size must be an int, got {self.size!r}")
        if self.size < 0:
            raise MeshnnValueError(f"ReplicatedBufferConfig size must be a non-negative int, got {self.size!r}")


@dataclass(frozen=True, slots=True)
class ShardedBufferConfig:
    """A ``global_buffer_shape`` (height, width in datums) array cut into ``shard_shape`` pieces, one
    per device; a 0 in ``shard_shape`` replicates along that dimension.  ``shard_orientation``
    is the order shards are dealt to devices."""

    global_size: int
    global_buffer_shape: tuple[int, int]
    shard_shape: tuple[int, int]
    shard_orientation: ShardOrientation = ShardOrientation.ROW_MAJOR

    def __post_init__(self) -> None:
        if isinstance(self.global_size, bool) or not isinstance(self.global_size, int) or self.global_size < 0:
            raise MeshnnValueError(f"global_size must be a non-negative int, got {self.global_size!r}")
        if not isinstance(self.shard_orientation, ShardOrientation):
            raise MeshnnTypeError(f"shard_orientation must be a ShardOrientation, got {self.shard_orientation!r}")
        for name in ("global_buffer_shape", "shard_shape"):
            value = tuple(getattr(self, name))
            if len(value) != 2 or not all(isinstance(v, int) and v >= 0 for v in value):
                raise MeshnnValueError(f"{name} must be two non-negative ints, got {getattr(self, name)!r}")
            object.__setattr__(self, name, value)
        h, w = self.global_buffer_shape
        if h * w == 0 or self.global_size % (h * w):
            raise MeshnnValueError(
                f"global_size {self.global_size} B is not a whole number of datums of a {h}x{w} buffer"
            )

    def compute_datum_size_bytes(self) -> int:
        h, w = self.global_buffer_shape
        return self.global_size // (h * w)

    def replicated_dims(self) -> tuple[bool, bool]:
        """(height replicated, width replicated)."""
        return self.shard_shape[0] == 0, self.shard_shape[1] == 0

    def physical_shard_shape(self) -> tuple[int, int]:
        (gh, gw), (sh, sw) = self.global_buffer_shape, self.shard_shape
        return sh or gh, sw or gw


MeshBufferConfig = ReplicatedBufferConfig | ShardedBufferConfig


@dataclass(frozen=True, slots=True)
class DeviceLocalBufferConfig:
    """How ONE device lays the buffer out over its banks."""

    page_size: int
    buffer_type: BufferType = BufferType.DRAM
    buffer_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED
    shard_parameters: ShardSpecBuffer | None = None
    bottom_up: bool | None = None  # None: DRAM bottom-up, L1 top-down

    def __post_init__(self) -> None:
        if isinstance(self.page_size, bool) or not isinstance(self.page_size, int):
            raise MeshnnTypeError(f"page_size must be an int, got {self.page_size!r}")
        if self.page_size <= 0:
            raise MeshnnValueError(f"page_size must be positive, got {self.page_size}")
        if not isinstance(self.buffer_type, BufferType):
            raise MeshnnTypeError(f"buffer_type must be a ttnn.BufferType, got {self.buffer_type!r}")
        if not isinstance(self.buffer_layout, TensorMemoryLayout):
            raise MeshnnTypeError(f"buffer_layout must be a ttnn.TensorMemoryLayout, got {self.buffer_layout!r}")
        if self.bottom_up is not None and not isinstance(self.bottom_up, bool):
            raise MeshnnTypeError(f"bottom_up must be a bool or None, got {self.bottom_up!r}")


@dataclass(frozen=True, slots=True)
class BufferRegion:
    """``size`` bytes from ``offset`` in one device's buffer."""

    offset: int
    size: int

    def __post_init__(self) -> None:
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (self.offset, self.size)):
            raise MeshnnTypeError(f"BufferRegion needs ints offset and size, got ({self.offset!r}, {self.size!r})")
        if not all(v >= 0 for v in (self.offset, self.size)):
            raise MeshnnValueError(
                f"BufferRegion needs non-negative offset and size, got ({self.offset!r}, {self.size!r})"
            )


def _validate_sharded(config: ShardedBufferConfig, mesh_device: MeshDevice) -> None:
    (gh, gw), (ph, pw) = config.global_buffer_shape, config.physical_shard_shape()
    if gh % ph or gw % pw:
        raise MeshnnValueError(
            "Global buffer shape must be aligned with the shard shape: requested buffer shape: "
            f"({gh}, {gw}), shard shape: ({ph}, {pw})"
        )
    shards = (gh // ph) * (gw // pw)
    rows, cols = mesh_device.num_rows, mesh_device.num_cols
    height_rep, width_rep = config.replicated_dims()
    if height_rep and width_rep:
        shards *= rows * cols
    elif height_rep or width_rep:
        shards *= rows if config.shard_orientation is ShardOrientation.ROW_MAJOR else cols
    if shards > mesh_device.get_num_devices():
        raise MeshnnValueError(
            f"The sharded tensor does not fit on the Mesh. Num shards in buffer {shards}, "
            f"Num Devices {mesh_device.get_num_devices()}"
        )


_layouts: dict[tuple[int, DeviceLocalBufferConfig], BufferLayout] = {}  # validated layouts, reused
_layouts_of: dict[tuple[int, int], tuple[DeviceLocalBufferConfig, BufferLayout]] = {}
"""The same, keyed by the config object's id (a config's hash is computed in Python, on every
call): an entry holds its config, so the id cannot be reused while the entry exists."""


def _layout(local_size: int, local: DeviceLocalBufferConfig) -> BufferLayout:
    """The validated layout of ``local_size`` bytes per device laid out by ``local`` (made once)."""
    layout = _layouts.get((local_size, local))
    if layout is None:
        if len(_layouts) > 4096:
            _layouts.clear()
        layout = _layouts[(local_size, local)] = BufferLayout(
            local_size, local.page_size, local.buffer_type, local.buffer_layout, local.shard_parameters
        )
    if len(_layouts_of) > 4096:
        _layouts_of.clear()
    _layouts_of[(local_size, id(local))] = (local, layout)
    return layout


def device_local_size(config: MeshBufferConfig, mesh_device: MeshDevice) -> int:
    """Bytes each device of ``mesh_device`` holds of a buffer of ``config``; a sharded config is
    checked first (its shards tile the global buffer and fit on the mesh)."""
    if isinstance(config, ShardedBufferConfig):
        _validate_sharded(config, mesh_device)
        ph, pw = config.physical_shard_shape()
        return config.compute_datum_size_bytes() * ph * pw
    return config.size


def layout_of(local_size: int, local: DeviceLocalBufferConfig) -> BufferLayout:
    """The validated layout of ``local_size`` bytes per device laid out by ``local`` (made once)."""
    known = _layouts_of.get((local_size, id(local)))
    if known is not None and known[0] is local:
        return known[1]
    return _layout(local_size, local)
