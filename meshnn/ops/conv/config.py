"""The configs of ttnn's convolutions, with ttnn's fields and defaults: ``ttnn.Conv2dConfig``
(also ``ttnn.Conv1dConfig``), ``ttnn.Conv2dSliceConfig`` with its ``SliceTypeEnum``
(``ttnn.Conv2dL1Full``, ``Conv2dDRAMSliceHeight``, ``Conv2dDRAMSliceWidth``; 2026's ``Op2D*`` names the same) and
``ttnn.Conv3dConfig``.

ttnn's conv configs are mutable structs (tests set ``conv_config.act_block_h_override = 32`` after
making one); here every field is checked when it is set, so a wrong value is refused where it is
written.  Fields that only matter on hardware (block sizes, double buffering, halo reallocation)
change no value a simulated conv computes; the op records the whole config.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device` and the ops' config.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields
from typing import Any

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.activation_arg import converted_activation
from meshnn.ops.config import UnaryWithParam
from meshnn.ops.eltwise.unary_tables import UnaryOpType


def _flag(owner: str, name: str, value: object, optional: bool = False) -> object:
    if (value is None and optional) or isinstance(value, bool):
        return value
    raise MeshnnTypeError(f"{owner}: {name} must be a bool{' or None' if optional else ''}, got {value!r}")


def _count(owner: str, name: str, value: object, least: int) -> object:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MeshnnTypeError(f"{owner}: {name} must be an int, got {value!r}")
    if value < least:
        raise MeshnnValueError(f"{owner}: {name} must be >= {least}, got {value}")
    return value


def _of(owner: str, name: str, value: object, kind: type, optional: bool = True) -> object:
    if (value is None and optional) or isinstance(value, kind):
        return value
    raise MeshnnTypeError(
        f"{owner}: {name} must be a ttnn.{kind.__name__}{' or None' if optional else ''}, got {value!r}"
    )


def _activation(owner: str, value: object) -> object:
    """None, a UnaryWithParam, or what ttnn converts to one (a UnaryOpType, a (type, param) pair)."""
    value = converted_activation(value)
    if value is None or isinstance(value, UnaryWithParam):
        return value
    if isinstance(value, str):  # ttnn's older string form ("relu")
        try:
            return UnaryWithParam(UnaryOpType(value.lower()))
        except ValueError:
            raise MeshnnValueError(f"{owner}: activation {value!r} is not a ttnn.UnaryOpType name") from None
    raise MeshnnTypeError(f"{owner}: activation must be a ttnn.UnaryWithParam or None, got {value!r}")


def _checks(owner: str) -> dict[str, Any]:
    flag = lambda name, optional=False: lambda v: _flag(owner, name, v, optional)  # noqa: E731
    return {
        "weights_dtype": lambda v: _weights_dtype(owner, v),
        "activation": lambda v: _activation(owner, v),
        "act_block_h_override": lambda v: _block_h(owner, v),
        "act_block_w_div": lambda v: _count(owner, "act_block_w_div", v, 1),
        "shard_layout": lambda v: _shard_layout(owner, v),
        "core_grid": lambda v: _of(owner, "core_grid", v, CoreRangeSet),
        "output_layout": lambda v: _of(owner, "output_layout", v, Layout, optional=False),
        "enable_kernel_stride_folding": flag("enable_kernel_stride_folding", True),
        "force_split_reader": flag("force_split_reader", True),
        "padding_mode": lambda v: _of(owner, "padding_mode", v, PaddingMode, optional=False),
    }


def _weights_dtype(owner: str, value: object) -> object:
    _of(owner, "weights_dtype", value, DataType)
    if value is not None and value not in (DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.FLOAT32):
        raise MeshnnValueError(f"{owner}: weights_dtype must be bfloat16, bfloat8_b or float32, got {value}")
    return value


def _block_h(owner: str, value: object) -> object:
    _count(owner, "act_block_h_override", value, 0)
    if value % 32:  # type: ignore[operator]
        raise MeshnnValueError(f"{owner}: act_block_h_override must be a multiple of 32 (0: the largest), got {value}")
    return value


def _shard_layout(owner: str, value: object) -> object:
    _of(owner, "shard_layout", value, TensorMemoryLayout)
    if value is TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"{owner}: shard_layout must be HEIGHT_, WIDTH_ or BLOCK_SHARDED (or None)")
    return value


class PaddingMode(enum.Enum):
    """``ttnn.PaddingMode`` (tt-metal of 2026, ``Conv2dConfig.padding_mode``): what a conv's padded
    border holds: zeros (the default), or the nearest edge pixel repeated."""

    Zeros = 0
    Replicate = 1


@dataclass(init=False, eq=True)
class Conv2dConfig:
    """``ttnn.Conv2dConfig``: how a conv is laid out on a device (keyword-only, ttnn's defaults;
    ``override_output_sharding_config`` and ``padding_mode`` are tt-metal of 2026's)."""

    weights_dtype: DataType | None = None
    activation: UnaryWithParam | None = None
    deallocate_activation: bool = False
    reallocate_halo_output: bool = True
    config_tensors_in_dram: bool = False
    act_block_h_override: int = 0
    act_block_w_div: int = 1
    reshard_if_not_optimal: bool = False
    override_sharding_config: bool = False
    shard_layout: TensorMemoryLayout | None = None
    core_grid: CoreRangeSet | None = None
    transpose_shards: bool = False
    output_layout: Layout = Layout.TILE
    enable_act_double_buffer: bool = False
    enable_weights_double_buffer: bool = False
    full_inner_dim: bool = False
    in_place: bool = False
    enable_kernel_stride_folding: bool | None = None
    enable_activation_reuse: bool = False
    force_split_reader: bool | None = None
    override_output_sharding_config: bool = False
    padding_mode: PaddingMode = PaddingMode.Zeros

    def __init__(self, **kwargs: Any) -> None:
        names = [f.name for f in fields(self)]
        for key in kwargs:
            if key not in names:
                raise MeshnnTypeError(f"ttnn.{type(self).__name__}() got an unexpected keyword argument {key!r}")
        for f in fields(self):
            setattr(self, f.name, kwargs.get(f.name, f.default))

    def __setattr__(self, name: str, value: object) -> None:
        owner = f"ttnn.{type(self).__name__}"
        known = {f.name for f in fields(self)}
        if name not in known:
            raise MeshnnTypeError(f"{owner} has no field {name!r}")
        check = _checks(owner).get(name)
        value = check(value) if check is not None else _flag(owner, name, value)
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        body = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))
        return f"{type(self).__name__}({body})"


