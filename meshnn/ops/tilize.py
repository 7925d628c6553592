"""``ttnn.tilize``, ``ttnn.untilize``, ``ttnn.tilize_with_val_padding`` and
``ttnn.tilize_with_zero_padding``: ROW_MAJOR <-> TILE on device, as ttnn's ops (not ``to_layout``)
check and shape them.  ``tilize`` needs whole tiles (no padding to invent); the padding ops pad the
rows first, the padding being data (the output's padded shape is the one asked for, its logical
shape the input's); ``untilize`` of a block-float tensor gives bfloat16 (a block float has no
row-major form).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.tensor` and the ops' checks,
outputs and data movement modules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from meshnn.device.buffer import BufferType, ShardSpec, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.op_keywords import NO_OUTPUT_TENSOR, SUB_CORE_GRIDS, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, int_list
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


def _row_major_input(op: str, input_tensor: object) -> Tensor:
    tensor = device_input(op, "input_tensor", input_tensor)
    if tensor.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be ROW_MAJOR (it is already TILE)")
    return tensor


@register(
    kind=OpKind.DATA_MOVEMENT, family=OpFamily.TILIZE, device_operation="TilizeDeviceOperation", golden=goldens.identity
)
@ttnn_keywords(records=("use_multicore", "use_low_perf"), sub_core_grids=SUB_CORE_GRIDS, output_tensor=NO_OUTPUT_TENSOR)
def tilize(
    input_tensor: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    use_multicore: bool = True,
    use_low_perf: bool = False,
) -> Tensor:
    """A ROW_MAJOR tensor whose last two dims are whole tiles, as TILE (``dtype`` may be a block float)."""
    op = "tilize"
    tensor = _row_major_input(op, input_tensor)
    shape = tuple(tensor.spec.padded_shape)
    if len(shape) < 2 or shape[-1] % 32 or shape[-2] % 32:
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor {list(tensor.shape)} must be whole 32x32 tiles in its last two dims; "
            "use ttnn.tilize_with_val_padding to pad it"
        )
    _flags(op, use_multicore=use_multicore, use_low_perf=use_low_perf)
    spec = out_spec_like(tensor, dtype=dtype, layout=Layout.TILE, memory_config=memory_config, op=op)
    return rearranged(op, tensor, spec, lambda x: x)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.UNTILIZE,
    device_operation="UntilizeDeviceOperation",
    golden=goldens.identity,
)
@ttnn_keywords(records=("use_multicore", "use_pack_untilize"), sub_core_grids=SUB_CORE_GRIDS)
def untilize(
    input_tensor: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    use_multicore: bool = True,
    use_pack_untilize: bool = True,
) -> Tensor:
    """A TILE tensor as ROW_MAJOR (bfloat8_b / bfloat4_b become bfloat16)."""
    op = "untilize"
    tensor = device_input(op, "input_tensor", input_tensor)
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be TILE (it is already ROW_MAJOR)")
    _flags(op, use_multicore=use_multicore, use_pack_untilize=use_pack_untilize)
    dtype = DataType.BFLOAT16 if tensor.dtype.is_block_float else None
    spec = out_spec_like(tensor, dtype=dtype, layout=Layout.ROW_MAJOR, memory_config=memory_config, op=op)
    return rearranged(op, tensor, spec, lambda x: x)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.UNTILIZE,
    device_operation="UntilizeWithUnpaddingDeviceOperation",
)
@ttnn_keywords(records=("use_multicore", "use_pack_untilize"), sub_core_grids=SUB_CORE_GRIDS)
def untilize_with_unpadding(
    input_tensor: Tensor,
    output_tensor_end: Sequence[int],
    *,
    memory_config: MemoryConfig | None = None,
    use_multicore: bool = True,
    use_pack_untilize: bool = True,
) -> Tensor:
    """A TILE tensor as ROW_MAJOR, cut to ``output_tensor_end`` (inclusive end indices: the output's
    shape is ``end + 1`` in each dim; ends past the logical shape read the tiles' padding, ends past
    the padded shape are refused).  bfloat8_b becomes bfloat16; the output's memory config defaults to
    the input's, a sharded one reshaped as ttnn does (see :func:`untilize_unpadded_config`).  Above rank 4
    ttnn ignores ``output_tensor_end`` and keeps the whole logical shape; so does this."""
    op = "untilize_with_unpadding"
    tensor = device_input(op, "input_tensor", input_tensor)
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must be TILE (it is ROW_MAJOR)")
    _flags(op, use_multicore=use_multicore, use_pack_untilize=use_pack_untilize)
    if not use_pack_untilize and tensor.dtype in (DataType.UINT32, DataType.INT32):
        raise MeshnnValueError(f"ttnn.{op}: a {tensor.dtype} input needs use_pack_untilize=True")
    shape, padded = tuple(tensor.shape), tuple(tensor.spec.padded_shape)
    ends = int_list(op, "output_tensor_end", output_tensor_end)
    if len(shape) > 4:
        ends = [d - 1 for d in shape]
    if len(ends) != len(shape) or any(not 0 <= e < p for e, p in zip(ends, padded, strict=True)):
        raise MeshnnValueError(
            f"ttnn.{op}: output_tensor_end {ends} must give an index in each of input_tensor's {len(shape)} dims, "
            f"each below its padded shape {list(padded)}"
        )
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    out_shape = tuple(e + 1 for e in ends)
    config = memory_config or tensor.spec.memory_config
    if tensor.spec.memory_config.is_sharded() and tensor.spec.memory_config.shard_spec is None:
        arch = tensor.storage.mesh_buffer.device().system.arch_spec  # type: ignore[union-attr]
        _check_nd_sharded(op, tensor.spec, _out_dtype(tensor.spec), config, arch)
    else:
        config = untilize_unpadded_config(op, tensor.spec, out_shape, config)
    spec = TensorSpec(out_shape, _out_dtype(tensor.spec), Layout.ROW_MAJOR, memory_config=config)
    cut = (slice(None), *(slice(0, n) for n in out_shape))
    if all(n <= s for n, s in zip(out_shape, shape, strict=True)):
        return rearranged(op, tensor, spec, lambda x: x[cut])
    whole = TensorSpec(padded, tensor.dtype, Layout.TILE, tile=tensor.spec.tile)  # the same bytes, padding seen
    return rearranged(op, tensor, spec, lambda x: x[cut], source_spec=whole)


def _out_dtype(spec: TensorSpec) -> DataType:
    """ttnn's output dtype of an untilize: bfloat8_b becomes bfloat16, any other stays."""
    return DataType.BFLOAT16 if spec.dtype is DataType.BFLOAT8_B else spec.dtype


