"""``ttnn.sort``: the values of a TILE tensor sorted along one dim, and their indices.

As ttnn: the values keep the input's dtype, the indices are UINT16 (UINT32 when the sorted dim
has 65535 elements or more), both TILE in the input's (or the given) memory config; a scalar or
one-element tensor is returned as it is with zero indices.  Preallocated outputs (``out``): the
values tensor must have the input's dtype; the indices are written in the indices tensor's own
dtype.  Ties keep their input order (a stable sort: ttnn's bitonic sort may order ties either way).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' checks,
launch, outputs, registry and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, int_arg, same_mesh
from meshnn.ops.creation_like import zeros_like
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor

_INDEX_DTYPES = (DataType.UINT16, DataType.UINT32)


def _golden(torch, input_tensor, dim=-1, descending=False, stable=False, **_):
    return torch.sort(input_tensor, dim=dim, descending=descending, stable=stable)


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise MeshnnTypeError(f"ttnn.sort: {name} must be a bool, got {value!r}")
    return value


def _outputs(tensor: Tensor, out: object) -> tuple[Tensor, Tensor] | None:
    """The preallocated (values, indices), checked as ttnn checks them."""
    if out is None:
        return None
    if not isinstance(out, tuple | list) or len(out) != 2:
        raise MeshnnTypeError(f"ttnn.sort: out must be a tuple (values, indices) of tensors, got {out!r}")
    values = device_input("sort", "out[0]", out[0])
    indices = device_input("sort", "out[1]", out[1])
    for name, t in (("out[0]", values), ("out[1]", indices)):
        if tuple(t.shape) != tuple(tensor.shape):
            raise MeshnnValueError(
                f"ttnn.sort: {name} {list(t.shape)} must have input_tensor's shape {list(tensor.shape)}"
            )
    if values.dtype is not tensor.dtype:
        raise MeshnnValueError(
            f"ttnn.sort: Output values tensor dtype must be the same as input tensor dtype, got {values.dtype} and "
            f"{tensor.dtype}"
        )
    return values, indices


@register(
    kind=OpKind.REDUCTION,
    family=OpFamily.COPY,
    device_operation="SortDeviceOperation",
    golden=torch_golden(_golden),
    modelled=False,
)
def sort(
    input_tensor: Tensor,
    dim: int = -1,
    descending: bool = False,
    stable: bool = False,
    *,
    out: tuple[Tensor, Tensor] | None = None,
    memory_config: MemoryConfig | None = None,
) -> list[Tensor]:
    """``[values, indices]`` of ``input_tensor`` sorted along ``dim`` (ascending unless ``descending``)."""
    op = "sort"
    tensor = device_input(op, "input_tensor", input_tensor)
    _flag("descending", descending)
    _flag("stable", stable)
    rank = len(tensor.shape)
    axis = int_arg(op, "dim", dim)
    if not -max(rank, 1) <= axis < max(rank, 1):
        raise MeshnnValueError(f"ttnn.{op}: dim {axis} is out of range for input_tensor {list(tensor.shape)}")
    axis %= max(rank, 1)
    given = _outputs(tensor, out)
    if memory_config is not None and memory_config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: Sharded implementation not supported yet")
    if tensor.logical_volume() <= 1 and rank <= 1 and given is None:  # ttnn returns such a tensor as it is
        return [tensor, zeros_like(tensor)]
    index_dtype = DataType.UINT32 if rank and tensor.shape[axis] >= 65535 else DataType.UINT16
    # the outputs' layout is the input's (tt-metal of 2026 sorts ROW_MAJOR input too; 0.81 took TILE only)
    values_spec = out_spec_like(tensor, layout=tensor.layout, memory_config=memory_config, op=op)
    index_spec = out_spec_like(tensor, dtype=index_dtype, layout=tensor.layout, memory_config=memory_config, op=op)
    specs = (values_spec, index_spec) if given is None else (given[0].spec, given[1].spec)
    return _run(tensor, axis, descending, specs, given)


def _run(
    tensor: Tensor, axis: int, descending: bool, specs: tuple[TensorSpec, TensorSpec], given: tuple | None
) -> list[Tensor]:
    op = "sort"
    mesh = same_mesh(op, {"input_tensor": tensor})
    where = tensor.storage.coords  # type: ignore[union-attr]
    into = None if given is None else [output_into(op, mesh, t, t.spec, where) for t in given]

    tensor_spec = tensor.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        x = logical_values(in_rows[0], tensor_spec, as_float=False)
        if x.ndim == 1:  # a scalar: nothing to sort
            write_values(out_rows[0], x, specs[0])
            write_values(out_rows[1], np.zeros(x.shape, np.float32 if specs[1].dtype.is_float else np.uint32), specs[1])
            return
        keys = -x.astype(np.float64) if descending else x
        order = np.argsort(keys, axis=axis + 1, kind="stable")
        write_values(out_rows[0], np.take_along_axis(x, order, axis=axis + 1), specs[0])
        kind = np.float32 if specs[1].dtype.is_float else specs[1].dtype.storage_dtype
        write_values(out_rows[1], order.astype(kind), specs[1])

    attrs = {"dim": axis, "descending": descending, "memory_config": specs[0].memory_config}
    outputs = [Output(specs[0]), Output(specs[1])]
    return launch(op, mesh, [tensor], outputs, kernel, rowwise=True, into=into, attrs=attrs)
