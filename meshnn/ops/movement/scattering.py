"""Writing by index: ``ttnn.scatter`` (torch.scatter: ``out[i][index[i][j][k]][k] = src[i][j][k]``
for dim 1, every other element the input's), ``ttnn.tosa_scatter`` (TOSA's scatter: ``[N, W, C]``
values written at the ``[N, W]`` rows of ``[N, K, C]``) and ``ttnn.indexed_fill`` (whole slices of
one tensor put in place of another's, at the positions a list of ids names).

``scatter`` runs as ttnn composes it, so a run launches the programs ttnn's would: the source cut
to the index's shape (``slice``), TILE tensors made ROW_MAJOR (``to_layout``), the scatter dim
moved last (``transpose``), the scatter itself along the last dim, then the transpose and the
layout undone.  Where several sources land on one element, the last one in row-major order wins
(torch leaves it unspecified; ttnn's kernel does the same).  ``reduce="add"`` / ``"multiply"``
(newer ttnn: ``ScatterReductionType``; ``ttnn.scatter_add`` is ``reduce="add"``) combines every
source landing on an element with the input's value there instead; integers exactly, floats in
float64 rounded once into the dtype.

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor` and the ops' checks, outputs, registry,
data movement, slicing and rearrange modules.
"""

from __future__ import annotations

import builtins

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.op_keywords import SUB_CORE_GRIDS, ttnn_keywords
from meshnn.ops.checks import device_input, int_arg
from meshnn.ops.data_movement import to_layout, transpose
from meshnn.ops.movement.rearrange import rearranged
from meshnn.ops.movement.slicing import slice as slice_op
from meshnn.ops.outputs import out_spec_like
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_INDEX_TYPES = (DataType.INT32, DataType.UINT8, DataType.UINT16, DataType.UINT32)
_ROW_LIMIT = 256  # ttnn's to_layout of 32-bit integers is wrong past this many elements in a tiled row


REDUCTIONS = ("add", "multiply")
"""The reductions ttnn's scatter takes (``ALLOWED_REDUCTIONS``, case-sensitive)."""


def scattered(x: np.ndarray, index: np.ndarray, source: np.ndarray, reduce: str | None = None) -> np.ndarray:
    """``x`` with ``source`` put at ``index`` along the last axis, in the leading block that the
    index covers (device-first arrays; indices clamped into the last dim); with ``reduce``, each
    source added to (multiplied into) the element it lands on."""
    out = np.array(x, copy=True)
    window = (builtins.slice(None), *(builtins.slice(0, n) for n in index.shape[1:-1]), builtins.slice(None))
    place = np.clip(index.astype(np.int64), 0, max(x.shape[-1] - 1, 0))
    values = source[tuple(builtins.slice(0, n) for n in index.shape)]
    if reduce is None:
        np.put_along_axis(out[window], place, values, axis=-1)
        return out
    block = out[window]
    wide = block.astype(np.int64 if block.dtype.kind in "iu" else np.float64)
    rows = np.indices(place.shape)
    at = (*rows[:-1], place)
    (np.add if reduce == "add" else np.multiply).at(wide, at, values.astype(wide.dtype))
    out[window] = wide.astype(out.dtype)
    return out


def _scatter_golden(torch, input, dim, index, src, reduce=None, **_):
    """torch's scatter; with ``reduce``, its scatter_reduce (sum / prod, the input included)."""
    if reduce is None:
        return torch.scatter(input, dim, index.to(torch.int64), src)
    how = {"add": "sum", "multiply": "prod"}[reduce]
    return torch.scatter_reduce(input, dim, index.to(torch.int64), src, how, include_self=True)


def _reduction(op: str, keyword: str, value: object) -> None:
    if value is not None and value not in REDUCTIONS:
        raise MeshnnValueError(f"ttnn.{op}: reduce must be either 'add' or 'multiply' (case-sensitive), got {value!r}")


