"""Reductions along dimensions (``ttnn.sum``, ``mean``, ``max``, ``min``, ``argmax``), per device.

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch,
checks, outputs and values modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, Keyword, flag, number, only, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import COMPUTE_KERNEL_CONFIG
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _axes(op: str, dim: int | Sequence[int] | None, shape: tuple[int, ...]) -> tuple[int, ...]:
    rank = len(shape)
    if dim is None:
        return tuple(range(rank))
    dims = list(dim) if isinstance(dim, list | tuple) else [dim]
    axes = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            raise MeshnnTypeError(f"ttnn.{op}: dim must be an int or a list of ints, got {dim!r}")
        axis = d + rank if d < 0 else d
        if not 0 <= axis < rank:
            raise MeshnnValueError(f"ttnn.{op}: dim {d} is out of range for input_tensor {list(shape)} (rank {rank})")
        axes.append(axis)
    if len(set(axes)) != len(axes):
        raise MeshnnValueError(f"ttnn.{op}: dims {dims} repeat a dimension")
    return tuple(sorted(axes))


def _reduce(op: str, function, input_tensor: Tensor, dim, keepdim: bool, memory_config, dtype=None) -> Tensor:
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    if not isinstance(keepdim, bool | np.bool_):
        raise MeshnnTypeError(f"ttnn.{op}: keepdim must be a bool, got {keepdim!r}")
    axes = _axes(op, dim, tuple(tensor.shape))
    shape = (
        tuple(1 if i in axes else d for i, d in enumerate(tensor.shape))
        if keepdim
        else tuple(d for i, d in enumerate(tensor.shape) if i not in axes)
    )
    layout = tensor.layout if len(shape) >= 1 or tensor.layout is Layout.ROW_MAJOR else Layout.ROW_MAJOR
    spec = out_spec_like(tensor, shape=shape, dtype=dtype, layout=layout, memory_config=memory_config, op=op)
    device_axes = tuple(a + 1 for a in axes)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], tensor.spec)
        result = function(x, axis=device_axes, keepdims=keepdim)
        write_values(out_rows[0], np.asarray(result).reshape((x.shape[0], *shape)), spec)

    attrs = {"memory_config": spec.memory_config, "dim": dim, "keepdim": keepdim}
    return launch(op, mesh, [tensor], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]


_REDUCE = {
    "compute_kernel_config": COMPUTE_KERNEL_CONFIG,
    "scalar": only(1.0, "the input is not scaled before reducing; multiply the result instead", number),
    "correction": Keyword(None, flag),  # deprecated in ttnn, no effect on sum / mean / max / min
    "sub_core_grids": SUB_CORE_GRIDS,
    "fast_and_approximate_mode": Keyword(False, flag),  # the FPU path's precision: meshnn reduces in float32
}
"""The keywords of ttnn's generic reductions (``ttnn.max`` / ``ttnn.min`` take all but ``output_layout``)."""
_OUTPUT_LAYOUT = only(None, "the output keeps the input's layout; convert it with ttnn.to_layout")


@register(kind=OpKind.REDUCTION, family=OpFamily.REDUCTION, golden=goldens.sum)
@ttnn_keywords(**_REDUCE, output_layout=_OUTPUT_LAYOUT)
def sum(
    input_tensor: Tensor,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    return _reduce("sum", np.sum, input_tensor, dim, keepdim, memory_config)


@register(kind=OpKind.REDUCTION, family=OpFamily.REDUCTION, golden=goldens.mean)
@ttnn_keywords(**_REDUCE, output_layout=_OUTPUT_LAYOUT)
def mean(
    input_tensor: Tensor,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    return _reduce("mean", np.mean, input_tensor, dim, keepdim, memory_config)


@register(kind=OpKind.REDUCTION, family=OpFamily.REDUCTION, golden=goldens.max)
@ttnn_keywords(**_REDUCE)
def max(
    input_tensor: Tensor,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    return _reduce("max", np.max, input_tensor, dim, keepdim, memory_config)


@register(kind=OpKind.REDUCTION, family=OpFamily.REDUCTION, golden=goldens.min)
@ttnn_keywords(**_REDUCE)
def min(
    input_tensor: Tensor,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    return _reduce("min", np.min, input_tensor, dim, keepdim, memory_config)


def argmax(
    input_tensor: Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """Indices (uint32) of the largest value along ``dim`` (over all elements when None)."""
    tensor = device_input("argmax", "input_tensor", input_tensor)
    if not isinstance(keepdim, bool | np.bool_):
        raise MeshnnTypeError(f"ttnn.argmax: keepdim must be a bool, got {keepdim!r}")
    if dim is None:
        return _reduce_all_argmax(tensor, keepdim, memory_config)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise MeshnnTypeError(f"ttnn.argmax: dim must be an int, got {dim!r}")

    def function(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
        return np.argmax(x, axis=axis[0], keepdims=keepdims)

    return _reduce("argmax", function, tensor, dim, keepdim, memory_config, dtype=DataType.UINT32)


def _reduce_all_argmax(tensor: Tensor, keepdim: bool, memory_config: MemoryConfig | None) -> Tensor:
    mesh = same_mesh("argmax", {"input_tensor": tensor})
    rank = len(tensor.shape)
    shape = (1,) * rank if keepdim else (1,)
    spec = out_spec_like(
        tensor, shape=shape, dtype=DataType.UINT32, layout=Layout.ROW_MAJOR, memory_config=memory_config, op="argmax"
    )

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], tensor.spec)
        index = x.reshape(x.shape[0], -1).argmax(axis=1).astype(np.uint32)
        write_values(out_rows[0], index.reshape((-1, *shape)), spec)

    attrs = {"memory_config": spec.memory_config, "dim": None}
    return launch("argmax", mesh, [tensor], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]
