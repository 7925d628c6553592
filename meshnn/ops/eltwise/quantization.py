"""ttnn's affine quantization ops: ``quantize`` (float -> int32, ``q = round(x / scale) +
zero_point``), ``dequantize`` (int32 -> bfloat16 or float32, ``x = (q - zero_point) * scale``) and
``requantize`` (int32 -> int32 between two (scale, zero point) pairs).  Each scale is a number or
a float tensor and each zero point an int or an int32 tensor: per tensor (a number, or a tensor of
one value) or, with ``axis``, per channel (1-D tensors of the axis's length).

The arithmetic is float64 and rounds half to even (torch's ``quantize_per_tensor``), so results
are exact where ttnn's are within its float32 rounding.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' registry, checks and the
element-wise modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.checks import device_input, int_arg
from meshnn.ops.eltwise.logical import on_values
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_QUANT = {"kind": OpKind.BINARY, "family": OpFamily.BINARY, "device_operation": "BinaryNgDeviceOperation"}
Scale = Tensor | float
ZeroPoint = Tensor | int


class _Params:
    """An op's (scale, zero point) arguments: numbers, or tensors passed to the kernel by name."""

    def __init__(self, op: str, shape: tuple[int, ...], axis: int | None) -> None:
        self.op, self.shape, self.axis = op, shape, axis
        self.tensors: dict[str, Tensor] = {}
        self.numbers: dict[str, float] = {}

    def add(self, name: str, value: object, scale: bool) -> None:
        if isinstance(value, Tensor):
            tensor = device_input(self.op, name, value)
            self._check_tensor(name, tensor, scale)
            self.tensors[name] = tensor
        elif scale:
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise MeshnnTypeError(f"ttnn.{self.op}: {name} must be a float or a tensor, got {value!r}")
            self.numbers[name] = float(value)
        else:
            self.numbers[name] = float(int_arg(self.op, name, value))

    def _check_tensor(self, name: str, tensor: Tensor, scale: bool) -> None:
        if (scale and not tensor.dtype.is_float) or (scale and tensor.dtype.is_block_float):
            raise MeshnnTypeError(f"ttnn.{self.op}: {name} must be a float tensor, got {tensor.dtype}")
        if not scale and tensor.dtype is not DataType.INT32:
            raise MeshnnTypeError(f"ttnn.{self.op}: {name} must be an int32 tensor, got {tensor.dtype}")
        volume = int(np.prod(tuple(tensor.shape)))
        if self.axis is not None and volume not in (1, self.shape[self.axis]):
            raise MeshnnValueError(
                f"ttnn.{self.op}: {name} {list(tensor.shape)} must hold 1 or {self.shape[self.axis]} values "
                f"(the length of axis {self.axis})"
            )
        if self.axis is None and volume != 1:
            raise MeshnnValueError(f"ttnn.{self.op}: {name} {list(tensor.shape)} must hold one value without axis")

    def without_tensors(self) -> _Params:
        """A copy holding the numbers alone: what a kernel reads (a kernel must hold no tensor, a
        trace keeping it alive)."""
        copy = _Params(self.op, self.shape, self.axis)
        copy.numbers = dict(self.numbers)
        return copy

    def values(self, got: dict[str, np.ndarray], name: str, k: int) -> np.ndarray | float:
        """The parameter's values, shaped to broadcast over ``(k, *shape)``."""
        if name in self.numbers:
            return self.numbers[name]
        values = np.asarray(got[name], np.float64).reshape(k, -1)
        layout = [1] * len(self.shape)
        if values.shape[1] > 1:
            layout[self.axis] = values.shape[1]  # type: ignore[index]
        return values.reshape(k, *layout)


def _axis(op: str, axis: object, shape: tuple[int, ...]) -> int | None:
    if axis is None:
        return None
    value = int_arg(op, "axis", axis)
    if not -len(shape) <= value < len(shape):
        raise MeshnnValueError(f"ttnn.{op}: axis {value} is out of range for input_tensor {list(shape)}")
    return value % len(shape)


def _int32(values: np.ndarray) -> np.ndarray:
    """Rounded values as int32, saturated at its range (NaN as 0)."""
    info = np.iinfo(np.int32)
    return np.clip(np.nan_to_num(values), info.min, info.max).astype(np.int32)