def _check(tensor: Tensor, indices: Tensor, source: Tensor, dim: int, op: str = "scatter") -> int:
    """ttnn's checks of scatter's arguments; returns the normalised dim."""
    rank = len(tensor.shape)
    for name, t in (("index", indices), ("src", source)):
        if len(t.shape) != rank:
            raise MeshnnValueError(f"ttnn.{op}: input_rank must be equal to {name}'s rank ({rank} vs {len(t.shape)})")
    if not -rank <= dim < rank:
        raise MeshnnValueError(
            f"ttnn.{op}: dim must follow the condition -input_rank <= dim < input_rank ({dim}, {rank})"
        )
    axis = dim % rank
    for d in range(rank):
        if indices.shape[d] > source.shape[d] or (d != axis and indices.shape[d] > tensor.shape[d]):
            raise MeshnnValueError(
                f"ttnn.{op}: index {list(indices.shape)} must fit in src {list(source.shape)} and, outside dim {dim}, "
                f"in input {list(tensor.shape)}"
            )
    if _row_major_dtype(source) is not _row_major_dtype(tensor):  # ttnn compares them after to_layout
        raise MeshnnTypeError(f"ttnn.{op}: input_dtype differs from src_dtype ({tensor.dtype}, {source.dtype})")
    if indices.dtype not in _INDEX_TYPES:
        raise MeshnnTypeError(f"ttnn.{op}: index_dtype is not integer, it is {indices.dtype}")
    for name, t in (("input", tensor), ("index", indices), ("src", source)):
        if t.is_sharded():
            raise MeshnnValueError(f"ttnn.{op}: Sharded tensors are not supported - {name} tensor is sharded")
        if t.dtype is DataType.FLOAT32 and t.layout is Layout.TILE and name != "index":
            raise MeshnnValueError(f"ttnn.{op}: Scatter doesn't work for fp32 tiled tensors yet ({name} tensor)")
        wide = t.dtype in (DataType.INT32, DataType.UINT32) and t.layout is Layout.TILE
        if wide and rank and t.shape[axis] > _ROW_LIMIT:
            raise MeshnnValueError(
                f"ttnn.{op}: Scatter doesn't work for int32 tensors that have scatter row longer than {_ROW_LIMIT} "
                f"elements ({name} tensor)"
            )
    return axis


def _row_major_dtype(t: Tensor) -> DataType:
    """The dtype of ``t`` once ROW_MAJOR: a block float's is bfloat16 (``to_layout`` converts it)."""
    return DataType.BFLOAT16 if t.dtype.is_block_float else t.dtype


def _prepared(t: Tensor, axis: int, last: bool, end: tuple[int, ...] | None = None) -> Tensor:
    """A scatter operand as ttnn prepares it: cut to ``end``, ROW_MAJOR, the scatter dim last."""
    if tuple(t.shape) in ((1,), (0,)):
        return t
    if end is not None:
        t = slice_op(t, [0] * len(end), list(end), [1] * len(end))
    if t.layout is not Layout.ROW_MAJOR:
        t = to_layout(t, Layout.ROW_MAJOR)
    return t if last else transpose(t, axis, -1)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ScatterDeviceOperation",
    golden=torch_golden(_scatter_golden),
    modelled=False,
)
@ttnn_keywords(sub_core_grids=SUB_CORE_GRIDS)
def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    reduce: str | None = None,
) -> Tensor:
    """``torch.scatter(input, dim, index, src[, reduce])``: the input, with ``src``'s values (cut
    to the index's shape) written (``reduce``: added or multiplied) along ``dim`` where ``index``
    says; in the input's dtype (bfloat16 for a block-float input, which ttnn makes ROW_MAJOR
    first) and layout."""
    return _scatter("scatter", input, dim, index, src, memory_config, reduce)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ScatterDeviceOperation",
    golden=torch_golden(
        lambda torch, input, dim, index, src, **_: torch.scatter_add(input, dim, index.to(torch.int64), src)
    ),
    modelled=False,
)
@ttnn_keywords(sub_core_grids=SUB_CORE_GRIDS)
def scatter_add(
    input: Tensor, dim: int, index: Tensor, src: Tensor, *, memory_config: MemoryConfig | None = None
) -> Tensor:
    """``torch.scatter_add(input, dim, index, src)`` (newer ttnn): ``scatter`` with ``reduce="add"``,
    every source landing on an element added to it."""
    return _scatter("scatter_add", input, dim, index, src, memory_config, "add")


