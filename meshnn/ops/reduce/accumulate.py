"""Accumulations along one dim: ``ttnn.cumsum``, ``ttnn.cumprod`` and ``ttnn.ema``.

``cumsum`` / ``cumprod`` (ttnn's accumulation device operation): the running sum / product along
``dim`` (from the end with ``reverse_order``), the input cast to ``dtype`` first when given; the
output is TILE, of the input's shape and of ``dtype`` (else the input's); the input must be a TILE,
interleaved device tensor.  A rank-0 or zero-volume input is returned as it is (the same tensor).
``out`` (a device tensor of the input's shape) is written in place, in its own dtype, and returned.
Sums accumulate in float64 (integers in int64, wrapping as int32 / uint32 do) and are rounded once.

``ema``: the exponential moving average along the last dim of a ``[1, B, C, T]`` BFLOAT16 TILE
tensor: ``y[t] = alpha * y[t - 1] + (1 - alpha) * x[t]`` with ``y[-1] = 0``, computed in float64 and
rounded once into BFLOAT16.

May import: every layer below the ops and the ops' launch, checks, outputs, values and config.
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.device.core import CoreGrid
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.reduce.dims import check_flag
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _accumulation_input(op: str, input_tensor: object) -> Tensor:
    x = device_input(op, "input_tensor", input_tensor)
    if x.spec.memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: accumulation operations do not support sharded input tensors")
    if x.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: The provided input tensor has a non-tile layout: {x.layout}")
    return x


def _running(values: np.ndarray, axis: int, product: bool, reverse: bool, dtype: DataType) -> np.ndarray:
    """The running sum / product of ``values`` along ``axis``."""
    wide = values.astype(np.int64 if dtype.is_integer else np.float64, copy=False)
    if reverse:
        wide = np.flip(wide, axis=axis)
    result = np.cumprod(wide, axis=axis) if product else np.cumsum(wide, axis=axis)
    if reverse:
        result = np.flip(result, axis=axis)
    if dtype is DataType.INT32:
        return ((result + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)
    if dtype is DataType.UINT32:
        return (result % (1 << 32)).astype(np.uint32)
    return result


def _accumulate(op: str, product: bool, input_tensor, dim, dtype, reverse_order, out, memory_config) -> Tensor:
    x = _accumulation_input(op, input_tensor)
    reverse = check_flag(op, "reverse_order", reverse_order)
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: dtype must be a ttnn DataType, got {dtype!r}")
    rank = len(x.shape)
    axis = int_arg(op, "dim", dim)
    if rank == 0 or x.logical_volume() == 0:
        return x
    if not -rank <= axis < rank:
        raise MeshnnValueError(
            f"ttnn.{op}: The requested accumulation axis (dim) is {axis}, while the input tensor has rank {rank}"
        )
    axis %= rank
    mesh = same_mesh(op, {"input_tensor": x})
    spec = out_spec_like(x, dtype=dtype, layout=Layout.TILE, memory_config=memory_config, op=op)
    into = None
    if out is not None:
        target = device_input(op, "out", out)
        if tuple(target.shape) != tuple(x.shape):
            raise MeshnnValueError(
                f"ttnn.{op}: The shapes of the input and the preallocated tensors are not equal: input "
                f"{list(x.shape)}, out {list(target.shape)}"
            )
        spec = target.spec  # ttnn computes into out's own spec (its dtype wins over ``dtype``)
        into = [output_into(op, mesh, target, spec, x.storage.coords)]  # type: ignore[union-attr]

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec)
        result = _running(values, axis + 1, product, reverse, spec.dtype)
        write_values(out_rows[0], result if spec.dtype.is_integer else result.astype(np.float32), spec)

    attrs = {"dim": axis, "dtype": spec.dtype, "reverse_order": reverse, "memory_config": spec.memory_config}
    return launch(op, mesh, [x], [Output(spec)], kernel, into=into, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _golden(name: str):
    def body(torch, input_tensor, dim, *, dtype=None, reverse_order=False, **_):
        function = getattr(torch, name)
        if reverse_order:
            return function(input_tensor.flip(dim), dim).flip(dim)
        return function(input_tensor, dim)

    return torch_golden(body)


@register(kind=OpKind.REDUCTION, family=OpFamily.COPY, device_operation="AccumulationDeviceOperation",
          golden=_golden("cumsum"), modelled=False)  # fmt: skip
@ttnn_keywords()
def cumsum(
    input: Tensor,
    dim: int,
    *,
    dtype: DataType | None = None,
    reverse_order: bool = False,
    out: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """The running sum along ``dim`` (see the module docstring)."""
    return _accumulate("cumsum", False, input, dim, dtype, reverse_order, out, memory_config)


@register(kind=OpKind.REDUCTION, family=OpFamily.COPY, device_operation="AccumulationDeviceOperation",
          golden=_golden("cumprod"), modelled=False)  # fmt: skip
@ttnn_keywords()
def cumprod(
    input_tensor: Tensor,
    dim: int,
    *,
    dtype: DataType | None = None,
    reverse_order: bool = False,
    out: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """The running product along ``dim`` (see the module docstring)."""
    return _accumulate("cumprod", True, input_tensor, dim, dtype, reverse_order, out, memory_config)


def _ema_input(op: str, input_tensor: object, alpha: object) -> tuple[Tensor, float]:
    x = device_input(op, "input_tensor", input_tensor)
    if x.dtype is not DataType.BFLOAT16 or x.layout is not Layout.TILE:
        raise MeshnnTypeError(f"ttnn.{op}: Input tensor must be BFLOAT16 TILE, got {x.dtype.name} {x.layout}")
    shape = tuple(x.shape)
    if len(shape) != 4 or shape[0] != 1:
        raise MeshnnValueError(f"ttnn.{op}: EMA input must be 4D [1, B, C, T], got {list(shape)}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float | np.floating):
        raise MeshnnTypeError(f"ttnn.{op}: alpha must be a number, got {alpha!r}")
    if math.isnan(alpha):
        raise MeshnnValueError(f"ttnn.{op}: EMA alpha must be a valid number, got {alpha}")
    return x, float(alpha)


def _ema_golden(torch, input_tensor, alpha, **_):
    out = torch.empty_like(input_tensor)
    previous = torch.zeros_like(input_tensor[..., 0])
    for t in range(input_tensor.shape[-1]):
        previous = previous * alpha + (1 - alpha) * input_tensor[..., t]
        out[..., t] = previous
    return out


@register(kind=OpKind.REDUCTION, family=OpFamily.COPY, device_operation="EmaDeviceOperation",
          golden=torch_golden(_ema_golden), modelled=False)  # fmt: skip
@ttnn_keywords(records=("core_grid", "compute_kernel_config"))
def ema(
    input_tensor: Tensor,
    alpha: float,
    *,
    out: Tensor | None = None,
    core_grid: CoreGrid | None = None,
    memory_config: MemoryConfig | None = None,
    compute_kernel_config: object = None,
) -> Tensor:
    """The exponential moving average along the last dim (see the module docstring)."""
    op = "ema"
    x, a = _ema_input(op, input_tensor, alpha)
    mesh = same_mesh(op, {"input_tensor": x})
    check_compute_kernel_config(op, compute_kernel_config)
    if core_grid is not None:
        if not isinstance(core_grid, CoreGrid):
            raise MeshnnTypeError(f"ttnn.{op}: core_grid must be a ttnn.CoreGrid or None, got {core_grid!r}")
        grid = mesh.compute_with_storage_grid_size()
        if core_grid.x > grid.x or core_grid.y > grid.y:
            raise MeshnnValueError(f"ttnn.{op}: core_grid {core_grid} exceeds the device's grid ({grid.x}, {grid.y})")
    spec = out_spec_like(x, memory_config=memory_config, op=op)
    into = None if out is None else [output_into(op, mesh, device_input(op, "out", out), spec, x.storage.coords)]  # type: ignore[union-attr]

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec).astype(np.float64)
        result = np.empty_like(values)
        previous = np.zeros(values.shape[:-1])
        for t in range(values.shape[-1]):
            previous = previous * a + (1.0 - a) * values[..., t]
            result[..., t] = previous
        write_values(out_rows[0], result.astype(np.float32), spec)

    attrs = {"alpha": a, "memory_config": spec.memory_config}
    return launch(op, mesh, [x], [Output(spec)], kernel, into=into, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _intimg_golden(torch, input_tensor, **_):
    return torch.cumsum(torch.cumsum(input_tensor, dim=1), dim=2)


@register("experimental.intimg", kind=OpKind.REDUCTION, family=OpFamily.COPY, device_operation="IntImgDeviceOperation",
          golden=torch_golden(_intimg_golden), modelled=False)  # fmt: skip
@ttnn_keywords()
def intimg(input_tensor: Tensor) -> Tensor:
    """``ttnn.experimental.intimg``: the integral image of a ``[1, H, W, C]`` (channels-last) TILE
    BFLOAT16 / FLOAT32 tensor, the running sums along H then W (float64, rounded once)."""
    op = "experimental.intimg"
    x = device_input(op, "input_tensor", input_tensor)
    shape = tuple(x.shape)
    if len(shape) != 4 or shape[0] != 1:
        raise MeshnnValueError(f"ttnn.{op}: intimg supports only one batch of a 4D tensor, got {list(shape)}")
    if x.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: only tile layout is supported, {x.layout} was provided instead")
    if x.dtype not in (DataType.BFLOAT16, DataType.FLOAT32):
        raise MeshnnTypeError(f"ttnn.{op}: only bf16 and fp32 dtypes are supported, {x.dtype.name} was provided")
    mesh = same_mesh(op, {"input_tensor": x})
    spec = x.spec

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec).astype(np.float64)
        write_values(out_rows[0], np.cumsum(np.cumsum(values, axis=2), axis=3).astype(np.float32), spec)

    return launch(op, mesh, [x], [Output(spec)], kernel, rowwise=True, reads_memos=True)[0]
