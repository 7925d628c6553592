"""``ttnn.interleaved_to_sharded_partial`` and ``ttnn.sharded_to_interleaved_partial``: one of
``num_slices`` equal bands of a tensor's rows moved to a sharded L1 tensor, and back into its
place in a larger interleaved tensor (Falcon's prefill MLP and layer norms work through a long
sequence so, a band at a time).

A tensor's *rows* here are its padded 2-D view: ``physical_volume / padded_width`` rows of the
padded width (tile padding included, as the kernels copy whole tiles).  Band ``slice_index`` is
rows ``[i * h, (i + 1) * h)`` with ``h = rows / num_slices``.

- ``interleaved_to_sharded_partial(t, grid, shard_shape, num_slices, slice_index, shard_scheme,
  shard_orientation, *, output_dtype=None)`` gives the band as a ``[1, 1, h, width]`` TILE tensor
  in L1, sharded by ``shard_scheme`` over the first cores of the ``grid`` (an ``(x, y)`` CoreCoord)
  that its shards need (``num_cores_to_corerangeset`` in ``shard_orientation`` order), in
  ``output_dtype`` (the input's by default);
- ``sharded_to_interleaved_partial(t, cache_tensor, num_slices, slice_index, *, memory_config=None,
  output_dtype=None)`` writes the sharded band ``t`` into band ``slice_index`` of ``cache_tensor``
  in place (its address and every other byte unchanged) and returns ``cache_tensor``.

Both take TILE tensors only, check the band index and that the rows divide into ``num_slices``, as
ttnn's device operations check them.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`,
:mod:`meshnn.tensor` and the ops' checks, launch, outputs, rearrange, registry and values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, num_cores_to_corerangeset
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, int_list, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


def _ints(op: str, num_slices: object, slice_index: object) -> None:
    """The binding's argument types (checked before anything else, as nanobind converts them)."""
    for name, value in (("num_slices", num_slices), ("slice_index", slice_index)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be an int, got {value!r}")


def _band(op: str, spec: TensorSpec, num_slices: object, slice_index: object) -> tuple[int, int, int]:
    """(rows, width, band height) of ``spec``'s padded 2-D view, after ttnn's checks (the caller
    checked the two ints' types first, :func:`_ints`)."""
    if not 0 <= slice_index < num_slices:  # type: ignore[operator]
        raise MeshnnValueError(
            f"ttnn.{op}: slice_index and num_slices don't match: slice_index = {slice_index}, num_slices = {num_slices}"
        )
    width = int(spec.padded_shape[-1])
    rows = math.prod(spec.padded_shape) // width
    if rows % num_slices:  # type: ignore[operator]
        raise MeshnnValueError(f"ttnn.{op}: the tensor's {rows} rows must be divisible by num_slices {num_slices}")
    return rows, width, rows // int(num_slices)  # type: ignore[call-overload]


def _padded(spec: TensorSpec) -> TensorSpec:
    """``spec``'s bytes seen whole: its padded shape as the logical one."""
    return TensorSpec(tuple(spec.padded_shape), spec.dtype, Layout.TILE, tile=spec.tile)


def _check_dtype(op: str, name: str, value: object) -> None:
    if value is not None and not isinstance(value, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a ttnn.DataType, got {value!r}")


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="InterleavedToShardedPartialDeviceOperation",
    golden=goldens.identity,
)
def interleaved_to_sharded_partial(
    input_tensor: Tensor,
    grid: CoreCoord | tuple[int, int],
    shard_shape: Sequence[int],
    num_slices: int,
    slice_index: int,
    shard_scheme: TensorMemoryLayout,
    shard_orientation: ShardOrientation,
    *,
    output_dtype: DataType | None = None,
) -> Tensor:
    """Band ``slice_index`` of ``num_slices`` of the input's rows, sharded in L1 (module's text)."""
    op = "interleaved_to_sharded_partial"
    _ints(op, num_slices, slice_index)
    tensor = device_input(op, "input_tensor", input_tensor)
    if isinstance(grid, tuple | list) and len(grid) == 2 and all(type(v) is int and v > 0 for v in grid):
        grid = CoreCoord(*grid)  # a 2-sequence, as ttnn's binding converts it
    if not isinstance(grid, CoreCoord):
        raise MeshnnTypeError(
            f"ttnn.{op}: grid must be a CoreCoord (x, y) (a CoreRangeSet is not supported), got {grid!r}"
        )
    shape = int_list(op, "shard_shape", shard_shape)
    if len(shape) != 2 or min(shape) < 1:
        raise MeshnnValueError(f"ttnn.{op}: shard_shape must be [height, width] of positive ints, got {shape}")
    if not isinstance(shard_scheme, TensorMemoryLayout) or not shard_scheme.is_sharded:
        raise MeshnnTypeError(f"ttnn.{op}: shard_scheme must be a sharded TensorMemoryLayout, got {shard_scheme!r}")
    if not isinstance(shard_orientation, ShardOrientation):
        raise MeshnnTypeError(
            f"ttnn.{op}: shard_orientation must be a ttnn.ShardOrientation, got {shard_orientation!r}"
        )
    _check_dtype(op, "output_dtype", output_dtype)
    rows, width, height = _band(op, tensor.spec, num_slices, slice_index)
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: only TILE layout is supported for a partial interleaved-to-sharded")
    if tensor.memory_config().is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be interleaved")
    device_grid = same_mesh(op, {"input_tensor": tensor}).compute_with_storage_grid_size()
    if grid.x > device_grid.x or grid.y > device_grid.y:
        raise MeshnnValueError(f"ttnn.{op}: grid {grid} is larger than the device's compute grid {device_grid}")
    across = -(-width // shape[1])
    down = -(-height // shape[0])
    needed = {
        TensorMemoryLayout.HEIGHT_SHARDED: down,
        TensorMemoryLayout.WIDTH_SHARDED: across,
        TensorMemoryLayout.BLOCK_SHARDED: down * across,
    }[shard_scheme]
    cores = num_cores_to_corerangeset(needed, grid, shard_orientation is ShardOrientation.ROW_MAJOR)
    config = MemoryConfig(shard_scheme, BufferType.L1, ShardSpec(cores, tuple(shape), shard_orientation))
    dtype = output_dtype if output_dtype is not None else tensor.dtype
    spec = TensorSpec((1, 1, height, width), dtype, Layout.TILE, memory_config=config, tile=tensor.spec.tile)
    start = int(slice_index) * height

    def band(x: np.ndarray) -> np.ndarray:
        return x.reshape(x.shape[0], rows, width)[:, start : start + height].reshape(x.shape[0], 1, 1, height, width)

    return rearranged(op, tensor, spec, band, source_spec=_padded(tensor.spec))


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ShardedToInterleavedPartialDeviceOperation",
    golden=goldens.identity,
)
def sharded_to_interleaved_partial(
    input_tensor: Tensor,
    cache_tensor: Tensor,
    num_slices: int,
    slice_index: int,
    *,
    memory_config: MemoryConfig | None = None,
    output_dtype: DataType | None = None,
) -> Tensor:
    """``input_tensor`` written into band ``slice_index`` of ``cache_tensor``'s rows, in place;
    returns ``cache_tensor`` (module's text).  ``memory_config`` is checked and recorded (the
    cache keeps its own)."""
    op = "sharded_to_interleaved_partial"
    _ints(op, num_slices, slice_index)
    source = device_input(op, "input_tensor", input_tensor)
    cache = device_input(op, "cache_tensor", cache_tensor)
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    _check_dtype(op, "output_dtype", output_dtype)
    if source.spec.memory_config.shard_spec is None:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must have a shard spec (it must be sharded)")
    rows, width, height = _band(op, cache.spec, num_slices, slice_index)
    if source.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: only TILE layout is supported for a partial sharded-to-interleaved")
    in_width = int(source.spec.padded_shape[-1])
    in_rows = math.prod(source.spec.padded_shape) // in_width
    if (in_rows, in_width) != (height, width):
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor's {in_rows} x {in_width} rows are not a band of cache_tensor's "
            f"{rows} x {width} in {num_slices} slices ({height} x {width})"
        )
    mesh = same_mesh(op, {"input_tensor": source, "cache_tensor": cache})
    in_spec, out_spec, whole = _padded(source.spec), cache.spec, _padded(cache.spec)
    start = int(slice_index) * height

    cache_dtype = cache.dtype  # (the kernel holds no tensor: a trace must not keep it allocated)
    source_dtype = source.dtype

    def kernel(in_rows_: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        band = logical_values(in_rows_[0], in_spec, as_float=False)
        values = np.array(logical_values(in_rows_[1], whole, as_float=False), copy=True)
        flat = values.reshape(values.shape[0], rows, width)
        flat[:, start : start + height] = band.reshape(band.shape[0], height, width)
        write_values(out_rows[0], values, whole, exact=source_dtype is cache_dtype)

    attrs = {
        "num_slices": num_slices,
        "slice_index": slice_index,
        "memory_config": memory_config or out_spec.memory_config,
    }
    launch(op, mesh, [source, cache], [Output(out_spec)], kernel, rowwise=True, into=[cache], attrs=attrs)
    return cache
