"""ttnn's generic reductions: ``ttnn.sum``, ``mean``, ``max``, ``min``, ``std`` and ``var`` over
any dims (one, several, or all), with ttnn's semantics:

- the result keeps the input's dtype and layout (a ROW_MAJOR input is reduced through tiles and
  comes back ROW_MAJOR); only the logical values take part (ttnn fills a TILE tensor's padding
  with the reduction's identity first, so padding never shows);
- ``scalar`` multiplies the result (``mean``: ``scalar / N``, N the reduced volume);
- ``std`` / ``var`` are torch's of ``scalar * x``: ``var = sum((s x - mean(s x))^2) / N'`` with
  N' = N - 1 under Bessel's ``correction``, else N, and ``std`` its square root (tt-metal 2026's
  Welford kernels, #41838: the scalar scales each input tile first; ttnn 0.81.1's two-sums formula,
  issue #19478, is gone and ``use_legacy`` is ignored); a reduced volume of 1 or a rank-0 input gives
  NaN with ``correction``, else 0 (the 2026 dispatch's fill);
- a rank-0 input comes back as it is (``std`` / ``var``: as above); a zero-volume input gives a tensor
  of the reduced shape filled with 0 (``sum``) or NaN (the others); ``max`` / ``min`` refuse to
  reduce a dim of size 0.

Sums accumulate in float64 and are rounded once into the output dtype.  Supported dtypes (as the
reduce device op checks them): FLOAT32, BFLOAT16, BFLOAT8_B and UINT32, and INT32 for ``max`` / ``min``
(tt-metal 2026's SFPU reduce; ttnn 0.81.1 refuses INT32 for every reduction).  ``max`` / ``min`` with a
``scalar`` are ``op(scalar * x)``: the scalar multiplies the picked value, and a negative one flips the
op (``max(s x) = s min(x)``), as 2026's dispatch does; an INT32 product is float32 truncated toward zero
(the kernel's typecasts around its float multiply).

May import: every layer below the ops and the ops' launch, checks, outputs, values, config and
reduce.dims modules.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, Keyword, flag, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.reduce.dims import check_flag, interleaved_like, reduce_axes, reduced_shape
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

REDUCIBLE = (DataType.FLOAT32, DataType.BFLOAT16, DataType.BFLOAT8_B, DataType.UINT32)
"""The dtypes ttnn's reduce device op takes."""


class Reduction(enum.Enum):
    """The reductions of this module, by ttnn name."""

    SUM = "sum"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"
    STD = "std"
    VAR = "var"


_EMPTY_FILL = {Reduction.SUM: 0.0}
"""What a zero-volume input's output holds (NaN for the reductions not listed)."""


def _scalar(op: str, scalar: object) -> float:
    if isinstance(scalar, bool) or not isinstance(scalar, int | float | np.number):
        raise MeshnnTypeError(f"ttnn.{op}: scalar must be a number, got {scalar!r}")
    return float(scalar)


def _correction(op: str, correction: object) -> bool:
    """ttnn's bool ``correction`` (torch's 0 / 1 taken too); None: the default (True)."""
    if correction is None:
        return True
    if isinstance(correction, bool | np.bool_) or (isinstance(correction, int) and correction in (0, 1)):
        return bool(correction)
    raise MeshnnTypeError(f"ttnn.{op}: correction must be a bool, got {correction!r}")


def _compute(kind: Reduction, x: np.ndarray, axes: tuple[int, ...], scalar: float, correction: bool) -> np.ndarray:
    """The reduction of ``x`` (k, *shape) over device ``axes`` (each +1), keeping them as 1."""
    volume = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if kind in (Reduction.MAX, Reduction.MIN):
        return _picked(kind, x, axes, scalar)
    wide = x.astype(np.int64 if x.dtype.kind in "iu" else np.float64, copy=False)
    total = wide.sum(axis=axes, keepdims=True)
    if kind is Reduction.SUM:
        return total if scalar == 1.0 else total * scalar
    if kind is Reduction.MEAN:
        return total * (scalar / volume)
    if volume == 1:  # (the 2026 dispatch fills: no reduction runs)
        return np.full(total.shape, np.nan if correction else 0.0)
    scaled = wide * scalar
    centred = scaled - scaled.mean(axis=axes, keepdims=True)
    variance = np.square(centred).sum(axis=axes, keepdims=True) / (volume - 1 if correction else volume)
    return np.sqrt(variance) if kind is Reduction.STD else variance


def _picked(kind: Reduction, x: np.ndarray, axes: tuple[int, ...], scalar: float) -> np.ndarray:
    """``max`` / ``min`` of ``scalar * x``: the op of ``x`` times the scalar, flipped when it is negative."""
    take_max = (kind is Reduction.MAX) == (scalar >= 0.0)
    picked = x.max(axis=axes, keepdims=True) if take_max else x.min(axis=axes, keepdims=True)
    if scalar == 1.0:
        return picked
    if x.dtype == np.int32:  # int32 -> float32, times the scalar in float32, truncated back
        product = np.trunc((picked.astype(np.float32) * np.float32(scalar)).astype(np.float64))
        return np.clip(product, -(2.0**31), 2.0**31 - 1).astype(np.int64)  # (saturating, as the typecast)
    return picked.astype(np.float64) * scalar


