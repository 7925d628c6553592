"""Padding: ``ttnn.pad`` (ttnn's two overloads: ``(before, after)`` pairs and a value, or an
output shape, the input's start in it and a value) and ``ttnn.fill_implicit_tile_padding`` (the
padding of a TILE tensor's last tiles set to a value: the bytes beyond the logical shape, which
``to_torch_with_padded_shape`` shows).

ttnn's rules: padding pairs may be fewer than the rank (leading dims unpadded), never more; a
TILE tensor takes no front padding; a tensor of rank > 4 pads only its lowest 3 dims.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' checks,
launch, outputs, registry, values and rearrange modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import QUEUE_ID, SUB_CORE_GRIDS, Keyword, flag, ttnn_keywords
from meshnn.ops.checks import device_input, int_list, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import encode_elements, logical_mask, stored_elements
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _pad_golden(torch, input_tensor, padding, value=0, **_):
    flat = [side for before, after in reversed(padding) for side in (before, after)]
    return torch.nn.functional.pad(input_tensor, pad=flat, mode="constant", value=value)


def _number(op: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a number, got {value!r}")
    return float(value)


def _pairs(tensor: Tensor, padding: object, args: tuple, value: object, start: object) -> tuple[list, object]:
    """The (before, after) pair of every dim, and the pad value, from either overload."""
    rank = len(tensor.shape)
    if not isinstance(padding, Sequence) or isinstance(padding, str) or not padding:
        raise MeshnnTypeError(f"ttnn.pad: padding must be a list of (before, after) pairs or a shape, got {padding!r}")
    if isinstance(padding[0], int | np.integer):  # pad(t, output_padded_shape, input_tensor_start, value)
        output = int_list("pad", "output_padded_shape", padding)
        if args:
            start, *rest = args
            value = rest[0] if rest else value
        begin = int_list("pad", "input_tensor_start", start if start is not None else [0] * rank)
        if len(output) != rank or len(begin) != rank:
            raise MeshnnValueError(
                f"ttnn.pad: output shape {output} and start {begin} need {rank} values each (input_tensor "
                f"{list(tensor.shape)})"
            )
        return [(s, o - s - d) for s, o, d in zip(begin, output, tensor.shape, strict=True)], value
    if len(args) > 1:
        raise MeshnnTypeError(f"ttnn.pad: with (before, after) pairs, pad takes one value, got {len(args)}")
    value = args[0] if args else value
    pairs = [tuple(int_list("pad", "padding", p)) for p in padding]
    if len(pairs) > rank:
        raise MeshnnValueError("ttnn.pad: padding len can't be larger than input tensor rank")
    return [(0, 0)] * (rank - len(pairs)) + pairs, value


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.PAD, golden=torch_golden(_pad_golden))
@ttnn_keywords(use_multicore=Keyword(True, flag), sub_core_grids=SUB_CORE_GRIDS, queue_id=QUEUE_ID)
def pad(
    input_tensor: Tensor,
    padding: Sequence[Sequence[int]] | Sequence[int] | None = None,
    *args: object,
    value: float | None = None,
    input_tensor_start: Sequence[int] | None = None,
    output_padded_shape: Sequence[int] | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``ttnn.pad(t, [(before, after), ...], value)`` or ``ttnn.pad(t, output_padded_shape,
    input_tensor_start, value)``: ``value`` around the tensor."""
    tensor = device_input("pad", "input_tensor", input_tensor)
    rank = len(tensor.shape)
    if output_padded_shape is not None:
        if padding is not None:
            raise MeshnnTypeError("ttnn.pad: give padding or output_padded_shape, not both")
        padding = output_padded_shape
    if padding is None:
        raise MeshnnTypeError("ttnn.pad() missing required argument 'padding'")
    pairs, value = _pairs(tensor, padding, args, value, input_tensor_start)
    if value is None:
        raise MeshnnTypeError("ttnn.pad() missing required argument 'value'")
    fill = _number("pad", "value", value)
    if any(len(p) != 2 or p[0] < 0 or p[1] < 0 for p in pairs):
        raise MeshnnValueError(f"ttnn.pad: padding {list(padding)} does not give (before, after) >= 0 for {rank} dims")
    if tensor.layout is Layout.TILE and any(before for before, _ in pairs):
        raise MeshnnValueError("ttnn.pad: on device tile padding does not support front padding")
    if rank > 4 and any(after or before for before, after in pairs[: rank - 3]):
        raise MeshnnValueError("ttnn.pad: ttnn::pad only supports padding on the lowest 3 dimensions for rank > 4")
    shape = tuple(d + a + b for d, (a, b) in zip(tensor.shape, pairs, strict=True))
    if shape == tuple(tensor.shape) and memory_config is None:
        return tensor
    spec = out_spec_like(tensor, shape=shape, memory_config=memory_config, op="pad")
    widths = [(0, 0), *pairs]
    return rearranged("pad", tensor, spec, lambda x: np.pad(x, widths, constant_values=fill), new_values=True)


_FILLABLE = (DataType.BFLOAT16, DataType.FLOAT32, DataType.UINT16, DataType.UINT32, DataType.INT32, DataType.UINT8)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="FillPad",
    golden=torch_golden(lambda torch, input_tensor, fill_value, **_: input_tensor),
    modelled=False,
)
def fill_implicit_tile_padding(
    input_tensor: Tensor, fill_value: float, *, memory_config: MemoryConfig | None = None
) -> Tensor:
    """A copy of a TILE tensor whose tile padding (the elements past its logical shape in its last
    tiles) holds ``fill_value`` (cast to an integer dtype as ttnn casts it); a tensor without
    padding is returned as it is."""
    op = "fill_implicit_tile_padding"
    tensor = device_input(op, "input_tensor", input_tensor)
    fill = _number(op, "fill_value", fill_value)
    if tensor.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: FillPad should only be used for tile layout, input_tensor is ROW_MAJOR")
    if tensor.dtype not in (*_FILLABLE, DataType.BFLOAT8_B):
        raise MeshnnValueError(f"ttnn.{op}: unsupported dtype {tensor.dtype}")
    mask = logical_mask(tensor.spec)
    if mask is None:
        return tensor
    spec = out_spec_like(tensor, memory_config=memory_config, op=op)
    mesh = same_mesh(op, {"input_tensor": tensor})
    size = spec.compute_packed_buffer_size_bytes()
    kind = np.float32 if tensor.dtype.is_float else tensor.dtype.storage_dtype
    constant = np.array(fill).astype(kind) if np.isfinite(fill) or tensor.dtype.is_float else kind(0)

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        elements = stored_elements(in_rows[0][:, :size], tensor_spec)
        filled = np.where(mask, elements, constant).astype(elements.dtype, copy=False)
        out_rows[0][:, :size] = encode_elements(filled, spec)

    attrs = {"memory_config": spec.memory_config, "fill_value": fill}
    return launch(op, mesh, [tensor], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]
