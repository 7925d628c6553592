"""ttnn's composite unary ops that are not one value in, one value out: ``clamp`` / ``clip``
(numbers or tensors for the bounds), ``tril`` / ``triu``, the gated linear units ``glu``,
``reglu``, ``geglu`` and ``swiglu`` (half the last dimension out), the per-(H, W) statistics
``var_hw``, ``std_hw``, ``normalize_hw`` and the whole-tensor ``normalize_global``.

ttnn's rules kept here: ``clamp`` of an int32 tensor with float bounds gives float32 (it
typecasts the input first), with int bounds int32; both bounds None is refused with ttnn's words;
the gated units split the last dimension, whose halves must be whole tiles (a multiple of 64);
the statistics are population ones (no correction) over the last two dimensions.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' registry, checks and the
element-wise modules.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.op_keywords import number, ttnn_keywords
from meshnn.ops.checks import device_input, int_arg
from meshnn.ops.eltwise.functions import _gelu, _sigmoid, _silu
from meshnn.ops.eltwise.logical import on_values
from meshnn.ops.eltwise.ternary import ternary
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_COMPOSITE = {"kind": OpKind.UNARY, "family": OpFamily.UNARY, "device_operation": "UnaryDeviceOperation"}
Bound = Tensor | float | int | None
_BOTH_NONE = "Only one of 'min' or 'max' can be None. Please provide one value"


def _bounded(x: np.ndarray, low, high) -> np.ndarray:
    """torch.clamp's rule: max(x, low) then min(., high); high wins where low > high."""
    if low is not None:
        x = np.maximum(x, low)
    if high is not None:
        x = np.minimum(x, high)
    return x


def _clamp(op: str, input_tensor: Tensor, low: Bound, high: Bound, memory_config, output_tensor) -> Tensor:
    tensor = device_input(op, "input_tensor", input_tensor)
    if low is None and high is None:
        raise MeshnnValueError(f"ttnn.{op}: {_BOTH_NONE}")
    bounds = {"min": low, "max": high}
    for name, value in bounds.items():
        if value is not None and not isinstance(value, Tensor):
            number(op, name, value)
    given = {k: v for k, v in bounds.items() if v is not None}
    operands = {"input_tensor": tensor, **given}
    names = list(given)

    def compute(x: np.ndarray, *values: np.ndarray) -> np.ndarray:
        got = dict(zip(names, values, strict=True))
        return _bounded(x, got.get("min"), got.get("max"))

    dtype = None
    scalars = [v for v in given.values() if not isinstance(v, Tensor)]
    if tensor.dtype is DataType.INT32 and any(isinstance(v, float) and not isinstance(v, bool) for v in scalars):
        dtype = DataType.FLOAT32  # ttnn typecasts an int32 input for float bounds
    return ternary(
        op,
        operands,
        compute,
        dtype_from=("input_tensor",),
        dtype=dtype,
        memory_config=memory_config,
        output_tensor=output_tensor,
    )


