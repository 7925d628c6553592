"""The dims a reduction reduces and the shape it leaves, as ttnn derives them.

- ``dim`` None or ``[]``: every dim (ttnn's ``generate_reduce_dim``); an int or a list of ints,
  negative ones counted from the end, returned sorted; a dim out of range or repeated is refused;
- the output keeps each reduced dim as 1 with ``keepdim``, else drops it (rank 0 when all go);
- a sharded input's output is interleaved in the same buffer type (the reduce device op's rule).

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def reduce_axes(op: str, dim: object, shape: Sequence[int]) -> tuple[int, ...]:
    """The sorted, non-negative dims ``dim`` names of a tensor of ``shape`` (all for None / [])."""
    rank = len(shape)
    if dim is None:
        return tuple(range(rank))
    if _is_int(dim):
        dims = [int(dim)]  # type: ignore[call-overload]
    elif isinstance(dim, list | tuple) and all(_is_int(d) for d in dim):
        dims = [int(d) for d in dim]
    else:
        raise MeshnnTypeError(f"ttnn.{op}: dim must be an int or a list of ints, got {dim!r}")
    if not dims:
        return tuple(range(rank))
    axes = []
    for d in dims:
        axis = d + rank if d < 0 else d
        if not 0 <= axis < rank:
            raise MeshnnValueError(f"ttnn.{op}: dim {d} is out of range for input_tensor {list(shape)} (rank {rank})")
        axes.append(axis)
    if len(set(axes)) != len(axes):
        raise MeshnnValueError(f"ttnn.{op}: dims {dims} repeat a dimension")
    return tuple(sorted(axes))


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    """``shape`` with ``axes`` kept as 1 (``keepdim``) or dropped."""
    if keepdim:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def check_flag(op: str, name: str, value: object) -> bool:
    """A bool argument (numpy's bool too)."""
    if not isinstance(value, bool | np.bool_):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a bool, got {value!r}")
    return bool(value)


def interleaved_like(tensor: Tensor, memory_config: object) -> MemoryConfig | None:
    """The output memory config of a reduction: the one given, else the input's, made interleaved
    (same buffer type) when it is sharded."""
    if memory_config is not None:
        if not isinstance(memory_config, MemoryConfig):
            return memory_config  # type: ignore[return-value]  (out_spec_like names the bad type)
        config = memory_config
    else:
        config = tensor.spec.memory_config
    if config.is_sharded():
        return MemoryConfig(buffer_type=config.buffer_type)
    return config
