"""``ttnn.prod``: the product of a tensor's values, in ttnn's two forms.

- ``prod(input_tensor, dim=None, keepdim=False, *, memory_config=None)``: along one ``dim`` (the
  dim kept as 1 with ``keepdim``), or over every value when ``dim`` is None (a rank-0 result;
  ``keepdim`` is refused then, as ttnn refuses it; the input must be BFLOAT16 as ttnn's prod_all
  requires).  The result keeps the input's dtype and layout.
- ``prod(input_tensor, output_tensor, *, dims, memory_config=None)``: the NC form, the product over
  the outer ``dims`` (not the last two) of a rank-4 TILE tensor, each kept as 1, written into
  ``output_tensor`` (of that shape) and returned.

Products are taken in float64 and rounded once into the output dtype.

May import: every layer below the ops and the ops' launch, checks, outputs, values and reduce.dims.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import ttnn_keywords
from meshnn.ops.checks import device_input, int_arg, int_list, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like, output_into
from meshnn.ops.reduce.dims import check_flag, interleaved_like, reduced_shape
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


def _golden(torch, input_tensor, dim=None, keepdim=False, **_):
    if dim is None:
        return torch.prod(input_tensor)
    return torch.prod(input_tensor, dim, keepdim=keepdim)


def _product(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.prod(x.astype(np.float64), axis=axes, keepdims=True).astype(np.float32)


@register(kind=OpKind.REDUCTION, family=OpFamily.REDUCTION, device_operation="ProdNcDeviceOperation",
          golden=torch_golden(_golden))  # fmt: skip
@ttnn_keywords()
def prod(
    input_tensor: Tensor,
    dim: object = None,
    keepdim: bool = False,
    *,
    memory_config: MemoryConfig | None = None,
    dims: Sequence[int] | None = None,
    output_tensor: Tensor | None = None,
) -> Tensor:
    """The product along ``dim`` or of every value; with a tensor second argument, the NC form
    (see the module docstring)."""
    op = "prod"
    if isinstance(dim, Tensor) or output_tensor is not None:
        if isinstance(dim, Tensor) and output_tensor is not None:
            raise MeshnnValueError(f"ttnn.{op}: output_tensor is given twice (by position and by name)")
        return _prod_nc(op, input_tensor, output_tensor if output_tensor is not None else dim, dims, memory_config)
    if dims is not None:
        raise MeshnnValueError(f"ttnn.{op}: dims is taken only with an output_tensor (the NC form)")
    x = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": x})
    keep = check_flag(op, "keepdim", keepdim)
    rank = len(x.shape)
    if dim is None:
        if keep:
            raise MeshnnValueError(
                f"ttnn.{op}: Not possible to keepdim with all dimensions enabled, as this returns a scalar"
            )
        if x.dtype is not DataType.BFLOAT16:
            raise MeshnnValueError(
                f"ttnn.{op}: unsupported data type for prod, expected BFLOAT16 but got {x.dtype.name}"
            )
        axes = tuple(range(rank))
    else:
        axis = int_arg(op, "dim", dim)
        if rank == 0:
            raise MeshnnValueError(f"ttnn.{op}: Tensor has no dimensions")
        if not -rank <= axis < rank:
            raise MeshnnValueError(
                f"ttnn.{op}: Dimension for prod is out of range (expected to be in range of [{-rank}, {rank - 1}]), "
                f"got {axis}"
            )
        axes = (axis % rank,)
    shape = reduced_shape(tuple(x.shape), axes, keep)
    spec = out_spec_like(x, shape=shape, memory_config=interleaved_like(x, memory_config), op=op)
    device_axes = tuple(a + 1 for a in axes)

    x_spec = x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec)
        write_values(out_rows[0], _product(values, device_axes).reshape((values.shape[0], *shape)), spec)

    attrs = {"dim": dim, "keepdim": keep, "memory_config": spec.memory_config}
    return launch(op, mesh, [x], [Output(spec)], kernel, rowwise=True, reads_memos=True, attrs=attrs)[0]


def _prod_nc(op: str, input_tensor: object, output_tensor: Tensor, dims: object, memory_config) -> Tensor:
    x = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": x})
    if dims is None:
        raise MeshnnValueError(f"ttnn.{op}: the NC form (an output_tensor given) needs dims")
    rank = len(x.shape)
    if rank != 4 or x.layout is not Layout.TILE:
        raise MeshnnValueError(
            f"ttnn.{op}: the NC form needs a rank-4 TILE input_tensor, got {list(x.shape)} {x.layout}"
        )
    axes = tuple(sorted({d % rank if -rank <= d < rank else rank for d in int_list(op, "dims", dims)}))
    if not axes or axes[-1] >= rank - 2:
        raise MeshnnValueError(f"ttnn.{op}: dims {dims} must name outer dims (0 or 1) of input_tensor {list(x.shape)}")
    shape = reduced_shape(tuple(x.shape), axes, True)
    spec = out_spec_like(x, shape=shape, memory_config=memory_config, op=op)
    out = output_into(op, mesh, output_tensor, spec, x.storage.coords)  # type: ignore[union-attr]
    device_axes = tuple(a + 1 for a in axes)

    x_spec, out_spec = x.spec, out.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        write_values(out_rows[0], _product(logical_values(in_rows[0], x_spec), device_axes), out_spec)

    attrs = {"dims": axes, "memory_config": out.spec.memory_config}
    return launch(op, mesh, [x], [Output(out.spec)], kernel, into=[out], rowwise=True, attrs=attrs)[0]