def _scatter(
    op: str, input: object, dim: object, index: object, src: object, memory_config: object, reduce: object
) -> Tensor:
    """scatter as ttnn composes it (see the module's text)."""
    tensor = device_input(op, "input", input)
    indices = device_input(op, "index", index)
    source = device_input(op, "src", src)
    dim = int_arg(op, "dim", dim)
    _reduction(op, "reduce", reduce)
    axis = _check(tensor, indices, source, dim, op)
    if not tensor.shape or not indices.shape:
        return tensor
    rank = len(tensor.shape)
    last = axis == rank - 1
    base = _prepared(tensor, axis, last)
    where = _prepared(indices, axis, last)
    values = _prepared(source, axis, last, tuple(indices.shape))
    spec = out_spec_like(base, memory_config=memory_config, op=op)

    def put(x: np.ndarray, i: np.ndarray, v: np.ndarray) -> np.ndarray:
        return scattered(x, i, v, reduce)  # type: ignore[arg-type]

    out = rearranged(op, base, spec, put, extra=[where, values])
    if not last and tuple(tensor.shape) not in ((1,), (0,)):
        out = transpose(out, axis, -1, memory_config=out.memory_config())
    return out if out.layout is tensor.layout else to_layout(out, tensor.layout)


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ScatterDeviceOperation",
    golden=torch_golden(
        lambda torch, input, index, src, **_: torch.scatter(
            input, 1, index.to(torch.int64).unsqueeze(-1).expand(-1, -1, input.shape[-1]), src
        )
    ),
    modelled=False,
)
def tosa_scatter(input: Tensor, index: Tensor, src: Tensor, *, memory_config: MemoryConfig | None = None) -> Tensor:
    """TOSA scatter: ``output[n, index[n, w], c] = src[n, w, c]`` over ``[N, K, C]`` values, with
    ``[N, W]`` indices and ``[N, W, C]`` sources; the other rows are the input's."""
    op = "tosa_scatter"
    tensor = device_input(op, "input", input)
    indices = device_input(op, "index", index)
    source = device_input(op, "src", src)
    if len(tensor.shape) != 3 or len(indices.shape) != 2 or len(source.shape) != 3:
        raise MeshnnValueError(
            f"ttnn.{op}: According to TOSA specification, input and source must be of rank 3 and index of rank 2, got "
            f"{list(tensor.shape)}, {list(indices.shape)}, {list(source.shape)}"
        )
    n, _, c = tensor.shape
    w = indices.shape[1]
    if source.shape[0] != n or source.shape[2] != c or indices.shape[0] != n or source.shape[1] != w:
        raise MeshnnValueError(
            f"ttnn.{op}: input [N, K, C] {list(tensor.shape)}, index [N, W] {list(indices.shape)} and src [N, W, C] "
            f"{list(source.shape)} disagree"
        )
    if source.dtype is not tensor.dtype:
        raise MeshnnTypeError(f"ttnn.{op}: input_dtype differs from src_dtype ({tensor.dtype}, {source.dtype})")
    if indices.dtype not in _INDEX_TYPES:
        raise MeshnnTypeError(f"ttnn.{op}: index_dtype is not integer, it is {indices.dtype}")
    spec = out_spec_like(tensor, memory_config=memory_config, op=op)

    def put(x: np.ndarray, i: np.ndarray, s: np.ndarray) -> np.ndarray:
        rows = np.swapaxes(x, 2, 3)  # (devices, N, C, K): the scatter dim last
        expanded = np.swapaxes(np.broadcast_to(i[..., None], (*i.shape, c)), 2, 3)
        return np.swapaxes(scattered(rows, expanded, np.swapaxes(s, 2, 3)), 2, 3)

    return rearranged(op, tensor, spec, put, extra=[indices, source])


_ID_TYPES = (DataType.UINT32, DataType.INT32)


