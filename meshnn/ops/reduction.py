"""``ttnn.embedding``, per device (the reductions live in :mod:`meshnn.ops.reduce`).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor` and the ops' launch,
checks, outputs and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.codec import decode
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import NO_OUTPUT_TENSOR, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.EMBEDDING, golden=goldens.embedding)
@ttnn_keywords(output_tensor=NO_OUTPUT_TENSOR)
def embedding(
    input_tensor: Tensor,
    weight: Tensor,
    *,
    pad_token: int | None = None,
    layout: Layout = Layout.ROW_MAJOR,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    padding_idx: int | None = None,
) -> Tensor:
    """Rows of ``weight`` (vocab, hidden) picked by the integer ids of ``input_tensor``; an id equal
    to ``pad_token`` (``padding_idx``, ttnn's newer name for it) gives a row of zeros."""
    if padding_idx is not None:
        if pad_token is not None and pad_token != padding_idx:
            raise MeshnnValueError(f"ttnn.embedding: pad_token {pad_token} and padding_idx {padding_idx} differ")
        pad_token = padding_idx
    ids = device_input("embedding", "input_tensor", input_tensor)
    table = device_input("embedding", "weight", weight)
    if not ids.dtype.is_integer:
        raise MeshnnTypeError(f"ttnn.embedding: input_tensor must hold integer ids, got {ids.dtype}")
    if len(table.shape) < 2 or int(np.prod(table.shape[:-2] or (1,))) != 1:
        raise MeshnnValueError(f"ttnn.embedding: weight must be (vocab, hidden), got {list(table.shape)}")
    if pad_token is not None and (isinstance(pad_token, bool) or not isinstance(pad_token, int | np.integer)):
        raise MeshnnTypeError(f"ttnn.embedding: pad_token must be an int or None, got {pad_token!r}")
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"ttnn.embedding: layout must be a ttnn Layout, got {layout!r}")
    mesh = same_mesh("embedding", {"input_tensor": ids, "weight": table})
    vocab, hidden = table.shape[-2], table.shape[-1]
    _check_ids(ids, vocab)
    shape = _embedding_shape(tuple(ids.shape), hidden)
    spec = out_spec_like(table, shape=shape, dtype=dtype, layout=layout, memory_config=memory_config, op="embedding")
    raw_rows = (
        table.layout is Layout.ROW_MAJOR and table.spec.explicit_padded_shape is None and not table.dtype.is_block_float
    )

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        index = logical_values(in_rows[0], ids.spec).astype(np.int64)
        k = index.shape[0]
        if raw_rows:  # pick the rows' bytes first, then decode only those
            row_bytes = hidden * table.dtype.row_major_element_size
            table_bytes = in_rows[1][:, : vocab * row_bytes].reshape(k, vocab, row_bytes)
            chosen = table_bytes[np.arange(k)[:, None], index.reshape(k, -1)]  # whole rows, copied as rows
            n = chosen.shape[1]
            picked = decode(chosen.reshape(-1), table.dtype, Layout.ROW_MAJOR, (k, n, hidden))
            picked = picked.astype(np.float32, copy=False) if table.dtype.is_float else picked
        else:
            rows = logical_values(in_rows[1], table.spec).reshape(k, vocab, hidden)
            picked = rows[np.arange(k)[:, None], index.reshape(k, -1)]
        if pad_token is not None:
            picked = np.where(index.reshape(index.shape[0], -1, 1) == pad_token, 0, picked)
        write_values(out_rows[0], picked.reshape((-1, *shape)), spec)

    attrs = {"memory_config": spec.memory_config, "layout": spec.layout, "dtype": spec.dtype, "pad_token": pad_token}
    return launch("embedding", mesh, [ids, table], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]


def _embedding_shape(ids: tuple[int, ...], hidden: int) -> tuple[int, ...]:
    """ttnn's output shape: ``[sentence, hidden]`` for rank-1 ids, else ``[batch, sentence, hidden]``
    with batch the ids' first dim and sentence their last (the dims between must be 1)."""
    if len(ids) <= 1:
        return (*ids, hidden)
    if int(np.prod(ids[1:-1], dtype=np.int64)) != 1:
        raise MeshnnValueError(
            f"ttnn.embedding: input_tensor {list(ids)} must be [batch, sentence] or have 1s between its first and "
            "last dims ([batch, 1, 1, sentence])"
        )
    return (ids[0], ids[-1], hidden)


def _check_ids(ids: Tensor, vocab: int) -> None:
    """Ids are data, so a bad one shows only in the bytes: read them (once the queue has drained)
    and refuse before the output is allocated, rather than fail later inside the kernel."""
    buffer = ids.storage.mesh_buffer  # type: ignore[union-attr]
    mesh = buffer.device()
    if not mesh.executes:
        return  # a planning mesh has no ids to check: the one check of an op that needs values
    if any(mesh.mesh_command_queue(q).capture is not None for q in range(mesh.num_command_queues)):
        return  # a trace's ids are written before each replay: there is nothing to read while capturing
    mesh.mesh_command_queue(0).finish()
    rows = [mesh.local_row(c) for c in ids.storage.coords if mesh.is_local(c)]  # type: ignore[union-attr]
    if not rows or ids.logical_volume() == 0:
        return
    index = logical_values(buffer.slab()[rows], ids.spec).astype(np.int64)
    low, high = int(index.min()), int(index.max())
    if low < 0 or high >= vocab:
        raise MeshnnValueError(
            f"ttnn.embedding: ids of input_tensor {list(ids.shape)} must lie in [0, {vocab}) (the rows of weight), "
            f"got {low}..{high}"
        )
