"""``ttnn.embedding``: rows of a ``(vocab, hidden)`` table picked by integer ids, per device, with
ttnn's ``EmbeddingsType`` (GENERIC; PADDED: the ``padding_idx`` id gives zeros; BINARY: a table of
two rows picked by 0 / 1 ids), output layout (the table's unless given) and output dtype (the
table's; another only for a TILE output, as ttnn typecasts only tilized embeddings).

The output is ``[sentence, hidden]`` for rank-1 ids, else ``[batch, sentence, hidden]`` with batch
the ids' first dim and sentence their last (the dims between must be 1).

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`
and the ops' checks, launch, outputs, registry and values modules.
"""

from __future__ import annotations

import enum

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.codec import decode
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.coord import MeshCoordinate
from meshnn.mesh.op_keywords import NO_OUTPUT_TENSOR, QUEUE_ID, ttnn_keywords
from meshnn.ops import goldens
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, out_spec_like
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import MemoryConfig, TensorSpec
from meshnn.tensor.tensor import Tensor


class EmbeddingsType(enum.Enum):
    """``ttnn.EmbeddingsType``: how ids pick rows."""

    GENERIC = 0
    PADDED = 1
    BINARY = 2


def _pad_token(pad_token: object, padding_idx: object) -> int | None:
    if padding_idx is not None:
        if pad_token is not None and pad_token != padding_idx:
            raise MeshnnValueError(f"ttnn.embedding: pad_token {pad_token} and padding_idx {padding_idx} differ")
        pad_token = padding_idx
    if pad_token is not None and (isinstance(pad_token, bool) or not isinstance(pad_token, int | np.integer)):
        raise MeshnnTypeError(f"ttnn.embedding: pad_token must be an int or None, got {pad_token!r}")
    return None if pad_token is None else int(pad_token)


def _kind(kind: object, pad_token: int | None, vocab: int) -> EmbeddingsType:
    """The embeddings type as ttnn settles it: a pad token makes it PADDED."""
    if not isinstance(kind, EmbeddingsType):
        raise MeshnnTypeError(f"ttnn.embedding: embeddings_type must be a ttnn.EmbeddingsType, got {kind!r}")
    if pad_token is not None:
        return EmbeddingsType.PADDED
    if kind is EmbeddingsType.PADDED:
        raise MeshnnValueError("ttnn.embedding: Pad token must be specified when PADDED Embeddings Type is specified")
    if kind is EmbeddingsType.BINARY and vocab != 2:
        raise MeshnnValueError(f"ttnn.embedding: Weight tensor must have 2 embeddings for BINARY (it has {vocab})")
    return kind


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.EMBEDDING, golden=goldens.embedding)
@ttnn_keywords(output_tensor=NO_OUTPUT_TENSOR, queue_id=QUEUE_ID)
def embedding(
    input_tensor: Tensor,
    weight: Tensor,
    *,
    padding_idx: int | None = None,
    layout: Layout | None = None,
    embeddings_type: EmbeddingsType = EmbeddingsType.GENERIC,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    pad_token: int | None = None,
) -> Tensor:
    """Rows of ``weight`` picked by the ids of ``input_tensor`` (integers, or bfloat16 as ttnn
    takes them); ``padding_idx`` (``pad_token``, its older name) gives a row of zeros."""
    token = _pad_token(pad_token, padding_idx)
    ids = device_input("embedding", "input_tensor", input_tensor)
    table = device_input("embedding", "weight", weight)
    if not ids.dtype.is_integer and ids.dtype is not DataType.BFLOAT16:
        raise MeshnnTypeError(f"ttnn.embedding: input_tensor must hold integer (or bfloat16) ids, got {ids.dtype}")
    if len(table.shape) < 2 or int(np.prod(table.shape[:-2] or (1,))) != 1:
        raise MeshnnValueError(f"ttnn.embedding: weight must be (vocab, hidden), got {list(table.shape)}")
    if layout is not None and not isinstance(layout, Layout):
        raise MeshnnTypeError(f"ttnn.embedding: layout must be a ttnn Layout, got {layout!r}")
    mesh = same_mesh("embedding", {"input_tensor": ids, "weight": table})
    vocab, hidden = table.shape[-2], table.shape[-1]
    kind = _kind(embeddings_type, token, vocab)
    out_layout = layout or table.layout
    if dtype is not None and dtype is not table.dtype and out_layout is not Layout.TILE:
        raise MeshnnValueError("ttnn.embedding: Can only typecast output embeddings when producing TILE_LAYOUT output")
    _check_ids(ids, vocab)
    shape = _embedding_shape(tuple(ids.shape), hidden)
    spec = out_spec_like(
        table, shape=shape, dtype=dtype, layout=out_layout, memory_config=memory_config, op="embedding"
    )
    kernel = _kernel(ids.spec, table.spec, spec, token)
    attrs = {"memory_config": spec.memory_config, "layout": spec.layout, "dtype": spec.dtype, "pad_token": token}
    attrs["embeddings_type"] = kind
    return launch("embedding", mesh, [ids, table], [Output(spec)], kernel, rowwise=True, attrs=attrs)[0]


def _kernel(ids: TensorSpec, table: TensorSpec, spec: TensorSpec, token: int | None):
    """The kernel: picked rows of the table (their bytes first where the table is plain rows)."""
    vocab, hidden = table.shape[-2], table.shape[-1]
    raw_rows = (
        table.layout is Layout.ROW_MAJOR and table.explicit_padded_shape is None and not table.dtype.is_block_float
    )

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        index = logical_values(in_rows[0], ids).astype(np.int64)
        k = index.shape[0]
        if raw_rows:  # pick the rows' bytes first, then decode only those
            row_bytes = hidden * table.dtype.row_major_element_size
            table_bytes = in_rows[1][:, : vocab * row_bytes].reshape(k, vocab, row_bytes)
            chosen = table_bytes[np.arange(k)[:, None], index.reshape(k, -1)]  # whole rows, copied as rows
            n = chosen.shape[1]
            picked = decode(chosen.reshape(-1), table.dtype, Layout.ROW_MAJOR, (k, n, hidden))
            picked = picked.astype(np.float32, copy=False) if table.dtype.is_float else picked
        else:
            rows = logical_values(in_rows[1], table).reshape(k, vocab, hidden)
            picked = rows[np.arange(k)[:, None], index.reshape(k, -1)]
        if token is not None:
            picked = np.where(index.reshape(index.shape[0], -1, 1) == token, 0, picked)
        write_values(out_rows[0], picked.reshape((-1, *spec.shape)), spec)

    return kernel


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
