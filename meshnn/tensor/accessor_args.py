"""``ttnn.TensorAccessorArgs``: the compile-time and common runtime arguments a kernel's
``TensorAccessor`` is built from, for a device tensor's buffer (tt-metal's ``TensorAccessorArgs``
with its default configuration, as ttnn's Python binding constructs it).

The compile-time arguments start with the configuration bits (:class:`ArgConfig`: sharded, in
DRAM) and the buffer's aligned page size in bytes; an interleaved buffer has only those two and no
common runtime arguments.  A sharded buffer (legacy or N-D; every shard spec is a distribution
spec in tt-metal) adds, all at compile time in the default configuration: the rank of its squeezed
shapes, the number of banks (the cores it is dealt to), the tensor's shape in pages, the shard's
shape in pages, then the banks' coordinates two to a word (``x1 << 24 | y1 << 16 | x0 << 8 | y0``,
an odd last one alone in the low half): an L1 bank by its translated NoC coordinate
(``MeshDevice.worker_core_from_logical_core``), a DRAM bank by its logical ``(bank, 0)``.

Layer: tensor.  Imports errors, device and the tensor modules ``storage`` and ``tensor``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from meshnn.device.buffer import BufferLayout, ShardSpecBuffer
from meshnn.device.core import CoreCoord
from meshnn.device.nd_shard import squeeze_shape_ranks
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.tensor.storage import StorageType
from meshnn.tensor.tensor import Tensor

MAX_NUM_DIMENSIONS = 8
"""The most dimensions a tensor accessor's shapes may have (tt-metal's figure)."""


class ArgConfig(enum.IntFlag):
    """The configuration bits of a tensor accessor (tt-metal's ``tensor_accessor::ArgConfig``)."""

    NONE = 0
    SHARDED = 1 << 0
    IS_DRAM = 1 << 1
    RUNTIME_RANK = 1 << 2
    RUNTIME_NUM_BANKS = 1 << 3
    RUNTIME_TENSOR_SHAPE = 1 << 4
    RUNTIME_SHARD_SHAPE = 1 << 5
    RUNTIME_BANK_COORDS = 1 << 6


class TensorAccessorArgs:
    """``ttnn.TensorAccessorArgs(tensor)``: the accessor arguments of a device tensor's buffer, taken
    when made (the device tensor must be allocated); every figure is a uint32."""

    def __init__(self, tensor: Tensor) -> None:
        if not isinstance(tensor, Tensor):
            raise MeshnnTypeError(f"TensorAccessorArgs needs a ttnn.Tensor, got {type(tensor).__name__}")
        if tensor.storage_type() is not StorageType.DEVICE:
            raise MeshnnValueError("TensorAccessorArgs needs a device tensor; tensor is on the host")
        buffer = tensor.mesh_buffer()  # refuses a deallocated tensor, or one of a closed mesh, by name
        mesh = buffer.device()
        layout = buffer.layout
        config = ArgConfig.SHARDED if layout.shard is not None else ArgConfig.NONE
        if layout.buffer_type.is_dram:
            config |= ArgConfig.IS_DRAM
        self._config = config
        self._compile = [int(config), buffer.get_reference_buffer().aligned_page_size()]
        if layout.shard is not None:
            self._compile += _sharded_args(layout, mesh.worker_core_from_logical_core)

    @property
    def args_config(self) -> ArgConfig:
        return self._config

    def get_compile_time_args(self) -> list[int]:
        """The compile-time arguments (a new list each call)."""
        return list(self._compile)

    def get_common_runtime_args(self) -> list[int]:
        """The common runtime arguments: none in the default configuration."""
        return []

    def __repr__(self) -> str:
        return f"TensorAccessorArgs({self._config!r}, compile_time_args={self._compile})"


def _sharded_args(layout: BufferLayout, translate: Callable[[CoreCoord], CoreCoord]) -> list[int]:
    """Rank, banks, tensor and shard shapes in pages, and the packed bank coordinates."""
    shard = layout.shard
    if isinstance(shard, ShardSpecBuffer):
        tensor, shape = squeeze_shape_ranks(shard.tensor2d_shape_in_pages, shard.shape_in_pages)
    else:
        tensor, shape = shard.squeezed()
    cores = list(shard.dealt_cores())
    if len(tensor) > MAX_NUM_DIMENSIONS:
        raise MeshnnValueError(f"Rank must be less than or equal to {MAX_NUM_DIMENSIONS}, got {len(tensor)}")
    banks = cores if layout.buffer_type.is_dram else [translate(c) for c in cores]
    packed = []
    for i in range(0, len(banks), 2):
        low = (banks[i].x & 0xFF) << 8 | banks[i].y & 0xFF
        high = (banks[i + 1].x & 0xFF) << 24 | (banks[i + 1].y & 0xFF) << 16 if i + 1 < len(banks) else 0
        packed.append(high | low)
    return [len(tensor), len(banks), *tensor, *shape, *packed]
