"""``ttnn.interleaved_to_sharded``, ``ttnn.sharded_to_interleaved`` and ``ttnn.reshard``: a tensor
moved between an interleaved and a sharded memory config (or two sharded ones), its bytes
unchanged (or converted to ``output_dtype``).  A device's bytes are in host page order whatever
the memory config, so a move copies slab rows; the new buffer lives where the config says (L1
shards per core, DRAM or L1 banks).

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.tensor` and the ops' checks,
data movement and rearrange modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreGrid, CoreRange, CoreRangeSet
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import NO_OUTPUT_TENSOR, QUEUE_ID, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, int_list, same_mesh
from meshnn.ops.data_movement import memory_config_copy
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="InterleavedToShardedDeviceOperation",
    golden=goldens.identity,
)
@ttnn_keywords(records=("keep_l1_aligned",), queue_id=QUEUE_ID, preallocated_output=NO_OUTPUT_TENSOR)
def interleaved_to_sharded(
    input_tensor: Tensor,
    grid: MemoryConfig | CoreGrid | CoreRangeSet | CoreCoord,
    shard_shape: Sequence[int] | None = None,
    shard_scheme: TensorMemoryLayout | None = None,
    shard_orientation: ShardOrientation | None = None,
    output_dtype: DataType | None = None,
    *,
    keep_l1_aligned: bool = False,
) -> Tensor:
    """``interleaved_to_sharded(t, sharded_memory_config, output_dtype=None)`` or
    ``interleaved_to_sharded(t, grid, shard_shape, shard_scheme, shard_orientation, output_dtype=None)``.
    A sharded config without a shard spec gets the one ttnn derives (the tensor over the grid)."""
    op = "interleaved_to_sharded"
    tensor = device_input(op, "input_tensor", input_tensor)
    if tensor.memory_config().is_sharded():
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor must be interleaved, it is {tensor.memory_config().memory_layout.name}"
        )
    if isinstance(grid, MemoryConfig):
        if shard_shape is not None and not isinstance(shard_shape, Sequence):  # (t, config, dtype) positionally
            output_dtype, shard_shape = shard_shape, None  # type: ignore[assignment]
        config = grid
        if not config.is_sharded():
            raise MeshnnValueError(f"ttnn.{op}: the memory config must be sharded, got {config.memory_layout.name}")
    else:
        config = _config_of(op, grid, shard_shape, shard_scheme, shard_orientation)
    if not isinstance(keep_l1_aligned, bool):
        raise MeshnnTypeError(f"ttnn.{op}: keep_l1_aligned must be a bool, got {keep_l1_aligned!r}")
    return memory_config_copy(tensor, config, output_dtype)


def _config_of(op: str, grid: object, shard_shape: object, scheme: object, orientation: object) -> MemoryConfig:
    """The sharded L1 config of the grid form of :func:`interleaved_to_sharded`."""
    if isinstance(grid, tuple | list) and len(grid) == 2 and all(type(v) is int and v > 0 for v in grid):
        grid = CoreCoord(*grid)  # (x, y) or [x, y]: the CoreCoord ttnn's binding converts a 2-sequence to
    if isinstance(grid, CoreGrid):
        cores = grid.to_core_range_set()
    elif isinstance(grid, CoreCoord):
        cores = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(grid.x - 1, grid.y - 1))])
    elif isinstance(grid, CoreRangeSet):
        cores = grid
    else:
        raise MeshnnTypeError(
            f"ttnn.{op}: grid must be a sharded ttnn.MemoryConfig, a CoreGrid, a CoreCoord or a CoreRangeSet, "
            f"got {grid!r}"
        )
    if shard_shape is None or scheme is None or orientation is None:
        raise MeshnnValueError(f"ttnn.{op}: with a grid, shard_shape, shard_scheme and shard_orientation are needed")
    shape = int_list(op, "shard_shape", shard_shape)
    if len(shape) != 2:
        raise MeshnnValueError(f"ttnn.{op}: shard_shape must be [height, width], got {shape}")
    if not isinstance(scheme, TensorMemoryLayout) or not scheme.is_sharded:
        raise MeshnnTypeError(f"ttnn.{op}: shard_scheme must be a sharded ttnn.TensorMemoryLayout, got {scheme!r}")
    if not isinstance(orientation, ShardOrientation):
        raise MeshnnTypeError(f"ttnn.{op}: shard_orientation must be a ttnn.ShardOrientation, got {orientation!r}")
    return MemoryConfig(scheme, BufferType.L1, ShardSpec(cores, tuple(shape), orientation))  # type: ignore[arg-type]


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ShardedToInterleavedDeviceOperation",
    golden=goldens.identity,
)
@ttnn_keywords(records=("is_l1_aligned",), queue_id=QUEUE_ID)
def sharded_to_interleaved(
    input_tensor: Tensor,
    memory_config: MemoryConfig = DRAM_MEMORY_CONFIG,
    output_dtype: DataType | None = None,
    *,
    is_l1_aligned: bool = False,
) -> Tensor:
    """The tensor in an interleaved ``memory_config`` (DRAM by default), as ``output_dtype`` if given.
    An input that is not sharded is given back as it is (the same tensor, ``memory_config`` and
    ``output_dtype`` unused), as ttnn's ``sharded_to_interleaved`` returns it."""
    op = "sharded_to_interleaved"
    tensor = device_input(op, "input_tensor", input_tensor)
    if not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    if not isinstance(is_l1_aligned, bool):
        raise MeshnnTypeError(f"ttnn.{op}: is_l1_aligned must be a bool, got {is_l1_aligned!r}")
    if not tensor.memory_config().is_sharded():
        return tensor
    if memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: memory_config must be interleaved, got {memory_config.memory_layout.name}")
    return memory_config_copy(tensor, memory_config, output_dtype)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ReshardDeviceOperation",
    golden=goldens.identity,
)
def reshard(input_tensor: Tensor, output_memory_config: MemoryConfig, output_tensor: Tensor | None = None) -> Tensor:
    """A sharded tensor moved to another sharded memory config (other cores, shard shape or
    buffer type), its values unchanged; written into ``output_tensor`` when given."""
    op = "reshard"
    tensor = device_input(op, "input_tensor", input_tensor)
    if not tensor.memory_config().is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be sharded, it is INTERLEAVED")
    if not isinstance(output_memory_config, MemoryConfig):
        raise MeshnnTypeError(
            f"ttnn.{op}: output_memory_config must be a ttnn.MemoryConfig, got {output_memory_config!r}"
        )
    if not output_memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: output_memory_config must be sharded, got INTERLEAVED")
    if output_tensor is None:
        return memory_config_copy(tensor, output_memory_config)
    target = device_input(op, "output_tensor", output_tensor)
    same = target.spec.replace(memory_config=tensor.memory_config()) == tensor.spec
    if target.memory_config() != output_memory_config or not same:
        raise MeshnnValueError(f"ttnn.{op}: output_tensor must be input_tensor's spec in output_memory_config")
    same_mesh(op, {"input_tensor": tensor, "output_tensor": target})
    return rearranged(op, tensor, target.spec, lambda x: x, into=target)