def untilize_unpadded_config(op: str, spec: TensorSpec, shape: tuple[int, ...], config: MemoryConfig) -> MemoryConfig:
    """The output memory config of ``untilize_with_unpadding`` of an input of ``spec`` to ``shape``,
    with ttnn's checks (:func:`_layout_problem`).  A sharded input to a sharded output: height-sharded
    shards of ``ceil(rows / cores)`` rounded up to whole tile rows by the output's width,
    width-sharded shards of every row by the input's shard width, on the input's grid."""
    problem = _layout_problem(spec, shape, config)
    if problem is not None:
        raise MeshnnValueError(f"ttnn.{op}: {problem} (input {spec.memory_config}, output {config})")
    shard = spec.memory_config.shard_spec
    if shard is None or not config.is_sharded():
        return config
    layout, rows = spec.memory_config.memory_layout, math.prod(shape[:-1])
    if layout is TensorMemoryLayout.HEIGHT_SHARDED:
        tile_h = spec.tile.tile_shape[0]
        per_core = math.ceil(math.ceil(rows / shard.grid.num_cores()) / tile_h) * tile_h
        shard_shape = (per_core, shape[-1])
    else:
        shard_shape = (rows, shard.shape[1])
    return MemoryConfig(layout, config.buffer_type, ShardSpec(shard.grid, shard_shape, shard.orientation))


def _layout_problem(spec: TensorSpec, shape: tuple[int, ...], config: MemoryConfig) -> str | None:
    """What ttnn 0.81.1 refuses of an input of ``spec`` written to ``config``: an interleaved input
    writes an interleaved output; a block-sharded one an interleaved, unbatched one; a height- or
    width-sharded one its own layout or an interleaved, unbatched one; a width-sharded one keeps its
    batch dims, and its interleaved output drops less than a shard's width."""
    layout, out_layout = spec.memory_config.memory_layout, config.memory_layout
    unbatched = math.prod(spec.padded_shape[:-2]) == 1
    interleaved = TensorMemoryLayout.INTERLEAVED
    if layout is interleaved:
        return None if out_layout is interleaved else "an interleaved input_tensor writes an interleaved output"
    if layout is TensorMemoryLayout.BLOCK_SHARDED:
        ok = out_layout is interleaved and unbatched
        return None if ok else "a block-sharded input_tensor writes an interleaved output, and only unbatched"
    if layout not in (TensorMemoryLayout.HEIGHT_SHARDED, TensorMemoryLayout.WIDTH_SHARDED):
        return f"a {layout.name} input_tensor is not supported"
    if config.is_sharded() and out_layout is not layout:
        return f"a {layout.name} input_tensor writes a {layout.name} or an interleaved output"
    if not config.is_sharded() and not unbatched:
        return "a sharded input_tensor writes an interleaved output only unbatched"
    if layout is TensorMemoryLayout.WIDTH_SHARDED:
        if tuple(shape[:-2]) != tuple(spec.padded_shape[:-2]):
            return "a width-sharded input_tensor keeps its batch dims"
        width = spec.memory_config.shard_spec.shape[1]  # type: ignore[union-attr]
        if not config.is_sharded() and spec.padded_shape[-1] - shape[-1] >= width:
            return "a width-sharded input_tensor's interleaved output drops less than a shard's width"
    return None


