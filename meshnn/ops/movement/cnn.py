"""The CNN layout moves of ``ttnn.experimental``: ``convert_to_hwc`` (a WIDTH_SHARDED ROW_MAJOR
``[1, 1, C, HW]`` tensor as a HEIGHT_SHARDED ``[1, 1, HW, C']``, C' = C rounded up to the L1
alignment in elements, 8 for bfloat16, the extra channels zeros) and ``convert_to_chw`` (a
HEIGHT_SHARDED ``[1, 1, HW, C]`` tensor as a WIDTH_SHARDED ROW_MAJOR ``[1, 1, C, HW]``).

Without an output memory config ttnn derives one from the input's shard spec (same grid and
orientation, the shard transposed); a DRAM input needs one given.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.tensor` and the ops' checks,
outputs, registry and rearrange modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType, ShardSpec, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import device_input
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

TILE_HEIGHT = 32


def _alignment(tensor: Tensor) -> int:
    """L1's alignment in elements of ``tensor``'s dtype (16 bytes on Wormhole and Blackhole)."""
    arch = tensor.storage.mesh_buffer.device().system.arch_spec  # type: ignore[union-attr]
    return arch.l1_alignment // tensor.dtype.row_major_element_size


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _shape_1_1(op: str, tensor: Tensor, what: str) -> tuple[int, int]:
    shape = tuple(tensor.shape)
    if len(shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: Input shape must be rank 4 (was rank {len(shape)})")
    if shape[:2] != (1, 1):
        raise MeshnnValueError(f"ttnn.{op}: Expected input tensor to be shape {what} (shape was {list(shape)})")
    return shape[2], shape[3]


def _sharded_as(op: str, tensor: Tensor, layout: TensorMemoryLayout) -> ShardSpec:
    config = tensor.memory_config()
    if not config.is_sharded() or config.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor must be sharded")
    if config.memory_layout is not layout:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor must be {layout.name.lower().replace('_', ' ')}")
    return config.shard_spec


@register(
    "experimental.convert_to_hwc",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ConvertToHWC",
    golden=torch_golden(lambda torch, input, **_: input.transpose(-2, -1)),
    modelled=False,
)
def convert_to_hwc(
    input: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
) -> Tensor:
    """``[1, B, C, HW]`` (WIDTH_SHARDED, ROW_MAJOR, C <= 32) as ``[1, 1, B * HW, C']`` HEIGHT_SHARDED,
    each image's HW rows in turn (ttnn 0.81 took B = 1 only)."""
    op = "experimental.convert_to_hwc"
    tensor = device_input(op, "input", input)
    shape = tuple(tensor.shape)
    if len(shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: Input shape must be rank 4 (was rank {len(shape)})")
    if shape[0] != 1:
        raise MeshnnValueError(f"ttnn.{op}: Expected input tensor to be shape [1, B, C, HW] (shape was {list(shape)})")
    images, channels, hw = shape[1:]
    if channels > TILE_HEIGHT:
        raise MeshnnValueError(f"ttnn.{op}: C must be less than or equal to 32 (was {channels})")
    if tensor.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: Input tensor must be in row-major layout")
    shard = _sharded_as(op, tensor, TensorMemoryLayout.WIDTH_SHARDED)
    align = _alignment(tensor)
    if memory_config is None:
        if tensor.memory_config().buffer_type is BufferType.DRAM:
            raise MeshnnValueError(
                f"ttnn.{op}: When input tensor is in DRAM, output memory_config must be explicitly specified"
            )
        rows = images * shard.shape[1]  # (each core: its HW columns of every image)
        out_shard = ShardSpec(shard.grid, (rows, _round_up(channels, align)), shard.orientation)
        memory_config = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, tensor.memory_config().buffer_type, out_shard)
    if not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if memory_config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED or memory_config.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{op}: Output tensor must be height sharded")
    if memory_config.shard_spec.shape[1] % align:
        raise MeshnnValueError(
            f"ttnn.{op}: Output shard width must be rounded up to next multiple of {align} to satisfy alignment "
            f"constraints (width was {memory_config.shard_spec.shape[1]})"
        )
    width = _round_up(channels, align)
    spec = out_spec_like(tensor, shape=(1, 1, images * hw, width), dtype=dtype, memory_config=memory_config, op=op)

    def to_hwc(x: np.ndarray) -> np.ndarray:
        moved = np.swapaxes(x, -2, -1).reshape(x.shape[0], 1, 1, images * hw, channels)
        return np.pad(moved, [(0, 0)] * 4 + [(0, width - channels)])

    return rearranged(op, tensor, spec, to_hwc, new_values=dtype not in (None, tensor.dtype))


@register(
    "experimental.convert_to_chw",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ConvertToCHW",
    golden=torch_golden(lambda torch, input, **_: input.transpose(-2, -1)),
    modelled=False,
)
def convert_to_chw(input: Tensor, *, dtype: DataType | None = None) -> Tensor:
    """``[1, 1, HW, C]`` (HEIGHT_SHARDED, C <= 32, HW whole tiles) as ``[1, 1, C, HW]``
    WIDTH_SHARDED ROW_MAJOR on the input's cores."""
    op = "experimental.convert_to_chw"
    tensor = device_input(op, "input", input)
    hw, channels = _shape_1_1(op, tensor, "[1, 1, HW, C]")
    if channels > TILE_HEIGHT:
        raise MeshnnValueError(f"ttnn.{op}: C must be less than or equal to 32 (was {channels})")
    if hw % TILE_HEIGHT:
        raise MeshnnValueError(f"ttnn.{op}: HW must be divisible by tile size (was {hw})")
    shard = _sharded_as(op, tensor, TensorMemoryLayout.HEIGHT_SHARDED)
    if shard.shape[0] % TILE_HEIGHT:
        raise MeshnnValueError(f"ttnn.{op}: Shard height must be divisible by tile size")
    out_shard = ShardSpec(shard.grid, (channels, shard.shape[0]), shard.orientation)
    config = MemoryConfig(TensorMemoryLayout.WIDTH_SHARDED, tensor.memory_config().buffer_type, out_shard)
    spec = out_spec_like(
        tensor, shape=(1, 1, channels, hw), dtype=dtype, layout=Layout.ROW_MAJOR, memory_config=config, op=op
    )
    return rearranged(op, tensor, spec, lambda x: np.swapaxes(x, -2, -1), new_values=dtype not in (None, tensor.dtype))
