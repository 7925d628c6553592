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

from collections.abc import Sequence

import numpy as np

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
    device_operation="TilizeWithZeroPaddingDeviceOperation",
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