class Conv1dConfig(Conv2dConfig):
    """``ttnn.Conv1dConfig``: ttnn's conv1d takes the same fields as Conv2dConfig."""


class SliceType(enum.Enum):
    """``ttnn.Conv2dSliceConfig.SliceTypeEnum``: no slicing (the whole conv in L1), or the DRAM
    input and output cut into slices along the output's height or width."""

    L1Full = "L1_FULL"
    DRAMSliceHeight = "DRAM_HEIGHT"
    DRAMSliceWidth = "DRAM_WIDTH"


@dataclass(init=False, eq=True)
class Conv2dSliceConfig:
    """``ttnn.Conv2dSliceConfig(slice_type=..., num_slices=...)``: how a conv whose tensors are in
    DRAM runs in slices (``num_slices`` 0: ttnn picks the count)."""

    SliceTypeEnum = SliceType

    slice_type: SliceType
    num_slices: int

    def __init__(self, *, slice_type: SliceType, num_slices: int = 0) -> None:
        self.slice_type = slice_type
        self.num_slices = num_slices

    def __setattr__(self, name: str, value: object) -> None:
        if name == "slice_type" and not isinstance(value, SliceType):
            raise MeshnnTypeError(f"ttnn.Conv2dSliceConfig: slice_type must be a SliceTypeEnum, got {value!r}")
        if name == "num_slices":
            _count("ttnn.Conv2dSliceConfig", "num_slices", value, 0)
        if name not in ("slice_type", "num_slices"):
            raise MeshnnTypeError(f"ttnn.Conv2dSliceConfig has no field {name!r}")
        object.__setattr__(self, name, value)

    @property
    def in_dram(self) -> bool:
        """The conv runs in DRAM slices (its output is in DRAM)."""
        return self.slice_type is not SliceType.L1Full