def _run(op, tensor, params: _Params, names, formula, dtype, memory_config, output_tensor) -> Tensor:
    inputs = {"input_tensor": tensor, **params.tensors}
    order = list(inputs)
    params = params.without_tensors()

    def compute(*arrays: np.ndarray) -> np.ndarray:
        got = dict(zip(order, arrays, strict=True))
        k = arrays[0].shape[0]
        return formula(np.asarray(arrays[0], np.float64), *[params.values(got, n, k) for n in names])

    return on_values(op, inputs, compute, dtype=dtype, memory_config=memory_config, output_tensor=output_tensor)


def _output_dtype(op: str, dtype: object, allowed: tuple[DataType, ...], default: DataType) -> DataType:
    if dtype is None:
        return default
    if dtype not in allowed:
        raise MeshnnValueError(f"ttnn.{op}: dtype must be one of {[str(d) for d in allowed]}, got {dtype!r}")
    return dtype  # type: ignore[return-value]


@register(**_QUANT)
@ttnn_keywords()
def quantize(
    input_tensor: Tensor,
    scale: Scale,
    zero_point: ZeroPoint,
    *,
    axis: int | None = None,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.quantize``: ``round(input_tensor / scale) + zero_point`` as int32."""
    tensor = device_input("quantize", "input_tensor", input_tensor)
    if not tensor.dtype.is_float:
        raise MeshnnTypeError(f"ttnn.quantize: input_tensor must be a float tensor, got {tensor.dtype}")
    out = _output_dtype("quantize", dtype, (DataType.INT32,), DataType.INT32)
    params = _Params("quantize", tuple(tensor.shape), _axis("quantize", axis, tuple(tensor.shape)))
    params.add("scale", scale, scale=True)
    params.add("zero_point", zero_point, scale=False)
    return _run("quantize", tensor, params, ("scale", "zero_point"), lambda x, s, z: _int32(np.round(x / s) + z), out,
                memory_config, output_tensor)  # fmt: skip


@register(**_QUANT)
@ttnn_keywords()
def dequantize(
    input_tensor: Tensor,
    scale: Scale,
    zero_point: ZeroPoint,
    *,
    axis: int | None = None,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.dequantize``: ``(input_tensor - zero_point) * scale`` as bfloat16 (or ``dtype``:
    float32)."""
    tensor = device_input("dequantize", "input_tensor", input_tensor)
    if tensor.dtype is not DataType.INT32:
        raise MeshnnTypeError(f"ttnn.dequantize: input_tensor must be an int32 tensor, got {tensor.dtype}")
    default = output_tensor.dtype if isinstance(output_tensor, Tensor) else DataType.BFLOAT16
    out = _output_dtype("dequantize", dtype, (DataType.BFLOAT16, DataType.FLOAT32), default)
    params = _Params("dequantize", tuple(tensor.shape), _axis("dequantize", axis, tuple(tensor.shape)))
    params.add("scale", scale, scale=True)
    params.add("zero_point", zero_point, scale=False)
    return _run("dequantize", tensor, params, ("scale", "zero_point"), lambda q, s, z: (q - z) * s, out,
                memory_config, output_tensor)  # fmt: skip


@register(**_QUANT)
@ttnn_keywords()
def requantize(
    input_tensor: Tensor,
    in_scale: Scale,
    in_zero_point: ZeroPoint,
    out_scale: Scale,
    out_zero_point: ZeroPoint,
    *,
    axis: int | None = None,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.requantize``: int32 values of one (scale, zero point) as int32 of another:
    ``round((q - in_zero_point) * in_scale / out_scale) + out_zero_point``."""
    tensor = device_input("requantize", "input_tensor", input_tensor)
    if tensor.dtype is not DataType.INT32:
        raise MeshnnTypeError(f"ttnn.requantize: input_tensor must be an int32 tensor, got {tensor.dtype}")
    out = _output_dtype("requantize", dtype, (DataType.INT32,), DataType.INT32)
    params = _Params("requantize", tuple(tensor.shape), _axis("requantize", axis, tuple(tensor.shape)))
    for name, value in (("in_scale", in_scale), ("in_zero_point", in_zero_point)):
        params.add(name, value, scale=name.endswith("scale"))
    for name, value in (("out_scale", out_scale), ("out_zero_point", out_zero_point)):
        params.add(name, value, scale=name.endswith("scale"))
    names = ("in_scale", "in_zero_point", "out_scale", "out_zero_point")

    def formula(q, s, z, s2, z2):
        return _int32(np.round((q - z) * s / s2) + z2)

    return _run("requantize", tensor, params, names, formula, out, memory_config, output_tensor)