def _indexed_fill_golden(torch, batch_id, input_tensor_a, input_tensor_b, dim=0, **_):
    """``input_tensor_a`` with its slice ``batch_id[k]`` along ``dim`` replaced by ``input_tensor_b``'s
    slice ``k`` (the last ``k`` naming a slice wins; ids outside it are ignored)."""
    out = input_tensor_a.clone()
    axis = dim % out.dim()
    for k, j in enumerate(batch_id.reshape(-1).tolist()):
        if 0 <= j < out.shape[axis]:
            out.select(axis, j).copy_(input_tensor_b.select(axis, k))
    return out


@register(
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="IndexedFillDeviceOperation",
    golden=torch_golden(_indexed_fill_golden),
    modelled=False,
)
def indexed_fill(
    batch_id: Tensor,
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    memory_config: MemoryConfig | None = None,
    dim: int = 0,
) -> Tensor:
    """``input_tensor_a`` with its slice ``j`` along ``dim`` (a rank-4 tensor's batch by default)
    replaced by ``input_tensor_b``'s slice ``k`` wherever ``batch_id[k] == j``: the last such ``k``
    wins, as ttnn's reader scans every id; an id naming no slice changes nothing.  ``batch_id``: a
    ROW_MAJOR UINT32 / INT32 tensor whose last dim holds one id per slice of ``input_tensor_b``."""
    op = "indexed_fill"
    ids = device_input(op, "batch_id", batch_id)
    a = device_input(op, "input_tensor_a", input_tensor_a)
    b = device_input(op, "input_tensor_b", input_tensor_b)
    axis = _fill_checks(op, ids, a, b, int_arg(op, "dim", dim))
    spec = out_spec_like(a, memory_config=memory_config, op=op)

    def fill(x: np.ndarray, y: np.ndarray, which: np.ndarray) -> np.ndarray:
        out = np.array(x, copy=True)
        for device in range(out.shape[0]):  # (device-first arrays: the slices' axis is one further)
            target, source = np.moveaxis(out[device], axis, 0), np.moveaxis(y[device], axis, 0)
            for k, j in enumerate(which[device].reshape(-1)[: source.shape[0]].astype(np.int64)):
                if 0 <= j < target.shape[0]:
                    target[j] = source[k]
        return out

    return rearranged(op, a, spec, fill, extra=[b, ids])


def _fill_checks(op: str, ids: Tensor, a: Tensor, b: Tensor, dim: int) -> int:
    """ttnn's checks of indexed_fill's operands; returns the normalised dim."""
    if a.layout not in (Layout.ROW_MAJOR, Layout.TILE):
        raise MeshnnValueError(f"ttnn.{op}: input_a layout must be ROW_MAJOR or TILE, got {a.layout}")
    if b.layout is not a.layout:
        raise MeshnnValueError(f"ttnn.{op}: Inputs must be same layout ({a.layout}, {b.layout})")
    rank = len(a.shape)
    if rank != 4 or len(b.shape) != 4:
        raise MeshnnValueError(f"ttnn.{op}: only rank-4 tensors are supported; got rank {rank} and {len(b.shape)}")
    if not -rank <= dim < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {dim} is out of range for rank {rank}")
    axis = dim % rank
    for d in range(rank):
        if d != axis and a.shape[d] != b.shape[d]:
            raise MeshnnValueError(
                f"ttnn.{op}: input_a and input_b must match on every dim except dim {axis}; mismatch at dim {d}: "
                f"input_a.size({d})={a.shape[d]}, input_b.size({d})={b.shape[d]}"
            )
    if b.shape[axis] != ids.padded_shape[-1]:
        raise MeshnnValueError(
            f"ttnn.{op}: input_b.size(dim={axis})={b.shape[axis]} must equal the number of batch_ids "
            f"({ids.padded_shape[-1]})"
        )
    if ids.layout is not Layout.ROW_MAJOR:
        raise MeshnnValueError(f"ttnn.{op}: Batch IDs must be ROW MAJOR, got {ids.layout}")
    if ids.dtype not in _ID_TYPES:
        raise MeshnnTypeError(f"ttnn.{op}: batch_id must be UINT32 or INT32, got {ids.dtype}")
    if b.dtype is not a.dtype:  # (the kernel copies pages: another dtype's would be other bytes)
        raise MeshnnTypeError(f"ttnn.{op}: input_b's dtype {b.dtype} must be input_a's {a.dtype}")
    return axis