@register(**_COMPOSITE, golden=torch_golden(lambda t, x, min=None, max=None, *a, **k: t.clamp(x, min, max)))
@ttnn_keywords()
def clamp(
    input_tensor: Tensor,
    min: Bound = None,
    max: Bound = None,
    *,
    memory_config: MemoryConfig | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """``ttnn.clamp``: ``input_tensor`` bounded below by ``min`` and above by ``max`` (numbers or
    tensors, at least one given)."""
    return _clamp("clamp", input_tensor, min, max, memory_config, output_tensor)


@register(**_COMPOSITE, golden=torch_golden(lambda t, x, min=None, max=None, *a, **k: t.clip(x, min, max)))
@ttnn_keywords()
def clip(input_tensor: Tensor, min: Bound = None, max: Bound = None, *, memory_config: MemoryConfig | None = None):
    """``ttnn.clip``: ``ttnn.clamp`` without an output tensor."""
    return _clamp("clip", input_tensor, min, max, memory_config, None)


# ------------------------------------------------------------------------------ tril / triu


def _triangle(op: str, input_tensor: Tensor, diagonal: object, memory_config, lower: bool) -> Tensor:
    tensor = device_input(op, "input_tensor", input_tensor)
    diag = int_arg(op, "diagonal", diagonal)
    if len(tensor.shape) < 2:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must have rank >= 2, got {list(tensor.shape)}")
    rows, cols = tensor.shape[-2], tensor.shape[-1]
    keep = np.tril(np.ones((rows, cols), bool), diag) if lower else np.triu(np.ones((rows, cols), bool), diag)
    zero = np.zeros((), np.float32 if tensor.dtype.is_float else tensor.dtype.numpy_dtype)
    return on_values(op, {"input_tensor": tensor}, lambda x: np.where(keep, x, zero), memory_config=memory_config)


@register(**_COMPOSITE, golden=torch_golden(lambda t, x, *a, diagonal=0, **k: t.tril(x, diagonal)))
@ttnn_keywords()
def tril(input_tensor: Tensor, *, diagonal: int = 0, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.tril``: the elements on and below the ``diagonal``-th diagonal of the last two
    dimensions; 0 elsewhere."""
    return _triangle("tril", input_tensor, diagonal, memory_config, lower=True)


@register(**_COMPOSITE, golden=torch_golden(lambda t, x, *a, diagonal=0, **k: t.triu(x, diagonal)))
@ttnn_keywords()
def triu(input_tensor: Tensor, *, diagonal: int = 0, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.triu``: the elements on and above the ``diagonal``-th diagonal; 0 elsewhere."""
    return _triangle("triu", input_tensor, diagonal, memory_config, lower=False)


# ----------------------------------------------------------------------- gated linear units


def _gated(op: str, gate: Callable[[np.ndarray], np.ndarray], input_tensor: Tensor, dim: object, memory_config):
    tensor = device_input(op, "input_tensor", input_tensor)
    axis = int_arg(op, "dim", dim)
    rank = len(tensor.shape)
    if axis not in (-1, rank - 1):
        raise MeshnnValueError(f"ttnn.{op}: only the last dimension (dim -1 or {rank - 1}) is split, got {dim}")
    width = tensor.shape[-1]
    if width % 64:
        raise MeshnnValueError(
            f"ttnn.{op}: the last dimension ({width}) must split into whole tiles (a multiple of 64)"
        )
    half = width // 2
    shape = (*tensor.shape[:-1], half)
    return on_values(
        op,
        {"input_tensor": tensor},
        lambda x: x[..., :half] * gate(np.ascontiguousarray(x[..., half:])),
        shape=shape,
        memory_config=memory_config,
    )


def _glu_golden(gate: str):
    def golden(t, x, dim=-1, *args, **kwargs):
        a, b = t.split(x, x.shape[-1] // 2, dim=-1)
        function = {"glu": t.sigmoid, "reglu": t.relu, "geglu": t.nn.functional.gelu, "swiglu": t.nn.functional.silu}
        return a * function[gate](b)

    return torch_golden(golden)


@register(**_COMPOSITE, golden=_glu_golden("glu"))
@ttnn_keywords()
def glu(input_tensor: Tensor, dim: int = -1, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.glu``: ``a * sigmoid(b)`` of the two halves of the last dimension."""
    return _gated("glu", _sigmoid, input_tensor, dim, memory_config)


@register(**_COMPOSITE, golden=_glu_golden("reglu"))
@ttnn_keywords()
def reglu(input_tensor: Tensor, dim: int = -1, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.reglu``: ``a * relu(b)`` of the two halves of the last dimension."""
    return _gated("reglu", lambda b: np.maximum(b, np.float32(0)), input_tensor, dim, memory_config)


@register(**_COMPOSITE, golden=_glu_golden("geglu"))
@ttnn_keywords()
def geglu(input_tensor: Tensor, dim: int = -1, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.geglu``: ``a * gelu(b)`` of the two halves of the last dimension."""
    return _gated("geglu", _gelu, input_tensor, dim, memory_config)


@register(**_COMPOSITE, golden=_glu_golden("swiglu"))
@ttnn_keywords()
def swiglu(input_tensor: Tensor, dim: int = -1, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.swiglu``: ``a * silu(b)`` of the two halves of the last dimension."""
    return _gated("swiglu", _silu, input_tensor, dim, memory_config)


# ------------------------------------------------------------------------ (H, W) statistics


def _hw(op: str, input_tensor: Tensor, memory_config, statistic, keep_shape: bool) -> Tensor:
    tensor = device_input(op, "input_tensor", input_tensor)
    if len(tensor.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: input_tensor must have rank 4, got {list(tensor.shape)}")
    shape = None if keep_shape else (*tensor.shape[:-2], 1, 1)
    return on_values(op, {"input_tensor": tensor}, statistic, shape=shape, memory_config=memory_config)


def _var(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    wide = np.asarray(x, np.float64)
    return wide.var(axis=axes, keepdims=True)


def _normalized(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    wide = np.asarray(x, np.float64)
    return (wide - wide.mean(axis=axes, keepdims=True)) / np.sqrt(wide.var(axis=axes, keepdims=True))


_HW = (-2, -1)


@register(**_COMPOSITE, golden=torch_golden(lambda t, x, *a, **k: t.var(x, (-2, -1), keepdim=True, correction=0)))
@ttnn_keywords()
def var_hw(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.var_hw``: the population variance of each (H, W) plane, shape ``[N, C, 1, 1]``."""
    return _hw("var_hw", input_tensor, memory_config, lambda x: _var(x, _HW), keep_shape=False)


@register(**_COMPOSITE, golden=torch_golden(lambda t, x, *a, **k: t.std(x, (-2, -1), keepdim=True, correction=0)))
@ttnn_keywords()
def std_hw(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.std_hw``: the population standard deviation of each (H, W) plane."""
    return _hw("std_hw", input_tensor, memory_config, lambda x: np.sqrt(_var(x, _HW)), keep_shape=False)


def _golden_normalize(axes):
    def golden(t, x, *a, **k):
        return (x - t.mean(x, axes, keepdim=True)) / t.std(x, axes, keepdim=True)

    return torch_golden(golden)


@register(**_COMPOSITE, golden=_golden_normalize([-2, -1]))
@ttnn_keywords()
def normalize_hw(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.normalize_hw``: each (H, W) plane less its mean, over its standard deviation."""
    return _hw("normalize_hw", input_tensor, memory_config, lambda x: _normalized(x, _HW), keep_shape=True)


@register(**_COMPOSITE, golden=_golden_normalize([0, 1, 2, 3]))
@ttnn_keywords()
def normalize_global(input_tensor: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """``ttnn.normalize_global``: the whole tensor less its mean, over its standard deviation."""
    return _hw("normalize_global", input_tensor, memory_config, lambda x: _normalized(x, (1, 2, 3, 4)), True)
