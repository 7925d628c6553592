"""``ttnn.operations.moreh.getitem(input, index_tensors, index_dims, *, output, memory_config)``:
torch's advanced indexing ``x[:, i0, i1, ...]`` by int32 index tensors on consecutive dims
(``index_dims``), each of the same length ``n`` (a 1-D ROW_MAJOR tensor, or a TILE one whose last
dim holds the ``n`` indices).  A negative index counts from the end, as torch's; one outside
``[-size, size)`` reads the nearest row (the device reads memory it does not check; meshnn clamps).

The output keeps the input's layout and dtype (bfloat16 or int32).  ROW_MAJOR: the indexed dims
become one dim of ``n`` (torch's shape); TILE: the rank is kept, the indexed dims are 1 but the
last, which is ``n``.

May import: every layer below the ops and the ops' checks, registry and moreh.common modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.checks import int_list
from meshnn.ops.moreh.common import into_tensor, moreh_tensor, output_spec, run
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

OP = "getitem"
INDEXABLE = (DataType.INT32, DataType.BFLOAT16)


def _indices(index_tensors: object, layout: Layout) -> list[Tensor]:
    if not isinstance(index_tensors, Sequence) or not index_tensors:
        raise MeshnnTypeError(f"ttnn.operations.moreh.{OP}: index_tensors must be a non-empty list of tensors")
    checked = [
        moreh_tensor(OP, f"index_tensors[{i}]", t, (DataType.INT32,), tile=False) for i, t in enumerate(index_tensors)
    ]
    size = checked[0].shape[-1]
    for tensor in checked:
        if tensor.layout is Layout.ROW_MAJOR and len(tensor.shape) != 1:
            raise MeshnnValueError(f"ttnn.operations.moreh.{OP}: Index tensor must be 1D for ROW_MAJOR layout!")
        if layout is Layout.ROW_MAJOR and tensor.layout is Layout.TILE:
            raise MeshnnValueError(
                f"ttnn.operations.moreh.{OP}: input layout ROW_MAJOR and index layout TILE not supported"
            )
        if tensor.shape[-1] != size:
            raise MeshnnValueError(f"ttnn.operations.moreh.{OP}: The shapes of all index tensors must be identical!")
    return checked


def _dims(index_dims: object, count: int, rank: int, layout: Layout) -> list[int]:
    dims = int_list(f"operations.moreh.{OP}", "index_dims", index_dims)
    if len(dims) != count or any(d != dims[0] + i for i, d in enumerate(dims)):
        raise MeshnnValueError(
            f"ttnn.operations.moreh.{OP}: The value of index_dims={dims} must be consecutive integers, one per index "
            f"tensor ({count})."
        )
    if dims[0] < 0 or dims[-1] >= rank:
        raise MeshnnValueError(f"ttnn.operations.moreh.{OP}: index_dims {dims} must be dims of the rank-{rank} input")
    if layout is Layout.ROW_MAJOR and 4 in dims:
        raise MeshnnValueError(f"ttnn.operations.moreh.{OP}: getitem for ROW_MAJOR layout not support W index tensor!")
    return dims


def _golden(torch, input, index_tensors, index_dims, **_):
    key = (slice(None),) * index_dims[0] + tuple(t.reshape(-1).long() for t in index_tensors)
    return input[key]


@register(
    name="moreh.getitem",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="MorehGetItemOperation",
    golden=torch_golden(_golden),
    modelled=False,
)
def getitem(
    input: Tensor,
    index_tensors: Sequence[Tensor],
    index_dims: Sequence[int],
    *,
    output: Tensor | None = None,
    memory_config: MemoryConfig | None = None,
) -> Tensor:
    """``input`` indexed by ``index_tensors`` on the consecutive dims ``index_dims``."""
    x = moreh_tensor(OP, "input", input, INDEXABLE, tile=False)
    indices = _indices(index_tensors, x.layout)
    shape_in = tuple(x.shape)
    dims = _dims(index_dims, len(indices), len(shape_in), x.layout)
    n = indices[0].shape[-1]
    if x.layout is Layout.TILE:
        shape = tuple(n if d == dims[-1] else 1 if d in dims else s for d, s in enumerate(shape_in))
    else:
        shape = (*shape_in[: dims[0]], n, *shape_in[dims[-1] + 1 :])
    into = into_tensor(OP, "output", output, shape, (x.dtype,)) if output is not None else None
    spec = None if into is not None else output_spec(OP, x, shape, memory_config)

    def compute(xs: list[np.ndarray]) -> np.ndarray:
        k = xs[0].shape[0]
        picks = []
        for d, values in zip(dims, xs[1:], strict=True):
            rows = values.reshape(k, -1)  # (k, n): a TILE index's [1, n] too
            picks.append(np.clip(np.where(rows < 0, rows + shape_in[d], rows), 0, shape_in[d] - 1))
        moved = np.moveaxis(xs[0], [d + 1 for d in dims], list(range(1, len(dims) + 1)))
        taken = moved[(np.arange(k)[:, None], *picks)]  # (k, n, *before, *after)
        return np.moveaxis(taken, 1, dims[0] + 1).reshape((k, *shape))

    return run(OP, [x, *indices], spec, into, compute, {"index_dims": tuple(dims)})