def _check_nd_sharded(op: str, spec: TensorSpec, dtype: DataType, config: MemoryConfig, arch) -> None:
    """ttnn's checks of an N-D sharded input with no 2-D form (tt-metal's N-D sharded factory, newer
    than ttnn 0.81.1): its shards whole tiles; a sharded output (of ``dtype``) needs a shard spec whose
    rows are whole multiples of its buffer's alignment."""
    nd = spec.memory_config.nd_shard_spec
    tile_h, tile_w = spec.tile.tile_shape
    if nd.shard_shape[-1] % tile_w or nd.shard_shape[-2] % tile_h:  # type: ignore[union-attr]
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor's N-D shard {list(nd.shard_shape)} must be whole {tile_h}x{tile_w} tiles"  # type: ignore[union-attr]
        )
    if not config.is_sharded():
        return
    if config.shard_spec is not None:
        width = config.shard_spec.shape[1]
    elif config.nd_shard_spec is not None:
        width = config.nd_shard_spec.shard_shape[-1]
    else:
        raise MeshnnValueError(f"ttnn.{op}: a sharded memory_config needs a shard spec or an N-D shard spec")
    align = arch.l1_alignment if config.buffer_type is BufferType.L1 else arch.dram_alignment
    if width * dtype.row_major_element_size % align:
        raise MeshnnValueError(
            f"ttnn.{op}: the output's shard rows ({width} values of {dtype}) must be whole {align}-byte units"
        )


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.TILIZE)
@ttnn_keywords(records=("use_multicore",))
def tilize_with_val_padding(
    input_tensor: Tensor,
    output_tensor_shape: Sequence[int],
    pad_value: float,
    *,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    use_multicore: bool = True,
) -> Tensor:
    """A ROW_MAJOR tensor padded with ``pad_value`` to ``output_tensor_shape`` (whole tiles in its
    last two dims) and tilized; the result's logical shape is the input's, its padded shape
    ``output_tensor_shape`` (the padding is stored, as on device)."""
    op = "tilize_with_val_padding"
    tensor = _row_major_input(op, input_tensor)
    padded = int_list(op, "output_tensor_shape", output_tensor_shape)
    shape = tuple(tensor.shape)
    view = shape if len(shape) >= 2 else (1, shape[0] if shape else 1)  # a scalar or a row as its 2-D view
    if len(padded) != len(view) or any(p < s for p, s in zip(padded, view, strict=True)):
        raise MeshnnValueError(
            f"ttnn.{op}: output_tensor_shape {padded} must have input_tensor's rank and hold its shape {list(shape)}"
        )
    if len(padded) < 2 or padded[-1] % 32 or padded[-2] % 32:
        raise MeshnnValueError(
            f"ttnn.{op}: output_tensor_shape {padded} must be whole 32x32 tiles in its last two dims"
        )
    if isinstance(pad_value, bool) or not isinstance(pad_value, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: pad_value must be a number, got {pad_value!r}")
    _flags(op, use_multicore=use_multicore)
    base = out_spec_like(tensor, dtype=dtype, layout=Layout.TILE, memory_config=memory_config, op=op)
    spec = TensorSpec(
        shape, base.dtype, Layout.TILE, tile=base.tile, memory_config=base.memory_config, padded_shape=padded
    )
    if spec.explicit_padded_shape is None:  # the tiles' own padding, holding pad_value
        rows = (-1, *shape) if shape else (-1, 1)  # a scalar's values as one-element rows, one a device
        return rearranged(
            op,
            tensor,
            spec,
            lambda x: np.asarray(x, np.float32 if spec.dtype.is_float else x.dtype).reshape(rows),
            tile_pad=pad_value,
        )
    widths = [(0, 0)] + [(0, p - s) for p, s in zip(padded, view, strict=True)]
    return rearranged(
        op, tensor, spec, lambda x: np.pad(x.reshape(-1, *view), widths, constant_values=pad_value), new_values=True
    )


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="TilizeWithValPadding",
    modelled=False,
)
@ttnn_keywords(records=("use_multicore",))
def tilize_with_zero_padding(
    input_tensor: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    dtype: DataType | None = None,
    use_multicore: bool = True,
    output_dtype: DataType | None = None,
) -> Tensor:
    """:func:`tilize_with_val_padding` to the next whole tiles, padding with 0.  ``output_dtype`` is
    ttnn's binding's name for ``dtype`` (either may be given, not two different ones)."""
    op = "tilize_with_zero_padding"
    if output_dtype is not None and dtype is not None and output_dtype is not dtype:
        raise MeshnnValueError(f"ttnn.{op}: dtype {dtype} and output_dtype {output_dtype} differ; give one")
    dtype = output_dtype if output_dtype is not None else dtype
    tensor = _row_major_input(op, input_tensor)
    shape = list(tensor.shape)
    padded = [*shape[:-2], *(-(-d // 32) * 32 for d in shape[-2:])] if len(shape) >= 2 else shape
    return tilize_with_val_padding(
        tensor, padded, 0.0, memory_config=memory_config, dtype=dtype, use_multicore=use_multicore
    )


def _flags(op: str, **flags: object) -> None:
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be a bool, got {value!r}")