def _check(kind: Reduction, op: str, tensor: Tensor, axes: tuple[int, ...]) -> None:
    """ttnn's checks of a reduction that runs (not of the rank-0 and zero-volume shortcuts)."""
    shape = tuple(tensor.shape)
    if kind in (Reduction.MAX, Reduction.MIN) and any(shape[a] == 0 for a in axes):
        zero = next(a for a in axes if shape[a] == 0)
        raise MeshnnValueError(f"ttnn.{op}: Expected reduction dim {zero} to have non-zero size ({list(shape)})")
    if len(shape) == 0 or tensor.logical_volume() == 0:
        return
    int32_pick = tensor.dtype is DataType.INT32 and kind in (Reduction.MAX, Reduction.MIN)
    if tensor.dtype not in REDUCIBLE and not int32_pick:
        raise MeshnnTypeError(
            f"ttnn.{op}: Only FLOAT32, BFLOAT16, BFLOAT8_B, and UINT32 are supported for generic reduction "
            f"(INT32 is supported for MAX/MIN) - got {tensor.dtype.name} (input_tensor)"
        )


def reduce(
    kind: Reduction,
    input_tensor: object,
    dim: object,
    keepdim: object,
    memory_config: object,
    *,
    scalar: object = 1.0,
    correction: object = True,
    compute_kernel_config: object = None,
) -> Tensor:
    """Run the reduction ``kind`` (see the module docstring)."""
    op = kind.value
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    keep = check_flag(op, "keepdim", keepdim)
    factor, corrected = _scalar(op, scalar), _correction(op, correction)
    kernel_config = check_compute_kernel_config(op, compute_kernel_config)
    in_shape = tuple(tensor.shape)
    axes = reduce_axes(op, dim, in_shape)
    _check(kind, op, tensor, axes)
    shape = reduced_shape(in_shape, axes, keep)
    spec = out_spec_like(tensor, shape=shape, memory_config=interleaved_like(tensor, memory_config), op=op)
    device_axes = tuple(a + 1 for a in axes)
    empty = tensor.logical_volume() == 0

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        k = in_rows[0].shape[0]
        if empty or not in_shape:
            fill = _EMPTY_FILL.get(kind, np.nan)
            if not in_shape and not empty and not corrected:
                fill = 0.0  # (std / var of a rank-0 input without correction: 2026's fill)
            values = np.full((k, *shape), fill, np.float32)
            if not in_shape and kind not in (Reduction.STD, Reduction.VAR):
                values = logical_values(in_rows[0], tensor_spec)
            write_values(out_rows[0], values, spec)
            return
        x = logical_values(in_rows[0], tensor_spec)
        result = _compute(kind, x, device_axes, factor, corrected)
        if spec.dtype is DataType.UINT32:
            result = np.asarray(result).astype(np.int64) & 0xFFFFFFFF
        write_values(out_rows[0], np.asarray(result).reshape((k, *shape)), spec)

    attrs = {"memory_config": spec.memory_config, "dim": axes, "keepdim": keep, "scalar": factor}
    if kind in (Reduction.STD, Reduction.VAR):
        attrs["correction"] = corrected
    if kernel_config is not None:
        attrs["compute_kernel_config"] = kernel_config
    return launch(op, mesh, [tensor], [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


_NEWER = {"sub_core_grids": SUB_CORE_GRIDS}
"""Keywords of ttnn's newer bindings (recorded; they change nothing a simulated op computes)."""
_STD_VAR = {**_NEWER, "use_legacy": Keyword(False, flag)}


def _declare(kind: Reduction, golden, extra: dict[str, Keyword]):
    """The public function of ``kind``, with ttnn's signature."""

    def function(
        input_tensor: Tensor,
        dim: int | Sequence[int] | None = None,
        keepdim: bool = False,
        *,
        memory_config: MemoryConfig | None = None,
        compute_kernel_config: object = None,
        scalar: float = 1.0,
        correction: bool = True,
    ) -> Tensor:
        return reduce(
            kind,
            input_tensor,
            dim,
            keepdim,
            memory_config,
            scalar=scalar,
            correction=correction,
            compute_kernel_config=compute_kernel_config,
        )

    function.__name__ = function.__qualname__ = kind.value
    function.__doc__ = f"``ttnn.{kind.value}`` of ``input_tensor`` over ``dim`` (see :mod:`meshnn.ops.reduce.generic`)."
    function.__module__ = __name__
    wrapped = ttnn_keywords(kind.value, records=("compute_kernel_config",), **extra)(function)
    return register(kind.value, kind=OpKind.REDUCTION, family=OpFamily.REDUCTION, golden=golden)(wrapped)


sum = _declare(Reduction.SUM, goldens.sum, _NEWER)
mean = _declare(Reduction.MEAN, goldens.mean, _NEWER)
max = _declare(Reduction.MAX, goldens.max, _NEWER)
min = _declare(Reduction.MIN, goldens.min, _NEWER)
std = _declare(Reduction.STD, goldens.std, _STD_VAR)
var = _declare(Reduction.VAR, goldens.var, _STD_VAR)