Conv2dL1Full = SliceType.L1Full
Conv2dDRAMSliceHeight = SliceType.DRAMSliceHeight
Conv2dDRAMSliceWidth = SliceType.DRAMSliceWidth
Conv2dL1FullSliceConfig = Conv2dSliceConfig(slice_type=SliceType.L1Full)
# tt-metal of 2026 names the same class and members for every sliding-window op (pools too)
Op2DSliceConfig = Conv2dSliceConfig
Op2DL1Full, Op2DDRAMSliceHeight, Op2DDRAMSliceWidth = Conv2dL1Full, Conv2dDRAMSliceHeight, Conv2dDRAMSliceWidth
Op2DL1FullSliceConfig = Conv2dL1FullSliceConfig


@dataclass(frozen=True, kw_only=True)
class Conv3dConfig:
    """``ttnn.Conv3dConfig``: ``ttnn.experimental.conv3d``'s blocking (the block sizes, ``alignment``
    and the grid only matter on hardware) and ``dilation``; ttnn 0.81's config also held the conv's
    geometry (``output_channels``, ``kernel_size``, ``stride``, ``padding``, ``padding_mode``,
    ``groups``, ``dtype``), which tt-metal of 2026 passes to ``conv3d`` itself: either form is taken,
    the geometry left None in the newer one."""

    dtype: DataType = DataType.BFLOAT16
    weights_dtype: DataType = DataType.BFLOAT16
    output_layout: Layout = Layout.ROW_MAJOR
    T_out_block: int = 1
    W_out_block: int = 1
    H_out_block: int = 1
    C_out_block: int = 0
    C_in_block: int = 0
    output_channels: int | None = None
    kernel_size: tuple[int, int, int] | None = None
    stride: tuple[int, int, int] | None = None
    padding: tuple[int, int, int] | None = None
    dilation: tuple[int, int, int] = (1, 1, 1)
    padding_mode: str = "zeros"
    groups: int = 1
    alignment: int = 32
    compute_with_storage_grid_size: CoreCoord | tuple[int, int] = (1, 1)

    def __post_init__(self) -> None:
        owner = "ttnn.Conv3dConfig"
        for name in ("T_out_block", "W_out_block", "H_out_block", "alignment"):
            _count(owner, name, getattr(self, name), 1)
        for name in ("C_out_block", "C_in_block"):
            _count(owner, name, getattr(self, name), 0)
        if self.output_channels is not None:
            _count(owner, "output_channels", self.output_channels, 1)
        _count(owner, "groups", self.groups, 1)
        for name, least in (("kernel_size", 0), ("stride", 0), ("padding", 0), ("dilation", 1)):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, triple(owner, name, getattr(self, name), least))
        if self.padding_mode not in ("zeros", "replicate"):
            raise MeshnnValueError(f"{owner}: padding_mode must be 'zeros' or 'replicate', got {self.padding_mode!r}")
        _of(owner, "dtype", self.dtype, DataType, optional=False)
        _of(owner, "weights_dtype", self.weights_dtype, DataType, optional=False)
        _of(owner, "output_layout", self.output_layout, Layout, optional=False)


def triple(owner: str, name: str, value: object, least: int) -> tuple[int, int, int]:
    """``value`` as 3 ints >= ``least`` (a conv3d's kernel, stride, padding or dilation)."""
    try:
        found = tuple(value)  # type: ignore[arg-type]
    except TypeError:
        found = ()
    if len(found) != 3 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= least for v in found):
        raise MeshnnValueError(f"{owner}: {name} must be 3 ints >= {least}, got {value!r}")
    return found  # type: ignore[return-value]
