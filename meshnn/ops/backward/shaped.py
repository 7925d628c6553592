"""Backward ops whose gradients are not element-wise in the incoming gradient: ``concat_bw`` (the
incoming gradient split back along ``dim``), ``repeat_bw`` (summed over the repeats), ``prod_bw``
(``grad * prod / input``, the incoming gradient's first value along the reduced dims) and
``embedding_bw`` (the gradient rows summed into the rows of the table their indices name).

Each reads its operands' logical values (:func:`~meshnn.ops.backward.run.shaped`) and rounds once.

May import: numpy, :mod:`meshnn.errors`, :mod:`meshnn.tensor`, the ops' checks and outputs, and
the backward package.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from meshnn.errors import MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.backward import goldens
from meshnn.ops.backward.binding import MEMORY_CONFIG, QUEUE_ID, Kind, a, k
from meshnn.ops.backward.defs import GRAD, INPUT, REQUIRED_OUTPUTS, Form, GradDef, table
from meshnn.ops.backward.run import checked_inputs, output_spec, required_flags, shaped
from meshnn.ops.outputs import out_spec_like
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor


def _axis(op: str, dim: int, rank: int) -> int:
    if not -rank <= dim < rank:
        raise MeshnnValueError(f"ttnn.{op}: dim {dim} is out of range for rank {rank}")
    return dim % rank


def _concat_bw(grad_tensor, input_tensor_a, input_tensor_b, dim, are_required_outputs, memory_config, **rest) -> list:
    op = "concat_bw"
    named = {"grad_tensor": grad_tensor, "input_tensor_a": input_tensor_a, "input_tensor_b": input_tensor_b}
    tensors, mesh = checked_inputs(op, named)
    g, x, y = tensors.values()
    axis = _axis(op, dim, len(x.shape))
    joined = list(x.shape)
    joined[axis] += y.shape[axis]
    if tuple(g.shape) != tuple(joined) or len(y.shape) != len(x.shape):
        raise MeshnnValueError(
            f"ttnn.{op}: grad_tensor {list(g.shape)} is not input_tensor_a {list(x.shape)} and input_tensor_b "
            f"{list(y.shape)} joined along dim {dim}"
        )
    flags = required_flags(op, are_required_outputs, 2)
    into = (rest.get("input_a_grad"), rest.get("input_b_grad"))
    parts = ((x, 0, x.shape[axis]), (y, x.shape[axis], joined[axis]))
    plans = [(i, output_spec(op, g, t, memory_config, into[i], mesh, i), lo, hi) for i, (t, lo, hi) in enumerate(parts)]
    out: list[Tensor | None] = [None, None]
    for i, spec, lo, hi in plans:
        if flags[i]:
            piece = (slice(None),) * (axis + 1) + (slice(lo, hi),)
            out[i] = shaped(
                op, {"grad_tensor": g}, mesh, spec, lambda v, p=piece: v[p], queue_id=rest["queue_id"], into=into[i]
            )
    return out


def _repeat_bw(grad_tensor, input_tensor, shape, memory_config, queue_id=0) -> list:
    op = "repeat_bw"
    tensors, mesh = checked_inputs(op, {"grad_tensor": grad_tensor, "input_tensor": input_tensor})
    g, x = tensors.values()
    repeats = [int(r) for r in shape]
    if len(repeats) != len(x.shape) or tuple(g.shape) != tuple(r * d for r, d in zip(repeats, x.shape, strict=True)):
        raise MeshnnValueError(
            f"ttnn.{op}: grad_tensor {list(g.shape)} is not input_tensor {list(x.shape)} repeated {repeats} times"
        )
    spec = out_spec_like(g, shape=tuple(x.shape), memory_config=memory_config, op=op)

    x_shape = tuple(x.shape)  # (the kernel holds no tensor: a trace must not keep it allocated)

    def compute(v: np.ndarray) -> np.ndarray:
        if 0 in repeats:
            return np.zeros((v.shape[0], *x_shape), np.float32)
        split = [v.shape[0]] + [n for pair in zip(repeats, x_shape, strict=True) for n in pair]
        return v.reshape(split).sum(axis=tuple(range(1, 2 * len(repeats), 2)))

    return [shaped(op, {"grad_tensor": g}, mesh, spec, compute, queue_id=queue_id)]


def _prod_bw(grad_tensor, input_tensor, dim, memory_config, queue_id=0) -> list:
    op = "prod_bw"
    tensors, mesh = checked_inputs(op, {"grad_tensor": grad_tensor, "input_tensor": input_tensor})
    g, x = tensors.values()
    axis = None if dim is None else _axis(op, dim, len(x.shape))
    spec = out_spec_like(g, shape=tuple(x.shape), memory_config=memory_config, op=op)

    def compute(gv: np.ndarray, xv: np.ndarray) -> np.ndarray:
        if axis is None:
            total = np.prod(xv.reshape(xv.shape[0], -1), axis=1, dtype=np.float32)
            first = gv.reshape(gv.shape[0], -1)[:, 0]
            scale = (total * first).reshape((-1,) + (1,) * (xv.ndim - 1))
            return scale / xv
        product = np.prod(xv, axis=axis + 1, keepdims=True, dtype=np.float32)
        first = np.take(gv, [0], axis=axis + 1) if gv.shape[axis + 1] != 1 else gv
        return (product * first) / xv

    return [shaped(op, {"grad_tensor": g, "input_tensor": x}, mesh, spec, compute, queue_id=queue_id)]


def _embedding_check(index: Tensor, grad: Tensor, dtype: Any) -> None:
    op = "embedding_bw"
    if index.layout is not Layout.ROW_MAJOR or index.dtype not in (DataType.UINT32, DataType.BFLOAT16):
        raise MeshnnValueError(
            f"ttnn.{op}: input_tensor must be ROW_MAJOR uint32 or bfloat16, got {index.layout} {index.dtype}"
        )
    if grad.layout is not Layout.TILE or grad.dtype not in (DataType.BFLOAT16, DataType.BFLOAT8_B):
        raise MeshnnValueError(
            f"ttnn.{op}: output_gradient_tensor must be TILE bfloat16 or bfloat8_b, got {grad.layout} {grad.dtype}"
        )
    if dtype is not None and dtype is not grad.dtype:
        raise MeshnnValueError(f"ttnn.{op}: dtype {dtype} must be output_gradient_tensor's dtype {grad.dtype}")
    count = int(np.prod(index.shape))
    shape = tuple(grad.shape)
    if len(shape) != 4 or shape[:2] != (1, 1) or shape[2] != count or shape[3] % 32:
        raise MeshnnValueError(
            f"ttnn.{op}: output_gradient_tensor must be [1, 1, {count}, H] with H a multiple of 32 (one row per "
            f"index of input_tensor {list(index.shape)}), got {list(shape)}"
        )


def _embedding_bw(input_tensor, weight_tensor, output_gradient_tensor, dtype, output_tensor, memory_config, queue_id=0):
    op = "embedding_bw"
    named = {
        "input_tensor": input_tensor,
        "weight_tensor": weight_tensor,
        "output_gradient_tensor": output_gradient_tensor,
    }
    tensors, mesh = checked_inputs(op, named)
    index, weight, grad = tensors.values()
    _embedding_check(index, grad, dtype)
    rows = int(weight.shape[-2])
    spec = out_spec_like(grad, shape=(1, 1, rows, int(grad.shape[-1])), memory_config=memory_config, op=op)

    def compute(iv: np.ndarray, gv: np.ndarray) -> np.ndarray:
        ids = iv.reshape(iv.shape[0], -1).astype(np.int64)
        out = np.zeros((gv.shape[0], rows, gv.shape[-1]), np.float32)
        for d in range(gv.shape[0]):
            keep = (ids[d] >= 0) & (ids[d] < rows)
            np.add.at(out[d], ids[d][keep], gv[d, 0, 0][keep])
        return out.reshape(gv.shape[0], 1, 1, rows, gv.shape[-1])

    return shaped(
        op,
        {"input_tensor": index, "output_gradient_tensor": grad},
        mesh,
        spec,
        compute,
        queue_id=queue_id,
        into=output_tensor,
    )


_CONCAT_ARGS = (
    GRAD,
    a("input_tensor_a", Kind.TENSOR),
    a("input_tensor_b", Kind.TENSOR),
    a("dim", Kind.INT, 0),
    REQUIRED_OUTPUTS,
    MEMORY_CONFIG,
    k("input_a_grad", Kind.TENSOR),
    k("input_b_grad", Kind.TENSOR),
    QUEUE_ID,
)

_EMBEDDING_ARGS = (
    a("input_tensor", Kind.TENSOR),
    a("weight_tensor", Kind.TENSOR),
    a("output_gradient_tensor", Kind.TENSOR),
    k("dtype", Kind.DTYPE),
    k("output_tensor", Kind.TENSOR),
    MEMORY_CONFIG,
    QUEUE_ID,
)
_EMBEDDING_DOC = (
    "``ttnn.embedding_bw``: the gradient of an embedding lookup with respect to its table, [1, 1, "
    "num_embeddings, H] (each row the sum of the gradient rows whose index names it; indices outside the "
    "table add nothing)."
)

DEFS = (
    GradDef("concat_bw", (Form(_CONCAT_ARGS, run=_concat_bw),), goldens.concat()),
    GradDef(
        "repeat_bw",
        (Form((GRAD, INPUT, a("shape", Kind.INTS), MEMORY_CONFIG, QUEUE_ID), run=_repeat_bw),),
        goldens.repeat(),
    ),
    GradDef("prod_bw", (Form((GRAD, INPUT, k("dim", Kind.INT), MEMORY_CONFIG, QUEUE_ID), run=_prod_bw),), None),
    GradDef(
        "embedding_bw",
        (Form(_EMBEDDING_ARGS, run=_embedding_bw),),
        None,
        OpFamily.COPY,
        "EmbeddingBackward",
        doc=_EMBEDDING_DOC,
    ),
)

OPS = table(DEFS)
"""The public shaped backward ops by name."""
